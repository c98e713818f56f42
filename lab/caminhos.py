"""Os caminhos do lab: a raiz do repositório e a pasta das lições (lab/).

Não importa nada do lab: todo o encanamento pode usá-lo sem criar um ciclo."""
from __future__ import annotations

from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
PASTA_LAB = RAIZ / "lab"
