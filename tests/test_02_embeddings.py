"""Lição 02: consulta = one-hot, vizinhos, posições, normas e a entrada/saída do GPT-2,
contra contas independentes (torch, numpy, forma fechada) e contra o GPT2LMHeadModel
do transformers num GPT-2 pequeno com o tokenizador real (vocabulário de 50.257)."""
from __future__ import annotations

import math
import unicodedata

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import common
from conftest import rodar_script, modelo_compartilhado, pasta_da_sessao
from gpt2_real import construir_gpt2_real

L02 = common.importar_licao("02_embeddings")
L08 = common.importar_licao("08_since_2017")


@pytest.fixture(scope="module")
def pasta(tmp_path_factory):
    return modelo_compartilhado("gpt2_real", construir_gpt2_real)


@pytest.fixture(scope="module")
def modelo(pasta):
    return common.carregar_gpt2(str(pasta))


@pytest.fixture(scope="module")
def saida(pasta, tmp_path_factory):
    figuras = pasta_da_sessao("figuras02")
    r = rodar_script("02_embeddings.py", "--figuras", str(figuras),
                     env={"LAB_MODELO": str(pasta)})
    assert r.returncode == 0, r.saida[-3000:] + r.erros[-3000:]
    r.figuras = figuras
    return r


# ------------------------------------------------------------ experimento 1
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_consulta_igual_a_one_hot(dtype):
    g = torch.Generator().manual_seed(3)
    tabela = torch.randn(1000, 16, generator=g, dtype=dtype)
    ids = torch.tensor([5, 999, 0, 5, 42])
    linhas, one_hot, produto = L02.consulta_e_one_hot(tabela, ids)
    assert torch.equal(linhas, torch.nn.functional.embedding(ids, tabela))
    assert torch.equal(produto, linhas)
    assert one_hot.shape == (5, 1000) and one_hot.sum() == 5


# ------------------------------------------------------------ experimento 2
def test_vizinhos_contra_cosine_similarity(modelo):
    wte = modelo[0].transformer.wte.weight.detach()
    for i in (6342, 0, 50_000):
        cos = F.cosine_similarity(wte, wte[i][None], dim=1)
        cos[i] = -math.inf
        valores, indices = cos.topk(5)
        achados = L02.vizinhos(wte, i)
        assert [j for j, _ in achados] == indices.tolist()
        assert np.allclose([c for _, c in achados], valores.tolist(), atol=1e-5)


# ------------------------------------------------------------ experimento 3
@pytest.mark.parametrize("k", [1, 2, 16, 1023])
def test_senoidal_depende_so_do_deslocamento(k):
    """Forma fechada: PE(m)·PE(m+k) = soma_i cos(k w_i), |PE|² = d/2."""
    d = 768
    seno = L08.sinusoidal(1024, d, torch.float64)
    w = 10_000.0 ** (-np.arange(0, d, 2) / d)
    esperado = float(np.cos(k * w).sum() / (d / 2))
    cos = L02.cossenos_entre_linhas(seno)
    assert abs(L02.media_por_deslocamento(cos, k) - esperado) < 1e-9
    diagonal = torch.diagonal(cos, offset=k)
    assert float(diagonal.max() - diagonal.min()) < 1e-9


def test_componentes_principais_contra_numpy():
    g = torch.Generator().manual_seed(0)
    tabela = torch.randn(64, 10, generator=g) @ torch.randn(10, 10, generator=g)
    comps, fracoes = L02.componentes_principais(tabela)
    x = tabela.double().numpy()
    x = x - x.mean(axis=0)
    autovalores, autovetores = np.linalg.eigh(x.T @ x)
    autovalores, autovetores = autovalores[::-1], autovetores[:, ::-1]
    assert np.allclose(fracoes, autovalores[:3] / autovalores.sum(), atol=1e-6)
    for i in range(3):  # a mesma direção, a menos do sinal
        projecao = x @ autovetores[:, i]
        assert np.allclose(np.abs(comps[:, i].numpy()), np.abs(projecao), atol=1e-4)


def test_mapa_ascii_escala_fixa():
    assert L02.mapa_ascii(torch.ones(8, 8), 2, 4) == ["@@@@", "@@@@"]
    assert L02.mapa_ascii(-torch.ones(8, 8), 2, 4) == ["    ", "    "]


# ------------------------------------------------------------ experimento 5
def test_entrada_e_cabeca_no_transformers(modelo):
    hf, tok = modelo
    ids = torch.tensor([tok.encode(L02.FRASE)])
    with torch.no_grad():
        saida = hf(ids, output_hidden_states=True)
        x = hf.transformer.wte.weight[ids[0]] + hf.transformer.wpe.weight[:ids.shape[1]]
        # o último hidden_state do transformers já passou pelo ln_f
        logits = saida.hidden_states[-1] @ hf.transformer.wte.weight.T
    assert torch.equal(x[None], saida.hidden_states[0])
    assert torch.allclose(logits, saida.logits, atol=1e-5)


# ------------------------------------------------------------ a lição inteira
def test_licao_inteira(saida, pasta):
    s = saida.saida
    assert "Traceback" not in s + saida.erros
    assert "6 de 6 experimentos rodaram" in s
    assert "mesmos números? sim" in s and "(confere)" in s
    assert "Igual a hidden_states[0] do transformers? sim, número por número." in s
    assert "lm_head.weight é o wte.weight? sim; mesma memória? sim." in s
    assert "wte @ (saída do ln_f)? sim (diferença relativa\n< 1e-5)." in s
    assert "·inform  (4 tokens; vizinhos do primeiro)" in s
    assert sorted(p.name for p in saida.figuras.glob("*.png")) == [
        "02_normas.png", "02_posicoes.png"]
    largas = [linha for linha in s.splitlines()   # os caminhos (pasta temporária) não quebram
              if str(pasta) not in linha and str(saida.figuras) not in linha
              and sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in linha) > 80]
    assert not largas, largas


def test_parametros_batem_com_facts(tmp_path):
    r = rodar_script("02_embeddings.py", "--so", "6", env={"LAB_MODELO": str(tmp_path / "x")})
    assert r.returncode == 0, r.saida + r.erros
    for numero in ("38.597.376", "786.432", "124.439.808", "354.823.168", "774.030.080",
                   "1.557.611.200", "31,0 %", "147,2 MiB", "73,6 MiB"):
        assert numero in r.saida, numero
    assert 38_597_376 / 124_439_808 == pytest.approx(0.310, abs=5e-4)


def test_sem_modelo_explica_e_segue(tmp_path):
    r = rodar_script("02_embeddings.py", "--sem-figuras",
                     env={"LAB_MODELO": str(tmp_path / "nada"), "COLUMNS": "60"})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert r.saida.count("PULADO: não há pasta") == 4
    assert "2 de 6 experimentos rodaram" in r.saida
    assert "A tabela senoidal de 2017 (lição 08)" in r.saida   # antes de precisar do modelo


def test_id_sem_token_nao_quebra():
    """Um modelo cuja tabela é maior que o tokenizador (ids sem token) não dá traceback."""
    class Tok:
        def convert_ids_to_tokens(self, i):
            return None if i >= 10 else "a"

    assert L02.token(Tok(), 12) == "<id 12>"
    assert L02.token(Tok(), 3) == "a"
