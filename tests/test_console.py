"""O console (lab/comum/console.py): os números no formato brasileiro, um console legado
(cp1252), perguntar sem entrada."""
from __future__ import annotations

import subprocess
import sys

import pytest

from comum import console
from conftest import RAIZ


def test_numeros_no_formato_brasileiro():
    assert console.num(0.84134, 4) == "0,8413"
    assert console.num(1234.5, 2) == "1.234,50"
    assert console.inteiro(124439808) == "124.439.808"
    assert console.cientifico(0.000473) == "4,73e-4"
    assert console.cientifico(5.7e6, 1) == "5,7e6"
    assert console.pct(0.6663) == "66,6 %"
    assert console.tamanho(3 * 2**30) == "3,00 GiB"


def test_formatos_novos():
    assert console.plural(1, "token") == "1 token" and console.plural(2, "token") == "2 tokens"
    assert console.plural(1, "fusão", "fusões") == "1 fusão"
    assert console.plural(1000, "fusão", "fusões") == "1.000 fusões"
    assert console.limite(3e-17, 1e-12) == "< 1e-12" and console.limite(2.5e-4, 1e-12) == "2,5e-4"
    assert console.num(-0.001, 2) == "0,00"           # nunca "-0,00": o sinal do ruído
    assert console.cortar("o gradiente da camada um mais coisas", 0, 26) in (
        "o gradiente da camada um…", "o gradiente da camada um...")
    assert console.em_linhas(["aaa", "bbb", "ccc"], 2, 10) == "  aaa bbb\n  ccc"


def test_console_legado_nao_quebra():
    codigo = ("from comum import console; console.preparar_saida(); "
              "console.dizer('token: 日本 ✓ ção'); print('fim')")
    r = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ / "lab", capture_output=True,
                       env={"PYTHONIOENCODING": "cp1252", "PATH": ""})
    assert r.returncode == 0, r.stderr
    texto = r.stdout.decode("cp1252")
    assert "token: ?? ? ção" in texto and "fim" in texto


@pytest.mark.parametrize("redirecao, esperado", [("0<&-", "None"), ("0</dev/null", "None"),
                                                 ("0<<< 'oi'", "'oi'")])
def test_perguntar_sem_entrada_devolve_none(redirecao, esperado):
    """Base do --pausa e do --interativo: sem stdin, segue em vez de quebrar."""
    codigo = "from comum import console; print(repr(console.perguntar('> ')))"
    r = subprocess.run(["bash", "-c", f'exec {redirecao}; exec "$0" -c "$1"',
                        sys.executable, codigo], cwd=RAIZ / "lab", capture_output=True,
                       text=True)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.strip().endswith(esperado)


def test_duracao_e_comando():
    """A duração na unidade que se lê melhor, e o comando que a tela sugere nas duas formas
    do README (a lição 10 imprime os dois)."""
    from comum.console import comando, duracao

    assert duracao(20) == "menos de 1 min" and duracao(89 * 60) == "cerca de 89 min"
    assert duracao(26 * 3600, "uns ") == "uns 26 h" and duracao(5 * 86400) == "cerca de 5 dias"
    assert comando("07_generation.py", "--modelo", "meu gpt").splitlines() == [
        '  .venv\\Scripts\\python.exe lab\\07_generation.py --modelo "meu gpt"',
        '  .venv/bin/python lab/07_generation.py --modelo "meu gpt"']


def test_corte_com_marca(monkeypatch):
    """Issue 40: um token cortado na lente da 05 mostra que foi cortado ('·capit…', não
    '·capita', que parece palavra); num console ASCII, a marca é '~'. Sem marca, o corte
    seco de sempre."""
    assert console.legivel(" capital", 7, "·", reticencias_="…") == "·capit…"
    assert console.legivel(" capital", 7, "·") == "·capita"
    assert console.legivel(" capital", 8, "·", reticencias_="…") == "·capital"
    assert console.legivel(" YouTube", 7, "·", reticencias_=True) == "·You..."
    monkeypatch.setattr(console, "_codificacao", lambda: "cp1252")
    assert console.marca_de_corte() == "…"
    monkeypatch.setattr(console, "_codificacao", lambda: "ascii")
    assert console.marca_de_corte() == "~"
