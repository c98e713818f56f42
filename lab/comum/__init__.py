"""O encanamento das lições: o que elas usam e não ensinam.

Uma lição importa daqui o que imprime, mede e roda (`from comum import Licao, dizer, ...`)
e, da lição anterior, o que ela ensina (`importar_licao("05_block")`). Este arquivo não
define nada: é a fachada, o vocabulário de todo dia de uma lição, escolhido por assunto.
Qualquer nome público de um módulo (o __all__ dele) também vem direto de lá, de qualquer
lição (`from comum.console import duracao`): uma lição que passa a usar um nome não muda
a fachada nem as outras lições.

A fachada, por assunto (tests/test_camadas.py confere que é esta lista, e só ela):

    a lição         Licao, importar_licao, ExperimentoPulado
    as opções       opcao, inteiro_entre, real_entre, texto_utf8, opcao_dispositivo
    a tela          dizer, quebrar, em_linhas, largura, comando, citar, token, legivel,
                    Progresso, cronometrar
    os números      num, inteiro, cientifico, pct, tamanho, plural, limite
    os arquivos     RAIZ, curto, figuras, paginas
    os modelos      ModeloIndisponivel, TAMANHOS_GPT2, REGRA_DE_CARACTERES, de_caracteres
    as contas       contar, confere, conferir
    o treino        Adam, preparar_treino, uma_thread, em_paralelo

Os módulos:

    licao        a lição: os experimentos, --lista/--so/--pausa, o mapa do curso
    opcoes       o argparse em português e os validadores das opções
    erros        o erro do aluno com o arquivo e a linha; ExperimentoPulado
    processo     Ctrl+C (saída 130), em_paralelo, adiantar, semear
    ritmo        as threads de conta (uma_thread, o Ritmo de uma máquina ocupada)
    console      a saída: números em português, barras, cp1252, 80 colunas
    figuras      gráficos em ASCII e PNGs com vírgula decimal
    paginas      as páginas (--html) que abrem sem rede
    caminhos     RAIZ, PASTA_LAB, curto(caminho)
    rede         a rede e os certificados (downloads)
    hub          o caminho até o modelo: o cache, o download, a memória livre
    carregar_gpt2, carregar_llama   os modelos do hub, do cache ou de uma pasta
    pesos_gpt2   os pesos do GPT-2 nas nossas peças e de volta (a transposição das Conv1D)
    montagem     o nosso modelo sobre os pesos carregados: modelos, tokenizar, confere, contar
    codigo       --codigo da lição 06: as peças do modelo, com arquivo e linha
    conferir     a sua função contra a da lição (os exercícios das apostilas)
    otimizador   Adam e AdamW à mão (importar torch.optim custa 1 a 2 s)
    dispositivo  --dispositivo: CPU, CUDA ou MPS
    distribuido  vários processos (torchrun, gloo ou nccl)
    desafio      --desafio e --com-o-seu numa lição (o desafio mora em lab/desafios/)

Nada aqui importa o torch: a primeira linha de uma lição sai antes dele.
"""
from . import figuras, paginas
from .caminhos import RAIZ, curto
from .carregar_gpt2 import REGRA_DE_CARACTERES, TAMANHOS_GPT2, de_caracteres
from .conferir import conferir
from .console import (Progresso, cientifico, citar, comando, cronometrar, dizer, em_linhas,
                      inteiro, largura, legivel, limite, num, pct, plural, quebrar, tamanho,
                      token)
from .dispositivo import opcao_dispositivo, preparar_treino
from .erros import ExperimentoPulado
from .hub import ModeloIndisponivel
from .licao import Licao, importar_licao
from .montagem import confere, contar
from .opcoes import inteiro_entre, opcao, real_entre, texto_utf8
from .otimizador import Adam
from .processo import em_paralelo
from .ritmo import uma_thread

__all__ = [
    "Licao", "importar_licao", "ExperimentoPulado",
    "opcao", "inteiro_entre", "real_entre", "texto_utf8", "opcao_dispositivo",
    "dizer", "quebrar", "em_linhas", "largura", "comando", "citar", "token", "legivel",
    "Progresso", "cronometrar",
    "num", "inteiro", "cientifico", "pct", "tamanho", "plural", "limite",
    "RAIZ", "curto", "figuras", "paginas",
    "ModeloIndisponivel", "TAMANHOS_GPT2", "REGRA_DE_CARACTERES", "de_caracteres",
    "contar", "confere", "conferir",
    "Adam", "preparar_treino", "uma_thread", "em_paralelo",
]
