"""O que não é o caminho feliz de um experimento: pulá-lo (ExperimentoPulado), uma
autoverificação que não confere (VerificacaoFalhou), e o erro do aluno em português,
com o arquivo e a linha da lição ou da cópia dele (erro_legivel); LAB_TRACEBACK=1 pede o
traceback inteiro (traceback_pedido)."""
from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from .caminhos import PASTA_COMUM, curto

__all__ = ["ExperimentoPulado", "VerificacaoFalhou", "erro_legivel", "traceback_pedido",
           "encanamento"]


class ExperimentoPulado(Exception):
    """O experimento não pode rodar aqui (ex.: sem GPT-2); a mensagem diz por quê."""


class VerificacaoFalhou(Exception):
    """Uma autoverificação da lição não confere: o experimento conta como falho (saída 1)."""


def traceback_pedido() -> bool:
    """LAB_TRACEBACK=1 (qualquer valor que não seja vazio nem 0): num erro, o traceback
    inteiro do Python, em vez da mensagem curta."""
    return os.environ.get("LAB_TRACEBACK", "").strip() not in ("", "0")


# ---------------------------------------------------------------- o erro do aluno
def encanamento() -> set[str]:
    """Os arquivos do encanamento (lab/comum/*.py), lidos da pasta: um módulo novo conta
    sozinho. Uma cópia de lição que o aluno fez (lab/meu_03.py) fica fora de comum/: o erro
    dele mora nela."""
    return {p.name for p in PASTA_COMUM.glob("*.py")}


def _de_biblioteca(arquivo: str) -> bool:
    """Um arquivo do Python, de um pacote instalado (torch, transformers...) ou do
    encanamento do lab: não é ali que está o erro do aluno."""
    caminho = Path(arquivo)
    if arquivo.startswith("<") or "site-packages" in caminho.parts \
            or "dist-packages" in caminho.parts:
        return True
    if caminho.parent.resolve() == PASTA_COMUM.resolve():
        return True
    for prefixo in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        try:
            caminho.resolve().relative_to(Path(prefixo).resolve() / "lib")
            return True
        except (ValueError, OSError):
            pass
    return False


def erro_legivel(erro: BaseException) -> tuple[str, str]:
    """(o texto para o aluno, 'arquivo:linha') de uma exceção: a mensagem e o quadro mais
    interno que não é do Python, de uma biblioteca ou do encanamento do lab (o código da
    lição ou da cópia do aluno), com a linha de código."""
    quadros = traceback.extract_tb(erro.__traceback__)
    do_aluno = [q for q in quadros if not _de_biblioteca(q.filename)]
    quadro = (do_aluno or quadros or [None])[-1]
    mensagem = str(erro) or {"MemoryError": "faltou memória"}.get(type(erro).__name__, "")
    if type(erro).__name__ == "MemoryError":
        mensagem += " (feche outros programas ou use um modelo menor)"
    linhas = [f"FALHOU: {type(erro).__name__}: {mensagem}"]
    onde = ""
    if quadro is not None:
        onde = f"{curto(quadro.filename)}:{quadro.lineno}"
        linhas.append(f"  em {onde}, na função {quadro.name}:")
        if quadro.line:
            linhas.append(f"    {quadro.line.strip()}")
    linhas.append("  (o traceback inteiro: rode com a variável LAB_TRACEBACK=1)")
    return "\n".join(linhas), onde
