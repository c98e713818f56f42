"""Onde uma lição treina: a CPU, uma GPU CUDA (NVIDIA) ou a GPU de um Mac com chip da Apple
(MPS). A opção --dispositivo auto|cpu|cuda|mps (opcao_dispositivo), a escolha (escolher:
no auto, CUDA, depois MPS, depois a CPU, com o motivo) e o pedido que não existe nesta
máquina, que é uso errado: uma mensagem em português e a saída 2 (ou_sair).

Nada aqui importa o torch na importação: a opção entra no cabeçalho da lição, antes dele."""
from __future__ import annotations

import sys

from .console import dizer, quebrar
from .opcoes import opcao, para_ajuda

__all__ = ["ESCOLHAS", "opcao_dispositivo", "escolher", "DispositivoAusente", "ou_sair",
           "nome_legivel", "anuncio", "preparar_treino"]

ESCOLHAS = ("auto", "cpu", "cuda", "mps")
NOMES = {"cpu": "CPU", "cuda": "GPU CUDA", "mps": "GPU da Apple (MPS)"}


class DispositivoAusente(Exception):
    """O --dispositivo pedido não existe nesta máquina (a mensagem diz por quê)."""


def opcao_dispositivo(ajuda: str = "onde treinar: auto escolhe CUDA, depois MPS, depois a "
                                   "CPU"):
    return opcao("--dispositivo", ESCOLHAS, "auto", ajuda)


def _tem_cuda(torch) -> bool:
    return bool(torch.cuda.is_available())


def _tem_mps(torch) -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def _sem_cuda(torch) -> str:
    """Por que não há CUDA: a versão do PyTorch só para CPU, ou nenhuma GPU visível."""
    if getattr(torch.version, "cuda", None) is None:
        return (f"o PyTorch instalado, {torch.__version__}, é a versão só para CPU (a "
                "versão com CUDA se instala pelo comando de pytorch.org)")
    return "o PyTorch tem CUDA, mas não achou uma GPU (o driver da NVIDIA está instalado?)"


def nome_legivel(nome: str, torch=None) -> str:
    """'GPU CUDA (NVIDIA GeForce RTX 3050)', 'GPU da Apple (MPS)', 'CPU'."""
    if nome == "cuda" and torch is not None:
        return f"GPU CUDA ({torch.cuda.get_device_name(0)})"
    return NOMES[nome]


def escolher(pedido: str = "auto", torch=None) -> tuple[str, str]:
    """(dispositivo, motivo): 'cuda', 'mps' ou 'cpu'. No auto, o primeiro que existe, nessa
    ordem; um pedido que não existe: DispositivoAusente, com o motivo e o que fazer."""
    if torch is None:
        import torch
    if pedido == "auto":
        if _tem_cuda(torch):
            return "cuda", "há uma GPU CUDA"
        if _tem_mps(torch):
            return "mps", "há a GPU da Apple (MPS) e nenhuma CUDA"
        return "cpu", f"não há GPU CUDA nem MPS: {_sem_cuda(torch)}"
    if pedido == "cuda" and not _tem_cuda(torch):
        raise DispositivoAusente(f"--dispositivo cuda: não há GPU CUDA aqui: {_sem_cuda(torch)}. "
                                 "Sem GPU, use --dispositivo cpu (ou auto).")
    if pedido == "mps" and not _tem_mps(torch):
        raise DispositivoAusente("--dispositivo mps: não há a GPU da Apple (MPS) aqui: ela só "
                                 "existe num Mac com chip da Apple (M1 ou mais novo) e macOS "
                                 "12.3 ou mais. Use --dispositivo cpu (ou auto).")
    if pedido not in ESCOLHAS:
        raise DispositivoAusente(f"--dispositivo {pedido}: use um de {', '.join(ESCOLHAS)}.")
    return pedido, "pedido com --dispositivo"


def anuncio(nome: str, motivo: str, torch=None) -> str | None:
    """A linha que a lição imprime no começo, ou None na CPU: na CPU a saída fica a de sempre
    (a lição 00 diz o que a lição 10 usaria, e por quê)."""
    if nome == "cpu":
        return None
    return quebrar(f"Dispositivo: {nome_legivel(nome, torch)}; {motivo}.")


def ou_sair(pedido: str, prog: str, torch=None) -> tuple[str, str]:
    """escolher(pedido), ou o uso errado: 'erro: ...' no stderr e a saída 2."""
    try:
        return escolher(pedido, torch)
    except DispositivoAusente as erro:
        print(quebrar(f"erro: {erro}"), file=sys.stderr)
        print(para_ajuda(prog), file=sys.stderr)
        sys.exit(2)


def preparar_treino(args, prog: str, exemplo: str = "--largura 128 --cabecas 4") -> str:
    """O começo de uma lição que treina (10, 11 e 12), antes do primeiro experimento: h
    divide d (cada cabeça fica com d/h números) e o --dispositivo existe aqui, senão é uso
    errado (saída 2); o escolhido fica em args.dispositivo e, fora da CPU, sai uma linha que
    diz qual e por quê. Devolve o motivo da escolha."""
    import torch

    from .opcoes import uso_errado

    if args.largura % args.cabecas:
        uso_errado(f"--largura {args.largura} não se divide em --cabecas {args.cabecas}: "
                   f"cada cabeça fica com d/h números (lição 04). Exemplo: {exemplo}")
    args.dispositivo, motivo = ou_sair(args.dispositivo, prog, torch)
    linha = anuncio(args.dispositivo, motivo, torch)
    if linha:
        dizer(linha)
    return motivo
