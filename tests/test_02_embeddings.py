"""Lição 02: consulta = one-hot, vizinhos, posições, normas e a entrada/saída do GPT-2,
contra contas independentes (torch, numpy, forma fechada) e contra o GPT2LMHeadModel
do transformers num GPT-2 pequeno com o tokenizador real (vocabulário de 50.257)."""
from __future__ import annotations

import math
from pathlib import Path
import unicodedata

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from comum import console
from comum.carregar_gpt2 import carregar_gpt2
from conftest import RAIZ, modelo_compartilhado, pasta_da_sessao, rodar_script
from gpt2_real import construir_gpt2_real, tokenizador_real
from comum import importar_licao

L02 = importar_licao("02_embeddings")
L08 = importar_licao("08_since_2017")  # a senoidal da 08, um oráculo para a da 02


@pytest.fixture(scope="module")
def pasta(tmp_path_factory):
    return modelo_compartilhado("gpt2_real", construir_gpt2_real)


@pytest.fixture(scope="module")
def modelo(pasta):
    return carregar_gpt2(str(pasta))


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
        achados = L02.vizinhos(wte, [i])[0]
        assert [j for j, _ in achados] == indices.tolist()
        assert np.allclose([c for _, c in achados], valores.tolist(), atol=1e-5)


# ------------------------------------------------------------ experimento 3
@pytest.mark.parametrize("k", [1, 2, 16, 1023])
def test_senoidal_depende_so_do_deslocamento(k):
    """Forma fechada: PE(m)·PE(m+k) = soma_i cos(k w_i), |PE|² = d/2."""
    d = 768
    seno = L02.senoidal(1024, d)
    assert torch.equal(seno, L08.sinusoidal(1024, d, torch.float64))
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


def test_componentes_com_sinal_fixo():
    """O sinal de um autovetor é arbitrário (muda com a rotina e o processador): a lição
    deixa positivo o maior valor em módulo de cada componente."""
    g = torch.Generator().manual_seed(1)
    tabela = torch.randn(100, 12, generator=g, dtype=torch.float64)
    comps, _ = L02.componentes_principais(tabela)
    positivos, _ = L02.componentes_principais(-tabela)         # a mesma tabela, espelhada
    assert torch.allclose(comps, positivos, atol=1e-5)
    maiores = comps.gather(0, comps.abs().argmax(0, keepdim=True))
    assert (maiores > 0).all()


def test_mapa_ascii_zero_no_meio_de_uma_faixa():
    """Escala fixa de -1 a 1 em 11 faixas: o ruído perto de zero (|x| < 1/11) sai todo '=',
    em vez de piscar entre '=' e '+' (com 10 faixas o zero caía na borda das duas)."""
    assert L02.mapa(torch.ones(8, 8), 2, 4) == ["@@@@", "@@@@"]
    assert L02.mapa(-torch.ones(8, 8), 2, 4) == ["    ", "    "]
    g = torch.Generator().manual_seed(0)
    ruido = (torch.rand(64, 64, generator=g) - 0.5) * 0.17     # |x| < 0,085
    assert set("".join(L02.mapa(ruido))) == {"="}
    assert len(L02.RAMPA) % 2 == 1 and L02.RAMPA[len(L02.RAMPA) // 2] == "="


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
    assert torch.equal(L02.entrada(hf.transformer.wte.weight, hf.transformer.wpe.weight, ids),
                       saida.hidden_states[0])
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
    linhas = s.splitlines()
    i = next(i for i, linha in enumerate(linhas) if linha.startswith("  _inform "))
    assert linhas[i + 1].startswith("  (4 tokens)  ")   # o console é cp1252: espaço = '_'
    assert "(N tokens): a palavra é mais de um token; os vizinhos são os do primeiro." in s
    assert sorted(p.name for p in saida.figuras.glob("*.png")) == [
        "02_normas.png", "02_posicoes.png"]
    largas = [linha for linha in s.splitlines()   # os caminhos (pasta temporária) não quebram
              if str(pasta) not in linha and str(saida.figuras) not in linha
              and sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in linha) > 80]
    assert not largas, largas


