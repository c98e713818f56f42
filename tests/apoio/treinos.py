"""Os treinos padrão das lições 10 e 11, rodados uma vez na sessão inteira e lidos pelos testes
da lição e pelos da página que o treino grava (tests/test_10_paginas.py, test_11_paginas.py);
e os treinos do experimento 2 da 05 (treino_05), que test_05_block e test_05_apostila pedem
com os mesmos argumentos: cada um roda uma vez na sessão.

Cada um grava a página do treino (--html) numa pasta da sessão: a página do treino padrão é a
que mora em apostilas/paginas/, e os testes das páginas conferem que é a mesma (mesma_pagina):
o molde byte a byte, e os dados iguais a menos do arredondamento da CPU. A página gravada veio
de uma máquina; a desta execução, de outra CPU, difere na sétima casa dos floats de 32 bits
(as perdas de 1.000 passos da 10, até 5e-7; as notas e perdas da 11, até 1e-4 entre as
variantes de tests/test_cpus.py). Byte a byte, nenhuma página de treino passaria em duas CPUs.
"""
from __future__ import annotations

import base64
import json
from types import SimpleNamespace

import numpy as np

import sessao
from conftest import rodar_script
from comum import importar_licao
from navegador import DADOS


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


# a folga dos floats: 10 vezes a maior diferença medida entre CPUs (1e-4, nas notas da 11);
# as páginas mostram 2 ou 3 casas, e outro treino erra por muito mais (a 11 com --semente 1:
# as perdas mudam de 0,05 a 0,12)
FOLGA = 1e-3


def _diferencas(a, b, onde, binarios) -> list[str]:
    if onde in binarios and isinstance(a, str) and isinstance(b, str):
        a, b = (np.frombuffer(base64.b64decode(x), dtype="<f4").tolist() for x in (a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{onde}: chaves {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _diferencas(a[k], b[k], f"{onde}.{k}", binarios)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{onde}: {len(a)} itens != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b))
                for d in _diferencas(x, y, f"{onde}[{i}]", binarios)]
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= FOLGA
        return [] if ok else [f"{onde}: {a!r} != {b!r}"]
    return [] if a == b and type(a) is type(b) else [f"{onde}: {a!r} != {b!r}"]


def mesma_pagina(gravada, nova, binarios=()) -> list[str]:
    """O que difere entre duas páginas de treino: o molde (o HTML, o CSS, o JS, tudo menos a
    linha dos DADOS) byte a byte; nos DADOS, textos, inteiros e a forma iguais, e cada float
    a até FOLGA. `binarios`: caminhos dos dados que são floats de 32 bits em base64 (".mapas")."""
    a, b = (p.read_text(encoding="utf-8") for p in (gravada, nova))
    ma, mb = DADOS.search(a), DADOS.search(b)
    if not (ma and mb):
        return ["uma das páginas não tem a linha const DADOS = ...;"]
    if DADOS.sub("", a) != DADOS.sub("", b):
        return ["o molde (HTML, CSS ou JS) mudou"]
    return _diferencas(json.loads(ma.group(1)), json.loads(mb.group(1)), "", set(binarios))
