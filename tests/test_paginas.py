"""O encanamento das páginas (lab/comum/paginas.py): os formatos pt-BR em JavaScript iguais aos de
console.py, um documento que não pede nada à rede, gravar e abrir (só com --abrir).

As páginas de cada lição têm o seu arquivo (tests/test_09_paginas.py...), com o navegador.
"""
from __future__ import annotations

import argparse
import math
import random
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from comum import console, paginas
from conftest import rodar_script
from navegador import rodar_no_node, script_da_pagina


def valores_de_teste() -> list[float]:
    """Os casos difíceis (metades exatas, que o Python manda para o par; 9,995 e seus
    vizinhos; acima de 1e21, onde o toFixed do JavaScript desiste; -0; subnormais) e
    mais de mil números de todas as grandezas."""
    casos = [0.0, -0.0, 0.125, 0.375, 2.5, 3.5, -2.5, 0.5, 1.5, 1.005, 0.0005, -0.004, 9.995,
             9.9995, 99.95, 999.5, 0.9995, 1e21, 1.5e21, 123456789.125, 1e23, 1.31e23, 5e-324,
             1e-300, 1e300, 1.7976931348623157e308, 0.1, 0.7, 1234.5, -1234.5, 999.9999,
             1e-5, 8_030_261_248, 124_439_808, 1875.0, 19.05, 0.0145, 5.88e23, 1e12, 1e15]
    sorteio = random.Random(21)
    casos += [sorteio.choice((1, -1)) * 10 ** sorteio.uniform(-8, 30) for _ in range(1200)]
    casos += [sorteio.randint(-10**6, 10**6) / sorteio.choice((2, 4, 8, 16, 10, 100, 1000))
              for _ in range(400)]
    return casos


CASAS = (0, 1, 2, 3, 4)


def formatos_python(x: float) -> list:
    linha = [console.inteiro(x), float(round(x))]
    for c in CASAS:
        linha += [console.num(x, c), console.cientifico(x, c), console.pct(x, c)]
    return linha


FORMATOS_JS_NA_GRADE = f"""DADOS.valores.map(x => {{
    const linha = [inteiro(x), arredondar(x)];
    for (const c of {list(CASAS)}) linha.push(num(x, c), cientifico(x, c), pct(x, c));
    return linha; }})"""


def pagina_minima(corpo='<p data-campo="x"></p>', script=None, dados=None) -> str:
    script = script or "const PAGINA = {ler: () => ({}), campos: () => ({x: num(DADOS.v, 1)})};"
    return paginas.documento("Uma página", corpo, script, dados or {"v": 1234.56})


def test_formatos_em_javascript_iguais_aos_do_console():
    """num, inteiro, cientifico, pct e arredondar (o round do Python) no JavaScript das
    páginas dão, caractere por caractere, o mesmo que console.py."""
    valores = valores_de_teste()
    html = pagina_minima(dados={"v": 1.0, "valores": valores})
    saida = rodar_no_node(html, FORMATOS_JS_NA_GRADE)
    diferentes = [(x, esperado, obtido) for x, obtido in zip(valores, saida)
                  if (esperado := formatos_python(x)) != obtido[:1] + [float(obtido[1])]
                  + obtido[2:]]
    assert not diferentes, diferentes[:5]
    assert len(saida) == len(valores) > 1600


def test_os_casos_que_o_javascript_erraria_sozinho():
    """Onde toFixed/toExponential discordam do Python: a conferência acima tem de vê-los."""
    saida = rodar_no_node(pagina_minima(), """[num(0.125), (0.125).toFixed(2), num(2.5, 0),
        (2.5).toFixed(0), num(1e21, 0), (1e21).toFixed(0), cientifico(1.25e5, 1),
        (1.25e5).toExponential(1), num(-0.001), inteiro(-0.5), num(NaN)]""")
    assert saida == ["0,12", "0.13", "2", "3", "1.000.000.000.000.000.000.000", "1e+21",
                     "1,2e5", "1.3e+5", "0,00", "0", "\u2014"]
    assert console.num(0.125) == "0,12" and console.num(1e21, 0).startswith("1.000.000")


