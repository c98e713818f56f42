"""A página da lição 05 (lab/05_block.py --html): a logit lens, camada a camada.

A página leva, para cada frase do experimento 4, os 5 próximos tokens mais prováveis lidos em
cada camada e posição (lente(), a conta da tabela do experimento) e os mostra numa grade com a
cor da probabilidade; a célula apontada ou focada mostra os 5. Oráculos: os hidden_states do
GPT2LMHeadModel do transformers, lidos aqui com ln_f + desembedding (e, na última linha, os
logits do próprio modelo); e a tabela e a frase que o experimento 4 imprime com o mesmo modelo.
Um Chromium para o arquivo inteiro, poucas aberturas, muitas conferências em cada uma.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from comum.console import num, pct, token
from conftest import rodar_script
from comum import importar_licao
from navegador import dados_de, navegador, rodar_no_node  # noqa: F401 - navegador: fixture
from navegador import pagina_gravada

L05 = importar_licao("05_block")


@pytest.fixture(scope="module")
def pagina(gpt2_pequeno, tmp_path_factory):
    return pagina_gravada("05_block.py", gpt2_pequeno, tmp_path_factory.mktemp("pagina05"))[0]


@pytest.fixture(scope="module")
def deles(gpt2_pequeno):
    """Para cada frase: (ids da entrada, probabilidades (L+1, T, V)) lidas dos hidden_states
    do transformers, e o tokenizador."""
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(gpt2_pequeno)
    hf = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, use_safetensors=True).eval()
    saida = []
    with torch.no_grad():
        for texto in L05.LENTE:
            ids = tok(texto, return_tensors="pt")["input_ids"]
            r = hf(ids, output_hidden_states=True)
            t = hf.transformer
            lidas = [(t.ln_f(h) @ t.wte.weight.T)[0] for h in r.hidden_states[:-1]]  # ln_f 1x
            saida.append((ids[0].tolist(), torch.stack([*lidas, r.logits[0]]).softmax(-1)))
    return saida, tok


def esperado(dados, f, camada, t) -> dict[str, str]:
    """O texto de cada data-campo com a célula (camada, t) da frase f apontada."""
    fr, nomes = dados["frases"][f], dados["tokens"]
    top, L, T = fr["top"], len(fr["top"]) - 1, len(fr["entrada"])
    lido = ("no embedding" if camada == 0 else f"na saída do modelo (bloco {camada})"
            if camada == L else f"depois do bloco {camada}")
    c = {"frase": fr["texto"],
         "celula": f"Lido {lido}, na posição {t} ({nomes[str(fr['entrada'][t])]}):",
         "aposta": f"Depois de \"{fr['texto']}\" o modelo aposta em \"{fr['final']}\" "
                   f"({pct(top[L][T - 1][0][1])})."}
    for k in range(L + 1):
        for j in range(T):
            i, p = top[k][j][0]
            c[f"c.{k}.{j}"], c[f"p.{k}.{j}"] = nomes[str(i)], num(100 * p, 0)
    for r, (i, p) in enumerate(top[camada][t]):
        c[f"top.{r}.token"], c[f"top.{r}.p"] = nomes[str(i)], pct(p)
    return c


def test_a_grade_da_pagina_e_a_lente_do_transformers(pagina, deles):
    """Os 5 de cada célula (ids e probabilidades) são os que o transformers dá com ln_f +
    desembedding em cada hidden_state (o último, já com ln_f, é o logit do modelo); os
    textos são os tokens do tokenizador; a página pesa pouco e não pede nada à rede."""
    html = pagina.read_text(encoding="utf-8")
    assert html.count("<script>") == 1 and "Content-Security-Policy" in html
    assert len(html.encode("utf-8")) < 120_000
    dados = dados_de(pagina)
    lidas, tok = deles
    assert [f["texto"] for f in dados["frases"]] == L05.LENTE and not dados["caracteres"]
    for fr, (ids, probs) in zip(dados["frases"], lidas):
        assert fr["entrada"] == ids
        top = np.array(fr["top"])                                     # (L+1, T, 5, 2)
        p, i = probs.topk(L05.TOP, dim=-1)
        assert top.shape[:3] == tuple(i.shape) == (4, len(ids), 5)
        assert (top[..., 0] == i.numpy()).all()
        assert np.allclose(top[..., 1], p.numpy(), rtol=0, atol=1e-6)
        assert fr["final"] == token(tok, int(i[-1, -1, 0]), 20, " ")
    usados = {i for fr in dados["frases"] for i in fr["entrada"]} | {
        int(i) for fr in dados["frases"] for linha in fr["top"] for cel in linha for i, _ in cel}
    assert dados["tokens"] == {str(i): token(tok, i, 12, "·") for i in usados}


def test_campos_de_cada_celula_no_node(pagina):
    dados = dados_de(pagina)
    casos = [(f, c, t) for f, fr in enumerate(dados["frases"]) for c in range(len(fr["top"]))
             for t in range(len(fr["entrada"]))]
    obtido = rodar_no_node(pagina.read_text(encoding="utf-8"), f"""{json.dumps(casos)}.map(
        ([frase, camada, t]) => PAGINA.campos({{frase, camada, t}}))""")
    ruins = [f"{caso}, {k}: página {o.get(k)!r}, esperado {v!r}"
             for caso, o in zip(casos, obtido) for k, v in esperado(dados, *caso).items()
             if o.get(k) != v]
    ruins += [f"{caso}: campos a mais {set(o) - set(esperado(dados, *caso))}"
              for caso, o in zip(casos, obtido) if set(o) != set(esperado(dados, *caso))]
    assert not ruins, "\n".join(ruins[:10])
    assert len(obtido) == len(casos) > 40


def conferir_tela(nav, dados) -> dict:
    estado = nav.avaliar("PAGINA.ler()")
    certo, obtido = esperado(dados, estado["frase"], estado["camada"], estado["t"]), nav.campos()
    ruins = [f"{k}: página {obtido.get(k)!r}, esperado {v!r}" for k, v in certo.items()
             if obtido.get(k) != v] + [f"{k}: só na página" for k in set(obtido) - set(certo)]
    assert not ruins, "\n".join(ruins[:10])
    assert nav.erros == []
    escolhida = nav.avaliar("Array.from(document.querySelectorAll('#grade .escolhida'), "
                            "b => [Number(b.dataset.camada), Number(b.dataset.t)])")
    assert escolhida == [[estado["camada"], estado["t"]]]
    return estado


def test_apontar_tab_e_a_outra_frase_no_navegador_e_a_tabela_da_licao(pagina, navegador,
                                                                       gpt2_pequeno, deles):
    nav, dados = navegador, dados_de(pagina)
    nav.abrir(pagina, 1280, 720)
    L, T = len(dados["frases"][0]["top"]) - 1, len(dados["frases"][0]["entrada"])
    assert conferir_tela(nav, dados) == {"frase": 0, "camada": L, "t": T - 1}   # a saída
    nav.apontar('#grade .celula[data-camada="1"][data-t="2"]')
    assert conferir_tela(nav, dados) == {"frase": 0, "camada": 1, "t": 2}
    nav.teclar('#grade .celula[data-camada="1"][data-t="2"]', "Tab")          # a vizinha
    assert conferir_tela(nav, dados) == {"frase": 0, "camada": 1, "t": 3}
    # a última linha marcada como a saída do modelo; a cor é a probabilidade do primeiro
    finais = nav.avaliar("Array.from(document.querySelectorAll('#grade .celula.final'), "
                         "b => Number(b.dataset.camada))")
    assert finais == [L] * T
    # a tabela e a frase que o experimento 4 imprime com o mesmo modelo (a mesma execução
    # que tests/test_05_block.py pede)
    saida = rodar_script("05_block.py", "--so", "4", "--sem-figuras",
                         env={"LAB_MODELO": str(gpt2_pequeno), "COLUMNS": "80"}).saida
    _, tok = deles
    regioes = saida.split('\nDepois de "')
    for f, fr in enumerate(dados["frases"]):
        if f:
            nav.clicar(f'#frases [data-frase="{f}"]')
        estado = conferir_tela(nav, dados)                # outra frase: volta à saída
        assert estado["frase"] == f and (not f or estado["camada"] == len(fr["top"]) - 1)
        celulas = [linha.replace("|", " ").split() for linha in regioes[f].splitlines()]
        for c, linha in enumerate(fr["top"]):
            rotulo = "emb" if c == 0 else str(c)
            impresso = "".join("".join(cs[1:]) for cs in celulas if cs[:1] == [rotulo]
                               and len(cs) > 1)
            daqui = "".join(token(tok, cel[0][0], 7, "_", marca=True) for cel in linha)
            assert impresso == daqui.encode("cp1252", "replace").decode("cp1252"), (f, c)
        frase = "Depois de \"" + " ".join(regioes[f + 1].split("\n\n")[0].split())
        assert nav.campos()["aposta"] == frase
        assert nav.avaliar("document.querySelector('#frases [aria-pressed=true]')"
                           ".dataset.frase") == str(f)


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 720)])
def test_cabe_no_celular_e_no_projetor(pagina, navegador, largura, altura, tmp_path):
    nav = navegador
    nav.abrir(pagina, largura, altura)
    nav.clicar('#frases [data-frase="1"]')              # a frase mais longa
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    assert nav.alcancaveis("#grade .celula, #frases button")
    if largura >= 1000:             # no projetor, a grade inteira e os 5 na primeira tela
        for seletor in ("#grade .celula.final", "#top-4"):
            assert nav.avaliar(f"document.querySelector({seletor!r}).getBoundingClientRect()"
                               ".bottom + scrollY") < altura, seletor
    nav.captura(tmp_path / f"05_{largura}.png")


def test_sem_o_gpt2_a_pagina_e_pulada(tmp_path):
    r = rodar_script("05_block.py", "--html", str(tmp_path / "saida"),
                     env={"LAB_MODELO": str(tmp_path / "nao_existe")})
    assert r.returncode == 1 and "PULADO: a página 05_block.html" in r.saida
    assert not (tmp_path / "saida").exists()
