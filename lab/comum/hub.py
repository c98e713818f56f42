"""O caminho de um modelo até a lição: do cache do Hugging Face, do hub ou de uma pasta.

O que carregar_gpt2 e carregar_llama fazem do mesmo jeito, aqui uma vez só:
- importar o transformers (devagar: avisa antes) e calar os avisos dele, que são em inglês;
- primeiro o cache (sem rede); só baixa se faltar, se for um nome do hub e se houver rede,
  confiando nos certificados do sistema (rede.py: a rede da escola que inspeciona o HTTPS);
- a memória livre, para conferir antes de carregar ou baixar (Linux, Windows e macOS, cada
  um do seu jeito);
- ModeloIndisponivel: a falha, com uma mensagem em português que diz o que fazer (e
  como_refazer, o conselho para arquivos estragados).

Nada aqui importa o torch no topo: a primeira linha de uma lição sai antes dele.
"""
from __future__ import annotations

import sys

from .console import dizer
from .rede import (certificado_do_hub_recusado, como_resolver_certificado,
                   confiar_nos_certificados_do_sistema, hub_offline, rede_disponivel)

__all__ = ["ModeloIndisponivel", "memoria_disponivel", "ler_vm_stat", "importar_transformers",
           "do_cache_ou_do_hub", "como_refazer"]


class ModeloIndisponivel(Exception):
    """O modelo pedido não pode ser carregado; a mensagem diz o que fazer."""


def memoria_disponivel() -> int | None:
    """Bytes de RAM disponíveis, ou None se não der para saber."""
    try:
        with open("/proc/meminfo") as f:
            for linha in f:
                if linha.startswith("MemAvailable:"):
                    return int(linha.split()[1]) * 1024
    except OSError:
        pass
    if sys.platform == "win32":
        try:
            import ctypes

            class _Status(ctypes.Structure):
                _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                            ("ullTotalPhys", ctypes.c_ulonglong),
                            ("ullAvailPhys", ctypes.c_ulonglong),
                            ("ullTotalPageFile", ctypes.c_ulonglong),
                            ("ullAvailPageFile", ctypes.c_ulonglong),
                            ("ullTotalVirtual", ctypes.c_ulonglong),
                            ("ullAvailVirtual", ctypes.c_ulonglong),
                            ("sullAvailExtendedVirtual", ctypes.c_ulonglong)]
            status = _Status()
            status.dwLength = ctypes.sizeof(_Status)
            ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status))
            return int(status.ullAvailPhys)
        except Exception:
            return None
    if sys.platform == "darwin":
        import subprocess

        try:
            saida = subprocess.run(["vm_stat"], capture_output=True, text=True, timeout=3,
                                   check=True).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        return ler_vm_stat(saida)
    return None


def ler_vm_stat(texto: str) -> int | None:
    """Memória que o macOS entrega sem apertar ninguém, da saída do `vm_stat`.

    Páginas livres + inativas + especulativas, vezes o tamanho da página (que o
    próprio vm_stat informa: 4096 em Intel, 16384 em Apple Silicon). A RAM total
    (o que se usava antes) diria que há memória livre mesmo com ela toda ocupada.
    None se a saída não tiver essas linhas."""
    import re

    pagina = re.search(r"page size of (\d+) bytes", texto)
    contas = dict(re.findall(r"^Pages (free|inactive|speculative):\s+(\d+)\.?\s*$",
                             texto, re.M))
    if not pagina or "free" not in contas:
        return None
    return int(pagina.group(1)) * sum(int(v) for v in contas.values())


_AVISADO = []  # o aviso abaixo sai uma vez por execução (a 13 carrega dois tokenizadores)


def importar_transformers():
    """Importa o transformers (devagar: por isso avisa antes, uma vez) e cala os avisos dele."""
    if not _AVISADO:
        dizer("(carregando o transformers...)")
        _AVISADO.append(True)
    try:
        import transformers
        from transformers.utils import logging as hf_logging
    except ImportError as erro:
        raise ModeloIndisponivel(
            f"o pacote transformers não está instalado ({erro}).\n"
            "Rode de novo o script de instalação (.venv-setup.ps1 ou .venv-setup.sh).") from None
    hf_logging.set_verbosity_error()
    try:  # os avisos do huggingface_hub (novas tentativas de conexão...) são em inglês
        from huggingface_hub.utils import logging as hub_logging

        hub_logging.set_verbosity_error()
    except ImportError:
        pass
    return transformers, hf_logging


def do_cache_ou_do_hub(carregar, nome: str, hub: bool, aviso: str):
    """carregar(so_local=True) primeiro (sem rede); se faltar algo no cache e for um
    nome do hub com rede, avisa e baixa (carregar(so_local=False)), confiando nos
    certificados do sistema."""
    try:
        return carregar(so_local=True)
    except OSError:
        if not hub or hub_offline() or not rede_disponivel():
            raise
        dizer(aviso)
        confiar_nos_certificados_do_sistema()
        if certificado_do_hub_recusado():
            raise ModeloIndisponivel(como_resolver_certificado(nome))
        return carregar(so_local=False)


def como_refazer(nome: str, hub: bool, comando: str) -> str:
    """O que fazer com arquivos estragados: no cache do HF, apagar e baixar de novo com
    `comando` (o que baixa este modelo); numa pasta do aluno, salvar de novo nela (o cache
    do HF não tem nada com isso)."""
    if not hub:
        return (f"Salve o modelo de novo na pasta '{nome}' (modelo.save_pretrained(pasta) e "
                "tokenizador.save_pretrained(pasta)) ou copie-a outra vez de onde veio.")
    return ("Apague a pasta do modelo no cache do Hugging Face (~/.cache/huggingface/hub, "
            "no Windows %USERPROFILE%\\.cache\\huggingface\\hub) e rode "
            f"{comando} com internet para baixar de novo.")