def test_documento_autocontido():
    html = pagina_minima()
    assert html.startswith("<!DOCTYPE html>\n<html lang=\"pt-BR\">")
    assert '<meta charset="utf-8">' in html.split("</head>")[0]
    assert 'name="viewport"' in html
    politica = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert politica and "default-src 'none'" in politica.group(1)
    assert "connect-src" not in politica.group(1)          # fetch cai no default: nada
    script = script_da_pagina(html)
    assert "const DADOS = {\"v\":1234.56};" in script
    assert not re.search(r"<script[^>]*\ssrc=|type=\"module\"|<link|@import", html)
    for proibido in ("fetch(", "XMLHttpRequest", "import(", "WebSocket", "EventSource"):
        assert proibido not in html, proibido
    # o único endereço é o nome do espaço do SVG (createElementNS), que não é um pedido
    assert set(re.findall(r"https?://[^\s\"'<>)]+", html)) == {"http://www.w3.org/2000/svg"}


def test_o_comum_das_paginas_vem_de_lab_html():
    """O que toda página leva mora em lab/html/, como o de cada lição: comum.css no <style>,
    antes do estilo da lição; comum_formatos.js antes do script da lição (que usa num, pct);
    comum_kit.js depois (que liga o PAGINA dela). Nenhum dos três fecha a tag onde entra."""
    css, formatos, kit = (paginas.fonte(n) for n in ("comum.css", "comum_formatos.js",
                                                     "comum_kit.js"))
    assert "</style" not in css.lower() and "</script" not in (formatos + kit).lower()
    assert "function num(" in formatos and "function iniciar(" in kit
    html = paginas.documento("x", "<p>oi</p>", "const DA_LICAO = 1;", {}, ".da-licao {}")
    assert f"<style>\n{css}.da-licao {{}}</style>" in html
    script = script_da_pagina(html)
    assert (script.index(formatos.strip()) < script.index("const DA_LICAO = 1;")
            < script.index(kit.strip()))


def test_dados_nao_fecham_o_script():
    html = pagina_minima(dados={"v": 1.0, "texto": "</script><script>alert(1)</script><!--"})
    assert html.count("</script>") == 1
    assert rodar_no_node(html, "DADOS.texto") == "</script><script>alert(1)</script><!--"
    with pytest.raises(ValueError):
        paginas.documento("x", "", "const a = '</script>';")
    with pytest.raises(ValueError):                             # nada de NaN/Infinity no JSON
        pagina_minima(dados={"v": math.inf})


def licao_falsa(tmp_path, **args):
    padrao = {"html": str(tmp_path / "paginas"), "abrir": False}
    return SimpleNamespace(args=argparse.Namespace(**{**padrao, **args}))


def test_gravar_escreve_utf8_e_diz_o_caminho(tmp_path, capsys, monkeypatch):
    aberturas = []
    monkeypatch.setattr("webbrowser.open", lambda *a, **k: aberturas.append(a) or True)
    assert paginas.gravar(licao_falsa(tmp_path), pagina_minima, "nn_teste.html") == 0
    caminho = tmp_path / "paginas" / "nn_teste.html"
    saida = capsys.readouterr().out
    assert f"Página salva: {caminho}\n" in saida and "sem internet" in saida
    texto = caminho.read_bytes().decode("utf-8")                # UTF-8 de verdade
    assert "Uma página" in texto and "\r\n" not in texto
    assert aberturas == []                                      # sem --abrir, nada abre


def test_abrir_so_com_a_opcao_e_sem_navegador_explica(tmp_path, capsys, monkeypatch):
    aberturas = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: aberturas.append(url) or False)
    assert paginas.gravar(licao_falsa(tmp_path, abrir=True), pagina_minima(), "x.html") == 0
    assert aberturas == [(tmp_path / "paginas" / "x.html").resolve().as_uri()]
    assert "não encontrei um navegador" in capsys.readouterr().out


def test_pasta_que_nao_da_para_gravar(tmp_path, capsys):
    arquivo = tmp_path / "um_arquivo"
    arquivo.write_text("x")
    assert paginas.gravar(licao_falsa(tmp_path, html=str(arquivo)), pagina_minima, "x.html") == 1
    assert "Não consegui gravar a página" in capsys.readouterr().out


def test_erro_no_gerador_sai_com_arquivo_e_linha(tmp_path, capsys, monkeypatch):
    """Um erro na função que monta a página (numa cópia do aluno) aparece como os dos
    experimentos: a mensagem, o arquivo e a linha; saída 1, sem traceback."""
    monkeypatch.delenv("LAB_TRACEBACK", raising=False)

    def pagina_quebrada():
        return {}["falta"]

    assert paginas.gravar(licao_falsa(tmp_path), pagina_quebrada, "x.html") == 1
    saida = capsys.readouterr().out
    assert "FALHOU: KeyError: 'falta'" in saida and "test_paginas.py:" in saida
    assert "Traceback" not in saida and not (tmp_path / "paginas").exists()


