"""A página da lição 07 (lab/07_generation.py --html): o filtro do sorteio.

A página leva os logits da frase no modelo carregado (o vocabulário inteiro, em float32) e
refaz em JavaScript o caminho do escolher(): temperatura -> top-k -> top-p -> softmax. O
oráculo é o escolher() da lição: as probabilidades que ele entrega ao torch.multinomial
(um espião as guarda) e quem sobrevive aos filtros dele. Quatro conferências:
- no Node.js, as funções da página contra o escolher() numa grade de temperaturas, k e p
  nos logits da página, e nos casos de borda: empates no top-k, p exatamente na fronteira
  (massas diádicas, empates), temperatura pequena, T = 0 (a gulosa), k >= V;
- num Chromium de verdade, sem rede: cada controle mexido (teclas, arrasto, atalhos), o
  que a tela mostra contra o Python; e os números que a lição imprime na mesma execução
  (experimentos 2 e 3) iguais aos da página; nada transborda a 390 px e a 1280 x 720;
- uma página com a fronteira do top-p errada (< em vez de <=) é pega (o teste sabe falhar);
- sem o GPT-2, a página é pulada com a mensagem de sempre (saída 1, nada gravado).
"""
from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
import torch

from comum.console import inteiro, num, pct
from conftest import rodar_script
from comum import importar_licao
from navegador import dados_de, navegador, pagina_gravada, rodar_no_node  # noqa: F401

licao = importar_licao("07_generation")


# ------------------------------------------------------------ o oráculo: o escolher() da lição
def pelo_escolher(z, T, k, p):
    """(probabilidades que o escolher() sorteia, índices que sobrevivem) para logits z (V,)."""
    z = torch.tensor(np.array(z, dtype=np.float32))[None]              # (1, V)
    vistos = []
    original = torch.multinomial

    def espiao(probs, *args, **kwargs):
        vistos.append(probs.clone())
        return original(probs, *args, **kwargs)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(torch, "multinomial", espiao)
        escolhido = licao.escolher(z, T, k, p)
    if T == 0:                                    # a gulosa: o argmax, sem sorteio
        probs = torch.zeros_like(z[0])
        probs[int(escolhido)] = 1.0
        return probs.double().numpy(), [int(escolhido)]
    assert len(vistos) == 1
    ficam = licao.filtrar_top_p(licao.filtrar_top_k(z.float() / T, k), p).isfinite()[0]
    probs = vistos[0][0].double().numpy()
    assert set(np.flatnonzero(probs > 0)) <= set(np.flatnonzero(ficam.numpy()))
    return probs, np.flatnonzero(ficam.numpy()).tolist()


def comparar(z, casos, obtidos) -> list[str]:
    """As diferenças entre a página (obtidos) e o escolher(), caso a caso."""
    ruins = []
    for (T, k, p), (ficam, probs) in zip(casos, obtidos):
        esperado, ficam_py = pelo_escolher(z, T, k, p)
        if ficam != ficam_py:
            ruins.append(f"T={T}, k={k}, p={p}: ficam {len(ficam)} na página, "
                         f"{len(ficam_py)} no escolher()")
        elif not np.allclose(probs, esperado, rtol=2e-5, atol=1e-9):
            pior = int(np.argmax(np.abs(np.array(probs) - esperado)))
            ruins.append(f"T={T}, k={k}, p={p}: token {pior}: {probs[pior]} x {esperado[pior]}")
    return ruins


NO_NODE = """(() => {{ const casos = {casos}, saida = [];
    for (const z of {logits}) for (const [T, k, p] of casos) {{
        const zz = z === null ? Z : Float32Array.from(z);
        const {{probs, corte}} = LAB.probabilidades(zz, T, k, p, z === null ? ORDEM_Z : null);
        const ficam = [];
        corte.forEach((c, i) => {{ if (c === 0) ficam.push(i); }});
        saida.push([ficam, Array.from(probs)]);
    }}
    return saida; }})()"""


def no_node(html, logits, casos):
    """LAB.probabilidades da página em cada (T, k, p), para cada vetor de logits (None: os
    da própria página, pelo caminho rápido que ela usa na tela)."""
    return rodar_no_node(html, NO_NODE.format(casos=json.dumps(casos),
                                              logits=json.dumps(logits)))


# ------------------------------------------------------------ a página gravada
@pytest.fixture(scope="module")
def pagina(gpt2_pequeno, tmp_path_factory):
    """A página como o aluno a grava: lab/07_generation.py --html PASTA (o GPT-2 de teste)."""
    caminho, r = pagina_gravada("07_generation.py", gpt2_pequeno,
                                tmp_path_factory.mktemp("pagina07"))
    assert f"Página salva: {caminho}" in r.saida
    return caminho


