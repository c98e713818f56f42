"""O ritmo de um treino na CPU: quantas threads de conta usar, escolhidas pelo que a máquina
entrega agora.

Num notebook, outros programas (o navegador, o antivírus, uma videochamada) disputam os
núcleos. Com duas threads de conta e os dois núcleos ocupados, cada conta repartida espera
a outra metade, que o sistema pôs para dormir: um passo da lição 10 chega a levar dezenas de
vezes mais. Com uma thread, nada espera ninguém, e o passo só divide o núcleo com quem está
nele. O Ritmo mede uma sonda (uma passada para a frente e para trás num lote fixo, que não
mexe nos pesos) com todas as threads e com uma, antes do treino e de novo quando os passos
ficam bem mais lentos que antes (ou, com uma thread, de tempos em tempos), e o treino segue
com a escolha mais rápida. Cada troca é dita na tela, com o que foi medido.

Numa máquina quieta nada troca, e o treino é o mesmo de sempre. Numa troca, as contas só
mudam no arredondamento (uma soma repartida entre threads soma em outra ordem), e o que as
apostilas citam vale com uma e com duas threads (tests/test_cpus.py confere nas duas). Quem
fixou OMP_NUM_THREADS escolheu: o Ritmo não mexe.
"""
from __future__ import annotations

import contextlib
import os
import statistics
import time

from .console import dizer, num, plural, quebrar

__all__ = ["Ritmo", "uma_thread", "REVER_A_CADA", "BLOCO", "MAIS_LENTO", "GANHO", "SONDAS"]

BLOCO = 5             # passos da mediana do ritmo (um passo atrasado sozinho não decide)
MAIS_LENTO = 2.0      # mediana 2x o melhor já visto: a máquina mudou, sondar de novo
REVER_A_CADA = 100    # com 1 thread, sondar de novo a cada tantos passos (a CPU folgou?)
GANHO = 0.8           # 1 thread só se fizer a sonda em até 80 % do tempo com todas
SONDAS = 3            # medidas da sonda em cada escolha, depois de uma que aquece


@contextlib.contextmanager
def uma_thread():
    """Uma thread de conta dentro do bloco, e as de antes depois dele: para contas pequenas
    (os treinos minúsculos das lições 05, 08 e 11, gerar token a token na 13), em que as
    threads passam mais tempo esperando umas pelas outras (ou por outro programa no mesmo
    núcleo) do que fazendo conta."""
    import torch

    antes = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(antes)


def _ms(segundos: float) -> str:
    return f"{num(1000 * segundos, 0)} ms"


class Ritmo:
    """ritmo = Ritmo(torch, sonda); ritmo.comecar() antes do primeiro passo e
    ritmo.depois_do_passo(segundos) depois de cada um.

    sonda(): uma passada para a frente e para trás que não muda o treino (os gradientes
    que ela deixa, o passo seguinte zera). Fica parado (ativo False) com uma thread só,
    fora da CPU, em vários processos ou com OMP_NUM_THREADS definido. avisar(texto) diz
    as trocas (padrão: imprime); relogio() mede (padrão: time.perf_counter)."""

    def __init__(self, torch, sonda, ativo: bool = True, avisar=None,
                 relogio=time.perf_counter, ambiente=os.environ):
        self.torch, self.sonda, self.relogio = torch, sonda, relogio
        self.todas = torch.get_num_threads()
        self.ativo = ativo and self.todas > 1 and not ambiente.get("OMP_NUM_THREADS")
        self.atual = self.todas
        self.tempos: list[float] = []      # os últimos BLOCO passos com a escolha atual
        self.melhor: float | None = None   # a menor mediana de BLOCO passos desde a troca
        self.rever = None                  # com 1 thread: o passo da próxima sonda
        self.passo = 0
        self.trocas = 0
        self.passos = {self.todas: 0, 1: 0}
        self.avisar = avisar or (lambda texto: dizer(quebrar(texto)))

    def _medir(self, threads: int) -> float:
        """O tempo médio da sonda com tantas threads. A média, e não a menor medida: com
        os núcleos disputados, duas threads às vezes pegam os dois de uma vez e fazem uma
        sonda rápida, mas o que conta para o treino é o tempo de todas."""
        self.torch.set_num_threads(threads)
        self.sonda()                                   # a primeira aquece (threads novas)
        inicio = self.relogio()
        for _ in range(SONDAS):
            self.sonda()
        return (self.relogio() - inicio) / SONDAS

    def _escolher(self, motivo: str) -> None:
        """Sonda com todas as threads e com uma e fica com a mais rápida (1 thread só com
        folga: GANHO). Diz na tela quando troca."""
        com_todas, com_uma = self._medir(self.todas), self._medir(1)
        escolha = 1 if com_uma <= GANHO * com_todas else self.todas
        self.torch.set_num_threads(escolha)
        if escolha != self.atual:
            self.trocas += 1
            todas = plural(self.todas, "thread")
            if escolha == 1:
                self.avisar(f"Ritmo: {motivo}: a sonda levou {_ms(com_todas)} com {todas} e "
                            f"{_ms(com_uma)} com 1. O treino segue com 1 thread (as contas "
                            "só mudam no arredondamento).")
            else:
                self.avisar(f"Ritmo: a CPU folgou: a sonda levou {_ms(com_todas)} com {todas} "
                            f"e {_ms(com_uma)} com 1. O treino volta a {todas}.")
        self.atual, self.tempos, self.melhor = escolha, [], None
        self.rever = self.passo + REVER_A_CADA if escolha == 1 else None

    def comecar(self) -> None:
        if self.ativo:
            self._escolher("nesta máquina, agora, 1 thread rende mais (outros programas "
                           "disputando a CPU, ou um modelo pequeno demais para repartir)")

    def depois_do_passo(self, segundos: float) -> None:
        if not self.ativo:
            return
        self.passo += 1
        self.passos[self.atual] += 1
        self.tempos = (self.tempos + [segundos])[-BLOCO:]
        if len(self.tempos) < BLOCO:
            return
        agora = statistics.median(self.tempos)
        self.melhor = agora if self.melhor is None else min(self.melhor, agora)
        if agora > MAIS_LENTO * self.melhor:
            self._escolher(f"os passos ficaram lentos, de {_ms(self.melhor)} para "
                           f"{_ms(agora)} (outros programas disputando a CPU?)")
        elif self.rever is not None and self.passo >= self.rever:
            self._escolher("")  # com 1 thread: só pode voltar a todas

    def terminar(self) -> None:
        """Fim do treino: o processo volta às threads de antes (o experimento seguinte
        começa como começaria sem o Ritmo)."""
        if self.ativo:
            self.torch.set_num_threads(self.todas)

    def resumo(self) -> str | None:
        """Uma linha para o fim do treino, se o Ritmo trocou alguma vez."""
        if not self.trocas:
            return None
        return (f"Ritmo: {plural(self.passos[self.todas], 'passo')} com "
                f"{plural(self.todas, 'thread')} e {plural(self.passos[1], 'passo')} com 1 "
                f"({plural(self.trocas, 'troca')}, escolhidas pelo tempo da sonda).")
