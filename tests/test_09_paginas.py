"""A página da lição 09 (lab/09_scaling.py --html): os números da página são os da lição.

A página refaz as contas da peça em JavaScript (entradas contínuas: qualquer orçamento,
qualquer volume de inferência). O oráculo é o Python da lição: `esperado(C, Dinf)` monta,
com as funções e os formatos de lab/09_scaling.py (e a frase que o experimento 5
imprime), o texto de cada campo da página. Três conferências:
- no Node.js, PAGINA.campos() numa grade de orçamentos e volumes, campo a campo;
- num Chromium de verdade, sem rede: cada controle mexido (teclas, arrasto, cliques), o
  que a tela mostra contra o Python para o estado que a página leu; nenhum erro de
  JavaScript, nenhum pedido à rede; nada transborda a 390 e a 1280 px;
- uma página com um termo do custo trocado, ou que lança um erro, é pega pelas mesmas
  conferências (o teste sabe falhar).
"""
from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from comum.console import cientifico, num
from comum import importar_licao
from navegador import navegador, pagina_gravada, rodar_no_node  # noqa: F401 - navegador: fixture

licao = importar_licao("09_scaling")
R = licao.REAJUSTE


# ------------------------------------------------------------ o oráculo: o Python da lição
def resumo_do_experimento_5(alvo, Dinf) -> str:
    """A frase que o experimento 5 imprime (resumo_inferencia), numa linha só."""
    saida = io.StringIO()
    with contextlib.redirect_stdout(saida):
        licao.resumo_inferencia(alvo, Dinf)
    return " ".join(saida.getvalue().split())


def potencia(x: float) -> str:
    """O rótulo dos controles na notação das marcas: '1,00 × 10²³' (o cientifico da lição,
    com o expoente sobrescrito)."""
    mantissa, expoente = cientifico(x).split("e")
    return f"{mantissa} × 10" + expoente.translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def esperado(C: float, Dinf: float) -> dict[str, str]:
    """O texto de cada data-campo da página para o orçamento C e o volume Dinf."""
    g, rz = licao.grande, licao.razao
    nk, dk = licao.otimo_kaplan(C)
    nc, dc = R.otimo(C)
    pk, pc = R.perda(nk, dk), R.perda(nc, dc)
    c = {"C": potencia(C),
         "kaplan.N": g(nk), "kaplan.D": g(dk), "kaplan.razao": rz(dk / nk),
         "kaplan.perda": num(pk, 3),
         "chinchilla.N": g(nc), "chinchilla.D": g(dc), "chinchilla.razao": rz(dc / nc),
         "chinchilla.perda": num(pc, 3)}
    if nk >= nc:
        frase = (f"Kaplan pede um modelo {num(nk / nc, 2)}x maior, treinado em "
                 f"{num(dc / dk, 2)}x menos tokens. ")
    else:
        frase = (f"Kaplan pede um modelo {num(nc / nk, 2)}x menor, treinado em "
                 f"{num(dk / dc, 2)}x mais tokens. ")
    c["comparacao"] = frase + (f"Pela perda ajustada, a divisão de Kaplan chega a {num(pk, 3)}; "
                               f"a do Chinchilla, a {num(pc, 3)}, a menor possível com este "
                               "orçamento.")
    alvo = pc                         # a qualidade do ótimo do Chinchilla neste orçamento
    c["alvo"], c["Dinf"] = num(alvo, 3), potencia(Dinf)
    for prefixo, volume in (("so_treino", 0.0), ("inf", Dinf)):
        N, D = licao.otimo_com_inferencia(alvo, volume)
        c.update({f"{prefixo}.N": g(N), f"{prefixo}.D": g(D), f"{prefixo}.razao": rz(D / N),
                  f"{prefixo}.treino": cientifico(licao.custo_treino(N, D)),
                  f"{prefixo}.servir": cientifico(licao.custo_inferencia(N, Dinf)),
                  f"{prefixo}.total": cientifico(licao.custo_total(N, alvo, Dinf))})
    c["resumo"] = resumo_do_experimento_5(alvo, Dinf)
    for i, (_nome, _ano, N, D) in enumerate(licao.MODELOS):
        C_modelo = licao.custo_treino(N, D)
        c.update({f"regua.{i}.N": g(N), f"regua.{i}.D": g(D), f"regua.{i}.razao": rz(D / N),
                  f"regua.{i}.C": cientifico(C_modelo),
                  f"regua.{i}.servir": cientifico(licao.custo_inferencia(N)),
                  f"regua.{i}.otimo": g(R.otimo(C_modelo)[0]),
                  f"regua.{i}.vida": cientifico(C_modelo + licao.custo_inferencia(N, Dinf))})
    modelos = {nome: (N, D) for nome, _, N, D in licao.MODELOS}
    (Nc, Dc), (Nl, Dl) = modelos["Chinchilla"], modelos["Llama 3 8B"]
    c["empate"] = cientifico(licao.tokens_de_empate(Nc, Dc, Nl, Dl))
    vc = licao.custo_treino(Nc, Dc) + licao.custo_inferencia(Nc, Dinf)
    vl = licao.custo_treino(Nl, Dl) + licao.custo_inferencia(Nl, Dinf)
    c["vida.frase"] = f"Com {cientifico(Dinf)} tokens servidos, " + (
        f"o Llama 3 8B custa {cientifico(vl)} FLOPs e o Chinchilla, {cientifico(vc)}."
        if vl < vc else
        f"o Chinchilla custa {cientifico(vc)} FLOPs e o Llama 3 8B, {cientifico(vl)}.")
    return c


