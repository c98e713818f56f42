"""O Ritmo (lab/comum/ritmo.py): quantas threads o treino da lição 10 usa, pelo que a máquina
entrega. Aqui com um relógio e um torch de mentira, para cada caso dar sempre o mesmo: uma
máquina quieta (nada troca, nada é dito), uma que fica ocupada no meio (troca para 1 thread
e diz o que mediu), uma que folga depois (volta), uma já ocupada no começo, e os casos em
que ele não mexe (OMP_NUM_THREADS, uma thread só, fora da CPU). A sonda de verdade da lição
10 não muda o treino: confere-se também que os pesos depois de passos com sondas no meio
são bit a bit os de sem elas."""
from __future__ import annotations

import pytest
import torch

from comum import ritmo as R
from comum import importar_licao


class Maquina:
    """Um torch e um relógio de mentira: a sonda leva `custo[threads]` segundos."""

    def __init__(self, todas=2, custo=None):
        self.threads, self.todas = todas, todas
        self.custo = dict(custo or {2: 0.05, 1: 0.09})
        self.agora = 0.0
        self.chamadas = []

    # o pedaço do torch que o Ritmo usa
    def get_num_threads(self):
        return self.threads

    def set_num_threads(self, n):
        self.chamadas.append(n)
        self.threads = n

    def relogio(self):
        return self.agora

    def sonda(self):
        self.agora += self.custo[self.threads]


def _ritmo(maquina, **kw):
    avisos = []
    r = R.Ritmo(maquina, maquina.sonda, avisar=avisos.append, relogio=maquina.relogio,
                ambiente=kw.pop("ambiente", {}), **kw)
    return r, avisos


def _passos(r, maquina, n):
    for _ in range(n):
        r.depois_do_passo(maquina.custo[maquina.threads])


def test_maquina_quieta_nada_troca_nem_e_dito():
    m = Maquina()
    r, avisos = _ritmo(m)
    r.comecar()
    _passos(r, m, 1000)
    assert m.threads == 2 and avisos == [] and r.resumo() is None
    assert r.passos == {2: 1000, 1: 0}


def test_ocupada_no_meio_troca_para_uma_thread_e_diz_o_que_mediu():
    m = Maquina()
    r, avisos = _ritmo(m)
    r.comecar()
    _passos(r, m, 50)
    m.custo = {2: 0.60, 1: 0.12}        # dois programas ocupando os dois núcleos
    _passos(r, m, 50)
    assert m.threads == 1 and r.atual == 1
    assert len(avisos) == 1
    aviso = avisos[0]
    assert "os passos ficaram lentos, de 50 ms para 600 ms" in aviso
    assert "a sonda levou 600 ms com 2 threads e 120 ms com 1" in aviso
    assert "segue com 1 thread" in aviso
    # a troca veio assim que a mediana de BLOCO passos passou de MAIS_LENTO x o melhor
    assert r.passos[2] == 50 + R.BLOCO // 2 + 1


def test_folga_depois_e_volta_a_todas():
    m = Maquina()
    r, avisos = _ritmo(m)
    r.comecar()
    _passos(r, m, 20)
    m.custo = {2: 0.60, 1: 0.12}
    _passos(r, m, 30)
    m.custo = {2: 0.05, 1: 0.09}        # os outros programas fecharam
    _passos(r, m, R.REVER_A_CADA + R.BLOCO)
    assert m.threads == 2
    assert len(avisos) == 2 and "a CPU folgou" in avisos[1] and "volta a 2 threads" in avisos[1]
    assert r.resumo().startswith("Ritmo: ") and "2 trocas" in r.resumo()
    m.custo = {2: 0.60, 1: 0.12}
    _passos(r, m, 20)
    assert m.threads == 1
    r.terminar()
    assert m.threads == 2


def test_ocupada_desde_o_comeco():
    m = Maquina(custo={2: 0.60, 1: 0.12})
    r, avisos = _ritmo(m)
    r.comecar()
    assert m.threads == 1 and len(avisos) == 1
    assert "1 thread rende mais" in avisos[0]


def test_uma_thread_so_com_folga():
    """Com uma thread só um pouco mais rápida (acima de GANHO), fica com todas."""
    m = Maquina(custo={2: 0.10, 1: 0.10 * R.GANHO * 1.05})
    r, avisos = _ritmo(m)
    r.comecar()
    assert m.threads == 2 and avisos == []


@pytest.mark.parametrize("caso", ["omp_num_threads", "uma_thread", "fora_da_cpu"])
def test_quando_nao_mexe(caso):
    m = Maquina(todas=1 if caso == "uma_thread" else 2, custo={2: 0.60, 1: 0.12})
    r, avisos = _ritmo(m, ativo=caso != "fora_da_cpu",
                       ambiente={"OMP_NUM_THREADS": "2"} if caso == "omp_num_threads" else {})
    r.comecar()
    _passos(r, m, 300)
    assert not r.ativo and m.chamadas == [] and avisos == [] and r.resumo() is None


def test_a_sonda_da_licao_10_nao_muda_o_treino():
    """Os pesos depois de 6 passos, com a sonda do Ritmo (nas duas escolhas de threads)
    rodando entre eles, são bit a bit os de 6 passos sem ela."""
    L10 = importar_licao("10_treino")

    class Args:
        camadas, largura, cabecas, contexto, lote, semente = 1, 16, 2, 16, 4, 0

    _, _, _, treino, _ = L10.dados()
    config = L10.configuracao(Args)

    def treinar(com_sonda: bool):
        modelo = L10.novo_modelo(config, 0)
        otimizador = L10.adamw(modelo, 1e-3)
        ritmo = L10.ritmo_do_treino(modelo, treino, Args)
        for _passo, _perda in L10.treinar(modelo, otimizador, treino, 6, 4, 16, 1e-3, 2,
                                          torch.Generator().manual_seed(0)):
            if com_sonda:
                ritmo._medir(2)
                ritmo._medir(1)
                torch.set_num_threads(threads)     # os passos, sempre com as mesmas threads
        return [p.detach().clone() for p in modelo.parameters()]

    threads = torch.get_num_threads()
    try:
        sem, com = treinar(False), treinar(True)
    finally:
        torch.set_num_threads(threads)
    assert all(torch.equal(a, b) for a, b in zip(sem, com))


def test_uma_thread_e_volta_as_de_antes():
    antes = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with R.uma_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(antes)
