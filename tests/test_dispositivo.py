"""comum/dispositivo.py: a escolha do --dispositivo (no auto, CUDA, depois MPS, depois a CPU, com
o motivo; em vários processos, a CUDA só com uma GPU para cada um, e nunca o MPS), o pedido de
um dispositivo que não existe (uso errado, saída 2, em português) e a linha que a lição
imprime (nenhuma na CPU: a saída fica a de sempre).

Esta máquina não tem GPU: a escolha é conferida com torch.cuda.is_available e
torch.backends.mps.is_available trocados (monkeypatch); o uso errado, de verdade."""
from __future__ import annotations

import pytest
import torch

from comum import dispositivo
from conftest import rodar_script


@pytest.fixture
def maquina(monkeypatch):
    """maquina(cuda=..., mps=..., gpus=...): o torch passa a dizer que tem (ou não) cada GPU
    (gpus: quantas CUDA; padrão, 1 com cuda=True)."""
    def montar(cuda=False, mps=False, versao_cuda="12.4", gpus=None):
        gpus = (1 if cuda else 0) if gpus is None else gpus
        cuda = cuda or gpus > 0
        monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda _i=0: "NVIDIA de teste")
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
        monkeypatch.setattr(torch.version, "cuda", versao_cuda)
    return montar


@pytest.mark.parametrize("cuda, mps, esperado", [
    (True, True, "cuda"), (True, False, "cuda"), (False, True, "mps"), (False, False, "cpu")])
def test_auto_escolhe_cuda_depois_mps_depois_cpu(maquina, cuda, mps, esperado):
    maquina(cuda=cuda, mps=mps)
    nome, motivo = dispositivo.escolher("auto")
    assert nome == esperado and motivo
    linha = dispositivo.anuncio(nome, motivo, torch)
    if esperado == "cpu":
        assert linha is None and "não há GPU CUDA nem MPS" in motivo
    else:
        assert linha.startswith("Dispositivo: GPU") and motivo in " ".join(linha.split())
    if esperado == "cuda":
        assert "NVIDIA de teste" in linha


def test_o_motivo_sem_cuda_diz_se_o_torch_e_so_para_cpu(maquina):
    maquina(versao_cuda=None)
    assert "só para CPU" in dispositivo.escolher("auto")[1]
    maquina(versao_cuda="12.4")
    assert "driver" in dispositivo.escolher("auto")[1]


@pytest.mark.parametrize("pedido, tem", [("cuda", {"mps": True}), ("mps", {"cuda": True})])
def test_pedir_o_que_nao_existe_e_uso_errado(maquina, capsys, pedido, tem):
    maquina(**tem)
    with pytest.raises(dispositivo.DispositivoAusente, match=f"--dispositivo {pedido}"):
        dispositivo.escolher(pedido)
    with pytest.raises(SystemExit) as saida:
        dispositivo.ou_sair(pedido, "lab/11_inducao.py")
    assert saida.value.code == 2
    erro = capsys.readouterr().err
    assert erro.startswith("erro: --dispositivo") and (
        "Para ajuda:\n  .venv\\Scripts\\python.exe lab\\11_inducao.py --help\n"
        "  .venv/bin/python lab/11_inducao.py --help") in erro
    assert max(len(linha) for linha in erro.splitlines()) <= 80


def test_pedir_o_que_existe_e_a_cpu_sempre(maquina):
    maquina(cuda=True, mps=True)
    assert dispositivo.escolher("cuda")[0] == "cuda" and dispositivo.escolher("mps")[0] == "mps"
    maquina()
    assert dispositivo.escolher("cpu")[0] == "cpu"