def diferencas(obtido: dict, esperado_: dict) -> list[str]:
    faltam = sorted(set(esperado_) ^ set(obtido))
    return [f"campo {k}: só de um lado" for k in faltam] + [
        f"{k}: página {obtido[k]!r}, lição {v!r}" for k, v in esperado_.items()
        if k in obtido and obtido[k] != v]


# ------------------------------------------------------------ a página gravada
@pytest.fixture(scope="module")
def pagina(tmp_path_factory):
    """A página como o aluno a grava: lab/09_scaling.py --html PASTA."""
    caminho, r = pagina_gravada("09_scaling.py", None, tmp_path_factory.mktemp("pagina09"))
    assert f"Página salva: {caminho}" in r.saida
    return caminho


def test_pagina_autocontida(pagina):
    html = pagina.read_bytes().decode("utf-8")
    assert '<meta charset="utf-8">' in html and '<html lang="pt-BR">' in html
    assert html.count("<script>") == 1 and "<script src" not in html
    assert "Content-Security-Policy" in html
    assert len(html.encode("utf-8")) < 80_000
    # as constantes vêm do Python da lição (os mesmos floats), não de uma cópia à mão
    dados = json.loads(re.search(r"^const DADOS = (.*);$", html, re.M).group(1))
    assert dados["reajuste"] == {"E": R.E, "A": R.A, "B": R.B, "alfa": R.alfa, "beta": R.beta}
    assert dados["kaplan"] == {"NE": licao.KAPLAN_NE, "EXPOENTE": licao.KAPLAN_EXPOENTE,
                               "PF_DIA": licao.PF_DIA}
    assert dados["modelos"] == [list(m) for m in licao.MODELOS]
    assert not re.search(r"\d,\d\de\d", html.split("<script>")[1])   # nada já formatado


GRADE_C = [10 ** (19 + i / 4) for i in range(29)] + [
    licao.custo_treino(N, D) for _, _, N, D in licao.MODELOS]
GRADE_DINF = [10 ** (10 + i / 2) for i in range(13)]


def test_numeros_da_pagina_iguais_aos_da_licao_numa_grade(pagina):
    """PAGINA.campos() em 33 orçamentos (10¹⁹ a 10²⁶ e os quatro da régua) x 13 volumes
    (10¹⁰ a 10¹⁶), no Node.js: campo a campo o texto que o Python da lição dá; e as
    fórmulas da peça em JavaScript contra as do Python, em números."""
    html = pagina.read_text(encoding="utf-8")
    obtido = rodar_no_node(html, f"""(() => {{
        const Cs = {GRADE_C!r}, Ds = {GRADE_DINF!r}, campos = [], numeros = [];
        for (const C of Cs) {{
            const [nc, dc] = LAB.otimo(C), alvo = LAB.perda(nc, dc);
            numeros.push([LAB.otimo_kaplan(C), [nc, dc], alvo, LAB.n_minimo(alvo),
                          LAB.tokens_para_alvo(nc * 1.5, alvo),
                          Ds.map(D => [LAB.otimo_com_inferencia(alvo, D),
                                       LAB.custo_total(nc, alvo, D)])]);
            for (const D of Ds) campos.push(PAGINA.campos({{C, Dinf: D}}));
        }}
        return {{campos, numeros, empate: LAB.tokens_de_empate(70e9, 1.4e12, 8e9, 15e12)}};
    }})()""")
    ruins = []
    for i, (C, D) in enumerate((C, D) for C in GRADE_C for D in GRADE_DINF):
        ruins += [f"C = {C:.3g}, Dinf = {D:.3g}: {d}"
                  for d in diferencas(obtido["campos"][i], esperado(C, D))]
    assert not ruins, "\n".join(ruins[:10])
    for C, (kaplan, chinchilla, alvo, minimo, tokens, por_volume) in zip(GRADE_C,
                                                                         obtido["numeros"]):
        assert kaplan == pytest.approx(licao.otimo_kaplan(C), rel=1e-13)
        assert chinchilla == pytest.approx(R.otimo(C), rel=1e-13)
        assert alvo == pytest.approx(R.perda(*R.otimo(C)), rel=1e-14)
        assert minimo == pytest.approx(licao.n_minimo(alvo), rel=1e-13)
        assert tokens == pytest.approx(licao.tokens_para_alvo(chinchilla[0] * 1.5, alvo),
                                       rel=1e-12)
        for D, ((N, Dt), total) in zip(GRADE_DINF, por_volume):
            # o ótimo de um vale achatado só se acha até ~1e-7 (a lição diz o mesmo)
            n_py, d_py = licao.otimo_com_inferencia(alvo, D)
            assert N == pytest.approx(n_py, rel=1e-6) and Dt == pytest.approx(d_py, rel=1e-5)
            assert total == pytest.approx(licao.custo_total(chinchilla[0], alvo, D), rel=1e-12)
    assert obtido["empate"] == pytest.approx(licao.tokens_de_empate(70e9, 1.4e12, 8e9, 15e12))
    assert len(obtido["campos"]) == 33 * 13


