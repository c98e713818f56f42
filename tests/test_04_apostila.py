"""Apostila 04: o que o texto corrido, as respostas dos exercícios e as notas para o professor
afirmam, contra contas feitas aqui (a fórmula fechada, um forward de verdade, a diagonal que o
ARENA usa) e contra o que a lição imprime; as respostas que mandam editar a lição rodam numa
cópia dela, como o aluno faria."""
from __future__ import annotations

import math
import re

import pytest
import torch

from conftest import RAIZ
from copia_do_aluno import copia_da_licao, rodar_copia
from comum.console import inteiro, num, pct
from comum import importar_licao

L04 = importar_licao("04_multihead")
APOSTILA = RAIZ / "apostilas" / "04_multihead.md"


# ------------------------------------------------------------ números do texto corrido
def test_numeros_do_texto_da_apostila():
    texto = " ".join((RAIZ / "apostilas" / "04_multihead.md").read_text(encoding="utf-8").split())
    d = 768
    proj, notas = L04.flops_por_token(d, 1024)
    n = 50
    acaso = sum(1 / (i + 1) for i in range(1 + n, 1 + 2 * n)) / n
    for trecho in (f"que dá {inteiro(4 * d * d + 4 * d)} com *d* = 768",
                   f"$T = 2d$: {inteiro(2 * d)} tokens no GPT-2 pequeno",
                   f"a parte que depende de *T* já é {pct(notas / (proj + notas), 0)}",
                   f"seria cerca de {num(acaso, 2)} com *n* = 50",
                   f"$\\ln 50257 \\approx {num(math.log(50257), 1).replace(',', '{,}')}$",
                   f"o que olhar ao acaso daria (cerca de {num(acaso, 2)})",
                   f"sorteia {n} tokens", f"({1 + 2 * n} tokens)"):
        assert " ".join(trecho.split()) in texto, trecho


def test_diagrama_da_inducao_aponta_a_posicao_do_texto():
    """O ^ fica sob a posição 3 (o que veio depois de r2) e o | sob n+2, como a legenda e a
    fórmula i - n + 1 dizem (o ^ estava sob a posição 2)."""
    texto = APOSTILA.read_text(encoding="utf-8")
    i = texto.index("posição:   0")
    linhas = texto[i:texto.index("```", i)].splitlines()
    posicao = linhas[0]
    seta = linhas[2]
    assert posicao[seta.index("^")] == "3"
    n2 = posicao.index("n+2")
    assert n2 <= seta.index("|") < n2 + 3
    flecha = linhas[3][:44]                                 # a flecha, antes da legenda
    assert flecha.index("+") == seta.index("^") and flecha.rindex("+") == seta.index("|")
    legenda = " ".join(" ".join(l[44:] for l in linhas[3:]).split())
    assert "na posição n+2 (token r2)" in legenda and "olha para a posição 3" in legenda
    n, i_ = 50, 50 + 2                                  # posição n+2 ...
    assert i_ - n + 1 == 3                              # ... olha para i - n + 1 = 3


def test_notas_publicadas_com_a_ressalva_da_medida():
    """A apostila cita as notas publicadas (0,83 a 0,93) dizendo que a medida não é a do lab:
    o ARENA faz a média de 52 posições (2 na primeira cópia), o lab de 50."""
    import re

    n = 50
    T = 1 + 2 * n
    diagonal = torch.zeros(T, T).diagonal(offset=1 - n)           # a do ARENA
    assert diagonal.numel() == 52
    perfeita = torch.zeros(1, 1, T, T)
    for i in range(1 + n, T):
        perfeita[0, 0, i, i - n + 1] = 1.0
    assert float(L04.notas_de_inducao(perfeita, n)) == 1.0
    arena = float(perfeita[0, 0].diagonal(offset=1 - n).mean())
    assert num(arena, 2) == "0,96" and arena == pytest.approx(50 / 52)
    texto = " ".join(re.sub(r"^> ?", "", APOSTILA.read_text(encoding="utf-8"),
                            flags=re.M).split())
    for trecho in ("5.5 (0,932), 6.9 (0,913), 7.10 (0,910), 5.1 (0,908) e 7.2 (0,833)",
                   "são 52 posições por sequência, 2 delas ainda na primeira cópia",
                   "O lab tira a média só das 50 posições da segunda cópia",
                   "teria 1,00 aqui e 50/52 ≈ 0,96 lá", "em 10 sequências",
                   "induction-head-detector", "ARENA 3.0", "arXiv:2211.00593"):
        assert trecho in texto, trecho
    assert "0,8 e 0,93" not in texto


# ------------------------------------------------------------ as respostas dos exercícios
def _respostas() -> str:
    texto = APOSTILA.read_text(encoding="utf-8")
    return texto[texto.index("## Respostas dos exercícios"):texto.index("## Próxima lição")]


def _copia(pasta, de, para):
    """lab/meu_04.py numa cópia do lab, com cada troca de texto de -> para."""
    return copia_da_licao(pasta, "04_multihead.py", *zip(de, para))


def _rodar(copia, *args, env=None):
    r = rodar_copia(copia, *args, env=env)
    return r.returncode, r.saida


def test_secoes_do_fim_e_respostas_fechadas():
    texto = APOSTILA.read_text(encoding="utf-8")
    fim = texto[texto.index("## 7. Exercícios"):]
    assert fim.index("## Notas para o professor") < fim.index("## Respostas dos exercícios") \
        < fim.index("## Próxima lição")
    r = _respostas()
    assert "<details>\n<summary>Abra depois de tentar</summary>" in r and "</details>" in r
    for k in range(1, 7):
        assert f"**{k}. " in r, f"sem resposta para o exercício {k}"


