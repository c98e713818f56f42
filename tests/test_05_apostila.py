"""Apostila 05: os números do texto corrido que os blocos <!-- saida --> não cobrem.

Cada teste calcula o número por um caminho independente do script (fórmula fechada,
transformers, torch) e confere que a apostila diz exatamente isso. As faixas do
experimento 2 em várias sementes usam as funções da lição (são medidas dela); no treino,
para caber no tempo, só rodam as sementes que dão as pontas das faixas citadas (a apostila
resume as sementes 0 a 9, medidas na máquina em que foi escrita).
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import common
from conftest import RAIZ

L05 = common.importar_licao("05_block")
TEXTO = " ".join((RAIZ / "apostilas" / "05_block.md").read_text(encoding="utf-8").split())


def diz(trecho: str):
    """O trecho aparece na apostila (espaços e quebras de linha normalizados)."""
    trecho = " ".join(trecho.split())
    assert trecho in TEXTO, f"a apostila deveria dizer: {trecho!r}"


@pytest.fixture
def um_thread():
    """O modelo do experimento 2 é minúsculo: com 2 threads e a máquina ocupada, fica
    dezenas de vezes mais lento. Um thread dá os mesmos números."""
    antes = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(antes)


def test_gradiente_sem_residual():
    diz(f"0{{,}}9^{{48}} \\approx {common.num(0.9 ** 48, 4).replace(',', '{,}')}")


def test_formulas_da_conta_de_parametros():
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    for d in (768, 64):
        with torch.device("meta"):
            bloco = GPT2Block(GPT2Config(n_embd=d, n_head=4), layer_idx=0)
        conta = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
        assert conta(bloco.attn) == 4 * d * d + 4 * d
        assert conta(bloco.mlp) == 8 * d * d + 5 * d
        assert conta(bloco.mlp.c_fc) == conta(bloco.attn)  # "c_fc sozinha empata"
        assert conta(bloco.mlp.c_proj) == 4 * d * d + d
        assert conta(bloco.attn.c_attn) == 3 * d * d + 3 * d
        assert conta(bloco.ln_1) + conta(bloco.ln_2) == 4 * d
    for formula in ("$4d^2 + 4d$", "$8d^2 + 5d$", "$4d^2 + d$", "$3d^2 + 3d$", "$12d^2 + 13d$"):
        diz(formula)


def test_gpt2_xl_exercicio_4():
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch.device("meta"):
        m = GPT2LMHeadModel(GPT2Config(n_embd=1600, n_layer=48, n_head=25))
    por_bloco = sum(p.numel() for p in m.transformer.h[0].parameters())
    total = sum(p.numel() for p in m.parameters())  # o peso amarrado conta uma vez
    assert por_bloco == 12 * 1600 ** 2 + 13 * 1600
    diz(f"{common.inteiro(por_bloco)} por bloco e {common.inteiro(total)} no total")
    diz(f"são {common.tamanho(4 * total)} de pesos em fp32")
    diz(f"cerca de {common.num(1.3 * 4 * total / 2 ** 30, 1)} GiB de memória livre")


def test_layernorm_de_3_e_4():
    y = F.layer_norm(torch.tensor([3.0, 4.0]), (2,), eps=1e-5)
    assert torch.allclose(y, torch.tensor([-1.0, 1.0]), atol=1e-4)
    diz("LN([3, 4]) ≈ [−1, 1]")


def test_derivadas_da_gelu():
    x = torch.tensor([-2.0, -5.0, -0.7518], dtype=torch.float64, requires_grad=True)
    F.gelu(x).sum().backward()
    d2, d5, dmin = x.grad.tolist()
    diz(f"GELU′(−2) ≈ {common.num(d2, 3).replace('-', '−')}")
    diz(f"GELU′(−5) ≈ {common.cientifico(d5, 1).replace('-', '−', 1)}")
    assert abs(dmin) < 1e-5  # zero no mínimo
    diz("4,73e-4 (menos de um milésimo)")


def test_razoes_no_inicio_em_dez_sementes(um_thread):
    camada1, camada40 = [], []
    for s in range(10):
        pre = L05.treinar_pilha(True, s, passos=0)[0]
        pos = L05.treinar_pilha(False, s, passos=0)[0]
        camada1.append(pos[0] / pre[0])
        camada40.append(pos[-1] / pre[-1])
    diz(f"entre {common.num(min(camada1), 2)} e {common.num(max(camada1), 1)} na camada 1, "
        f"e entre {common.num(min(camada40), 1)} e {common.num(max(camada40), 1)} na\n"
        "camada 40")


@pytest.fixture(scope="module")
def extremos():
    """Só as corridas que dão as pontas das faixas citadas (medidas nas sementes 0 a 9):
    Pre-LN 0, 3 e 7 (perda final mais baixa e mais alta, maior queda); Post-LN 4, 5 e 6
    (menor e maior queda, perda final mais alta e mais baixa)."""
    antes = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pre = {s: L05.treinar_pilha(True, s) for s in (0, 3, 7)}
        pos = {s: L05.treinar_pilha(False, s) for s in (4, 5, 6)}
        return pre, pos
    finally:
        torch.set_num_threads(antes)


def test_treino_sem_aquecimento_faixas(extremos):
    pre, pos = extremos
    queda_pos = [L05.quedas(r[1]) for r in pos.values()]
    queda_pre = [L05.quedas(r[1]) for r in pre.values()]
    perda_pos = [r[2][-1] for r in pos.values()]
    perda_pre = [r[2][-1] for r in pre.values()]
    # "caiu mais de um milhão de vezes em todas (chegando a alguns bilhões)"
    assert min(queda_pos) > 1e6 and 1e9 < max(queda_pos) < 1e10
    diz("caiu mais de um milhão de vezes em todas as dez sementes** (chegando a alguns bilhões)")
    # "variou no máximo cerca de 14 vezes"
    assert all(q < 15 for q in queda_pre) and max(queda_pre) > 12
    diz("variou no máximo cerca de 14 vezes")
    # perdas: Post-LN em cima do acaso, Pre-LN abaixo dele
    diz(f"terminou entre {common.num(min(perda_pos), 2)} e {common.num(max(perda_pos), 2)}, "
        "em cima do acaso")
    assert all(p < math.log(16) for p in perda_pre)
    assert 2.45 < min(perda_pre) < 2.55 and 2.70 < max(perda_pre) < math.log(16)
    diz("(de cerca de 2,5 a 2,75)")


def test_taxa_menor_colapsa_na_maioria_mas_nao_em_todas(um_thread):
    quedas = {s: L05.quedas(L05.treinar_pilha(False, s, passos=40, lr=1e-3)[1]) for s in (0, 4)}
    assert quedas[0] > 100      # a maioria das sementes colapsa (0, 1, 2, 3, 5 a 9)
    assert quedas[4] < 20       # a semente 4 não, em 40 passos
    diz("Com uma taxa menor, 1e-3, o\ncolapso ainda acontece na maioria das sementes, mas não em "
        "todas, dentro de 40 passos.")
