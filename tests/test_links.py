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
