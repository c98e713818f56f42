"""As pausas do --pausa, para o projetor.

Entre um experimento e outro, e dentro dele antes de cada tabela ou gráfico que rolaria
a tela de 30 linhas, a lição para, diz numa linha o que vem ("[Enter] 3/6 · A norma do
fluxo residual…  (r: repete)"), espera o Enter e limpa a tela; r + Enter roda o
experimento de novo. Só num terminal: num pipe, com a entrada fechada ou sem --pausa,
nada muda na saída.
"""
from __future__ import annotations

import os
import sys

from console import console, cortar, perguntar

__all__ = ["Repetir", "interativa", "perguntar_pausa", "limpar_tela"]


class Repetir(Exception):
    """r + Enter numa pausa: o experimento atual roda de novo, do começo."""


def interativa(args) -> bool:
    """--pausa só vale com entrada E saída num terminal: num pipe (| tee, | more,
    < respostas.txt) ou com a entrada fechada, a saída não ganha nenhuma linha."""
    if not getattr(args, "pausa", False):
        return False
    try:
        return bool(sys.stdin and not sys.stdin.closed and sys.stdin.isatty()
                    and sys.stdout.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def perguntar_pausa(a_seguir: str) -> bool:
    """Uma linha só ('[Enter] 3/6 · título…  (r: repete)'), para não rolar a tela;
    True se a resposta for r (r + Enter: o experimento atual de novo)."""
    dica = "  (r: repete) "
    resposta = perguntar(cortar(f"[Enter] {a_seguir}", len(dica)) + dica)
    return (resposta or "").strip().lower() in ("r", "repete", "repetir")


def limpar_tela() -> None:
    """Limpa a tela do terminal. O rich manda ESC[2J ESC[H (terminais e o console novo
    do Windows); o console antigo do Windows não entende a sequência (e o rich só
    levaria o cursor ao topo, escrevendo por cima): ali, cls."""
    terminal = console()
    if not terminal.is_terminal or terminal.is_dumb_terminal:
        return
    if terminal.legacy_windows:
        os.system("cls")
    else:
        terminal.clear()
