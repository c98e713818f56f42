"""Todo link relativo do README e das apostilas aponta para um arquivo que existe, e toda
âncora (#seção) para um título que existe (com o slug que o GitHub gera)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import RAIZ

DOCUMENTOS = [RAIZ / "README.md", *sorted((RAIZ / "apostilas").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def slug(titulo: str) -> str:
    """Âncora de um título como o GitHub a gera: minúsculas, sem pontuação, '-' no espaço."""
    titulo = re.sub(r"[`*_]", "", titulo.strip().lower())
    return re.sub(r"[^\w\- ]", "", titulo).replace(" ", "-")


def ancoras(arquivo: Path) -> set[str]:
    texto = re.sub(r"```.*?```", "", arquivo.read_text(encoding="utf-8"), flags=re.S)
    vistos, saida = {}, set()
    for titulo in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", texto, re.M):
        base = slug(titulo)
        n = vistos.get(base, 0)
        saida.add(base if n == 0 else f"{base}-{n}")
        vistos[base] = n + 1
    return saida


def links(arquivo: Path):
    texto = re.sub(r"```.*?```", "", arquivo.read_text(encoding="utf-8"), flags=re.S)
    for alvo in LINK.findall(texto):
        if not re.match(r"[a-z]+:", alvo):       # http:, https:, mailto: ficam de fora
            yield alvo


def test_slug_como_o_github():
    assert slug("Instalação") == "instalação"
    assert slug("Experimento 2/6 · Pre-LN contra Post-LN") == "experimento-26--pre-ln-contra-post-ln"
    assert slug("`--pausa` e **o projetor**") == "--pausa-e-o-projetor"


@pytest.mark.parametrize("documento", DOCUMENTOS, ids=lambda p: p.name)
def test_links_e_ancoras_existem(documento):
    quebrados = []
    for alvo in links(documento):
        caminho, _, ancora = alvo.partition("#")
        arquivo = (documento.parent / caminho).resolve() if caminho else documento
        if not arquivo.exists():
            quebrados.append(f"{alvo}: não existe {arquivo.relative_to(RAIZ)}")
        elif ancora and arquivo.suffix == ".md" and ancora not in ancoras(arquivo):
            quebrados.append(f"{alvo}: não há título com a âncora #{ancora}")
    assert not quebrados, "\n".join(quebrados)


def test_acusa_link_e_ancora_quebrados(tmp_path):
    (tmp_path / "b.md").write_text("# Título certo\n", encoding="utf-8")
    a = tmp_path / "a.md"
    a.write_text("[ok](b.md#título-certo) [x](b.md#outro) [y](c.md) [z](#sem)\n# Aqui\n",
                 encoding="utf-8")
    assert list(links(a)) == ["b.md#título-certo", "b.md#outro", "c.md", "#sem"]
    assert ancoras(tmp_path / "b.md") == {"título-certo"}
    assert "sem" not in ancoras(a) and "aqui" in ancoras(a)


def test_ha_links_para_conferir():
    assert sum(len(list(links(d))) for d in DOCUMENTOS) >= 20


def _tabela_das_licoes(documento: Path) -> list[list[str]]:
    """As células (sem as crases) de cada linha '| NN | ...' de um documento."""
    linhas = []
    for linha in documento.read_text(encoding="utf-8").splitlines():
        if re.match(r"\| \d\d \|", linha):
            linhas.append([c.strip().replace("`", "") for c in linha.strip("|").split("|")])
    return linhas


def test_as_tabelas_das_licoes_listam_cada_licao_do_lab():
    """O README e o índice das apostilas têm uma linha por lição de lab/, em ordem, cada
    uma com o script e a apostila que existem: uma lição nova (a 12, que saiu da 10) entra
    nas duas tabelas, e uma que sai também sai delas."""
    scripts = sorted(p.name for p in (RAIZ / "lab").glob("[0-9][0-9]_*.py"))
    assert len(scripts) >= 14
    apostilas = [f"{Path(s).stem}.md" for s in scripts
                 if (RAIZ / "apostilas" / f"{Path(s).stem}.md").exists()]
    readme = _tabela_das_licoes(RAIZ / "README.md")
    assert [(n, s) for n, s, *_ in readme] == [(s[:2], f"lab/{s}") for s in scripts]
    assert [a for _, _, a, *_ in readme if a != "—"] == [f"apostilas/{a}" for a in apostilas]
    indice = _tabela_das_licoes(RAIZ / "apostilas" / "README.md")
    assert [(n, a, s) for n, a, s, *_ in indice] == [
        (a[:2], f"[{a}]({a})", f"lab/{Path(a).stem}.py") for a in apostilas]