def logits_da_pagina(pagina) -> np.ndarray:
    return np.frombuffer(base64.b64decode(dados_de(pagina)["logits"]), dtype="<f4")


def test_pagina_autocontida_com_os_logits_do_modelo(pagina, gpt2_pequeno):
    """Os logits da página são os do GPT2LMHeadModel do transformers na frase padrão (o
    oráculo independente), os 30 mostrados são os mais prováveis, e nada vem da rede."""
    from transformers import AutoTokenizer, GPT2LMHeadModel

    html = pagina.read_bytes().decode("utf-8")
    assert '<meta charset="utf-8">' in html and "Content-Security-Policy" in html
    assert html.count("<script>") == 1 and "<script src" not in html
    dados = dados_de(pagina)
    tok = AutoTokenizer.from_pretrained(gpt2_pequeno)
    hf = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, use_safetensors=True).eval()
    ids = tok(dados["texto"], return_tensors="pt")["input_ids"]
    with torch.no_grad():
        deles = hf(ids).logits[0, -1].numpy()
    z = logits_da_pagina(pagina)
    assert z.shape == (hf.config.vocab_size,) == (dados["V"],)
    assert np.allclose(z, deles, rtol=0, atol=1e-4 * max(1.0, np.abs(deles).max()))
    mostrados = [i for i, _ in dados["mostrados"]]
    assert len(mostrados) == licao.MOSTRADOS and mostrados == np.argsort(-z, kind="stable")[
        :licao.MOSTRADOS].tolist()
    assert dados["inicio"] == {"temperatura": 1.0, "top_k": 0, "top_p": 0.9}
    for nome, valor in dados["inicio"].items():
        assert valor in dados["paradas"][nome]


GRADE = [(T, k, p) for T in (0.01, 0.05, 0.5, 1.0, 2.0, 100.0) for k in (0, 1, 3, 50, 399, 400)
         for p in (0.05, 0.5, 0.9, 0.99, 1.0)]


def test_filtro_da_pagina_igual_ao_escolher_nos_logits_da_pagina(pagina):
    """180 regras (T de 0,01 a 100, k de 1 a V, p de 0,05 a 1) nos logits da página, pelo
    caminho rápido da tela e pelo caminho direto: quem fica e as probabilidades iguais às
    do escolher()."""
    html = pagina.read_text(encoding="utf-8")
    z = logits_da_pagina(pagina)
    rapido, direto = (no_node(html, [lista], GRADE) for lista in (None, z.tolist()))
    assert rapido == direto
    ruins = comparar(z, GRADE, rapido)
    assert not ruins, "\n".join(ruins[:10])
    assert len(rapido) == len(GRADE) == 180


# logits pequenos (até 16: o sort do PyTorch é estável até aí, e a ordem dos empatados na
# fronteira do top-p é a dos índices, a mesma da página)
DIADICO = np.log(np.array([0.5, 0.25, 0.125, 0.125], dtype=np.float32)).tolist()
QUATRO = np.log(np.array([0.4, 0.3, 0.2, 0.1], dtype=np.float32)).tolist()
EMPATES = [0.0, 0.0, 0.0, 0.0, -1000.0, -1000.0, -1000.0, -1000.0]   # 1/4 cada, exatos
TOPK_EMPATE = [3.0, 2.0, 2.0, 1.0, 2.0, -1.0]
BRINQUEDO = list(licao.BRINQUEDO.values())
BORDAS = [
    (DIADICO, [(1.0, 0, p) for p in (0.5, 0.75, 0.875, 0.874, 0.876, 1.0)]),
    (QUATRO, [(1.0, 0, 0.7), (1.0, 0, 0.01), (1.0, 0, 0.9)]),
    (EMPATES, [(1.0, 0, p) for p in (0.25, 0.5, 0.75, 0.76, 1.0)] + [(0.5, 2, 0.5)]),
    (TOPK_EMPATE, [(1.0, k, 1.0) for k in (1, 2, 3, 4, 5, 6, 7)] + [(1.0, 2, 0.5)]),
    (BRINQUEDO, [(T, k, p) for T in (0.01, 0.05, 0.5, 1.0) for k in (0, 3)
                 for p in (0.5, 0.9, 1.0)] + [(0.0, 0, 1.0)]),
    ([1.0, 3.0, 3.0, 2.0], [(0.0, 0, 1.0), (0.01, 0, 1.0), (0.01, 1, 0.5)]),
]


