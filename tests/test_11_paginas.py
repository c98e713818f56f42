"""A página da lição 11 (gravada no fim do experimento 2): a transição de fase, passo a passo.

A página leva a tabela inteira do treino (as duas perdas e as notas de cada cabeça a cada 50
passos) e, em cada linha, os pesos de atenção das cabeças de token anterior e de indução na
sequência dos mapas do experimento 3; um controle desliza pelos passos. Ela sai da execução
padrão da lição que tests/test_11_inducao.py já roda (tests/apoio/treinos.py): nada se treina
de novo aqui. Oráculos: a tabela, as cabeças e a transição que o experimento 2 imprime, e os
mapas em caracteres que o experimento 3 imprime (antes e depois), na mesma execução. E a página
de apostilas/paginas/ é a que a execução padrão grava, a menos do arredondamento da CPU.
"""
from __future__ import annotations

import base64
import re

import numpy as np
import pytest

from comum import figuras
from conftest import RAIZ
from comum.console import inteiro
from navegador import dados_de, navegador, rodar_no_node  # noqa: F401 - navegador: fixture
from treinos import licao_padrao_11, mesma_pagina

TABELA = re.compile(r"^ +(\d[\d.]*) +(\d,\d\d) +(\d,\d\d)  ((?:\d,\d\d ?)+)  ((?:\d,\d\d ?)+)$",
                    re.M)


@pytest.fixture(scope="module")
def execucao(gpt2_pequeno):
    r, pasta = licao_padrao_11(gpt2_pequeno)
    assert r.returncode == 0, r.saida[-3000:] + r.erros[-2000:]
    caminho = pasta / "paginas" / "11_inducao.html"
    assert f"Página salva: {caminho}" in r.saida
    secoes = re.split(r"^Experimento (\d)/6 · .*$", r.saida, flags=re.M)
    return dict(zip(secoes[1::2], secoes[2::2])), caminho


def impresso(secoes) -> dict:
    """O que o experimento 2 imprime: as linhas da tabela, as cabeças nomeadas e a
    transição."""
    texto = " ".join(secoes["2"].split())
    prev = re.search(r"Cabeça de token anterior \(camada 0, a maior nota\): (\d)\.(\d)", texto)
    ind = re.search(r"Cabeças de indução \(camadas 1 em diante, nota acima de 0,3 no fim\): "
                    r"(\d)\.(\d)", texto)
    caiu, x, y = re.search(r"A maior queda entre duas linhas da tabela, (\d,\d\d) nats, foi "
                           r"entre os passos (\d+) e (\d+)", texto).groups()
    linhas = [(p, a, r, ant.split(), ind_.split()) for p, a, r, ant, ind_ in
              TABELA.findall(secoes["2"])]
    return {"linhas": linhas, "cabecas": [[int(prev[1]), int(prev[2])],
                                          [int(ind[1]), int(ind[2])]],
            "transicao": (caiu, int(x), int(y))}


def esperado(imp, k) -> dict[str, str]:
    """O texto de cada data-campo no passo da linha k da tabela impressa."""
    passo, acaso, repetida, ant, ind = imp["linhas"][k]
    (_, j0), (_, j1) = imp["cabecas"]
    caiu, x, y = imp["transicao"]
    return {"passo": passo, "aleatoria": acaso, "repetida": repetida, "ant": "  ".join(ant),
            "ind": "  ".join(ind), "nota.0": ant[j0], "nota.1": ind[j1],
            "momento": ("Antes" if int(passo.replace(".", "")) <= x else "Depois")
                       + " da transição de fase.",
            "resumo": f"A maior queda da parte repetida entre duas linhas da tabela, {caiu} "
                      f"nats, foi entre os passos {inteiro(x)} e {inteiro(y)}."}


def test_a_pagina_das_apostilas_e_a_do_treino_padrao(execucao):
    """apostilas/paginas/11_inducao.html é a que a execução padrão grava, a menos do
    arredondamento da CPU (tests/apoio/treinos.py; regrave com lab/11_inducao.py --so 2 --html
    apostilas/paginas)."""
    _, caminho = execucao
    gravada = RAIZ / "apostilas" / "paginas" / "11_inducao.html"
    diferentes = mesma_pagina(gravada, caminho, binarios=(".mapas",))
    assert not diferentes, (
        "apostilas/paginas/11_inducao.html está velha: rode lab/11_inducao.py --so 2 "
        "--html apostilas/paginas\n" + "\n".join(diferentes[:10]))
    html = caminho.read_text(encoding="utf-8")
    assert html.count("<script>") == 1 and "Content-Security-Policy" in html
    assert len(html.encode("utf-8")) < 120_000


def test_cada_passo_no_node_e_os_numeros_da_tabela(execucao):
    secoes, caminho = execucao
    imp, dados = impresso(secoes), dados_de(caminho)
    assert dados["cabecas"] == imp["cabecas"]
    assert [inteiro(p) for p in dados["passos"]] == [linha[0] for linha in imp["linhas"]]
    n = len(imp["linhas"])
    obtido = rodar_no_node(caminho.read_text(encoding="utf-8"),
                           f"Array.from({{length: {n}}}, (_, linha) => PAGINA.campos({{linha}}))")
    ruins = [f"linha {k}, {c}: página {o.get(c)!r}, impresso {v!r}"
             for k, o in enumerate(obtido) for c, v in esperado(imp, k).items() if o.get(c) != v]
    ruins += [f"linha {k}: campos {sorted(set(o) ^ set(esperado(imp, k)))}"
              for k, o in enumerate(obtido) if set(o) != set(esperado(imp, k))]
    assert not ruins, "\n".join(ruins[:10])
    assert n == 13


