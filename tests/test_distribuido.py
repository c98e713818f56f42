"""comum/distribuido.py: a fatia do lote de cada processo, lancar() de N processos nesta máquina
(o que o posto 0 devolve volta; um processo que morre faz os outros pararem, com uma mensagem
em português, sem esperar o prazo) e um erro de comunicação virando ProcessoCaiu."""
from __future__ import annotations

import time

import pytest

from comum import distribuido


def test_as_fatias_cobrem_o_lote_sem_se_cruzar():
    for B, n in ((12, 2), (12, 3), (8, 4), (5, 1)):
        indices = [i for k in range(n) for i in range(B)[distribuido.fatia(B, k, n)]]
        assert indices == list(range(B))


def test_sem_torchrun_e_um_processo_so(monkeypatch):
    for nome in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(nome, raising=False)
    assert (distribuido.posto(), distribuido.mundo(), distribuido.principal()) == (0, 1, True)
    assert distribuido.media(2.5) == 2.5 and distribuido.fatia(12) == slice(0, 12)
    modelo = object()                               # sem grupo: nada de DDP, nada a medir
    assert distribuido.paralelo(modelo) is modelo and distribuido.tempo_da_media(10) is None


def test_com_torchrun_um_lote_impar_ou_o_mps_sao_uso_errado(monkeypatch, capsys):
    monkeypatch.setenv("WORLD_SIZE", "2")
    distribuido.conferir(12, "cpu")                             # 6 sequências cada: vale
    for lote, dispositivo, frase in ((5, "cpu", "--lote 5 não se divide entre os 2 processos"),
                                     (12, "mps", "--dispositivo mps: o treino em 2 processos")):
        with pytest.raises(SystemExit) as saida:
            distribuido.conferir(lote, dispositivo)
        assert saida.value.code == 2 and frase in " ".join(capsys.readouterr().err.split())
    monkeypatch.setenv("WORLD_SIZE", "1")
    distribuido.conferir(5, "mps")                              # sem torchrun, tudo vale


def test_um_erro_de_comunicacao_vira_processo_caiu():
    caiu = distribuido.queda(RuntimeError("[gloo] Connection closed by peer [127.0.0.1]:1234"))
    assert isinstance(caiu, distribuido.ProcessoCaiu) and "outro processo" in str(caiu)
    outro = ValueError("shapes não batem")
    assert distribuido.queda(outro) is outro


TRABALHO = '''
import os
import torch
import torch.distributed as dist
from comum import distribuido


def morrer(entrada):
    if distribuido.posto() == 1:
        import sys
        print("o processo 1 cai aqui", file=sys.stderr, flush=True)
        os._exit(3)
    t = torch.ones(1)
    dist.all_reduce(t)                                 # o posto 0 espera pelo 1, que morreu
    return float(t)
'''


def test_um_processo_que_morre_para_os_outros(tmp_path):
    """Dois processos de verdade, com gloo: o posto 1 morre no meio de um all-reduce, e o
    pai encerra o 0 e explica, bem antes do prazo (nada de esperar para sempre). Que o
    que o posto 0 devolve volta ao pai, o experimento 6 da lição 10 confere."""
    arquivo = tmp_path / "trabalho.py"
    arquivo.write_text(TRABALHO, encoding="utf-8")
    inicio = time.monotonic()
    with pytest.raises(distribuido.ProcessoCaiu) as caiu:
        distribuido.lancar(2, arquivo, "morrer", None, prazo=60)
    assert time.monotonic() - inicio < 40
    texto = str(caiu.value)
    assert "o processo 1 de 2 parou (código de saída 3)" in texto
    assert "o processo 1 cai aqui" in texto and "os outros foram encerrados" in texto
    assert not distribuido._FILHOS                     # nenhum ficou rodando