def test_pagina_sem_o_gpt2_e_pulada_com_o_motivo(tmp_path, capsys):
    """Uma página que sai do GPT-2 (03, 04, 07) sem o modelo: 'PULADO' com o motivo de
    sempre, como num experimento; saída 1 e nada gravado."""
    from comum.licao import ExperimentoPulado

    def sem_modelo():
        raise ExperimentoPulado("não há pasta 'x', e esse não é um nome de GPT-2")

    assert paginas.gravar(licao_falsa(tmp_path), sem_modelo, "nn.html") == 1
    saida = capsys.readouterr().out
    assert saida.startswith("PULADO: a página nn.html: não há pasta 'x'")
    assert "Traceback" not in saida and not (tmp_path / "paginas").exists()


def test_opcoes_html_e_abrir():
    from comum.licao import criar_parser

    p = criar_parser("lab/x.py", "x", ["a"], paginas.opcoes())
    assert p.parse_args([]).html is None and not paginas.pedida(p.parse_args([]))
    assert p.parse_args(["--html"]).html == str(paginas.PASTA_PADRAO)
    assert p.parse_args(["--html", "saida"]).html == "saida"
    args = p.parse_args(["--abrir"])
    assert paginas.pedida(args) and args.html is None           # grava na pasta padrão
    ajuda = p.format_help()
    assert "--html [PASTA]" in ajuda and "sem internet" in ajuda and "--abrir" in ajuda


def test_encanamento_conhece_paginas():
    """Um erro dentro de paginas.py não é o do aluno: o quadro mostrado é o da lição."""
    from comum import erros

    assert "paginas.py" in erros.encanamento()


# ------------------------------------------------------------ as páginas das apostilas
GRAVADAS = sorted((Path(__file__).resolve().parent.parent / "apostilas" / "paginas").glob("*.html"))


# As páginas feitas dos pesos do GPT-2 que o aluno carregou: só a execução dele as grava
# (aqui e no CI não há GPT-2 de verdade, e uma página de pesos aleatórios enganaria o leitor).
DO_GPT2 = {"03_attention", "04_multihead", "05_block", "07_generation"}


def test_toda_licao_com_html_tem_a_pagina_gravada_nas_apostilas():
    """Quem só lê as apostilas abre a página já gravada (apostilas/paginas/), sem rodar nada:
    cada lição com --html tem a sua lá, e a apostila aponta para ela. As que saem do GPT-2
    (DO_GPT2) não ficam lá; a apostila diz como gravá-la e onde ela fica."""
    raiz = Path(__file__).resolve().parent.parent
    com_html = sorted(p.stem for p in (raiz / "lab").glob("[0-9][0-9]_*.py")
                      if re.search(r"\*paginas\.opcoes\(", p.read_text(encoding="utf-8")))
    assert DO_GPT2 <= set(com_html)
    assert [p.stem for p in GRAVADAS] == [n for n in com_html if n not in DO_GPT2]
    for nome in com_html:
        apostila = (raiz / "apostilas" / f"{nome}.md").read_text(encoding="utf-8")
        if nome in DO_GPT2:
            assert f"`paginas/{nome}.html`" in apostila and "--html" in apostila, nome
        else:
            assert f"(paginas/{nome}.html)" in apostila, f"a apostila {nome} não aponta a página"


# As páginas de um treino (10, 11): a das apostilas é a do treino padrão (o molde byte a byte,
# os floats a menos do arredondamento da CPU: treinos.mesma_pagina), conferida contra a
# execução padrão que os testes da lição já rodam (tests/apoio/treinos.py, e
# tests/test_10_paginas.py e test_11_paginas.py): aqui não se treina de novo.
DO_TREINO = {"10_treino", "11_inducao"}


@pytest.mark.parametrize("gravada", [g for g in GRAVADAS if g.stem not in DO_TREINO],
                         ids=lambda p: p.stem)
def test_a_pagina_das_apostilas_e_a_que_a_licao_grava(gravada, tmp_path):
    """A página guardada no repositório não fica para trás da lição: é byte a byte a que
    `--html` grava hoje (grave de novo com `lab/NN.py --html apostilas/paginas`)."""
    r = rodar_script(f"{gravada.stem}.py", "--html", str(tmp_path))
    assert r.returncode == 0, r.saida + r.erros
    assert (tmp_path / gravada.name).read_bytes() == gravada.read_bytes(), (
        f"apostilas/paginas/{gravada.name} está velha: rode "
        f"lab/{gravada.stem}.py --html apostilas/paginas")
