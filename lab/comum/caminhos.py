"""Os caminhos do lab: a raiz do repositório, a pasta das lições (lab/), a do encanamento
(lab/comum/) e curto(caminho).

Não importa nada do lab: todo o encanamento pode usá-lo sem criar um ciclo."""
from __future__ import annotations

from pathlib import Path

__all__ = ["RAIZ", "PASTA_LAB", "PASTA_COMUM", "curto"]

RAIZ = Path(__file__).resolve().parent.parent.parent
PASTA_LAB = RAIZ / "lab"
PASTA_COMUM = PASTA_LAB / "comum"


def curto(caminho) -> str:
    """O caminho a partir da pasta atual, se ele estiver dentro dela (cabe na linha); senão,
    como veio."""
    try:
        return str(Path(caminho).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(caminho)
