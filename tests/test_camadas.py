"""O encanamento do lab (lab/*.py que não são lições) é um grafo sem ciclos, em camadas.

Cada `import` e `from ... import` de cada módulo conta, também os de dentro de uma função
(lidos com ast.walk): um import preguiçoso esconde um ciclo, não o desfaz. Nenhum módulo do
encanamento passa de 500 linhas.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ENCANAMENTO

LIMITE_DE_LINHAS = 500
MODULOS = {p.stem: p for p in ENCANAMENTO}


def imports(caminho) -> set[str]:
    """Os módulos do encanamento que `caminho` importa, em qualquer ponto do arquivo."""
    nomes = set()
    for no in ast.walk(ast.parse(caminho.read_text(encoding="utf-8"))):
        if isinstance(no, ast.Import):
            nomes |= {a.name.split(".")[0] for a in no.names}
        elif isinstance(no, ast.ImportFrom) and no.level == 0 and no.module:
            nomes.add(no.module.split(".")[0])
    return nomes & set(MODULOS)


GRAFO = {nome: imports(caminho) - {nome} for nome, caminho in MODULOS.items()}


def um_ciclo(grafo) -> list[str] | None:
    """Um ciclo do grafo ([a, b, ..., a]), ou None: busca em profundidade, três cores."""
    cor = dict.fromkeys(grafo, "branco")
    pilha = []

    def visitar(no):
        cor[no] = "cinza"
        pilha.append(no)
        for vizinho in sorted(grafo[no]):
            if cor[vizinho] == "cinza":
                return pilha[pilha.index(vizinho):] + [vizinho]
            if cor[vizinho] == "branco" and (ciclo := visitar(vizinho)):
                return ciclo
        pilha.pop()
        cor[no] = "preto"
        return None

    for no in sorted(grafo):
        if cor[no] == "branco" and (ciclo := visitar(no)):
            return ciclo
    return None


def test_a_busca_acha_um_ciclo_quando_ha():
    """O detector em si: acha o ciclo escondido, não acusa um grafo em camadas."""
    assert um_ciclo({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert um_ciclo({"licao": {"opcoes", "erros"}, "opcoes": {"console"}, "erros": set(),
                     "console": set()}) is None


def test_o_encanamento_nao_tem_ciclo_de_imports():
    assert {"licao", "console", "opcoes", "erros", "caminhos", "processo"} <= set(GRAFO)
    ciclo = um_ciclo(GRAFO)
    assert ciclo is None, "ciclo de imports no encanamento: " + " -> ".join(ciclo)


def test_o_roteiro_nao_conhece_as_paginas():
    """licao.py não importa paginas.py (nem o contrário: era o ciclo licao <-> paginas); quem
    grava uma página soma *paginas.opcoes() no próprio cabeçalho."""
    assert "paginas" not in GRAFO["licao"]
    assert "licao" not in GRAFO["paginas"]


def test_a_base_nao_importa_nada_do_lab():
    """caminhos e console são a base: qualquer módulo pode importá-los sem criar um ciclo."""
    assert GRAFO["caminhos"] == set() and GRAFO["console"] == set()


@pytest.mark.parametrize("caminho", ENCANAMENTO, ids=lambda p: p.stem)
def test_nenhum_modulo_do_encanamento_passa_de_500_linhas(caminho):
    linhas = len(caminho.read_text(encoding="utf-8").splitlines())
    assert linhas <= LIMITE_DE_LINHAS, f"{caminho.name}: {linhas} linhas"


def test_os_testes_so_citam_arquivos_do_repositorio():
    """Os números que um teste cita de fora (artigos, relatórios) estão em tests/apoio/fatos.md,
    com a fonte; nenhum teste manda ler um arquivo que não está no repositório."""
    testes = Path(__file__).resolve().parent
    fatos = testes / "apoio" / "fatos.md"
    assert fatos.is_file()
    for arquivo in sorted(testes.rglob("*.py")):
        texto = arquivo.read_text(encoding="utf-8")
        for fora in ("../" + "shared", "FACTS" + ".md"):   # (escritos assim para não se acharem)
            assert fora not in texto, f"{arquivo.name} cita {fora}"
