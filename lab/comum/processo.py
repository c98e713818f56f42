"""O processo de uma lição: Ctrl+C (uma linha e a saída 130, na hora, até com threads
trabalhando), treinos em paralelo (em_paralelo, esperar), treinos que começam antes do
experimento que os mostra (adiantar) e as sementes (semear)."""
from __future__ import annotations

import contextlib
import os
import sys

from .console import mostrar_cursor, parar_barras

__all__ = ["interromper", "esperar", "em_paralelo", "adiantar", "Adiantado", "ao_interromper",
           "ao_interromper_durante", "instalar_ctrl_c", "ao_sinal", "semear"]


def interromper(mensagem: str = "Interrompido (Ctrl+C).", codigo: int = 130) -> None:
    """Termina JÁ, com uma linha e código 130, como um Ctrl+C (ou outra linha e outro
    código: o SIGTERM de ao_sinal).

    os._exit, e não sys.exit: sys.exit esperaria as threads de trabalho terminarem
    (treinos em paralelo seguiriam por segundos, a barra de progresso desenhando) e
    um segundo Ctrl+C nessa espera abortava o processo ('terminate called...', 134).
    """
    try:
        parar_barras()    # senão o rich redesenha a barra embaixo da linha
        mostrar_cursor()  # a barra do rich esconde o cursor
        print(f"\n{mensagem}", flush=True)
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - saindo de qualquer jeito
        pass
    os._exit(codigo)


def esperar(futuros):
    """Resultados de futuros (concurrent.futures), na ordem, esperando aos poucos.

    Esperar com `futuro.result()` trava a thread principal num lock que, no Windows,
    pode não acordar com Ctrl+C; olhando a cada 0,2 s, o Ctrl+C para na hora em todo
    sistema. Uma exceção numa thread sobe aqui, como em result()."""
    import concurrent.futures

    futuros = list(futuros)
    while concurrent.futures.wait(futuros, timeout=0.2).not_done:
        pass
    return [f.result() for f in futuros]


def em_paralelo(funcoes, threads=2):
    """[f() for f in funcoes], `threads` de cada vez (uma thread cada, um núcleo cada):
    os resultados na ordem das funções. Cada f deve ter o seu estado (pesos, gerador de
    lotes), sorteado antes, na thread principal: aí dá bit a bit o que daria sozinha.
    Ctrl+C para na hora: interromper() sai sem esperar as threads (esperá-las levava o
    torch a abortar o processo ao sair)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as grupo:
        futuros = [grupo.submit(f) for f in funcoes]
        try:
            return esperar(futuros)
        except KeyboardInterrupt:
            interromper()


def adiantar(funcoes, threads=1):
    """Começa as funções numa thread ao lado e volta na hora: o programa segue (outro
    experimento) enquanto elas rodam, `threads` de cada vez (1: uma depois da outra, num
    núcleo; 2: juntas). Devolve um Adiantado; .resultados(barra) espera por elas.

    Cada f é chamada como f(barra): a barra conta os passos dela (barra.avancar()), e
    quem espera vê a sua barra chegar até ali. Até resultados(), o programa e cada função
    fazem conta com uma thread só (um núcleo cada). Como em em_paralelo, cada f traz o seu
    estado (pesos, gerador) sorteado antes, na thread principal: dá o que daria sozinha."""
    return Adiantado(funcoes, threads)


class Adiantado:
    """As funções de adiantar(), rodando; resultados(barra) espera e devolve na ordem."""

    def __init__(self, funcoes, threads):
        import threading
        from concurrent.futures import ThreadPoolExecutor

        import torch

        self.feitos, self._trava, self._prontos = 0, threading.Lock(), None
        self._threads = torch.get_num_threads()
        torch.set_num_threads(1)                 # até resultados(): um núcleo para cada um
        grupo = ThreadPoolExecutor(threads)
        self.futuros = [grupo.submit(f, self) for f in funcoes]
        grupo.shutdown(wait=False)               # volta já; as funções seguem

    def avancar(self, passos: int = 1, descricao: str | None = None) -> None:
        """A barra que as funções recebem: só conta (a da tela é de quem espera)."""
        with self._trava:
            self.feitos += passos

    def resultados(self, barra=None) -> list:
        """[f(barra) de cada f], na ordem. Espera olhando a cada 0,2 s (o Ctrl+C para na
        hora) e leva `barra` (um Progresso) até o passo em que as funções estão; depois,
        as threads de conta de antes. Uma exceção numa função sobe aqui."""
        if self._prontos is None:
            import concurrent.futures

            import torch

            visto = 0
            try:
                while True:
                    ainda = concurrent.futures.wait(self.futuros, timeout=0.2).not_done
                    if barra:
                        barra.avancar(self.feitos - visto)
                    visto = self.feitos
                    if not ainda:
                        break
            except KeyboardInterrupt:
                interromper()
            finally:
                torch.set_num_threads(self._threads)
            self._prontos = [f.result() for f in self.futuros]
        return self._prontos


_AO_INTERROMPER = []  # funções chamadas antes de sair no Ctrl+C (ex.: guardar um checkpoint)


def ao_interromper(funcao) -> None:
    """Registra funcao() para rodar no Ctrl+C, antes da linha 'Interrompido' (uma lição
    que treina guarda ali o último checkpoint)."""
    _AO_INTERROMPER.append(funcao)


@contextlib.contextmanager
def ao_interromper_durante(funcao):
    """ao_interromper(funcao) só dentro do bloco `with`: o treino que registra o aviso do
    seu checkpoint o tira ao terminar (rodar o treino de novo não registra dois)."""
    _AO_INTERROMPER.append(funcao)
    try:
        yield
    finally:
        _AO_INTERROMPER.remove(funcao)


def instalar_ctrl_c() -> None:
    """Ctrl+C em qualquer ponto (até durante o import do torch ou com threads
    trabalhando): uma linha, saída 130, na hora."""
    import signal

    ao_sinal(signal.SIGINT, "Interrompido (Ctrl+C).", 130)


def ao_sinal(sinal, mensagem: str, codigo: int) -> None:
    """Ao receber `sinal`: apaga as barras, roda as funções de ao_interromper (o último
    checkpoint), escreve `mensagem` e sai com `codigo`, na hora (o Ctrl+C, e o SIGTERM
    com que o torchrun encerra os processos de um treino quando um deles cai)."""
    import signal

    def parar(_sinal, _quadro):
        try:
            parar_barras()                 # as mensagens abaixo não ficam sob a barra
        except Exception:  # noqa: BLE001 - saindo de qualquer jeito
            pass
        for funcao in _AO_INTERROMPER:
            try:
                funcao()
            except Exception:  # noqa: BLE001 - saindo de qualquer jeito
                pass
        interromper(mensagem, codigo)

    try:
        signal.signal(sinal, parar)
    except ValueError:  # fora da thread principal
        pass


def semear(semente: int) -> None:
    """A mesma semente no random, no numpy e no torch (se já importado)."""
    import random

    random.seed(semente)
    try:
        import numpy as np

        np.random.seed(semente)
    except ImportError:
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(semente)