# ------------------------------------------------------------ no navegador
def conferir_tela(nav) -> dict:
    """O que a tela mostra contra o Python, para o estado que a página leu dos controles;
    nenhum erro. Devolve o estado."""
    estado = nav.avaliar("PAGINA.ler()")
    ruins = diferencas(nav.campos(), esperado(estado["C"], estado["Dinf"]))
    assert not ruins, "\n".join(ruins[:10])
    assert nav.erros == []
    return estado


def pontos(nav) -> dict:
    return nav.avaliar("""Object.fromEntries(Array.from(document.querySelectorAll(
        "#grafico [data-ponto]"), el => { const r = el.getBoundingClientRect();
        return [el.dataset.ponto, [r.left + r.width / 2, el.textContent]]; }))""")


def visivel(nav, seletor) -> bool:
    return nav.avaliar(f"""(() => {{ const el = document.querySelector({seletor!r});
        return !!el && el.getClientRects().length > 0; }})()""")


def test_cada_controle_no_navegador(pagina, navegador):
    nav = navegador
    nav.abrir(pagina, 1280, 800)
    estado = conferir_tela(nav)
    assert estado == {"C": pytest.approx(1e23, rel=1e-15), "Dinf": pytest.approx(1e13, rel=1e-15),
                      "inferencia": False}
    assert not visivel(nav, "#painel-inferencia") and "inferencia" not in pontos(nav)

    # o orçamento: teclas de verdade e arrastos até as pontas
    nav.teclar("#orcamento", "ArrowRight", 3)
    assert conferir_tela(nav)["C"] == pytest.approx(10 ** 23.3, rel=1e-14)
    for posicao in ("19", "21.5", "26", "19.7"):
        assert nav.deslizar("#orcamento", posicao) == posicao
        estado = conferir_tela(nav)
        assert estado["C"] == pytest.approx(10 ** float(posicao), rel=1e-14)
        nk, nc = licao.otimo_kaplan(estado["C"])[0], R.otimo(estado["C"])[0]
        p = pontos(nav)
        assert (p["kaplan"][0] > p["chinchilla"][0]) == (nk > nc)   # a ordem na figura
        assert p["chinchilla"][1] == (f"Chinchilla: {licao.grande(nc)}, "
                                      f"{licao.grande(R.otimo(estado['C'])[1])} tokens, "
                                      f"perda {num(R.perda(*R.otimo(estado['C'])), 3)}")

    # os botões da régua: o C exato de cada modelo (6ND)
    for i, (nome, _, N, D) in enumerate(licao.MODELOS):
        nav.clicar(f'#predefinidos [data-modelo="{i}"]')
        assert conferir_tela(nav)["C"] == licao.custo_treino(N, D), nome
        assert nav.avaliar("Array.from(document.querySelectorAll('#predefinidos button'),"
                           " b => b.getAttribute('aria-pressed'))") == [
            "true" if j == i else "false" for j in range(4)]
    nav.teclar("#orcamento", "ArrowLeft")               # o controle solta o C da régua
    assert conferir_tela(nav)["C"] == pytest.approx(
        10 ** float(nav.avaliar("document.querySelector('#orcamento').value")), rel=1e-14)

    # precificar a inferência também
    nav.marcar("#inferencia")
    assert visivel(nav, "#painel-inferencia") and visivel(nav, "#regua td.so-inferencia")
    assert conferir_tela(nav)["inferencia"] is True
    assert "inferencia" in pontos(nav)
    nav.teclar("#volume", "ArrowRight", 2)
    assert conferir_tela(nav)["Dinf"] == pytest.approx(10 ** 13.2, rel=1e-14)
    for posicao in ("10", "14.5", "16"):
        nav.deslizar("#volume", posicao)
        assert conferir_tela(nav)["Dinf"] == pytest.approx(10 ** float(posicao), rel=1e-14)
    nav.marcar("#inferencia", False)
    assert not visivel(nav, "#painel-inferencia") and "inferencia" not in pontos(nav)
    assert not visivel(nav, "#regua td.so-inferencia")
    conferir_tela(nav)


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 800)])
def test_cabe_no_celular_e_no_projetor(pagina, navegador, largura, altura, tmp_path):
    nav = navegador
    nav.abrir(pagina, largura, altura)
    assert nav.transbordos() == []
    nav.marcar("#inferencia")
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    if largura >= 1000:                 # no projetor, o controle da inferência na 1ª tela
        fundo = nav.avaliar("document.querySelector('#inferencia').getBoundingClientRect()"
                            ".bottom + scrollY")
        assert fundo < altura
    nav.captura(tmp_path / f"09_{largura}.png")


