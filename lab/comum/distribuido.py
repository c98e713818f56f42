"""Um treino em vários processos (paralelismo de dados): quem é este processo (o posto e o
tamanho do mundo, das variáveis que o torchrun põe), o grupo de processos (gloo na CPU, nccl
na GPU CUDA) com um prazo, quem escreve na tela e nos arquivos (só o posto 0), e lançar N
processos nesta máquina sem o torchrun (lancar), como o experimento 5 da lição 12 faz.

O conceito (o gradiente de cada processo, a média com o all-reduce, por que ela é o
gradiente do lote inteiro) mora na lição 12; aqui fica só o encanamento. Nada aqui importa
o torch na importação: a lição chama so_o_principal_escreve() antes da primeira linha."""
from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .caminhos import PASTA_LAB
from .console import dizer, quebrar
from .processo import ao_interromper, ao_sinal

__all__ = ["posto", "mundo", "posto_local", "nesta_maquina", "principal",
           "so_o_principal_escreve", "iniciar",
           "encerrar", "conferir", "media", "fatia", "paralelo", "tempo_da_media", "lancar",
           "ProcessoCaiu", "PRAZO", "queda"]

PRAZO = 120  # segundos: um coletivo (all-reduce) que espera mais que isto é um erro, não uma
#              espera sem fim (um processo travou); um processo que morre é visto na hora


class ProcessoCaiu(Exception):
    """Um processo do treino parou (morreu, travou ou foi encerrado): a mensagem diz qual."""


# ---------------------------------------------------------------- quem é este processo
def posto() -> int:
    """O número deste processo no treino (RANK, que o torchrun põe): 0 sem torchrun."""
    return int(os.environ.get("RANK", "0"))