# ---------------------------------------------------------------- em vários processos
# (processos no treino, nesta máquina, o que a máquina tem) -> o que o auto escolhe
EM_GRUPO = [
    ((2, 2, {}), "cpu"),
    ((2, 2, {"mps": True}), "cpu"),                 # o gloo e o nccl não usam o MPS
    ((2, 2, {"gpus": 1}), "cpu"),                   # o processo 1 pediria a cuda:1
    ((2, 2, {"gpus": 2}), "cuda"),
    ((4, 2, {"gpus": 2}), "cpu"),                   # outra máquina: o auto não sabe dela
    ((3, 3, {"gpus": 4, "mps": True}), "cuda"),
]


@pytest.mark.parametrize("grupo, esperado", EM_GRUPO)
def test_em_varios_processos_o_auto_quer_uma_gpu_por_processo(maquina, grupo, esperado):
    processos, aqui, tem = grupo
    maquina(**tem)
    nome, motivo = dispositivo.escolher("auto", torch, processos, aqui)
    assert nome == esperado and motivo
    linha = dispositivo.anuncio(nome, motivo, torch, na_cpu=dispositivo.tem_gpu(torch))
    if tem:                   # com uma GPU na máquina, a linha diz o que o treino fez com ela
        assert linha.startswith("Dispositivo: ") and motivo in " ".join(linha.split())
    else:
        assert linha is None
    assert dispositivo.escolher("cpu", torch, processos, aqui)[0] == "cpu"


def test_em_varios_processos_cuda_sem_gpu_para_cada_um_ou_mps_sao_uso_errado(maquina, capsys):
    maquina(gpus=1, mps=True)
    for pedido, frase in (("cuda", "--dispositivo cuda: cada um dos 2 processos desta máquina "
                                   "usa uma GPU CUDA só sua, e aqui há 1."),
                          ("mps", "--dispositivo mps: o treino em 2 processos usa gloo (CPU) "
                                  "ou nccl (CUDA)")):
        with pytest.raises(dispositivo.DispositivoAusente) as erro:
            dispositivo.escolher(pedido, torch, 2, 2)
        assert frase in str(erro.value)
        with pytest.raises(SystemExit) as saida:
            dispositivo.ou_sair(pedido, "lab/12_escala.py", torch, 2, 2)
        assert saida.value.code == 2 and frase in " ".join(capsys.readouterr().err.split())
    maquina(gpus=2)
    assert dispositivo.escolher("cuda", torch, 2, 2)[0] == "cuda"
    maquina(mps=True)                       # um processo só: a regra de sempre, o MPS vale
    assert dispositivo.escolher("auto", torch)[0] == dispositivo.escolher("mps", torch)[0] == "mps"


def test_cuda_pedida_sem_gpu_de_verdade_sai_com_2():
    """Nesta máquina não há GPU: --dispositivo cuda é uso errado, saída 2, sem traceback."""
    r = rodar_script("10_treino.py", "--so", "1", "--dispositivo", "cuda")
    assert r.returncode == 2, (r.saida, r.erros)
    texto = " ".join(r.erros.split())
    assert "erro: --dispositivo cuda: não há GPU CUDA aqui" in texto
    assert "Use --dispositivo cpu (ou auto)" in texto or "use --dispositivo cpu (ou auto)" in texto
    assert "Traceback" not in r.saida + r.erros and "Experimento" not in r.saida


def test_a_licao_00_diz_o_que_a_10_usaria(maquina, capsys):
    """A verificação 2 da lição 00: o dispositivo que o --dispositivo auto da lição 10
    escolheria, e o motivo (aqui, com uma GPU CUDA de mentira, e sem nenhuma)."""
    import types

    from comum import importar_licao

    L00 = importar_licao("00_check")
    for tem, esperado in (({"cuda": True}, "usaria: GPU CUDA (NVIDIA de teste)"),
                          ({"versao_cuda": None}, "usaria: CPU (--dispositivo auto), porque "
                                                  "não há GPU CUDA nem MPS")):
        maquina(**tem)
        L00.exp_maquina(types.SimpleNamespace())
        saida = " ".join(capsys.readouterr().out.split())
        assert f"dispositivo o treino das lições 10 a 12 {esperado}" in saida, saida
