"""As figuras (lab/comum/figuras.py): gráficos ASCII, a vírgula decimal em todo eixo, marcas
inteiras, e o matplotlib só importado quando uma figura é pedida."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from comum import figuras, licao
from conftest import RAIZ


def test_grafico_ascii_cabe_na_largura():
    texto = figuras.grafico_ascii({"a": [1, 2, 3], "b": [3, 2, 1]}, [0, 1, 2], larg=40)
    linhas = texto.splitlines()
    assert max(len(l) for l in linhas) <= 11 + 40 + 20
    assert any("*" in l for l in linhas) and any("o" in l for l in linhas)


def test_niveis_ascii_zero_no_meio_da_faixa():
    linhas = figuras.niveis_ascii([[-1.0, -1e-9, 0.0, 1e-9, 1.0]], -1, 1, rampa="abcde")
    assert linhas == ["accce"]


def test_figura_com_margens_e_escala_log_em_texto_simples(tmp_path):
    """As margens fixas viram frações da figura; a escala log rotula em texto simples,
    com vírgula decimal de 0,001 a 9.000 (0,001, 0,1, 1) e potências fora disso."""
    fig, (ax1, ax2) = figuras.figura(10, 4, ncols=2, margens=(1.0, 0.5, 0.8, 0.4),
                                    ajuste={"wspace": 0.3})
    assert fig.get_layout_engine() is None
    assert fig.subplotpars.left == pytest.approx(0.1)
    assert fig.subplotpars.right == pytest.approx(0.95)
    assert fig.subplotpars.bottom == pytest.approx(0.2)
    assert fig.subplotpars.top == pytest.approx(0.9)
    ax1.plot([0, 1, 2], [1e-3, 1e-1, 1.0])
    figuras.escala_log(ax1)
    ax1.set_ylim(1e-3, 1.0)
    ax2.plot([1e-8, 1e-5], [1e10, 1e12])
    figuras.escala_log(ax2, eixo="x")
    fig.savefig(tmp_path / "f.png", dpi=50)
    rotulos = [t.get_text() for t in ax1.get_yticklabels() if t.get_text()]
    assert {"0,001", "0,1", "1"} <= set(rotulos), rotulos
    assert not any("$" in r or "." in r for r in rotulos)  # nada de mathtext nem de ponto
    longe = [t.get_text() for t in ax2.get_xticklabels() if t.get_text()]
    assert {"10\u207b\u2078", "10\u207b\u2075"} <= set(longe), longe
    assert ax2.get_yscale() == "linear"
    assert [figuras.rotulo_log(x) for x in (2e-1, 6e-1, 3e-3, 1e3, 9e3, 2e9, 1e4)] == [
        "0,2", "0,6", "0,003", "1.000", "9.000", "2\u00d710\u2079", "10\u2074"]
    # um eixo que passa de 0,001 escreve todas as marcas como potência, até a de 0,1
    assert figuras.rotulo_log(0.1, 1e-8, 1.0) == "10\u207b\u00b9"
    assert figuras.rotulo_log(0.2, 0.15, 0.7) == "0,2"
    # sem margens, o layout automático continua o padrão
    fig2, _ = figuras.figura()
    assert fig2.get_layout_engine() is not None


def test_nenhuma_licao_importa_o_matplotlib_no_topo():
    """O matplotlib só entra quando uma figura é salva (figuras.figura, dentro das funções):
    nenhuma lição o importa no topo do arquivo. O teste abaixo confere em execução."""
    for script in sorted((RAIZ / "lab").glob("*.py")):
        topo = [linha for linha in script.read_text(encoding="utf-8").splitlines()
                if re.match(r"(import|from) matplotlib", linha)]
        assert not topo, (script.name, topo)


@pytest.mark.parametrize("script, args", [
    ("05_block.py", ["--so", "6"]),
    ("09_scaling.py", ["--so", "3"]),
])
def test_sem_figuras_nem_importa_o_matplotlib(script, args, tmp_path):
    """--sem-figuras poupa o import do matplotlib (quase 1 s); com figuras, ele é usado."""
    codigo = (
        "import runpy, sys\nsys.path.insert(0, 'lab')\n"
        f"sys.argv = ['lab/{script}', *{args!r}, *sys.argv[1:]]\n"
        "try:\n"
        f"    runpy.run_path('lab/{script}', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('MATPLOTLIB=%s' % ('matplotlib' in sys.modules))\n"
    )
    for extra, esperado in ((["--sem-figuras"], "False"), ([], "True")):
        r = subprocess.run([sys.executable, "-c", codigo, *extra,
                            "--figuras", str(tmp_path)],
                           cwd=RAIZ, capture_output=True, timeout=300,
                           env={**os.environ, "HF_HUB_OFFLINE": "1",
                                "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
        assert f"MATPLOTLIB={esperado}" in r.stderr.decode("utf-8", "replace"), (
            script, extra, r.stderr.decode("utf-8", "replace")[-500:])


def test_virgula_decimal_em_todo_eixo_e_na_barra_de_cor(tmp_path):
    """salvar_figura escreve 0,5 (não 0.5) em eixos lineares e barras de cor, e o eixo log
    também tem vírgula (0,01, não 10⁻² nem 0.01: issue 40)."""
    import numpy as np

    li = licao.Licao("99", "teste", [])
    li.args = licao.criar_parser("x", "x", []).parse_args(["--figuras", str(tmp_path)])
    fig, (ax1, ax2, ax3) = figuras.figura(12, 4, ncols=3)
    ax1.plot([0, 2.5, 5], [0.0, 0.5, 1.0])
    imagem = ax2.imshow(np.linspace(0, 1, 16).reshape(4, 4))
    barra = fig.colorbar(imagem, ax=ax2)
    ax3.plot([1, 2, 3], [1e-3, 1e-2, 1e-1])
    figuras.escala_log(ax3)
    ax3.plot([1.0001, 1.0002], [1e-3, 1e-2])  # eixo x com deslocamento ("+1")
    assert li.salvar_figura(fig, "virgula.png").exists()
    rotulos = []
    for ax in (ax1, ax2, barra.ax, ax3):
        for eixo in (ax.xaxis, ax.yaxis):
            rotulos += [t.get_text() for t in eixo.get_ticklabels(which="both")]
            rotulos.append(eixo.get_offset_text().get_text())
    rotulos = [r for r in rotulos if r]
    assert "0,5" in rotulos and "2,5" in rotulos      # eixo linear e barra de cor
    assert "0,01" in rotulos and "10\u207b\u00b2" not in rotulos   # a escala log, com vírgula
    assert not [r for r in rotulos if "." in r or "$" in r], rotulos


def test_eixo_de_passos_so_tem_marcas_inteiras(tmp_path):
    """Um eixo de passos (ou camadas) não mostra '2,5': eixos_inteiros põe marcas inteiras."""
    li = licao.Licao("99", "teste", [])
    li.args = licao.criar_parser("x", "x", []).parse_args(["--figuras", str(tmp_path)])
    fig, (sem, com) = figuras.figura(8, 3, ncols=2)
    for ax in (sem, com):
        ax.plot(range(4), [x * x for x in range(4)])  # 4 passos: o padrão marca 0,5 e 2,5
    figuras.eixos_inteiros(com)
    li.salvar_figura(fig, "inteiros.png")
    rotulos = lambda ax: [t.get_text() for t in ax.xaxis.get_ticklabels() if t.get_text()]  # noqa: E731
    assert any("," in r for r in rotulos(sem))           # o padrão dá 2,5, 7,5...
    assert rotulos(com) and not any("," in r for r in rotulos(com)), rotulos(com)
    com.set_xlim(0, 2000)                                # e o ponto do milhar, como no texto
    assert com.xaxis.get_major_formatter()(1000, 0) == "1.000"
