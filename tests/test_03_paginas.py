"""A página da lição 03 (lab/03_attention.py --html): onde cada token olha, numa cabeça.

A página leva os pesos de atenção que a lição calcula (padroes(), a cabeça do experimento 6
na FRASE) e os mostra: o mapa de calor com a máscara causal e, para o token apontado ou
focado, o peso que ele dá a cada um. O oráculo independente são as atenções que o
GPT2LMHeadModel do transformers devolve (output_attentions); as três notas e a frase do
experimento 6 saem das funções da lição e do que ela imprime na mesma execução.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from comum.console import num, token
from conftest import rodar_script
from comum import importar_licao
from navegador import dados_de, navegador, pagina_gravada, rodar_no_node  # noqa: F401

L03 = importar_licao("03_attention")


@pytest.fixture(scope="module")
def pagina(gpt2_pequeno, tmp_path_factory):
    """lab/03_attention.py --html PASTA com o GPT-2 de teste (3 camadas de 4 cabeças: a
    cabeça padrão, 4.11, vira a 2.3, com o aviso do experimento 6)."""
    pagina, r = pagina_gravada("03_attention.py", gpt2_pequeno,
                               tmp_path_factory.mktemp("pagina03"))
    assert "uso a cabeça 2.3." in r.saida
    return pagina


@pytest.fixture(scope="module")
def deles(gpt2_pequeno):
    """(pesos (T, T) da cabeça 2.3 pelo transformers, rótulos dos tokens)."""
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(gpt2_pequeno)
    hf = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, use_safetensors=True,
                                         attn_implementation="eager").eval()
    ids = tok(L03.FRASE, return_tensors="pt")["input_ids"][:, :L03.MAX_T]
    with torch.no_grad():
        atencoes = hf(ids, output_attentions=True).attentions          # L x (1, h, T, T)
    return atencoes[2][0, 3].double().numpy(), [token(tok, i, 12, espaco="·") for i in ids[0]]


def esperado(pesos, rotulos, i) -> dict[str, str]:
    """O texto de cada data-campo com o token i apontado: os pesos da linha i, a maior, e
    as notas e a frase do experimento 6 (notas_de_padrao da lição)."""
    T = len(rotulos)
    c = {"consulta": f"{rotulos[i]} (posição {i})"}
    c.update({f"peso.{j}": num(float(pesos[i][j]), 2) if j <= i else "futuro" for j in range(T)})
    j = int(np.argmax(pesos[i][:i + 1]))
    c["maior"] = (f"o maior peso vai para {rotulos[j]} (posição {j}): "
                  f"{num(float(pesos[i][j]), 2)}")
    notas = {k: float(v) for k, v in L03.notas_de_padrao(torch.tensor(pesos)).items()}
    c["nota.anterior"] = num(notas["no token anterior"], 2)
    c["nota.primeiro"] = num(notas["no primeiro token"], 2)
    c["nota.proprio"] = num(notas["no próprio token"], 2)
    maior = max(notas, key=notas.get)
    c["veredito"] = (f"Esta cabeça põe mais da metade do peso {maior}." if notas[maior] > 0.5
                     else "Esta cabeça espalha a atenção: nenhum dos três padrões passa de 0,5.")
    return c


def matriz(dados) -> np.ndarray:
    T = len(dados["tokens"])
    m = np.zeros((T, T))
    for i, linha in enumerate(dados["pesos"]):
        m[i, :i + 1] = linha
    return m


def test_os_pesos_da_pagina_sao_os_do_transformers(pagina, deles):
    dados = dados_de(pagina)
    pesos, rotulos = deles
    assert (dados["camada"], dados["cabeca"]) == (2, 3) and dados["tokens"] == rotulos
    assert [len(linha) for linha in dados["pesos"]] == list(range(1, len(rotulos) + 1))
    assert np.allclose(matriz(dados), np.tril(pesos), rtol=0, atol=1e-6)
    assert np.allclose(matriz(dados).sum(1), 1, atol=1e-5)          # cada linha soma 1


def test_campos_de_cada_token_no_node(pagina, deles):
    """PAGINA.campos() com cada um dos T tokens apontado, campo a campo."""
    dados = dados_de(pagina)
    T = len(dados["tokens"])
    obtido = rodar_no_node(pagina.read_text(encoding="utf-8"),
                           f"Array.from({{length: {T}}}, (_, i) => PAGINA.campos({{i}}))")
    m = matriz(dados)
    ruins = [f"i = {i}, {k}: página {o.get(k)!r}, esperado {v!r}"
             for i, o in enumerate(obtido) for k, v in esperado(m, dados["tokens"], i).items()
             if o.get(k) != v]
    assert not ruins, "\n".join(ruins[:10])
    assert all(set(o) == set(esperado(m, dados["tokens"], 0)) for o in obtido)


def conferir_tela(nav, pagina) -> int:
    dados = dados_de(pagina)
    i = nav.avaliar("PAGINA.ler()")["i"]
    certo = esperado(matriz(dados), dados["tokens"], i)
    obtido = nav.campos()
    ruins = [f"{k}: página {obtido.get(k)!r}, esperado {v!r}" for k, v in certo.items()
             if obtido.get(k) != v]
    assert not ruins, "\n".join(ruins[:10])
    assert nav.erros == []
    # o token apontado em destaque; os do futuro riscados, com a máscara
    marcados = nav.avaliar("""Array.from(document.querySelectorAll('#tokens .tok'), b =>
        [b.classList.contains('consulta'), b.classList.contains('futuro')])""")
    assert marcados == [[j == i, j > i] for j in range(len(marcados))]
    return i


def test_apontar_e_tab_no_navegador_e_os_numeros_da_licao(pagina, navegador, gpt2_pequeno):
    nav = navegador
    nav.abrir(pagina, 1280, 720)
    T = len(dados_de(pagina)["tokens"])
    assert conferir_tela(nav, pagina) == T - 1                  # abre no último token
    nav.apontar('#tokens .tok[data-i="3"]')
    assert conferir_tela(nav, pagina) == 3
    nav.teclar('#tokens .tok[data-i="0"]', "Tab", 2)            # foco no 0, dois Tabs: o 2
    assert nav.focado() == "2" and conferir_tela(nav, pagina) == 2
    nav.apontar('#mapa .celula[data-linha="7"][data-coluna="1"]')   # uma linha do mapa
    assert conferir_tela(nav, pagina) == 7
    # as notas e a frase que o experimento 6 imprime com o mesmo modelo
    saida = rodar_script("03_attention.py", "--so", "6", "--sem-figuras",
                         env={"LAB_MODELO": str(gpt2_pequeno)}).saida
    campos = nav.campos()
    for nome, campo in (("token anterior", "nota.anterior"), ("primeiro token", "nota.primeiro"),
                        ("próprio token", "nota.proprio")):
        assert re.search(rf"peso médio no {nome}\s+{campos[campo]}$", saida, re.M), nome
    assert campos["veredito"] in " ".join(saida.split())


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 720)])
def test_cabe_no_celular_e_no_projetor(pagina, navegador, largura, altura, tmp_path):
    nav = navegador
    nav.abrir(pagina, largura, altura)
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    assert nav.alcancaveis("#tokens .tok")
    nav.captura(tmp_path / f"03_{largura}.png")


def test_sem_o_gpt2_a_pagina_e_pulada(tmp_path):
    r = rodar_script("03_attention.py", "--html", str(tmp_path / "saida"),
                     env={"LAB_MODELO": str(tmp_path / "nao_existe")})
    assert r.returncode == 1 and "PULADO: a página 03_attention.html" in r.saida
    assert not (tmp_path / "saida").exists()
