"""A página da lição 10 (gravada no fim do experimento 3): o seu treino, as curvas e as amostras.

A página leva o histórico do treino (as perdas de cada avaliação nos lotes fixos e a do lote de
cada passo) e a primeira amostra de cada ponto, e mostra as curvas e as amostras amadurecendo.
Ela sai do treino padrão que tests/test_10_treino.py já faz (tests/apoio/treinos.py): nada se
treina de novo aqui. Oráculos: o que o experimento 3 imprime (a tabela, as amostras, as
contagens de palavras e as duas frases do veredito) e o checkpoint que o mesmo treino grava (a
perda de cada passo). E a página de apostilas/paginas/ é a que o treino padrão
grava, a menos do arredondamento da CPU.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from conftest import RAIZ
from comum.console import inteiro, legivel
from comum import importar_licao
from navegador import dados_de, navegador, rodar_no_node  # noqa: F401 - navegador: fixture
from treinos import mesma_pagina, treino_padrao_10

L10 = importar_licao("10_treino")
LINHA = re.compile(r"^ +([\d.]+) +(?:[\d,]+e-\d)? +(\d,\d\d) +(\d,\d\d) +[\d.,]+ s$", re.M)
AMOSTRA = re.compile(r"^  Amostra no passo ([\d.]+) \(temperatura 0,8\):\n((?:  \| .*\n)+)"
                     r"  (palavras de 3\+ letras que existem no texto de treino: .*)$", re.M)


@pytest.fixture(scope="module")
def execucao():
    codigo, saida, erros, pasta = treino_padrao_10()
    assert codigo == 0, saida[-2000:] + erros[-2000:]
    caminho = Path(pasta) / "paginas" / "10_treino.html"
    assert f"Página salva: {caminho}" in saida
    return saida, caminho, Path(pasta)


def esperado(saida, amostra) -> dict[str, str]:
    """O texto de cada data-campo, com a amostra `amostra` marcada, pelo que a lição imprime."""
    junto = " ".join(saida.split())
    tabela = LINHA.findall(saida)
    amostras = AMOSTRA.findall(saida)
    modelo = L10.GPT2(4, 128, 4, len(L10.ALFABETO), 64)
    N = sum(p.numel() for p in modelo.parameters())
    c = {"descricao": f"O GPT2 da lição 06 com 4 blocos, d = 128, 4 cabeças e 64 posições (N = "
                      f"{inteiro(N)} parâmetros), treinado por caractere nas apostilas: 1.000 "
                      "passos de 12 × 64 caracteres, AdamW com taxa máxima 1e-3, semente 0. As "
                      "contas são as do experimento 3 de lab/10_treino.py (leia junto: "
                      "apostilas/10_treino.md).",
         "final": re.search(r"^Perda de validação: .*$", saida, re.M)[0],
         "palavras": re.search(r"Palavras que existem no texto: .*? de treino\)\.", junto)[0]}
    for k, (passo, treino, validacao) in enumerate(tabela):
        c[f"tab.{k}.passo"], c[f"tab.{k}.treino"], c[f"tab.{k}.validacao"] = (passo, treino,
                                                                              validacao)
    for k, (passo, _, palavras) in enumerate(amostras):
        c[f"amostra.{k}.passo"], c[f"amostra.{k}.palavras"] = f"Passo {passo}", palavras
    passo = amostras[amostra][0]
    _, treino, validacao = next(linha for linha in tabela if linha[0] == passo)
    c["escolhida"] = (f"No passo {passo} (a amostra marcada): treino {treino}, validação "
                      f"{validacao}, nos lotes fixos.")
    return c


def diferencas(obtido, certo) -> list[str]:
    return [f"{k}: página {obtido.get(k)!r}, impresso {v!r}" for k, v in certo.items()
            if obtido.get(k) != v] + [
        f"{k}: só na página" for k in set(obtido) - set(certo) if ".texto" not in k]


def test_a_pagina_das_apostilas_e_a_do_treino_padrao(execucao):
    """apostilas/paginas/10_treino.html é a que o treino padrão grava, a menos do
    arredondamento da CPU (tests/apoio/treinos.py; regrave com lab/10_treino.py --so 3 --html
    apostilas/paginas); o histórico é o do checkpoint do mesmo treino, a perda de cada passo
    inclusive."""
    _, caminho, pasta = execucao
    gravada = RAIZ / "apostilas" / "paginas" / "10_treino.html"
    diferentes = mesma_pagina(gravada, caminho)
    assert not diferentes, (
        "apostilas/paginas/10_treino.html está velha: rode lab/10_treino.py --so 3 "
        "--html apostilas/paginas\n" + "\n".join(diferentes[:10]))
    html = caminho.read_text(encoding="utf-8")
    assert html.count("<script>") == 1 and "Content-Security-Policy" in html
    assert len(html.encode("utf-8")) < 120_000
    ck = torch.load(pasta / "10_gpt.pt", map_location="cpu", weights_only=True)
    assert dados_de(caminho)["historico"] == ck["historico"]
    assert len(ck["historico"]["lote"]) == 1000


def test_as_amostras_e_os_numeros_no_node(execucao):
    saida, caminho, _ = execucao
    html = caminho.read_text(encoding="utf-8")
    obtido = rodar_no_node(html, "[0, 1, 2, 3].map(amostra => PAGINA.campos({amostra}))")
    ruins = [f"amostra {k}: {d}" for k, o in enumerate(obtido)
             for d in diferencas(o, esperado(saida, k))]
    assert not ruins, "\n".join(ruins[:10])
    # o texto de cada amostra, inteiro na página; o script mostra o começo, em linhas de 72
    for (passo, linhas, _), texto in zip(AMOSTRA.findall(saida),
                                         (obtido[0][f"amostra.{k}.texto"] for k in range(4))):
        mostrado = [linha[4:] for linha in linhas.splitlines()]
        daqui = legivel(texto, espaco=" ").encode("cp1252", "replace").decode("cp1252")
        assert [daqui[i:i + 72].rstrip() for i in range(0, 72 * len(mostrado), 72)] == [
            linha.rstrip() for linha in mostrado], passo
        assert len(texto) == L10.NOVOS
    assert [a[0] for a in dados_de(caminho)["amostras"]] == [0, 100, 300, 1000]


def test_apontar_as_amostras_no_navegador(execucao, navegador):
    saida, caminho, _ = execucao
    nav = navegador
    nav.abrir(caminho, 1280, 720)

    def conferir():
        k = nav.avaliar("PAGINA.ler()")["amostra"]
        ruins = diferencas(nav.campos(), esperado(saida, k))
        assert not ruins, "\n".join(ruins[:10])
        assert nav.erros == []
        marcas = nav.avaliar("Array.from(document.querySelectorAll('#grafico [data-marca]'),"
                             " l => l.getAttribute('stroke'))")
        assert marcas == ["#1b1b1b" if j == k else "#c9ccd1" for j in range(4)]
        assert nav.avaliar("Array.from(document.querySelectorAll('#amostras .cartao'), "
                           "b => b.getAttribute('aria-pressed'))") == [
            "true" if j == k else "false" for j in range(4)]
        return k

    assert conferir() == 3                                  # abre na última amostra
    nav.apontar('#amostras .cartao[data-k="0"]')
    assert conferir() == 0
    nav.teclar('#amostras .cartao[data-k="0"]', "Tab")
    assert conferir() == 1
    # as curvas: a de cada passo (1.000 pontos) e as duas das avaliações (11)
    caminhos = nav.avaliar("Array.from(document.querySelectorAll('#grafico path'), "
                           "p => p.getAttribute('d').split('L').length)")
    assert caminhos == [1000, 11, 11]


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 720)])
def test_cabe_no_celular_e_no_projetor(execucao, navegador, largura, altura, tmp_path):
    _, caminho, _ = execucao
    nav = navegador
    nav.abrir(caminho, largura, altura)
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    assert nav.alcancaveis("#amostras .cartao")
    if largura >= 1000:             # no projetor, as curvas e as duas primeiras amostras
        for seletor in ("#grafico svg", '#amostras .cartao[data-k="1"]'):
            fundo = nav.avaliar(f"document.querySelector({seletor!r}).getBoundingClientRect()"
                                ".bottom + scrollY")
            assert fundo < altura, seletor
    nav.captura(tmp_path / f"10_{largura}.png")
