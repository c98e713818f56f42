"""Os treinos padrão das lições 10 e 11, rodados uma vez na sessão inteira e lidos pelos testes
da lição e pelos da página que o treino grava (tests/test_paginas_10.py, test_paginas_11.py);
e os treinos do experimento 2 da 05 (treino_05), que test_05_block e test_05_apostila pedem
com os mesmos argumentos: cada um roda uma vez na sessão.

Cada um grava a página do treino (--html) numa pasta da sessão: a página do treino padrão é a
que mora em apostilas/paginas/, e os testes das páginas conferem que é a mesma, byte a byte.
"""
from __future__ import annotations

from types import SimpleNamespace

import sessao
from conftest import rodar_script
from licao import importar_licao


def _rodar_o_treino_padrao_10():
    pasta = sessao.pasta_da_sessao("l10_treino_padrao")
    r = rodar_script("10_treino.py", "--so", "3", "--checkpoint", str(pasta / "10_gpt.pt"),
                     "--figuras", str(pasta / "figuras"), "--html", str(pasta / "paginas"),
                     timeout=3000, guardar=False)
    return r.returncode, r.saida, r.erros, str(pasta)


def treino_padrao_10():
    """(código, saída, erros, pasta) do experimento 3 da lição 10 com as opções padrão (o
    checkpoint, a figura e a página na pasta): uma execução na sessão inteira."""
    return sessao.compartilhado("10 treino padrão --so 3", _rodar_o_treino_padrao_10)


def _checkpoint_minusculo(pasta):
    import torch

    L10 = importar_licao("10_treino")
    torch.manual_seed(0)
    c = {"camadas": 1, "largura": 16, "cabecas": 2, "contexto": 32, "alfabeto": L10.ALFABETO}
    arquivo = pasta / "ck.pt"
    L10.salvar(arquivo, L10.GPT2(1, 16, 2, 128, 32), c, passo=7,
               historico={"passo": [7], "treino": [4.8], "validação": [4.8]})
    return str(arquivo)


def licao_padrao_11(gpt2_pequeno):
    """(execução, pasta) da lição 11 inteira com os padrões (uma vez na sessão), como um aluno
    no Windows, com um checkpoint da lição 10 minúsculo e um GPT-2 de teste: tudo roda. A
    figura e a página do treino ficam na pasta."""
    pasta = sessao.pasta_da_sessao("l11")

    def rodar():
        ck = _checkpoint_minusculo(pasta)
        r = rodar_script("11_inducao.py", "--figuras", str(pasta / "figuras"), "--checkpoint", ck,
                         "--html", str(pasta / "paginas"), env={"LAB_MODELO": str(gpt2_pequeno)},
                         timeout=900)
        return SimpleNamespace(returncode=r.returncode, saida=r.saida, erros=r.erros)

    # compartilhado, e não só o cache de rodar_script: a chave dele olha a data das pastas
    # citadas, e a primeira execução muda a das figuras e a da página (a segunda rodaria tudo)
    return sessao.compartilhado("11 lição padrão", rodar), pasta


def treino_05(pre_ln, semente, **kw):
    """L05.treinar_pilha(pre_ln, semente, **kw), calculado uma vez na sessão (todos os
    arquivos e processos; sob outra variante de CPU ou outro número de threads, de novo:
    a chave do compartilhado inclui as threads do torch na hora da chamada)."""
    opcoes = " ".join(f"{k}={v!r}" for k, v in sorted(kw.items()))
    return sessao.compartilhado(f"05 treinar_pilha pre_ln={pre_ln} semente={semente} {opcoes}",
                                lambda: importar_licao("05_block").treinar_pilha(pre_ln, semente,
                                                                                 **kw))
