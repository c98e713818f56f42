"""O processo da lição (lab/comum/processo.py): Ctrl+C com threads treinando para na hora;
esperar devolve na ordem; adiantar volta na hora e entrega na ordem."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from comum import processo
from conftest import RAIZ


CTRL_C_COM_THREADS = r"""
import concurrent.futures, sys, time
sys.path.insert(0, "lab")
from comum import console, licao
li = licao.Licao("99", "teste", ["treina em duas threads"])
li.abrir(["--sem-figuras"])
import torch

def treinar(fim):
    a = torch.randn(256, 256)
    while time.time() < fim:  # como o treino da lição 05: contas em C++ sem parar
        a = torch.tanh(a @ a)

def exp(_):
    fim = time.time() + 120
    with console.Progresso(10, "treinando") as barra, \
            concurrent.futures.ThreadPoolExecutor(2) as threads:
        futuros = [threads.submit(treinar, fim) for _ in range(2)]
        print("TREINANDO", flush=True)
        licao.esperar(futuros)

sys.exit(li.rodar({1: exp}))
"""


def test_ctrl_c_com_threads_treinando_para_na_hora():
    """SIGINT no meio de um treino em duas threads: sai 130 logo, uma linha, sem
    traceback e sem 'terminate called' (antes: esperava as threads, ou abortava)."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_COM_THREADS], cwd=RAIZ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
    for linha in proc.stdout:
        if b"TREINANDO" in linha:
            break
    time.sleep(1.0)
    inicio = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        saida, erros = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("Ctrl+C não parou o treino em 30 s")
    segundos = time.monotonic() - inicio
    saida, erros = saida.decode("utf-8", "replace"), erros.decode("utf-8", "replace")
    assert proc.returncode == 130, (saida, erros)
    assert saida.count("Interrompido (Ctrl+C).") == 1
    assert "Traceback" not in erros + saida and "terminate called" not in erros
    assert segundos < 15, segundos  # a máquina é dividida; sem o conserto, ~120 s


def test_esperar_devolve_na_ordem_e_repassa_excecoes():
    import concurrent.futures
    import time

    def devagar(x):
        time.sleep(0.3 * (3 - x))
        return x * 10

    with concurrent.futures.ThreadPoolExecutor(3) as threads:
        assert processo.esperar([threads.submit(devagar, x) for x in range(3)]) == [0, 10, 20]
        with pytest.raises(ZeroDivisionError):
            processo.esperar([threads.submit(lambda: 1 / 0)])


def test_ao_interromper_durante_tira_a_funcao_ao_sair():
    """O aviso do treino vale só enquanto o bloco roda, também quando ele termina num erro:
    rodar o treino duas vezes não deixa dois avisos registrados."""
    antes = list(processo._AO_INTERROMPER)
    aviso = lambda: None  # noqa: E731
    with processo.ao_interromper_durante(aviso):
        assert processo._AO_INTERROMPER == antes + [aviso]
    with pytest.raises(ValueError):
        with processo.ao_interromper_durante(aviso):
            raise ValueError("o treino caiu")
    assert processo._AO_INTERROMPER == antes


@pytest.mark.parametrize("threads", [1, 2])
def test_adiantar_volta_na_hora_e_entrega_na_ordem_com_a_barra(threads):
    """adiantar: volta antes das funções acabarem (elas esperam um sinal que só a thread
    principal dá depois); com threads=1, uma depois da outra; com 2, juntas (uma barreira
    de duas que travaria uma fila). A barra de quem espera chega aos passos que elas deram;
    até resultados(), uma thread de conta, e depois as de antes."""
    import threading

    import torch

    sinal, barreira = threading.Event(), threading.Barrier(2, timeout=10)
    juntas, trava, agora = [], threading.Lock(), [0]

    def treino(nome, passos):
        def f(barra):
            assert sinal.wait(10)
            with trava:
                agora[0] += 1
                juntas.append(agora[0])
            if threads == 2:
                barreira.wait()               # as duas ao mesmo tempo, senão estoura
            for _ in range(passos):
                barra.avancar()
            with trava:
                agora[0] -= 1
            return nome, torch.get_num_threads()
        return f

    class Barra:
        total = 0

        def avancar(self, passos=1, descricao=None):
            self.total += passos

    antes = torch.get_num_threads()
    adiantado = processo.adiantar([treino("a", 7), treino("b", 5)], threads=threads)
    assert not any(f.done() for f in adiantado.futuros)   # voltou antes delas
    assert torch.get_num_threads() == 1                    # o programa segue com uma
    sinal.set()
    barra = Barra()
    assert adiantado.resultados(barra) == [("a", 1), ("b", 1)]
    assert barra.total == 12 and max(juntas) == threads
    assert torch.get_num_threads() == antes
    assert adiantado.resultados(Barra()) == [("a", 1), ("b", 1)]   # de novo: sem esperar


def test_adiantar_repassa_a_excecao_e_devolve_as_threads():
    import torch

    antes = torch.get_num_threads()
    adiantado = processo.adiantar([lambda _barra: 1 / 0])
    with pytest.raises(ZeroDivisionError):
        adiantado.resultados()
    assert torch.get_num_threads() == antes