def test_pasta_longa_cabe_em_80_colunas(pasta, tmp_path):
    """Issue 40: com uma pasta de modelo longa (o conselho do README para a sala sem
    internet), o experimento 6 imprimia uma linha de 103 colunas. Agora a linha quebra
    (como na 05), e uma pasta dentro da pasta atual aparece curta, a partir dela."""
    longa = tmp_path / "Meus Documentos da Maria" / "Laboratório do Transformer" / "gpt2-local"
    longa.parent.mkdir(parents=True)
    longa.symlink_to(pasta, target_is_directory=True)
    r = rodar_script("02_embeddings.py", "--so", "6", "--modelo", str(longa))
    assert r.returncode == 0, r.saida + r.erros
    assert len(f"Contagem do modelo carregado ({longa}):") > 80
    assert not [linha for linha in r.saida.splitlines() if len(linha) > 80], r.saida
    assert "gpt2-local):" in r.saida and "modelo inteiro" in r.saida
    assert L02.curto(RAIZ / "modelos" / "gpt2-local") == str(Path("modelos") / "gpt2-local")


def test_parametros_batem_com_fatos(tmp_path):
    r = rodar_script("02_embeddings.py", "--so", "6", env={"LAB_MODELO": str(tmp_path / "x")})
    assert r.returncode == 0, r.saida + r.erros
    from comum.carregar_gpt2 import PARAMETROS_GPT2, TAMANHOS_GPT2
    from transformers import GPT2Config, GPT2LMHeadModel

    for nome, (camadas, d, cabecas) in TAMANHOS_GPT2.items():  # as peças = o modelo inteiro
        config = GPT2Config(n_layer=camadas, n_embd=d, n_head=cabecas)
        total, wte = L02.parametros_pelas_pecas(config)
        assert total == PARAMETROS_GPT2[nome] and wte == 50_257 * d
        if nome == "gpt2":
            with torch.device("meta"):
                inteiro = GPT2LMHeadModel(config)
            assert total == sum(p.numel() for p in inteiro.parameters())
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
    assert "A tabela senoidal de 2017, no tamanho do GPT-2" in r.saida  # antes do modelo


def test_id_sem_token_nao_quebra():
    """Um modelo cuja tabela é maior que o tokenizador (ids sem token): a lição mostra os
    tokens com console.token, que não quebra."""
    tok = tokenizador_real()
    assert console.token(tok, 60_000) == "?"
    assert console.token(tok, 6342, espaco="·") == "·Paris"


# ------------------------------------------------------------ entradas do aluno (issue 22)
def colunas(linha: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in linha)


def test_palavras_que_nao_sao_utf8():
    r = rodar_script("02_embeddings.py", "--so", "2", "--palavras", b"a\xe7\xe3o")
    assert r.returncode == 2, r.saida + r.erros
    assert "Traceback" not in r.saida + r.erros
    assert "opção --palavras: 'a\\xe7\\xe3o' não é texto em UTF-8" in " ".join(r.erros.split())


def test_ids_tem_limite_e_mensagem_em_portugues():
    """20.000 ids usavam 16 GB e passavam de 300 s: mais de 64 é uso errado (saída 2, antes
    de importar o torch); sem valor, a mensagem do argparse em português."""
    r = rodar_script("02_embeddings.py", "--so", "1", "--ids", *map(str, range(65)))
    assert r.returncode == 2, r.saida + r.erros
    assert "--ids: no máximo 64 valores (65 dados); exemplo: --ids 5 5 5 7" in \
        " ".join(r.erros.split())
    assert "carregando o PyTorch" not in r.saida
    r = rodar_script("02_embeddings.py", "--so", "1", "--ids")
    assert r.returncode == 2 and "opção --ids: esperava ao menos um valor" in r.erros
    r = rodar_script("02_embeddings.py", "--so", "1", "--ids", "50257")
    assert r.returncode == 2 and "use um inteiro de 0 a 50256" in r.erros


def test_um_id_so_no_singular():
    r = rodar_script("02_embeddings.py", "--so", "1", "--ids", "5")
    assert r.returncode == 0, r.saida + r.erros
    s = " ".join(r.saida.split())
    assert "e 1 id escolhido (--ids)." in s and "(1 um, 50.256 zeros)" in s
    assert "chega a 1 das 50.257 linhas: só à do 1 id usado (confere)." in s
    assert "id 5: 1" in s


MESES = [" January", " February", " September", " November", " December", " October"]