def test_resposta_1_formas_medidas():
    """As formas da resposta são as que um forward de verdade produz (d = 1024, h = 16)."""
    attn = L04.AtencaoMultiCabeca(1024, 16)
    x = torch.randn(2, 10, 1024)
    with torch.no_grad():
        saida_c_attn = attn.c_attn(x)
        antes = saida_c_attn.split(1024, dim=-1)
        q, k, v = attn.qkv(x)
        pesos = attn.pesos(x)
        y, _ = L04.L03.atencao(q, k, v, True)
        junto = L04.juntar_cabecas(y)
        fim = attn(x)
    medidas = {"entrada x": x, "saída de c_attn": saida_c_attn,
               "q, k, v antes de separar_cabecas": antes[0],
               "q, k, v depois de separar_cabecas": q, "notas e pesos": pesos,
               "y antes de juntar_cabecas": y, "y depois de juntar_cabecas": junto,
               "saída de c_proj": fim}
    r = _respostas()
    for nome, t in medidas.items():
        assert re.search(re.escape(nome) + r"\s+" + re.escape(str(tuple(t.shape))), r), nome


@pytest.mark.cpus
def test_resposta_2_juntar_sem_transpose(tmp_path):
    copia = _copia(tmp_path, ["return y.transpose(1, 2).reshape(B, T, h * dh)"],
                   ["return y.reshape(B, T, h * dh)"])
    codigo, saida = _rodar(copia, "--so", "1")
    assert codigo == 1
    r = " ".join(_respostas().split())
    for trecho in ("juntar_cabecas(separar_cabecas(x)) == x? NÃO", "certa: 0,803",
                   "certa: 0,122", "FALHOU a autoverificação"):
        assert trecho in saida and trecho in r, trecho


def test_resposta_3_h_que_nao_divide():
    with pytest.raises(AssertionError, match="d precisa ser múltiplo de h"):
        L04.AtencaoMultiCabeca(768, 10)
    assert 1600 % 24 == 16 and 1600 // 25 == 64
    assert {768 // 12, 1024 // 16, 1280 // 20, 1600 // 25} == {64}
    r = " ".join(_respostas().split())
    assert "`d precisa ser múltiplo de h`" in r and "(sobram 16)" in r


def test_resposta_6_indices_sem_o_endoftext(tmp_path, gpt2_pequeno):
    """As mudanças que a resposta descreve rodam e medem o que dizem: numa sequência r + r
    montada à mão, a nota de indução de uma atenção que copia dá 1."""
    n = 5
    T = 2 * n
    pesos = torch.zeros(1, 1, T, T)
    for i in range(T):
        pesos[0, 0, i, i - n + 1 if i >= n else 0] = 1.0
    i = torch.arange(n, 2 * n)                              # como a resposta diz
    assert float(pesos[..., i, i - n + 1].mean()) == 1.0
    copia = _copia(
        tmp_path,
        ["ids = torch.cat([torch.tensor([tok.eos_token_id]), r, r])[None]",
         "i = torch.arange(1 + n, 1 + 2 * n)", "return float(perdas[1:n].mean()), "
         "float(perdas[n + 1:2 * n].mean())"],
        ["ids = torch.cat([r, r])[None]", "i = torch.arange(n, 2 * n)",
         "return float(perdas[0:n - 1].mean()), float(perdas[n:2 * n - 1].mean())"])
    codigo, saida = _rodar(copia, "--so", "5", "--sem-figuras",
                           env={"LAB_MODELO": str(gpt2_pequeno)})
    assert codigo == 0, saida
    r = " ".join(_respostas().split())
    assert "`i = torch.arange(n, 2 * n)`" in r
    assert "`perdas[0:n - 1]`" in r and "`perdas[n:2 * n - 1]`" in r


def test_resposta_2_o_desafio_pega_o_mesmo_erro():
    """A juntar_cabecas do exercício 2 (sem o transpose), como o aluno a escreve, é o defeito
    sem_transpose do catálogo do desafio (o bloco da resposta é a saída dele, conferida em
    test_desafios), e as sondas que a resposta diz que passam passam: um token só e uma
    cabeça só."""
    import desafios
    from desafios import motor

    d = desafios.carregar("04_juntar_cabecas")

    def do_exercicio(y):
        B, h, T, dh = y.shape
        return y.reshape(B, T, h * dh)

    diag = motor.diagnosticar(d, do_exercicio)
    assert [x.nome for x in diag.defeitos] == ["sem_transpose"]
    passam = {s.descricao for s, dif in zip(diag.sondas, diag.diferencas) if dif is None}
    assert passam == {"um token só (T = 1): sem o transpose passa aqui",
                      "uma cabeça só (h = 1): a saída é y sem o eixo das cabeças"}
    r = " ".join(_respostas().split())
    assert "A sonda de um token só **passa**" in r and "a de uma cabeça só também" in r


# ------------------------------------------------------------ as notas para o professor
def test_notas_para_o_professor_numeros():
    """Os parâmetros do gpt2 x 4 bytes ~ 475 MiB, a mesma nota da apostila 03 (a conta fechada
    que dá o número da tabela está em test_03_apostila; a tabela contra o transformers e
    fatos.md, em test_carregar_gpt2)."""
    from comum.carregar_gpt2 import PARAMETROS_GPT2

    n = PARAMETROS_GPT2["gpt2"]
    texto = " ".join(APOSTILA.read_text(encoding="utf-8").split())
    assert inteiro(n) in texto and round(4 * n / 2**20) == 475 and "cerca de 475 MiB" in texto


def test_plano_de_90_minutos():
    from plano_de_aula import conferir_plano_de_90_minutos

    conferir_plano_de_90_minutos(APOSTILA, len(L04.LICAO.titulos))
