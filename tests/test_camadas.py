"""O encanamento do lab (lab/comum/) é um grafo sem ciclos, em camadas, atrás de uma fachada.

Cada `import` e `from ... import` de cada módulo conta, relativo (`from .console import`) ou
não, também os de dentro de uma função (lidos com ast.walk): um import preguiçoso esconde um
ciclo, não o desfaz. Nenhum módulo do encanamento passa de 500 linhas, todo módulo diz no
`__all__` o que é público, e nenhum importa um nome privado (`_nome`) de outro. As lições só
chegam ao encanamento por `comum` e só pegam nomes públicos: os da fachada (`from comum
import dizer`) ou os do `__all__` de um módulo (`from comum.console import duracao`).
`comum/__init__.py`, a fachada, não define nada e é a lista por assunto da docstring dele:
uma lição que passa a usar um nome não muda nem a fachada nem as outras lições.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from conftest import ENCANAMENTO, RAIZ

LIMITE_DE_LINHAS = 500
MODULOS = {p.stem: p for p in ENCANAMENTO if p.stem != "__init__"}
LICOES = sorted((RAIZ / "lab").glob("[0-9][0-9]_*.py"))


@functools.lru_cache(maxsize=None)
def _arvore(caminho):
    """A árvore sintática do arquivo, lida uma vez por processo (os testes só a percorrem)."""
    return ast.parse(caminho.read_text(encoding="utf-8"))


def imports(caminho) -> set[str]:
    """Os módulos do encanamento que `caminho` (um módulo de comum/) importa."""
    return imports_do_texto(caminho.read_text(encoding="utf-8"))


def imports_do_texto(fonte: str) -> set[str]:
    """Os módulos do encanamento que a fonte importa, em qualquer ponto: `from .x import`,
    `from . import x`, `from comum.x import`, `from comum import x`."""
    nomes = set()
    for no in ast.walk(ast.parse(fonte)):
        if isinstance(no, ast.Import):
            nomes |= {a.name.removeprefix("comum.").split(".")[0] for a in no.names}
        elif isinstance(no, ast.ImportFrom):
            modulo = (no.module or "").removeprefix("comum")
            if no.level == 0 and no.module and not no.module.startswith("comum"):
                continue                                       # torch, rich, ...
            if modulo.strip("."):
                nomes.add(modulo.strip(".").split(".")[0])
            else:                                              # from . import x
                nomes |= {a.name for a in no.names}
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


def test_o_grafo_e_lido_dos_imports_relativos():
    """O grafo não está vazio por engano: licao importa opcoes, erros e processo (com
    `from .x import`), e paginas, console e erros."""
    assert {"opcoes", "erros", "processo", "console", "caminhos"} <= GRAFO["licao"]
    assert {"console", "erros", "opcoes"} <= GRAFO["paginas"]
    assert imports_do_texto("from . import licao\nfrom .console import dizer\nimport torch\n"
                            "from comum.erros import erro_legivel\nfrom rich import box\n") \
        == {"licao", "console", "erros"}


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
    com a fonte; nenhum teste (nem o README, nem o próprio fatos.md) manda ler um arquivo que
    não está no repositório (a pasta compartilhada do projeto, o arquivo de fatos e o currículo
    de lá), nem tem no nome o do arquivo de fatos de lá."""
    testes = Path(__file__).resolve().parent
    fatos = testes / "apoio" / "fatos.md"
    assert fatos.is_file()
    # (escritos assim para este arquivo não se achar)
    fora = re.compile("(?<![a-z])(" + "|".join(["sha" + "red/", "FA" + "CTS", "CURRI" + "CULUM"])
                      + ")(?![a-z])", re.I)
    arquivos = sorted([*testes.rglob("*.py"), *testes.rglob("*.md")])
    assert fatos in arquivos and testes / "README.md" in arquivos
    for arquivo in arquivos:
        for n, linha in enumerate(arquivo.read_text(encoding="utf-8").splitlines(), 1):
            assert not fora.search(linha), f"{arquivo.name}:{n} cita um arquivo de fora: {linha}"


# ---------------------------------------------------------------- as lições e a fachada
def _imports_das_licoes():
    """{lição: [(módulo, nomes)]} de cada import de cada lição, em qualquer ponto."""
    todos = {}
    for licao in LICOES:
        lista = todos.setdefault(licao.name, [])
        for no in ast.walk(_arvore(licao)):
            if isinstance(no, ast.Import):
                lista += [(a.name, []) for a in no.names]
            elif isinstance(no, ast.ImportFrom):
                lista.append(("." * no.level + (no.module or ""), [a.name for a in no.names]))
    return todos


def test_as_licoes_so_chegam_ao_encanamento_por_comum():
    """`import console` ou `from licao import ...` numa lição é o layout antigo (o módulo
    não existe mais em lab/): tudo do encanamento vem de `comum` ou `comum.x`."""
    for licao, lista in _imports_das_licoes().items():
        for modulo, _nomes in lista:
            assert modulo.split(".")[0] not in MODULOS, f"{licao}: import {modulo}"


FACHADA = RAIZ / "lab" / "comum" / "__init__.py"


