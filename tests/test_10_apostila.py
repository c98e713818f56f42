"""Apostila 10: os números que ela cita dos dados congelados e do treino padrão são os que a
lição calcula e imprime (as faixas do treino padrão são as que test_10_treino.py confere), e
os do Ritmo, os que lab/comum/ritmo.py usa."""
from __future__ import annotations

import re

import pytest

from conftest import RAIZ, rodar_script
from comum.console import num
from comum import ritmo as R
from comum import importar_licao
from test_10_treino import FAIXAS  # as faixas do treino padrão, que ele confere

L10 = importar_licao("10_treino")


@pytest.fixture(scope="module")
def dados():
    return L10.dados()


def apostila():
    return " ".join((RAIZ / "apostilas" / "10_treino.md").read_text(encoding="utf-8").split())


@pytest.mark.cpus
def test_os_numeros_dos_dados_que_a_apostila_cita(dados):
    """O tamanho do texto, do treino e da validação, as réguas do experimento 1 e as
    épocas que a apostila cita saem dos dados congelados (e não mudam mais)."""
    texto, _, tok, treino, validacao = dados
    uni, bi = (L10.entropia_ngrama(treino, validacao, n, len(tok)) for n in (1, 2))
    assert bi > L10.LIMIAR_VALIDACAO                  # passar do limiar = passar do bigrama
    a = apostila()
    assert (f"ficam em {num(uni, 2)} (só a frequência de cada caractere) e {num(bi, 2)} (o "
            "caractere depois do anterior)") in a
    assert f'é raro): {num(uni, 2)};' in a and f'vem "u"): {num(bi, 2)}.' in a
    fora = sum(1 for c in texto if c not in tok.ids)
    assert f"são {fora}, {num(100 * fora / len(texto), 2)} % do texto" in a
    assert f"{round(len(texto) / 1000)} mil caracteres de português técnico" in a
    assert (f"{round(len(treino) / 1000)} mil para o treino e {round(len(validacao) / 1000)} "
            "mil para a validação") in a
    assert (f"Com 3.000 passos o modelo vê o texto de treino "
            f"{num(3000 * 12 * 64 / len(treino), 1)} vezes") in a
    assert "mais de 100 mil vezes o texto" in a                  # o WebText tem 40 GB
    assert 40e9 / len(texto.encode("utf-8")) > 100_000


def test_a_apostila_cita_as_faixas_do_treino_padrao():
    """As faixas que este arquivo confere são as que a apostila escreve; o limiar fica
    acima da faixa final e abaixo da régua do bigrama."""
    a = apostila()
    for nome, frase in (("passo 0", "{} a {} no passo 0"), ("passo 100", "de {} a {} no passo 100"),
                        ("final", "termina entre {} e {} na validação")):
        baixo, alto = FAIXAS[nome]
        assert frase.format(num(baixo, 2), num(alto, 2)) in a, nome
    for nome in ("existem 100", "existem 300", "existem final"):
        baixo, alto = FAIXAS[nome]
        assert f"{baixo} a {alto} %" in a, nome
    assert f"abaixo de {num(L10.LIMIAR_VALIDACAO, 1)}, o limiar que o script confere" in a
    assert FAIXAS["final"][1] < L10.LIMIAR_VALIDACAO


def test_a_apostila_descreve_o_ritmo_com_os_numeros_dele():
    """O parágrafo sobre a máquina ocupada cita os números do Ritmo (lab/comum/ritmo.py, que
    test_ritmo confere): 2x mais lento, a cada 100 passos."""
    a = apostila()
    assert R.MAIS_LENTO == 2 and "duas vezes mais lentos que antes" in a
    assert f"a cada {R.REVER_A_CADA} passos" in a
    assert "`Ritmo:`" in a and "`OMP_NUM_THREADS`" in a


def test_o_custo_da_cabeca_do_bpe_que_a_apostila_cita():
    """Por que não o BPE: os 29,6 bilhões de FLOPs da cabeça e as 7,4 vezes o passo são os que
    a lição 12 imprime (o experimento 1, no modelo padrão da 10); o wte do BPE e as vezes o
    modelo, contados aqui."""
    r = rodar_script("12_escala.py", "--so", "1", "--sem-figuras")
    assert r.returncode == 0, r.saida[-2000:]
    saida = " ".join(r.saida.split())
    flops, vezes = re.search(r"só a cabeça de saída custaria ([\d.]+) FLOPs por passo: "
                             r"(\d+,\d)x o passo inteiro", saida).groups()
    a = apostila()
    assert f"cabeça custaria {num(int(flops.replace('.', '')) / 1e9, 1)} bilhões de FLOPs" in a
    assert f"token), {vezes} vezes o passo inteiro do nosso modelo" in a
    n = int(re.search(r"N = ([\d.]+)\)", saida).group(1).replace(".", ""))
    wte = 50_257 * 128
    assert f"teria {num(wte / 1e6, 1)} milhões de parâmetros, oito vezes" in a
    assert round(wte / n) == 8
    assert "O experimento 1 da lição 12 imprime essa conta." in a
