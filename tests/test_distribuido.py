"""comum/distribuido.py: a fatia do lote de cada processo, lancar() de N processos nesta máquina
(o que o posto 0 devolve volta; um processo que morre faz os outros pararem, com uma mensagem
em português, sem esperar o prazo; o Ctrl+C de um terminal encerra todos, sem traceback) e um
erro de comunicação virando ProcessoCaiu. E por que lancar() e não torch.multiprocessing.spawn:
o Ctrl+C durante o início de um filho do spawn põe um traceback na tela."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
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


def test_com_torchrun_um_lote_impar_e_uso_errado(monkeypatch, capsys):
    """(O dispositivo em vários processos: tests/test_dispositivo.py.)"""
    monkeypatch.setenv("WORLD_SIZE", "2")
    distribuido.conferir(12)                                    # 6 sequências cada: vale
    with pytest.raises(SystemExit) as saida:
        distribuido.conferir(5)
    assert saida.value.code == 2
    assert "--lote 5 não se divide entre os 2 processos" in " ".join(
        capsys.readouterr().err.split())
    monkeypatch.setenv("WORLD_SIZE", "1")
    distribuido.conferir(5)                                     # sem torchrun, tudo vale


def test_quantos_processos_nesta_maquina(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert distribuido.nesta_maquina() == 4                     # sem a variável: todos aqui
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")                 # duas máquinas, 2 em cada
    assert distribuido.nesta_maquina() == 2


AVISO = """
import sys
sys.path.insert(0, sys.argv[1])
from comum import distribuido
distribuido.so_o_principal_escreve("Este processo treina; a tela fica na do processo 0.")
print("isto vai para o nulo")
if distribuido.posto_local() == 0:     # o grupo (um gloo de um processo só), para o encerrar
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="file://" + sys.argv[2], rank=0, world_size=1)
distribuido.encerrar(0)
"""


@pytest.mark.parametrize("posto_local, esperado", [
    ("0", "Este processo treina; a tela fica na do processo 0.\nProcesso 1 de 2: terminou.\n"),
    ("1", "")], ids=["outra_maquina", "a_mesma_maquina"])
def test_na_tela_de_outra_maquina_o_processo_diz_que_treina(tmp_path, posto_local, esperado):
    """Em duas máquinas, a tela da que não tem o processo 0 não fica vazia: o primeiro
    processo dela (LOCAL_RANK 0) diz que treina e onde está a tela, e no fim que terminou;
    o resto vai para o nulo. Numa máquina só (LOCAL_RANK 1), nada: a tela é a do 0."""
    from comum.caminhos import PASTA_LAB

    ambiente = {**os.environ, "RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": posto_local,
                "PYTHONIOENCODING": "utf-8"}
    r = subprocess.run([sys.executable, "-c", AVISO, str(PASTA_LAB), str(tmp_path / "loja")],
                       env=ambiente, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode("utf-8") == esperado


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


def girar(pasta):
    t = torch.ones(1)
    dist.all_reduce(t)
    if distribuido.posto() == 0:                       # os dois entraram no grupo
        open(os.path.join(pasta, "pronto"), "w").close()
    while True:
        dist.all_reduce(t)
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


so_posix = pytest.mark.skipif(not hasattr(os, "killpg"), reason="o Ctrl+C de um terminal "
                              "(o SIGINT ao grupo de processos) é do Linux e do macOS")


@so_posix
def test_ctrl_c_encerra_todos_os_processos_sem_traceback(tmp_path):
    """O Ctrl+C de um terminal (o SIGINT vai ao grupo de processos inteiro: o pai e os 2
    filhos) no meio de um treino de lancar(): a linha 'Interrompido', a saída 130, nenhum
    traceback (os filhos escrevem o deles no arquivo de erro, que ninguém lê) e nenhum
    processo rodando depois."""
    from conftest import RAIZ

    (tmp_path / "trabalho.py").write_text(TRABALHO, encoding="utf-8")
    codigo = (f"import sys; sys.path.insert(0, {str(RAIZ / 'lab')!r}); "
              "from comum import distribuido; from comum.processo import instalar_ctrl_c; "
              f"instalar_ctrl_c(); distribuido.lancar(2, {str(tmp_path / 'trabalho.py')!r}, "
              f"'girar', {str(tmp_path)!r}, prazo=120)")
    proc = subprocess.Popen([sys.executable, "-c", codigo], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        fim = time.monotonic() + 120
        while not (tmp_path / "pronto").exists():
            assert proc.poll() is None and time.monotonic() < fim, proc.communicate()
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)                  # o Ctrl+C do terminal
        saida, erros = (b.decode("utf-8", "replace") for b in proc.communicate(timeout=60))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, saida + erros
    assert saida.count("Interrompido (Ctrl+C).") == 1
    assert "Traceback" not in saida + erros, erros
    with pytest.raises(ProcessLookupError):                 # nenhum filho ficou no grupo
        os.killpg(proc.pid, 0)


COM_SPAWN = '''
import time
if __name__ == "__mp_main__":      # o filho do spawn roda o script de novo, com este nome
    print("o filho roda o script de novo", flush=True)
    time.sleep(60)                 # uma lição: o import do torch e da lição 10


def alvo(k):
    pass


if __name__ == "__main__":
    import torch.multiprocessing as mp
    mp.spawn(alvo, nprocs=1)
'''


@so_posix
def test_o_spawn_do_torch_nao_cumpre_o_ctrl_c(tmp_path):
    """Por que lancar() e não torch.multiprocessing.spawn (o comentário em distribuido.py):
    o filho do spawn roda de novo o script principal, como __mp_main__, antes de qualquer
    código nosso e com o stderr do terminal; um Ctrl+C nesse trecho põe na tela o traceback
    do KeyboardInterrupt do filho. Se um dia este teste falhar, o spawn merece outra
    tentativa."""
    (tmp_path / "com_spawn.py").write_text(COM_SPAWN, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(tmp_path / "com_spawn.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert proc.stdout.readline() == b"o filho roda o script de novo\n"
        os.killpg(proc.pid, signal.SIGINT)                  # o Ctrl+C do terminal
        _, erros = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    erros = erros.decode("utf-8", "replace")
    assert "in spawn_main" in erros and "KeyboardInterrupt" in erros, erros  # o do filho
