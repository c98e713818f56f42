"""A página da lição 04 (lab/04_multihead.py --html): onde cada token olha, em cada cabeça.

A página leva os pesos do experimento 4 (o TEXTO) de todas as cabeças e as notas de indução do
experimento 5, e mostra a cabeça escolhida (listas de camada e cabeça, ou um clique no mapa
das notas). Oráculos: as atenções do GPT2LMHeadModel do transformers (output_attentions) no
TEXTO e na sequência repetida do experimento 5, com a nota de indução da lição; e o que os
experimentos 4 e 5 imprimem na mesma execução.
"""
from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
import torch

from comum.console import num, token
from conftest import rodar_script
from comum import importar_licao
from navegador import dados_de, navegador, pagina_gravada, rodar_no_node  # noqa: F401

L04 = importar_licao("04_multihead")
L03 = importar_licao("03_attention")


@pytest.fixture(scope="module")
def pagina(gpt2_pequeno, tmp_path_factory):
    return pagina_gravada("04_multihead.py", gpt2_pequeno,
                          tmp_path_factory.mktemp("pagina04"))[0]


def pesos_da_pagina(dados) -> np.ndarray:
    """(L, h, T, T) a partir dos triângulos de baixo da página."""
    T, L, h = len(dados["tokens"]), dados["L"], dados["h"]
    tri = np.frombuffer(base64.b64decode(dados["pesos"]), dtype="<f4").reshape(L, h, -1)
    m = np.zeros((L, h, T, T))
    i, j = np.tril_indices(T)
    m[:, :, i, j] = tri
    return m