def mundo() -> int:
    """Quantos processos treinam juntos (WORLD_SIZE): 1 sem torchrun."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def posto_local() -> int:
    """O número deste processo nesta máquina (LOCAL_RANK): a GPU que ele usa."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def nesta_maquina() -> int:
    """Quantos dos processos do treino rodam nesta máquina (LOCAL_WORLD_SIZE, que o torchrun
    põe): todos, sem a variável."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", str(mundo())))


def principal() -> bool:
    """O posto 0: o único que escreve na tela, sorteia amostras, desenha e grava arquivos."""
    return posto() == 0


_TELA = []  # a tela de verdade de um posto que abre uma máquina (o aviso do fim, em encerrar)


def so_o_principal_escreve(aviso: str | None = None) -> None:
    """Com vários processos, os outros postos escrevem no nulo (a tela é a do posto 0); os
    erros (stderr) continuam saindo. Sem torchrun, não faz nada.

    aviso: o que o primeiro processo de cada outra máquina (LOCAL_RANK 0, RANK > 0) escreve
    na tela dela antes de se calar, para quem olha para aquela tela não achar que travou;
    no fim, encerrar() escreve ali uma linha a mais. Numa máquina só, ninguém escreve isso:
    a tela é a do posto 0."""
    if principal():
        return
    if aviso is not None and posto_local() == 0:
        dizer(quebrar(aviso))
        sys.stdout.flush()
        _TELA.append(os.dup(sys.stdout.fileno()))
    sys.stdout.flush()
    nulo = os.open(os.devnull, os.O_WRONLY)
    os.dup2(nulo, sys.stdout.fileno())
    os.close(nulo)


# ---------------------------------------------------------------- o grupo de processos
def iniciar(dispositivo: str = "cpu", prazo: float = PRAZO):
    """Entra no grupo de processos (MASTER_ADDR, MASTER_PORT, RANK e WORLD_SIZE, postas pelo
    torchrun ou por lancar): gloo na CPU, nccl na GPU CUDA (uma GPU por processo, a do
    LOCAL_RANK; gloo onde não há nccl, como no Windows). Um SIGTERM (o torchrun encerrando
    os outros quando um cai) vira uma linha em português e a saída 1. Devolve o torch.device
    deste processo."""
    import datetime

    import torch
    import torch.distributed as dist

    if dispositivo == "cuda":          # o Windows não tem o nccl: lá, o gloo (que também
        torch.cuda.set_device(posto_local())                    # faz a média na GPU)
        aparelho = torch.device("cuda", posto_local())
        backend = "nccl" if dist.is_nccl_available() else "gloo"
    else:
        aparelho, backend = torch.device(dispositivo), "gloo"
    ao_sinal(signal.SIGTERM, "O treino parou: outro processo do grupo caiu, e o torchrun "
             "encerrou este.", 1)
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=prazo))
    return aparelho


def conferir(lote: int) -> None:
    """O que um treino em vários processos não aceita, conferido antes de entrar no grupo:
    um lote que não se divide entre os processos (o dispositivo, comum/dispositivo.py confere
    com escolher). É uso errado: 'erro: ...' e a saída 2. Sem torchrun, tudo vale."""
    from .opcoes import uso_errado

    n = mundo()
    if lote % n:
        uso_errado(f"--lote {lote} não se divide entre os {n} processos do torchrun: cada um "
                   f"treina a mesma fatia do lote (exemplo: --lote {n * max(1, lote // n)})")


def encerrar(codigo: int = 0) -> None:
    """Sai do grupo de processos (se entrou) e termina este processo com `codigo`, sem a
    faxina do fim do Python (os._exit) em nenhum posto. Essa faxina destrói o grupo gloo e
    a loja dele, com threads de C++ que ainda rodam, e às vezes aborta (SIGABRT, "terminate
    called without an active exception"): a suíte de testes viu isso duas vezes, uma no
    posto 1 e outra no 0 (e 180 treinos seguidos fora dela, nenhuma). Os outros postos
    (que acabam primeiro: só treinam) avisam na loja do grupo e saem; o posto 0 (que, no
    lancar, hospeda a loja) espera os avisos (até PRAZO) e sai por último. Que um posto saia com
    outro ainda vivo não derruba o que fica (medido: o posto 0 segue vivo e sai com 0)."""
    if mundo() == 1 or "torch" not in sys.modules:
        return
    import datetime

    import torch.distributed as dist

    if not dist.is_initialized():
        return
    loja = dist.distributed_c10d._get_default_store()
    sys.stdout.flush()
    sys.stderr.flush()
    if not principal():
        for tela in _TELA:
            fim = "terminou" if codigo == 0 else f"parou (saída {codigo})"
            os.write(tela, f"Processo {posto()} de {mundo()}: {fim}.\n".encode(
                sys.stdout.encoding or "utf-8", "replace"))
        loja.set(f"lab/saiu/{posto()}", "1")
        os._exit(codigo)
    try:
        loja.wait([f"lab/saiu/{k}" for k in range(1, mundo())], datetime.timedelta(seconds=PRAZO))
    except RuntimeError:        # um posto não avisou (caiu): sair mesmo assim
        pass
    os._exit(codigo)


def media(valor: float) -> float:
    """A média de um número entre os processos (a perda de cada um no seu pedaço do lote):
    a perda do lote inteiro. Sem grupo, o próprio número."""
    if mundo() == 1:
        return valor
    import torch
    import torch.distributed as dist

    t = torch.tensor([float(valor)], dtype=torch.float64)
    dist.all_reduce(t)
    return float(t) / mundo()


def paralelo(modelo):
    """O modelo no DistributedDataParallel, que faz no backward a média dos gradientes de
    todos os processos (cada um treina a sua fatia do lote); sem grupo, o próprio modelo."""
    if mundo() == 1:
        return modelo
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel(modelo)


def tempo_da_media(n: int, vezes: int = 6) -> float | None:
    """Quanto custa só a média: a mediana de `vezes` all-reduce de n números (sem o
    primeiro, que aquece), em segundos; sem grupo, None."""
    if mundo() == 1:
        return None
    import statistics

    import torch
    import torch.distributed as dist

    tudo, medidas = torch.zeros(n), []
    for _ in range(vezes):
        inicio = time.perf_counter()
        dist.all_reduce(tudo)
        medidas.append(time.perf_counter() - inicio)
    return statistics.median(medidas[1:])


def fatia(B: int, posto_: int | None = None, mundo_: int | None = None) -> slice:
    """As sequências do lote global de B que um processo treina: B / mundo seguidas (o
    posto 0 as primeiras)."""
    posto_ = posto() if posto_ is None else posto_
    mundo_ = mundo() if mundo_ is None else mundo_
    b = B // mundo_
    return slice(posto_ * b, (posto_ + 1) * b)


def queda(erro: BaseException) -> BaseException:
    """Um erro de comunicação (o outro lado fechou a conexão, o prazo passou) vira
    ProcessoCaiu, com a explicação em português; outro erro fica como está."""
    texto = str(erro).lower()
    if not any(s in texto for s in ("connection", "closed", "timeout", "timed out", "reset",
                                    "peer", "broken pipe")):
        return erro
    return ProcessoCaiu(
        f"outro processo do treino parou no meio de uma média dos gradientes (o processo "
        f"{posto()} esperava por ele), e o treino não continua com um processo a menos. "
        "Rode de novo; se acontecer sempre, veja o erro na tela do que parou.")


# ---------------------------------------------------------------- N processos aqui
# Por que não torch.multiprocessing.spawn (o do apêndice A do LLMs-from-scratch): ele não
# cumpre a regra do Ctrl+C. O filho do spawn roda de novo o script principal (como
# __mp_main__: o import do torch e da lição 10, uns 2 s) antes de qualquer código nosso e
# com o stderr do terminal; um Ctrl+C nesse trecho põe na tela o traceback do
# KeyboardInterrupt do filho (visto; tests/test_distribuido.py o mostra). Ignorar o SIGINT
# ao criar os filhos resolve no Linux, mas no Windows o SIG_IGN do Python não passa a um
# processo novo (lá, só o SetConsoleCtrlHandler, que o CI não testa). Sem cola, o spawn
# também não tem prazo (join=True espera um filho travado para sempre) e um filho que cai
# vira um ProcessExitedException em inglês; com a cola que o faz cumprir as regras no
# Linux, ele deu perto de 80 linhas contra as 109 daqui, no mesmo tempo.
_FILHOS: list = []  # os processos lançados por lancar() que ainda rodam (o Ctrl+C os encerra)


def _matar_filhos() -> None:
    for proc in list(_FILHOS):
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if proc in _FILHOS:
            _FILHOS.remove(proc)


_REGISTRADO = []


def _porta_livre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_CODIGO_DO_FILHO = ("import sys; sys.path.insert(0, sys.argv[1]); from comum import distribuido; "
                    "distribuido._trabalhar(*sys.argv[2:])")


def lancar(n: int, arquivo, funcao: str, entrada, prazo: float = 60, threads: int = 1,
           dispositivo: str = "cpu"):
    """Roda `funcao(entrada)` do `arquivo` (uma lição, ou outro .py) em n processos novos
    nesta máquina, com as variáveis que o torchrun poria (RANK, WORLD_SIZE, LOCAL_RANK,
    MASTER_ADDR, MASTER_PORT) e `threads` threads de conta cada; cada um entra no grupo
    (iniciar) antes de chamá-la. Devolve o que o posto 0 devolveu.

    Um processo que cai (saída diferente de 0) encerra os outros e sobe ProcessoCaiu, com as
    últimas linhas do erro dele; passar de `prazo` segundos também. Ctrl+C encerra todos."""
    if not _REGISTRADO:
        ao_interromper(_matar_filhos)
        _REGISTRADO.append(True)
    arquivo = Path(arquivo).resolve()
    with tempfile.TemporaryDirectory(prefix="lab_distribuido_") as pasta:
        pasta = Path(pasta)
        with open(pasta / "entrada.pkl", "wb") as f:
            pickle.dump({"entrada": entrada, "dispositivo": dispositivo, "prazo": prazo}, f)
        comum = {k: v for k, v in os.environ.items()
                 if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")}
        comum.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_porta_livre()),
                     WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n), OMP_NUM_THREADS=str(threads))
        erros = []
        for k in range(n):
            erros.append(open(pasta / f"erro{k}.txt", "wb"))
            _FILHOS.append(subprocess.Popen(
                [sys.executable, "-c", _CODIGO_DO_FILHO, str(PASTA_LAB), str(arquivo), funcao,
                 str(pasta)], env={**comum, "RANK": str(k), "LOCAL_RANK": str(k)},
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=erros[-1]))
        filhos = _FILHOS[-n:]
        limite = time.monotonic() + prazo
        try:
            while True:
                codigos = [p.poll() for p in filhos]
                caidos = [k for k, c in enumerate(codigos) if c not in (None, 0)]
                if caidos:
                    k = caidos[0]
                    raise ProcessoCaiu(_explicar(k, codigos[k], pasta / f"erro{k}.txt", n))
                if all(c == 0 for c in codigos):
                    break
                if time.monotonic() > limite:
                    raise ProcessoCaiu(f"os {n} processos passaram de {prazo:.0f} s sem "
                                       "terminar: algum travou (a máquina está ocupada?).")
                time.sleep(0.05)
        finally:
            _matar_filhos()
            for f in erros:
                f.close()
        with open(pasta / "saida.pkl", "rb") as f:
            return pickle.load(f)


def _explicar(k: int, codigo: int, arquivo: Path, n: int) -> str:
    """A mensagem de um processo que caiu: qual, com que código, e a última linha do erro."""
    linhas = [l for l in arquivo.read_text("utf-8", "replace").splitlines() if l.strip()]
    ultima = linhas[-1].strip() if linhas else "sem mensagem"
    return (f"o processo {k} de {n} parou (código de saída {codigo}), e os outros foram "
            f"encerrados: o treino não continua com um processo a menos. A última linha "
            f"do erro dele: {ultima}")


def _trabalhar(arquivo: str, funcao: str, pasta: str) -> None:
    """O corpo de um processo lançado por lancar(): entra no grupo, roda a função e, no
    posto 0, grava o que ela devolveu."""
    import importlib.util

    pasta = Path(pasta)
    with open(pasta / "entrada.pkl", "rb") as f:
        pedido = pickle.load(f)
    iniciar(pedido["dispositivo"], pedido["prazo"])
    nome = Path(arquivo).stem
    modulo_nome = ("licao_" + nome) if nome[:2].isdigit() else nome   # o de importar_licao
    spec = importlib.util.spec_from_file_location(modulo_nome, arquivo)
    modulo = importlib.util.module_from_spec(spec)
    sys.modules[modulo_nome] = modulo
    spec.loader.exec_module(modulo)
    resultado = getattr(modulo, funcao)(pedido["entrada"])
    if principal():
        with open(pasta / "saida.pkl", "wb") as f:
            pickle.dump(resultado, f)
    encerrar()