@pytest.fixture(scope="module")
def pasta_meses(pasta, tmp_path_factory):
    """O GPT-2 pequeno com o tokenizador real, com o wte mexido para dar o que o GPT-2 de
    verdade dá: meses vizinhos de meses (tokens longos) e tokens longos nas pontas das
    normas. A ordem dos vizinhos e das normas é conhecida por construção."""
    import shutil

    from transformers import GPT2LMHeadModel

    tok = tokenizador_real()
    modelo = GPT2LMHeadModel.from_pretrained(pasta)
    wte = modelo.transformer.wte.weight
    ids = [tok.encode(m)[0] for m in MESES]
    assert all(len(tok.encode(m)) == 1 for m in MESES)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        base = torch.randn(wte.shape[1], generator=g)
        for k, i in enumerate(ids):                 # cosseno com janeiro cai com k
            wte[i] = 0.1 * (base + 0.05 * k * torch.randn(wte.shape[1], generator=g))
        longos = sorted(range(50_256), key=lambda i: -len(tok.decode([i])))[:8]
        for i in longos[:4]:
            wte[i] *= 0.01                           # as 4 menores normas
        for i in longos[4:]:
            wte[i] *= 100                            # as 4 maiores
    destino = tmp_path_factory.mktemp("gpt2_meses")
    modelo.save_pretrained(destino, safe_serialization=True)
    for arquivo in pasta.iterdir():
        if arquivo.name.startswith("tokenizer"):
            shutil.copy(arquivo, destino / arquivo.name)
    return destino, ids, longos


def test_vizinhos_e_normas_com_tokens_longos_cabem_em_80(pasta_meses):
    destino, ids, longos = pasta_meses
    r = rodar_script("02_embeddings.py", "--so", "2,4", "--sem-figuras", "--modelo", str(destino),
                     "--palavras", " January", env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0, r.saida + r.erros
    s = r.stdout.decode("utf-8")
    largas = [linha for linha in s.splitlines()
              if colunas(linha) > 80 and str(destino) not in linha]
    assert not largas, largas
    linhas = s.splitlines()
    i = next(i for i, linha in enumerate(linhas) if linha.startswith("  ·January "))
    nomes = linhas[i].split()
    assert nomes == ["·January", "·February", "·September", "·November", "·December",
                     "·October"]
    from comum.carregar_gpt2 import carregar_gpt2 as carregar

    wte = carregar(str(destino))[0].transformer.wte.weight.detach()
    cos = F.cosine_similarity(wte[ids[1:]], wte[ids[0]][None], dim=1)
    assert linhas[i + 1].split() == [console.num(float(c), 2) for c in cos]
    tok = tokenizador_real()
    menores = [console.token(tok, j, 16, espaco="·") for j in longos[:4]]
    for nome in menores:
        assert any(linha.startswith(f"  {nome}") for linha in linhas), nome


def test_figuras_eixos_e_barra_de_cor():
    """02_normas: marcas com o ponto do milhar (15.000, não 15000 nem 1.5e4) e eixos que
    terminam na última posição (1.023, não 1050); 02_posicoes: barra de cor com rótulo e a
    posição 0 em cima nos mapas."""
    fig = L02.figura_normas(torch.rand(50_257), torch.rand(1024), "gpt2")
    ax1, ax2 = fig.axes
    assert ax1.get_lines()[0].get_markersize() >= 2     # pontos de 1 pixel somem no projetor
    rotulos = [ax1.xaxis.get_major_formatter()(x) for x in ax1.get_xticks()]
    assert any("." in r for r in rotulos) and not any("," in r or "e" in r for r in rotulos)
    assert ax1.get_xlim() == (0, 50_256) and len(ax1.get_xticks()) <= 6
    assert list(ax2.get_xticks()) == [0, 256, 512, 768, 1023] and ax2.get_xlim() == (0, 1023)
    assert [t.get_text() for t in ax2.get_xticklabels()][-1] == "1.023"
    assert ax1.get_title() == "wte de gpt2: norma de cada linha"
    cos = torch.rand(1024, 1024) * 2 - 1
    fig = L02.figura_posicoes(cos, cos, torch.rand(1024, 3), [0.1, 0.05, 0.02], "gpt2")
    mapa, seno, barra, linhas = fig.axes
    assert barra.get_ylabel() == "cosseno entre as duas posições"
    # issue 40: a barra fica logo ao lado do 2º mapa, e o painel das componentes logo depois
    # dela (havia um vão largo), com a legenda no tamanho do resto do texto, não menor
    largura = fig.get_figwidth()
    assert 0 < (barra.get_position().x0 - seno.get_position().x1) * largura < 0.3
    assert (linhas.get_position().x0 - barra.get_position().x1) * largura < 1.8   # era 2,3
    legenda = linhas.get_legend().get_texts()[0].get_fontsize()
    assert legenda >= linhas.xaxis.label.get_fontsize()
    assert mapa.get_ylim() == (1023.5, -0.5) and mapa.get_xlim() == (-0.5, 1023.5)
    assert linhas.get_xlim() == (0, 1023) and mapa.get_title() == "wpe de gpt2"