@pytest.fixture(scope="module")
def deles(gpt2_pequeno):
    """(atenções (L, h, T, T) no TEXTO, notas de indução (L, h) na sequência repetida,
    rótulos), pelo transformers."""
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(gpt2_pequeno)
    hf = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, use_safetensors=True,
                                         attn_implementation="eager").eval()
    ids = tok(L04.TEXTO, return_tensors="pt")["input_ids"][:, :hf.config.n_positions]
    n = min(50, (hf.config.n_positions - 1) // 2)
    r = torch.randint(0, hf.config.vocab_size - 1, (n,), generator=torch.Generator().manual_seed(0))
    repetida = torch.cat([torch.tensor([tok.eos_token_id]), r, r])[None]
    with torch.no_grad():
        texto = torch.cat(hf(ids, output_attentions=True).attentions)         # (L, h, T, T)
        rep = torch.cat(hf(repetida, output_attentions=True).attentions)
    return (texto.double().numpy(), L04.notas_de_inducao(rep.double(), n).numpy(),
            [token(tok, i, 12, espaco="·") for i in ids[0]])


def esperado(pesos, inducao, rotulos, camada, cabeca, i) -> dict[str, str]:
    p = pesos[camada, cabeca]
    T = len(rotulos)
    c = {"consulta": f"{rotulos[i]} (posição {i})", "nome": f"{camada}.{cabeca}"}
    c.update({f"peso.{j}": num(float(p[i][j]), 2) if j <= i else "futuro" for j in range(T)})
    j = int(np.argmax(p[i][:i + 1]))
    c["maior"] = f"o maior peso vai para {rotulos[j]} (posição {j}): {num(float(p[i][j]), 2)}"
    notas = {k: float(v) for k, v in L03.notas_de_padrao(torch.tensor(p)).items()}
    c["nota.anterior"] = num(notas["no token anterior"], 2)
    c["nota.primeiro"] = num(notas["no primeiro token"], 2)
    c["nota.proprio"] = num(notas["no próprio token"], 2)
    maior = max(notas, key=notas.get)
    c["veredito"] = (f"Esta cabeça põe mais da metade do peso {maior}." if notas[maior] > 0.5
                     else "Esta cabeça espalha a atenção: nenhum dos três padrões passa de 0,5.")
    plano = inducao.flatten()
    h = inducao.shape[1]
    c["inducao.escolhida"] = num(float(inducao[camada, cabeca]), 2)
    c["inducao.maiores"] = " · ".join(f"{k // h}.{k % h}: {num(float(plano[k]), 2)}"
                                      for k in np.argsort(-plano, kind="stable")[:5])
    c["inducao.fortes"] = f"Cabeças com nota > 0,4: {int((plano > 0.4).sum())} de {plano.size}."
    return c


def test_pesos_e_notas_da_pagina_sao_os_do_transformers(pagina, deles):
    dados = dados_de(pagina)
    texto, inducao, rotulos = deles
    assert dados["tokens"] == rotulos and (dados["L"], dados["h"]) == texto.shape[:2]
    assert np.allclose(pesos_da_pagina(dados), np.tril(texto), rtol=0, atol=1e-6)
    assert np.allclose(dados["inducao"], inducao, rtol=0, atol=1e-6)


def test_campos_de_cada_cabeca_no_node(pagina):
    """Cada cabeça, com três tokens apontados (o primeiro, o do meio e o último)."""
    dados = dados_de(pagina)
    T, L, h = len(dados["tokens"]), dados["L"], dados["h"]
    casos = [(c, j, i) for c in range(L) for j in range(h) for i in (0, T // 2, T - 1)]
    obtido = rodar_no_node(pagina.read_text(encoding="utf-8"), f"""{json.dumps(casos)}.map(
        ([camada, cabeca, i]) => PAGINA.campos({{camada, cabeca, i}}))""")
    pesos, inducao = pesos_da_pagina(dados), np.array(dados["inducao"])
    ruins = [f"{caso}, {k}: página {o.get(k)!r}, esperado {v!r}"
             for caso, o in zip(casos, obtido)
             for k, v in esperado(pesos, inducao, dados["tokens"], *caso).items()
             if o.get(k) != v]
    assert not ruins, "\n".join(ruins[:10])
    assert len(obtido) == 3 * L * h


def conferir_tela(nav, pagina) -> dict:
    dados = dados_de(pagina)
    estado = nav.avaliar("PAGINA.ler()")
    certo = esperado(pesos_da_pagina(dados), np.array(dados["inducao"]), dados["tokens"],
                     estado["camada"], estado["cabeca"], estado["i"])
    obtido = nav.campos()
    ruins = [f"{k}: página {obtido.get(k)!r}, esperado {v!r}" for k, v in certo.items()
             if obtido.get(k) != v]
    assert not ruins, "\n".join(ruins[:10])
    assert nav.erros == []
    return estado


def test_escolher_a_cabeca_no_navegador_e_os_numeros_da_licao(pagina, navegador, gpt2_pequeno):
    nav = navegador
    nav.abrir(pagina, 1280, 720)
    dados = dados_de(pagina)
    inducao = np.array(dados["inducao"])
    c0, j0 = np.unravel_index(np.argmax(inducao), inducao.shape)
    estado = conferir_tela(nav, pagina)                         # abre na indução mais forte
    assert (estado["camada"], estado["cabeca"]) == (c0, j0)
    nav.clicar('#grade .nota[data-camada="0"][data-cabeca="1"]')
    assert conferir_tela(nav, pagina)["cabeca"] == 1
    assert nav.avaliar("document.querySelector('#grade .nota[aria-pressed=true]')"
                       ".dataset.cabeca") == "1"
    nav.teclar("#camada", "ArrowDown")                          # a lista, pelo teclado
    assert conferir_tela(nav, pagina)["camada"] == 1
    nav.apontar('#tokens .tok[data-i="5"]')
    assert conferir_tela(nav, pagina)["i"] == 5
    nav.teclar('#tokens .tok[data-i="5"]', "Tab")
    assert conferir_tela(nav, pagina)["i"] == 6
    # o que os experimentos 4 e 5 imprimem: as 5 maiores notas de indução e as de padrão
    saida = rodar_script("04_multihead.py", "--so", "4,5", "--sem-figuras",
                         env={"LAB_MODELO": str(gpt2_pequeno)}).saida
    impressas = re.findall(r"camada\.cabeça (\d+\.\d+): ([\d,]+)", saida)
    assert nav.campos()["inducao.maiores"] == " · ".join(f"{a}: {b}" for a, b in impressas)
    anterior = re.search(r"no token anterior, as 5 maiores:\n\s+(\d+)\.(\d+) \(([\d,]+)\)",
                         saida).groups()
    nav.clicar(f'#grade .nota[data-camada="{anterior[0]}"][data-cabeca="{anterior[1]}"]')
    conferir_tela(nav, pagina)
    assert nav.campos()["nota.anterior"] == anterior[2]


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 720)])
def test_cabe_no_celular_e_no_projetor(pagina, navegador, largura, altura):
    nav = navegador
    nav.abrir(pagina, largura, altura)
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    assert nav.alcancaveis("select, button")