def test_filtro_da_pagina_igual_ao_escolher_nos_casos_de_borda(pagina):
    """Empates no k-ésimo (ficam todos), p exatamente na fronteira de massas exatas (ela
    sai: a acumulada <= 1 - p), a comparação em float32 (1 - 0,7), T pequeno (o float32
    zera a cauda) e T = 0 (a gulosa, o primeiro argmax)."""
    html = pagina.read_text(encoding="utf-8")
    ruins, vistos = [], 0
    for logits, casos in BORDAS:
        obtidos = no_node(html, [logits], casos)
        ruins += [f"{logits[:4]}...: {r}" for r in comparar(np.array(logits), casos, obtidos)]
        vistos += len(obtidos)
    assert not ruins, "\n".join(ruins)
    assert vistos == sum(len(c) for _, c in BORDAS)
    # e as bordas são mesmo bordas: o escolher() muda de conjunto em cima delas
    assert len(pelo_escolher(DIADICO, 1.0, 0, 0.75)[1]) == 2
    assert len(pelo_escolher(DIADICO, 1.0, 0, 0.876)[1]) == 4
    assert pelo_escolher(EMPATES, 1.0, 0, 0.5)[1] == [2, 3]
    assert len(pelo_escolher(TOPK_EMPATE, 1.0, 2, 1.0)[1]) == 4


def test_uma_pagina_com_a_fronteira_errada_falha(pagina, tmp_path):
    """O top-p com < no lugar do <= (p exatamente na fronteira passaria a ficar): a
    conferência dos casos de borda acusa."""
    html = pagina.read_text(encoding="utf-8")
    de = "if (f32(acumulada) > teto) break;"
    assert html.count(de) == 1
    errada = html.replace(de, "if (f32(acumulada) >= teto) break;")
    casos = [(1.0, 0, 0.75), (1.0, 0, 0.5)]
    obtidos = no_node(errada, [DIADICO], casos)
    assert len(comparar(np.array(DIADICO), casos, obtidos)) == 2


# ------------------------------------------------------------ no navegador
def esperado(pagina, T, k, p) -> dict[str, str]:
    """O texto de cada data-campo da página para as regras (T, k, p), pelo escolher()."""
    dados = dados_de(pagina)
    z = logits_da_pagina(pagina)
    probs, ficam = pelo_escolher(z, T, k, p)
    V = len(z)
    antes = (torch.from_numpy(z.copy()) / T).softmax(-1).double().numpy()
    cortados_k = V - int(licao.filtrar_top_k(torch.from_numpy(z.copy()) / T, k).isfinite().sum())
    c = {"T": num(T, 2), "k": "desligado" if k == 0 else inteiro(k) if k < V
         else f"{inteiro(k)} (≥ V: não corta)", "p": num(p, 2) if p < 1 else "1 (desligado)",
         "ficam": inteiro(len(ficam)), "V": inteiro(V),
         "cortados": f"Cortados: {inteiro(cortados_k)} pelo top-k, "
                     f"{inteiro(V - len(ficam) - cortados_k)} pelo top-p.",
         "massa": pct(float(antes[ficam].sum()))}
    acumulada = 0.0
    vivos = set(ficam)
    top_k = set(np.flatnonzero(licao.filtrar_top_k(torch.from_numpy(z.copy()) / T, k)
                               .isfinite().numpy()))
    # a acumulada é a do que o top-p vê: depois da temperatura e do top-k, renormalizado
    vista = licao.filtrar_top_k(torch.from_numpy(z.copy()) / T, k).softmax(-1).double().numpy()
    for j, (i, _texto) in enumerate(dados["mostrados"]):
        acumulada += vista[i]
        c[f"p.{j}"], c[f"antes.{j}"], c[f"acum.{j}"] = pct(probs[i]), pct(antes[i]), pct(acumulada)
        c[f"corte.{j}"] = "" if i in vivos else "top-k" if i not in top_k else "top-p"
    return c


def conferir_tela(nav, pagina) -> dict:
    estado = nav.avaliar("PAGINA.ler()")
    obtido, certo = nav.campos(), esperado(pagina, estado["T"], estado["k"], estado["p"])
    ruins = [f"{n}: página {obtido.get(n)!r}, escolher() {v!r}" for n, v in certo.items()
             if obtido.get(n) != v] + [f"{n}: só na página" for n in set(obtido) - set(certo)]
    assert not ruins, "\n".join(ruins[:10])
    assert nav.erros == []
    return estado


def atalho(nav, rotulo):
    indice = nav.avaliar(f"""Array.from(document.querySelectorAll('#atalhos button'))
        .find(b => b.textContent === {json.dumps(rotulo)}).dataset.atalho""")
    nav.clicar(f'#atalhos [data-atalho="{indice}"]')


