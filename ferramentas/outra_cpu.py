"""Roda uma lição aqui e como numa "outra CPU" e mostra as linhas que mudam.

Alunos, CI e autores rodam em processadores diferentes (Intel, AMD, Apple), cujos
kernels arredondam diferente. Este script roda a lição duas vezes, em paralelo:
como está e com os kernels genéricos do PyTorch (ATEN_CPU_CAPABILITY=default), o
MKL no modo reproduzível (MKL_CBWR=COMPATIBLE) e uma thread (OMP_NUM_THREADS=1).
Uma linha que muda é ruído de arredondamento impresso como dígito: a apostila não
pode citá-la assim (imprima um limite, como "< 1e-12"). tests/test_apostilas.py
confere o mesmo nos blocos citados; isto serve para achar as linhas antes. Uso:

    .venv/bin/python ferramentas/outra_cpu.py lab/08_since_2017.py --so 2
    .venv\\Scripts\\python.exe ferramentas\\outra_cpu.py lab\\08_since_2017.py --so 8 --rapido

Sai com 1 se alguma linha (fora as de tempo, como "(0,2 s)") mudar.
"""
from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
OUTRA_CPU = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE",
             "OMP_NUM_THREADS": "1"}
TEMPO = re.compile(r"\d+,\d+ s\b")  # "(0,2 s)", "em 0,4 s": mudam a cada execução


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    comando = [sys.executable, *argv, "--sem-figuras"]
    base = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80", "PYTHONIOENCODING": "utf-8"}
    processos = [subprocess.Popen(comando, cwd=RAIZ, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env={**base, **extra})
                 for extra in ({}, OUTRA_CPU)]
    aqui, outra = (p.communicate()[0].decode("utf-8", "replace").splitlines()
                   for p in processos)
    diferentes = [l for l in difflib.unified_diff(aqui, outra, "esta CPU", "outra CPU",
                                                  lineterm="", n=0)
                  if l[:1] in "+-" and not l.startswith(("+++", "---"))
                  and not TEMPO.search(l)]
    if not diferentes:
        print(f"Nenhuma linha muda ({len(aqui)} linhas comparadas).")
        return 0
    print("Linhas que mudam (- esta CPU, + outra CPU):")
    for linha in diferentes:
        print("  " + linha)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
