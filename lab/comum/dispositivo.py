"""Onde uma lição treina: a CPU, uma GPU CUDA (NVIDIA) ou a GPU de um Mac com chip da Apple
(MPS). A opção --dispositivo auto|cpu|cuda|mps (opcao_dispositivo), a escolha (escolher:
no auto, CUDA, depois MPS, depois a CPU, com o motivo; num treino em vários processos, a
CUDA só com uma GPU para cada processo, e nunca o MPS) e o pedido que não existe nesta
máquina, que é uso errado: uma mensagem em português e a saída 2 (ou_sair).

Nada aqui importa o torch na importação: a opção entra no cabeçalho da lição, antes dele."""
from __future__ import annotations

import sys

from .console import dizer, plural, quebrar
from .opcoes import opcao, para_ajuda

__all__ = ["ESCOLHAS", "opcao_dispositivo", "escolher", "em_grupo", "tem_gpu",
           "DispositivoAusente", "ou_sair", "nome_legivel", "anuncio", "preparar_treino"]

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


def escolher(pedido: str = "auto", torch=None, processos: int = 1,
             nesta_maquina: int | None = None) -> tuple[str, str]:
    """(dispositivo, motivo): 'cuda', 'mps' ou 'cpu'. No auto, o primeiro que existe, nessa
    ordem; um pedido que não existe: DispositivoAusente, com o motivo e o que fazer.
    processos > 1 (o torchrun; nesta_maquina deles neste computador, padrão: todos): a regra
    de em_grupo."""
    if torch is None:
        import torch
    if processos > 1:
        return em_grupo(pedido, torch, processos, nesta_maquina or processos)
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


def em_grupo(pedido: str, torch, processos: int, nesta_maquina: int) -> tuple[str, str]:
    """A escolha num treino em vários processos: cada processo desta máquina usa a GPU CUDA
    do seu número (LOCAL_RANK), e o grupo fala gloo (CPU) ou nccl (CUDA), nenhum com o MPS.
    O auto fica com a CUDA só se há uma GPU para cada processo e todos estão nesta máquina
    (de outra, ele não sabe se tem GPU: uma máquina em nccl e outra em gloo não conversam);
    senão, a CPU. --dispositivo cuda sem uma GPU por processo e --dispositivo mps:
    DispositivoAusente."""
    gpus = torch.cuda.device_count() if _tem_cuda(torch) else 0
    if pedido == "mps":
        raise DispositivoAusente(f"--dispositivo mps: o treino em {processos} processos usa gloo "
                                 "(CPU) ou nccl (CUDA), e nenhum dos dois usa a GPU da Apple. "
                                 "Use --dispositivo cpu (ou auto).")
    if pedido == "cuda" and gpus < nesta_maquina:
        falta = f": {_sem_cuda(torch)}" if not gpus else ""
        raise DispositivoAusente(f"--dispositivo cuda: cada um dos {nesta_maquina} processos "
                                 f"desta máquina usa uma GPU CUDA só sua, e aqui há "
                                 f"{gpus}{falta}. Use --dispositivo cpu (ou auto).")
    if pedido != "auto":
        return escolher(pedido, torch)
    if gpus >= nesta_maquina and nesta_maquina == processos:
        return "cuda", f"uma GPU CUDA para cada um dos {processos} processos"
    if gpus >= nesta_maquina:
        return "cpu", (f"há {plural(gpus, 'GPU')} CUDA aqui, mas o treino tem processos em "
                       "outra máquina, e o auto não sabe se ela tem GPU: todos na CPU (com "
                       "GPU em todas, use --dispositivo cuda em todas)")
    if gpus:
        return "cpu", (f"há {plural(gpus, 'GPU')} CUDA para {nesta_maquina} processos "
                       "nesta máquina, e cada processo precisa da sua: todos na CPU")
    if _tem_mps(torch):
        return "cpu", ("a GPU da Apple (MPS) não treina em vários processos (o gloo e o "
                       "nccl não a usam): todos na CPU")
    return "cpu", f"não há GPU CUDA: {_sem_cuda(torch)}"


def tem_gpu(torch) -> bool:
    """Há uma GPU CUDA ou a da Apple (MPS) nesta máquina?"""
    return _tem_cuda(torch) or _tem_mps(torch)


def anuncio(nome: str, motivo: str, torch=None, na_cpu: bool = False) -> str | None:
    """A linha que a lição imprime no começo, ou None na CPU: na CPU a saída fica a de sempre
    (a lição 00 diz o que a lição 10 usaria, e por quê). na_cpu: a linha sai também na CPU
    (o treino em vários processos que deixou de lado uma GPU que existe diz por quê)."""
    if nome == "cpu" and not na_cpu:
        return None
    return quebrar(f"Dispositivo: {nome_legivel(nome, torch)}; {motivo}.")


def ou_sair(pedido: str, prog: str, torch=None, processos: int = 1,
            nesta_maquina: int | None = None) -> tuple[str, str]:
    """escolher(...), ou o uso errado: 'erro: ...' no stderr e a saída 2."""
    try:
        return escolher(pedido, torch, processos, nesta_maquina)
    except DispositivoAusente as erro:
        print(quebrar(f"erro: {erro}"), file=sys.stderr)
        print(para_ajuda(prog), file=sys.stderr)
        sys.exit(2)


def preparar_treino(args, prog: str, exemplo: str = "--largura 128 --cabecas 4",
                    processos: int = 1, nesta_maquina: int | None = None,
                    anunciar: bool = True) -> str:
    """O começo de uma lição que treina (10, 11 e 12), antes do primeiro experimento: h
    divide d (cada cabeça fica com d/h números) e o --dispositivo existe aqui, senão é uso
    errado (saída 2); o escolhido fica em args.dispositivo e, fora da CPU, sai uma linha que
    diz qual e por quê (com anunciar; em vários processos, também na CPU quando há uma GPU
    que o treino deixou de lado). processos, nesta_maquina: os do torchrun (escolher).
    Devolve o motivo da escolha."""
    import torch

    from .opcoes import uso_errado

    if args.largura % args.cabecas:
        uso_errado(f"--largura {args.largura} não se divide em --cabecas {args.cabecas}: "
                   f"cada cabeça fica com d/h números (lição 04). Exemplo: {exemplo}")
    args.dispositivo, motivo = ou_sair(args.dispositivo, prog, torch, processos, nesta_maquina)
    linha = anuncio(args.dispositivo, motivo, torch, na_cpu=processos > 1 and tem_gpu(torch))
    if anunciar and linha:
        dizer(linha)
    return motivo