def test_os_mapas_da_pagina_sao_os_do_experimento_3(execucao):
    """Os pesos da página no passo 'antes' e no último, em caracteres (a rampa da lição 03),
    são os mapas lado a lado que o experimento 3 imprime, para as duas cabeças."""
    secoes, caminho = execucao
    dados = dados_de(caminho)
    n = len(dados["sequencia"])
    assert (n, dados["periodo"]) == (24, 7)
    assert " ".join(map(str, dados["sequencia"])) in " ".join(secoes["3"].split())
    tri = np.frombuffer(base64.b64decode(dados["mapas"]), dtype="<f4").reshape(
        len(dados["passos"]), len(dados["cabecas"]), -1)
    i, j = np.tril_indices(n)
    vistos = 0
    for k, (camada, cabeca) in enumerate(dados["cabecas"]):
        bloco = secoes["3"].split(f"{camada}.{cabeca} (o alvo:", 1)[1]
        antes, depois = map(int, re.search(r"antes \(passo ([\d.]+)\) +depois \(passo ([\d.]+)\)",
                                           bloco).groups())
        linhas = re.findall(r"^  +(\d+) (.{24})   (.{24})$", bloco, re.M)[:n]
        for passo, coluna in ((antes, 1), (depois, 2)):
            m = np.zeros((n, n), dtype=np.float32)
            m[i, j] = tri[dados["passos"].index(passo), k]
            assert figuras.niveis_ascii(m, 0.0, 1.0) == [linha[coluna] for linha in linhas]
            vistos += 1
    assert vistos == 4


def conferir_tela(nav, imp) -> int:
    k = nav.avaliar("PAGINA.ler()")["linha"]
    certo, obtido = esperado(imp, k), nav.campos()
    ruins = [f"{c}: página {obtido.get(c)!r}, impresso {v!r}" for c, v in certo.items()
             if obtido.get(c) != v] + [f"{c}: só na página" for c in set(obtido) - set(certo)]
    assert not ruins, "\n".join(ruins[:10])
    assert nav.erros == []
    return k


def test_deslizar_e_animar_no_navegador(execucao, navegador):
    secoes, caminho = execucao
    imp, nav = impresso(secoes), navegador
    _, x, y = imp["transicao"]
    faixa = "document.querySelector('#grafico [data-faixa]') !== null"
    nav.abrir(caminho, 1280, 720)
    assert conferir_tela(nav, imp) == 12 and nav.avaliar(faixa)   # abre no fim, com a faixa
    nav.teclar("#passo", "Home")
    assert conferir_tela(nav, imp) == 0 and not nav.avaliar(faixa)
    nav.teclar("#passo", "ArrowRight", y // 50)                   # o fim da transição
    assert conferir_tela(nav, imp) == y // 50 and nav.avaliar(faixa)
    nav.teclar("#passo", "ArrowLeft")
    assert conferir_tela(nav, imp) == x // 50 and not nav.avaliar(faixa)
    # a curva vai até o passo escolhido: o último ponto desenhado é o dele
    pontos = nav.avaliar("document.querySelectorAll('#grafico path')[1].getAttribute('d')"
                         ".split('L').length")
    assert pontos == x // 50 + 1
    # os mapas pintados com os pesos do passo: a célula (1, 0) da cabeça de token anterior
    peso = float(rodar_no_node(caminho.read_text(encoding="utf-8"),
                               f"LAB.mapa({x // 50}, 0)[1][0]"))
    cor = nav.avaliar("document.querySelector('#mapa-0').children[24].style.background")
    alfa = re.fullmatch(r"rgba?\(10, 88, 168(?:, ([\d.]+))?\)", cor)
    assert alfa and abs(float(alfa[1] or 1) - peso) < 0.004, (cor, peso)   # 8 bits de alfa
    nav.clicar("#animar")                                        # anda sozinho, e para
    nav.avaliar("new Promise(r => setTimeout(r, 800))")
    assert nav.avaliar("PAGINA.ler()")["linha"] > x // 50
    assert nav.avaliar("document.querySelector('#animar').getAttribute('aria-pressed')") == "true"
    nav.clicar("#animar")
    conferir_tela(nav, imp)
    assert nav.avaliar("document.querySelector('#animar').getAttribute('aria-pressed')") == "false"


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 720)])
def test_cabe_no_celular_e_no_projetor(execucao, navegador, largura, altura, tmp_path):
    _, caminho = execucao
    nav = navegador
    nav.abrir(caminho, largura, altura)
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    assert nav.alcancaveis("input, button")
    if largura >= 1000:             # no projetor, o controle, as perdas e os mapas na 1ª tela
        for seletor in ("#passo", "#grafico svg", "#mapa-1"):
            topo = nav.avaliar(f"document.querySelector({seletor!r}).getBoundingClientRect()"
                               ".top + scrollY")
            assert topo < altura * 0.75, seletor
    nav.captura(tmp_path / f"11_{largura}.png")
