"""O encanamento das lições: o que elas usam e não ensinam.

Uma lição importa daqui o que imprime, mede e roda (`from comum import Licao, dizer, ...`)
e, da lição anterior, o que ela ensina (`importar_licao("05_block")`). Este arquivo não
define nada: repete os nomes que três ou mais lições usam. Os outros moram no módulo de
cada assunto (`from comum.console import citar`):

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
    carregar_gpt2, carregar_llama   os modelos do hub, do cache ou de uma pasta
    pesos_gpt2   os pesos do GPT-2 nas nossas peças, contar(modelo)
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
from .carregar_gpt2 import (REGRA_DE_CARACTERES, TAMANHOS_GPT2, ModeloIndisponivel,
                            de_caracteres)
from .conferir import conferir
from .console import (Progresso, cientifico, comando, cronometrar, dizer, em_linhas, inteiro,
                      largura, legivel, limite, num, pct, plural, quebrar, tamanho, token)
from .dispositivo import opcao_dispositivo, preparar_treino
from .erros import ExperimentoPulado
from .licao import Licao, importar_licao
from .opcoes import inteiro_entre, opcao, real_entre, texto_utf8
from .otimizador import Adam
from .pesos_gpt2 import confere, contar
from .processo import em_paralelo
from .ritmo import uma_thread

__all__ = [
    "RAIZ", "Adam", "ExperimentoPulado", "Licao", "ModeloIndisponivel", "Progresso",
    "REGRA_DE_CARACTERES", "TAMANHOS_GPT2",
    "cientifico", "comando", "confere", "conferir", "contar", "cronometrar", "curto",
    "de_caracteres", "opcao_dispositivo", "preparar_treino",
    "dizer", "em_linhas", "em_paralelo", "figuras", "importar_licao", "inteiro",
    "inteiro_entre", "largura", "legivel", "limite", "num", "opcao", "paginas", "pct",
    "plural", "quebrar", "real_entre", "tamanho", "texto_utf8", "token", "uma_thread",
]
