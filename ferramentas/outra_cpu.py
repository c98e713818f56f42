"""Roda uma lição nesta CPU e em cada variante de "outra CPU" e mostra as linhas que mudam.

Alunos, CI e autores rodam em processadores diferentes (Intel com AVX-512, AMD, Apple),
cujos kernels arredondam diferente. Este script roda a lição como está e em cada
variante de ferramentas/cpus.py, uma peça trocada por vez: os kernels genéricos do
PyTorch (ATEN_CPU_CAPABILITY=default), os de AVX2 (só onde esta CPU usa outros mais
largos, como AVX-512), o MKL no modo reproduzível (MKL_CBWR=COMPATIBLE) e uma ou duas
threads de conta (OMP_NUM_THREADS e MKL_NUM_THREADS; a que repete esta máquina sai).
Uma linha que muda é ruído de arredondamento impresso como dígito: a apostila não pode
citá-la assim (imprima um limite, como "< 1e-12", ou cite uma faixa ou um veredito que
valha em todas). tests/test_apostilas.py e tests/test_cpus.py conferem o mesmo nos
números citados; isto serve para achar as linhas antes. Uso:

    .venv/bin/python ferramentas/outra_cpu.py lab/08_since_2017.py --so 2
    .venv\\Scripts\\python.exe ferramentas\\outra_cpu.py lab\\08_since_2017.py --so 8

Os argumentos depois do script vão para a lição (com --sem-figuras). Sai com 1 se alguma
linha (fora as de tempo, como "(0,2 s)") ou o código de saída mudar em alguma variante,
com 0 se nada muda, com 2 se o uso estiver errado.
"""
from __future__ import annotations

import concurrent.futures
import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpus  # noqa: E402

TEMPO = re.compile(r"\d+,\d+ s\b")  # "(0,2 s)", "em 0,4 s": mudam a cada execução


def rodar(comando: list[str], extra: dict) -> tuple[int, list[str]]:
    base = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80", "PYTHONIOENCODING": "utf-8"}
    r = subprocess.run(comando, cwd=RAIZ, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       env={**base, **extra})
    return r.returncode, r.stdout.decode("utf-8", "replace").splitlines()


def diferencas(aqui: list[str], outra: list[str]) -> list[str]:
    return [linha for linha in difflib.unified_diff(aqui, outra, lineterm="", n=0)
            if linha[:1] in "+-" and not linha.startswith(("+++", "---"))
            and not TEMPO.search(linha)]


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if not (RAIZ / argv[0]).is_file() and not Path(argv[0]).is_file():
        print(f"erro: não achei o script {argv[0]!r} (ex.: lab/05_block.py).", file=sys.stderr)
        return 2
    try:
        variantes = cpus.variantes()
    except RuntimeError as erro:
        print(f"erro: {erro}", file=sys.stderr)
        return 2
    nomes = list(variantes)                        # "padrao" primeiro: esta CPU
    comando = [sys.executable, *argv, "--sem-figuras"]
    capacidade, threads = cpus.perfil(os.environ.get("ATEN_CPU_CAPABILITY") or None,
                                      os.environ.get("OMP_NUM_THREADS") or None)
    print(f"Rodando {' '.join(argv)} nesta CPU, com os kernels {capacidade} e {threads} "
          f"thread{'s' if threads > 1 else ''} de conta, e em {len(nomes) - 1} variantes...",
          flush=True)
    # duas de cada vez: a máquina de um aluno ou do CI pode ter só 2 núcleos
    with concurrent.futures.ThreadPoolExecutor(2) as execucao:
        saidas = dict(zip(nomes, execucao.map(lambda n: rodar(comando, variantes[n]), nomes)))
    codigo_aqui, aqui = saidas["padrao"]
    mudam = {}
    for nome in nomes[1:]:
        codigo, outra = saidas[nome]
        linhas = diferencas(aqui, outra)
        if codigo != codigo_aqui:
            linhas.insert(0, f"! código de saída {codigo_aqui} nesta CPU, {codigo} nesta")
        mudam[nome] = linhas
    if not any(mudam.values()):
        print(f"Nenhuma linha muda ({len(aqui)} linhas comparadas, nas "
              f"{len(mudam)} variantes):")
        for nome in mudam:
            print(f"  {nome:15} {cpus.descrever(nome)}")
        return 0
    print(f"Linhas que mudam (- esta CPU, + a variante; {len(aqui)} linhas comparadas):")
    for nome, linhas in mudam.items():
        print(f"  {nome}: {cpus.descrever(nome)}")
        if not linhas:
            print("    nenhuma linha muda.")
        for linha in linhas:
            print("    " + linha)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
