"""Apostila e script concordam.

Convenções que estes testes conferem em toda apostila apostilas/NN_nome.md
que tem script lab/NN_nome.py:
- os títulos `### Experimento k/n · título` são exatamente os do script;
- a apostila traz o comando do Windows e o do Linux/macOS;
- um bloco de saída marcado com `<!-- saida: --so K [outros argumentos] -->`
  logo antes de um bloco ```text é saída real: cada linha dele (menos as
  linhas `...`, que marcam um trecho omitido) aparece, na mesma ordem, na saída do
  script rodado com esses argumentos e --sem-figuras.
"""
from __future__ import annotations

import re
import shlex

import pytest

from conftest import RAIZ, rodar_script

APOSTILAS = sorted(p for p in (RAIZ / "apostilas").glob("[0-9][0-9]_*.md")
                   if (RAIZ / "lab" / (p.stem + ".py")).exists())
MARCA = re.compile(r"<!--\s*saida:(.*?)-->\s*\n```text\n(.*?)\n```", re.S)


def titulos_do_script(script: str) -> list[str]:
    r = rodar_script(script, "--lista")
    assert r.returncode == 0, r.erros
    linhas = r.saida.splitlines()[1:]
    total = len(linhas)
    titulos = []
    for linha in linhas:
        k, titulo = linha.strip().split(". ", 1)
        titulo = titulo.replace("  (usa o GPT-2)", "")
        titulos.append(f"{k}/{total} · {titulo}")
    return titulos


@pytest.mark.parametrize("apostila", APOSTILAS, ids=lambda p: p.name)
def test_titulos_e_comandos(apostila):
    texto = apostila.read_text(encoding="utf-8")
    script = apostila.stem + ".py"
    rotulo = "Verificação" if apostila.stem.startswith("00") else "Experimento"
    achados = re.findall(rf"^### {rotulo} (\d+/\d+ · .+?)\s*$", texto, re.M)
    assert achados == titulos_do_script(script)
    assert f".venv\\Scripts\\python.exe lab\\{script}" in texto
    assert f".venv/bin/python lab/{script}" in texto


def blocos_de_saida():
    for apostila in APOSTILAS:
        texto = apostila.read_text(encoding="utf-8")
        for i, (args, bloco) in enumerate(MARCA.findall(texto)):
            yield pytest.param(apostila, args.strip(), bloco, id=f"{apostila.stem}-{i}")


@pytest.mark.parametrize("apostila, args, bloco", list(blocos_de_saida()))
def test_blocos_de_saida_sao_reais(apostila, args, bloco):
    r = rodar_script(apostila.stem + ".py", *shlex.split(args), "--sem-figuras",
                     env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode in (0, 1), r.erros
    saida = [linha.rstrip() for linha in r.stdout.decode("utf-8").splitlines()]
    posicao = 0
    for linha in bloco.splitlines():
        linha = linha.rstrip()
        if linha.strip() in ("...", "…") or not linha.strip():
            continue
        try:
            posicao = saida.index(linha, posicao) + 1
        except ValueError:
            pytest.fail(f"{apostila.name}: a linha abaixo não aparece (nessa ordem) na "
                        f"saída de {apostila.stem}.py {args}:\n{linha!r}")


def test_toda_apostila_com_script_tem_blocos_verificados():
    sem = [a.name for a in APOSTILAS if not MARCA.search(a.read_text(encoding="utf-8"))]
    assert not sem, f"apostilas sem nenhum bloco de saída verificado: {sem}"
