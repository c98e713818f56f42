"""Conta as asserções dos testes: as escritas (pela árvore do código) e as executadas.

Serve para mostrar que uma mudança na suíte não perdeu conferências. Dois usos:

    .venv/bin/python ferramentas/contar_asserts.py [tests]
        quantos `assert` há em tests/*.py (contados pela árvore sintática, não por texto)
        e quantas funções de teste;

    CONTAR_ASSERTS=asserts.txt PYTHONPATH=ferramentas .venv/bin/python -m pytest \\
        -p contar_asserts -o enable_assertion_pass_hook=true
        como plugin do pytest: cada processo (também os do xdist e os pytest filhos de
        tests/test_cpus.py, que herdam PYTEST_ADDOPTS se o plugin vier por ali) soma uma
        linha "pid asserções_que_passaram testes_que_falharam" ao arquivo CONTAR_ASSERTS.
        Apague tests/__pycache__ antes: o pytest guarda os testes já reescritos sem o gancho.
        Com CONTAR_PROCESSOS=arquivo, cada subprocesso Python que um teste começa vira uma
        linha "teste<TAB>comando" nesse arquivo (para contar as lições rodadas);

    .venv/bin/python ferramentas/contar_asserts.py --execucoes PASTA/sessao/execucoes.log
        resume o registro das execuções de lição de uma sessão (tests/apoio/sessao.py): quantas
        foram guardadas (não rodaram), quantas rodaram no interpretador quente, quantas num
        processo novo, e os segundos de CPU de cada grupo.
"""
from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

_passaram = 0
_falharam = 0


def pytest_configure(config):
    destino = os.environ.get("CONTAR_PROCESSOS")
    if not destino:
        return
    import subprocess

    original = subprocess.Popen.__init__

    def contar(self, args, *a, **k):
        partes = [str(x) for x in (args if isinstance(args, (list, tuple)) else [args])]
        if any("python" in p for p in partes[:3]) or "python" in " ".join(partes)[:200]:
            teste = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
            with open(destino, "a", encoding="utf-8") as f:
                f.write(teste + "\t" + " ".join(partes)[:300].replace("\n", " ") + "\n")
        return original(self, args, *a, **k)

    subprocess.Popen.__init__ = contar


def pytest_assertion_pass(item, lineno, orig, expl):
    global _passaram
    _passaram += 1


def pytest_runtest_logreport(report):
    global _falharam
    if report.failed and not hasattr(report, "node"):   # no processo que rodou o teste
        _falharam += 1


def pytest_sessionfinish(session, exitstatus):
    destino = os.environ.get("CONTAR_ASSERTS")
    if destino and (_passaram or _falharam):
        with open(destino, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {_passaram} {_falharam}\n")


def contar(pasta: Path) -> tuple[int, int]:
    asserts = testes = 0
    for arquivo in sorted(pasta.glob("*.py")):
        arvore = ast.parse(arquivo.read_text(encoding="utf-8"))
        asserts += sum(isinstance(n, ast.Assert) for n in ast.walk(arvore))
        testes += sum(isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
                      for n in ast.walk(arvore))
    return asserts, testes


def resumir_execucoes(registro: Path) -> None:
    import collections
    import json

    linhas = [json.loads(x) for x in registro.read_text(encoding="utf-8").splitlines() if x]
    quantas = collections.Counter(x.get("modo", x.get("evento")) for x in linhas)
    cpu = collections.Counter()
    for x in linhas:
        cpu[x.get("modo")] += x.get("cpu") or 0
    print(f"{len(linhas)} pedidos de execução de lição:")
    for modo, n in quantas.most_common():
        print(f"  {n:5} {modo:12} {cpu[modo]:8.0f} s de CPU")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--execucoes"]:
        resumir_execucoes(Path(sys.argv[2]))
        sys.exit(0)
    pasta = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests"
    asserts, testes = contar(pasta)
    print(f"{pasta}: {asserts} assert em {testes} funções de teste")
