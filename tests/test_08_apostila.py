"""Apostila 08: as respostas dos exercícios, contra as contagens da lição e contas feitas aqui
(a fórmula fechada, o cache KV do Llama 3 8B, o alvo do BERT).

Ficam em test_08_since_2017 os testes que leem a apostila junto com um treino ou uma execução
da lição (as sementes "em qualquer CPU", a semente 6 e a resposta 5, com --completo): o
oráculo deles é o treino, e a frase da apostila é o que ele confere."""
from __future__ import annotations

import re

import pytest

from conftest import RAIZ
from comum.console import inteiro, num, pct
from comum import importar_licao

L = importar_licao("08_since_2017")


# ------------------------------------------------------------ respostas dos exercícios
def respostas():
    """O texto da seção de respostas da apostila (dentro do <details>)."""
    texto = (RAIZ / "apostilas" / "08_since_2017.md").read_text(encoding="utf-8")
    secao = texto.split("## Respostas dos exercícios", 1)[1].split("## Próxima lição", 1)[0]
    assert "<details>" in secao and "</details>" in secao
    return re.sub(r"\s+", " ", secao)            # as quebras de linha não contam


def test_ordem_das_secoes_do_fim():
    texto = (RAIZ / "apostilas" / "08_since_2017.md").read_text(encoding="utf-8")
    titulos = re.findall(r"^## (.+)$", texto, re.M)
    assert titulos[-4:] == ["10. Exercícios", "Notas para o professor",
                            "Respostas dos exercícios", "Próxima lição"]


def test_resposta_1_o_caminho_de_2017_a_2026():
    """A tabela da resposta 1 tem o total e a diferença que o experimento 1 imprime em cada
    passo, e as frases sobre qual troca mexe mais (e qual não mexe) seguem os números."""
    t = dict(L.TAMANHOS["base"], nome="base")
    base = L.contar_componentes(L.ANOS["2017"], t)["total"]
    texto, cfg, passos = respostas(), dict(L.ANOS["2017"]), {}
    anterior = base
    for chave, valor in [("norma", "pre"), ("normalizador", "rmsnorm"), ("mlp", "swiglu"),
                         ("posicoes", "rope"), ("atencao", "gqa"), ("vieses", "nao")]:
        cfg[chave] = valor
        total = L.contar_componentes(cfg, t)["total"]
        dif = total - base
        sinal = "+" if dif > 0 else "-" if dif < 0 else ""
        linha = f"| `--{chave} {valor}` | {inteiro(total)} | {sinal}{inteiro(abs(dif))} |"
        assert linha in texto, linha
        passos[chave], anterior = total - anterior, total
    assert cfg == L.ANOS["2026"]
    maior = min(passos, key=passos.get)
    assert maior == "atencao"
    assert f"ela tira {inteiro(-passos['atencao'])} dos " \
        f"{inteiro(base - total)} parâmetros" in texto
    assert [c for c, p in passos.items() if p == 0] == ["posicoes"]
    gelu = L.contar_componentes(dict(L.ANOS["2017"], mlp="gelu"), t)["total"]
    assert gelu == base                                   # "--mlp gelu também não mexe"


def test_resposta_2_mqa_a_mao():
    d, dh = 512, 64
    antes, mqa = 4 * (d * d + d), 2 * d * d + 2 * d * dh
    t = dict(L.TAMANHOS["base"], nome="base")
    g = L.contar_componentes(dict(L.ANOS["2026"], atencao="mqa"), t)
    assert g["atenção"] == 18 * mqa and L.contar_componentes(L.ANOS["2017"], t)["atenção"] \
        == 18 * antes
    texto = respostas()
    for n in (antes, mqa, 18 * antes, 18 * mqa):
        assert inteiro(n) in texto
    assert f"cai para {round(100 * mqa / antes)} %" in texto
    assert f"encolhe {100 - round(100 * mqa / antes)} %" in texto


def test_resposta_3_cache_de_128000_tokens():
    gqa = L.bytes_cache_kv(32, 8, 128, 128_000)
    assert gqa == 2 * 32 * 8 * 128 * 128_000 * 2 == 16_777_216_000
    assert gqa / 2**30 == 15.625 and 4 * gqa / 2**30 == 62.5
    pesos = 8_030_261_248 * 2 / 2**30                      # Llama 3 8B em fp16
    texto = respostas()
    assert "16.777.216.000 bytes, exatamente 15,625 GiB" in texto and "62,5 GiB" in texto
    assert f"ocupam {num(pesos, 2)} GiB" in texto
    assert gqa / 2**30 > pesos and 4 * gqa / 2**30 > 4 * pesos   # "passa do modelo inteiro"


@pytest.mark.parametrize("d, largura, excesso", [(2048, 5632, "3,125 %"),
                                                 (8192, 22016, "0,78 %")])
def test_resposta_6_largura_e_excesso(d, largura, excesso):
    assert L.largura_swiglu(d, multiplo=256) == largura
    assert largura % 256 == 0 and largura - 256 < int(8 * d / 3) <= largura
    swiglu, classico = 3 * d * largura, 8 * d * d
    texto = respostas()
    assert inteiro(int(8 * d / 3)) in texto
    assert f"{inteiro(swiglu)} " in texto and inteiro(classico) in texto
    assert f"excesso de {inteiro(swiglu - classico)} ({excesso}" in texto
    casas = len(excesso.split(",")[1].split()[0])
    assert num(100 * (swiglu / classico - 1), casas) == excesso.split()[0]


def test_resposta_7_bert_com_alvos_fixos():
    alvos = round(0.15 * 512)                                # 76,8 -> 77
    assert alvos == 77
    texto = respostas()
    assert f"round(76,8) = {alvos} alvos" in texto
    assert f"{alvos}/512 = {pct(alvos / 512, 2)}" in texto
    assert f"um sinal a cada {num(512 / alvos, 2)} tokens" in texto
    assert f"64 × {alvos} = {inteiro(64 * alvos)} previsões" in texto
    assert f"{num(512 / alvos, 2)} vezes mais sinal" in texto