def test_a_pagina_nao_pede_nada_a_rede(pagina, navegador):
    nav = navegador
    nav.abrir(pagina, 1280, 800)
    assert nav.erros == []
    nav.avaliar("fetch('https://exemplo.invalid/x').catch(() => null)")
    nav.avaliar("new Promise(r => setTimeout(r, 100))")
    assert any("pedido bloqueado" in e for e in nav.erros), nav.erros
    assert nav.avaliar("document.getElementById('erro-pagina').hidden") is False


# ------------------------------------------------------------ o teste sabe falhar
def pagina_modificada(tmp_path, de, para) -> str:
    """A página da lição com um trecho do script trocado."""
    html = licao.pagina()
    assert html.count(de) == 1, de
    caminho = tmp_path / "errada.html"
    caminho.write_text(html.replace(de, para), encoding="utf-8")
    return caminho


def test_uma_pagina_com_um_termo_errado_falha(tmp_path, navegador):
    """A inferência custando N por token em vez de 2N: o teste do navegador acusa os
    campos que mudam (e só a página errada: a certa passa acima)."""
    nav = navegador
    errada = pagina_modificada(tmp_path,
                               "function custo_inferencia(N, tokens = 1.0) { return 2 * N",
                               "function custo_inferencia(N, tokens = 1.0) { return 1 * N")
    nav.abrir(errada, 1280, 800)
    nav.marcar("#inferencia")
    with pytest.raises(AssertionError) as erro:
        conferir_tela(nav)
    assert "inf.total: página" in str(erro.value) and "regua.0.servir" in str(erro.value)


def test_uma_pagina_que_lanca_um_erro_falha(tmp_path, navegador):
    nav = navegador
    errada = pagina_modificada(tmp_path, "  c.empate = ", "  if (Dinf > 2e13) null.x;\n"
                                                         "  c.empate = ")
    nav.abrir(errada, 1280, 800)
    assert nav.erros == []
    nav.marcar("#inferencia")
    nav.deslizar("#volume", "14")
    assert any("null" in e for e in nav.erros), nav.erros
    assert nav.avaliar("document.getElementById('erro-pagina').textContent").startswith(
        "Erro na página")
    with pytest.raises(AssertionError):
        conferir_tela(nav)


# ------------------------------------------------------------ a apostila
def test_a_apostila_cita_a_pagina_como_ela_e():
    """A seção da página na apostila: como gravá-la e os números que ela cita, iguais aos
    que a página mostra (o oráculo acima) com C = 10²³ e 10¹³ tokens servidos."""
    from conftest import RAIZ

    texto = (RAIZ / "apostilas" / "09_scaling.md").read_text(encoding="utf-8")
    secao = texto.split("### A página da lição", 1)[1].split("\n### ", 1)[0]
    assert ".venv\\Scripts\\python.exe lab\\09_scaling.py --html" in secao
    assert ".venv/bin/python lab/09_scaling.py --html" in secao
    assert "paginas/09_scaling.html" in secao and "--abrir" in secao
    e = esperado(1e23, 1e13)
    assert (f"(Kaplan {e['kaplan.N']},\nChinchilla {e['chinchilla.N']}, perda "
            f"{e['chinchilla.perda']})") in secao
    citacao = " ".join(linha[2:] for linha in secao.splitlines() if linha.startswith("> "))
    assert citacao == e["resumo"]