def _todos(caminho) -> set[str] | None:
    """O __all__ de um arquivo (lido na árvore sintática), ou None se ele não tem um."""
    for no in _arvore(caminho).body:
        alvos = [getattr(alvo, "id", "") for alvo in getattr(no, "targets", [])]
        if isinstance(no, ast.Assign) and alvos == ["__all__"]:
            return set(ast.literal_eval(no.value))
    return None


PUBLICOS = {nome: _todos(caminho) for nome, caminho in MODULOS.items()}


def test_todo_modulo_diz_o_que_e_publico():
    """Todo módulo tem __all__, e o __all__ só cita nomes que o módulo define ou importa."""
    sem = sorted(nome for nome, todos in PUBLICOS.items() if todos is None)
    assert not sem, f"sem __all__: {sem}"
    for nome, caminho in MODULOS.items():
        existem = set()
        for no in _arvore(caminho).body:
            if isinstance(no, (ast.FunctionDef, ast.ClassDef)):
                existem.add(no.name)
            elif isinstance(no, (ast.Assign, ast.AnnAssign)):
                for alvo in (no.targets if isinstance(no, ast.Assign) else [no.target]):
                    existem |= {n.id for n in ast.walk(alvo) if isinstance(n, ast.Name)}
            elif isinstance(no, (ast.Import, ast.ImportFrom)):
                existem |= {(a.asname or a.name).split(".")[0] for a in no.names}
        assert PUBLICOS[nome] <= existem, f"{nome}: __all__ cita {PUBLICOS[nome] - existem}"


def _nomes_importados(arvore):
    """[(módulo do encanamento, nome, linha)] de cada `from comum[.x] import` e `from .x
    import` da árvore; módulo "" é a fachada."""
    for no in ast.walk(arvore):
        if isinstance(no, ast.ImportFrom) and (no.level or (no.module or "").startswith(
                "comum")):
            modulo = (no.module or "").removeprefix("comum").strip(".")
            for apelido in no.names:
                yield modulo, apelido.name, no.lineno


def test_nenhum_modulo_importa_o_privado_de_outro():
    """Um ajudante que dois módulos usam é público no módulo dele (como hub.py reúne o que
    carregar_gpt2 e carregar_llama dividiam): `from .carregar_gpt2 import _x` é a casa errada."""
    assert list(_nomes_importados(ast.parse("from .a import _b\nfrom comum.c import d\n"))) == [
        ("a", "_b", 1), ("c", "d", 2)]
    for nome, caminho in [*MODULOS.items(), ("__init__", FACHADA)]:
        for modulo, importado, linha in _nomes_importados(_arvore(caminho)):
            assert not importado.startswith("_"), f"{nome}.py:{linha}: {modulo}.{importado}"


def test_a_fachada_nao_define_nada_e_e_a_lista_por_assunto():
    """comum/__init__.py só importa e lista o __all__; o __all__ é a tabela "A fachada, por
    assunto" da docstring, nome por nome; cada nome é público no módulo de onde vem."""
    arvore = _arvore(FACHADA)
    for no in arvore.body[1:]:                                   # depois da docstring
        alvos = getattr(no, "targets", [])
        assert isinstance(no, ast.ImportFrom) or (
            isinstance(no, ast.Assign) and [a.id for a in alvos] == ["__all__"]), (
            f"comum/__init__.py:{no.lineno} define algo (só importa e lista o __all__)")
    exporta = _todos(FACHADA)
    importados = set()
    for modulo, nome, linha in _nomes_importados(arvore):
        importados.add(nome)
        assert (nome in MODULOS and not modulo) or nome in PUBLICOS[modulo], (
            f"comum/__init__.py:{linha}: {nome} não está no __all__ de {modulo}")
    assert importados == exporta, f"importados e __all__ diferem: {importados ^ exporta}"
    doc = ast.get_docstring(arvore).split("A fachada, por assunto")[1].split("\n\n")[1]
    assert doc.startswith("    a lição"), doc[:40]
    nomes = ",".join(re.split(r"\s{2,}", linha.strip(), maxsplit=1)[-1]   # sem o assunto
                     for linha in doc.splitlines())
    tabela = [nome.strip() for nome in nomes.split(",") if nome.strip()]
    assert sorted(tabela) == sorted(exporta), (
        f"a tabela da docstring e o __all__ diferem: {set(tabela) ^ exporta}")


def test_as_licoes_so_pegam_nomes_publicos_do_encanamento():
    """De `comum`, um nome da fachada ou um módulo (`from comum import figuras`); de
    `comum.x`, um nome do __all__ de x, seja ou não da fachada. Nenhum `_nome`."""
    fachada = _todos(FACHADA)
    for licao in LICOES:
        for modulo, nome, linha in _nomes_importados(_arvore(licao)):
            if not modulo:
                assert nome in fachada or nome in MODULOS, (
                    f"{licao.name}:{linha}: {nome} não está na fachada (de comum.x, então)")
            else:
                assert nome in PUBLICOS[modulo.split(".")[0]], (
                    f"{licao.name}:{linha}: {nome} não está no __all__ de comum.{modulo}")