def test_cada_controle_no_navegador_e_os_numeros_da_licao(pagina, navegador, gpt2_pequeno):
    """Teclas, arrastos e atalhos: a tela contra o escolher(); e, nos atalhos dos
    experimentos 2 e 3, os números que a lição imprime com o mesmo modelo e a mesma frase
    (as 5 primeiras linhas em T = 0,5, 1 e 2; quantos ficam no passo 1)."""
    nav = navegador
    nav.abrir(pagina, 1280, 720)
    assert conferir_tela(nav, pagina) == {"T": 1.0, "k": 0, "p": 0.9}
    nav.teclar("#temperatura", "ArrowLeft", 3)              # 1 -> 0,7
    assert conferir_tela(nav, pagina)["T"] == 0.7
    nav.teclar("#top_k", "ArrowRight", 5)
    assert conferir_tela(nav, pagina)["k"] == 5
    nav.teclar("#top_p", "ArrowLeft", 40)
    assert conferir_tela(nav, pagina)["p"] == 0.5
    nav.teclar("#temperatura", "Home")
    assert conferir_tela(nav, pagina)["T"] == 0.01
    nav.teclar("#top_k", "End")
    nav.teclar("#top_p", "End")
    assert conferir_tela(nav, pagina) == {"T": 0.01, "k": 200, "p": 1.0}
    nav.deslizar("#temperatura", "24")                      # a última parada: T = 100
    assert conferir_tela(nav, pagina)["T"] == 100.0

    saida = rodar_script("07_generation.py", "--so", "2,3", "--sem-figuras",
                         env={"LAB_MODELO": str(gpt2_pequeno)}).saida
    tabela = saida.split("(os 5 mais prováveis em T = 1):")[1].split("\n\n")[1]
    colunas = [re.findall(r"([\d,]+ %)", linha) for linha in tabela.splitlines()[1:6]]
    for rotulo, coluna in (("T = 0,5", 0), ("sem corte (T = 1)", 1), ("T = 2", 2)):
        atalho(nav, rotulo)
        conferir_tela(nav, pagina)
        campos = nav.campos()
        assert [campos[f"p.{j}"] for j in range(5)] == [linha[coluna] for linha in colunas]
    passo_1 = re.search(r"^\s+1  \S+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", saida, re.M).groups()
    for rotulo, impresso in zip(("top-k 50", "top-p 0,5", "top-p 0,9"), passo_1):
        atalho(nav, rotulo)
        conferir_tela(nav, pagina)
        assert nav.campos()["ficam"] == impresso, rotulo
    atalho(nav, "como a lição rodou")
    assert conferir_tela(nav, pagina) == {"T": 1.0, "k": 0, "p": 0.9}
    # os cortados ficam em cinza; os que ficam, não
    cinzas = nav.avaliar("Array.from(document.querySelectorAll('#linhas tr'), "
                         "tr => tr.classList.contains('cortado'))")
    assert cinzas == [nav.campos()[f"corte.{j}"] != "" for j in range(len(cinzas))]


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 720)])
def test_cabe_no_celular_e_no_projetor(pagina, navegador, largura, altura, tmp_path):
    nav = navegador
    nav.abrir(pagina, largura, altura)
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    # todo controle se alcança pelo teclado (nenhum tabindex negativo, nenhum desligado)
    assert nav.alcancaveis("input, button")
    if largura >= 1000:                 # no projetor, os controles e as barras na 1ª tela
        for seletor in ("#top_p", "#linha-5"):
            fundo = nav.avaliar(f"document.querySelector('{seletor}').getBoundingClientRect()"
                                ".bottom + scrollY")
            assert fundo < altura, seletor
    nav.captura(tmp_path / f"07_{largura}.png")


def test_a_pagina_nao_pede_nada_a_rede(pagina, navegador):
    nav = navegador
    nav.abrir(pagina, 1280, 720)
    assert nav.erros == []
    nav.avaliar("fetch('https://exemplo.invalid/x').catch(() => null)")
    nav.avaliar("new Promise(r => setTimeout(r, 100))")
    assert any("pedido bloqueado" in e for e in nav.erros), nav.erros


# ------------------------------------------------------------ sem o GPT-2
def test_sem_o_gpt2_a_pagina_e_pulada(tmp_path):
    r = rodar_script("07_generation.py", "--html", str(tmp_path / "saida"),
                     env={"LAB_MODELO": str(tmp_path / "nao_existe")})
    assert r.returncode == 1, r.saida + r.erros
    assert "PULADO: a página 07_generation.html: não há pasta" in r.saida
    assert "Traceback" not in r.saida + r.erros and not (tmp_path / "saida").exists()
