"""O caminho de um modelo até a lição (lab/comum/hub.py), o mesmo para o GPT-2 e o Llama:
o cache primeiro e o hub só com rede, o certificado recusado em português, o conselho para
arquivos estragados e a memória livre lida em cada sistema (no macOS, do vm_stat)."""
from __future__ import annotations

import pytest

from comum import carregar_gpt2, carregar_llama, hub


class Carregar:
    """Um carregar(so_local) que falha no cache (OSError, como o from_pretrained) e conta
    as chamadas."""

    def __init__(self, no_cache: bool):
        self.no_cache, self.pedidos = no_cache, []

    def __call__(self, so_local: bool):
        self.pedidos.append(so_local)
        if so_local and not self.no_cache:
            raise OSError("não está no cache")
        return "modelo"


@pytest.fixture
def com_rede(monkeypatch):
    """Rede e hub respondendo, sem tocar na rede de verdade: o que o caminho pergunta."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "rede_disponivel", lambda: True)
    monkeypatch.setattr(hub, "confiar_nos_certificados_do_sistema", lambda: None)
    monkeypatch.setattr(hub, "certificado_do_hub_recusado", lambda: False)
    return monkeypatch


def test_no_cache_nao_procura_a_rede(com_rede, capsys):
    carregar = Carregar(no_cache=True)
    com_rede.setattr(hub, "rede_disponivel", lambda: pytest.fail("perguntou pela rede"))
    assert hub.do_cache_ou_do_hub(carregar, "gpt2", True, "Baixando...") == "modelo"
    assert carregar.pedidos == [True] and capsys.readouterr().out == ""


def test_fora_do_cache_baixa_so_um_nome_do_hub_com_rede(com_rede, capsys):
    carregar = Carregar(no_cache=False)
    assert hub.do_cache_ou_do_hub(carregar, "gpt2", True, "Baixando 'gpt2'...") == "modelo"
    assert carregar.pedidos == [True, False]
    assert capsys.readouterr().out == "Baixando 'gpt2'...\n"
    for hub_, offline, rede in ((False, "", True), (True, "1", True), (True, "", False)):
        carregar = Carregar(no_cache=False)
        com_rede.setenv("HF_HUB_OFFLINE", offline)
        com_rede.setattr(hub, "rede_disponivel", lambda r=rede: r)
        with pytest.raises(OSError):           # quem chamou explica a falha do cache
            hub.do_cache_ou_do_hub(carregar, "gpt2", hub_, "Baixando...")
        assert carregar.pedidos == [True]


def test_certificado_recusado_vira_a_mensagem_antes_de_baixar(com_rede):
    carregar = Carregar(no_cache=False)
    com_rede.setattr(hub, "certificado_do_hub_recusado", lambda: True)
    with pytest.raises(hub.ModeloIndisponivel, match="CERTIFICATE_VERIFY_FAILED"):
        hub.do_cache_ou_do_hub(carregar, "TucanoBR/Tucano-160m", True, "Baixando...")
    assert carregar.pedidos == [True]


def test_os_dois_carregadores_dizem_o_mesmo_conselho_com_o_seu_comando():
    """Arquivos estragados: no cache, apagar e baixar de novo com o comando do modelo; numa
    pasta, salvar de novo nela. Um texto só, em hub.py; cada carregador põe o seu comando."""
    assert "lab/00_check.py --modelo gpt2-xl com internet" in carregar_gpt2._como_refazer(
        "gpt2-xl", True)
    assert "lab/13_tucano.py com internet" in carregar_llama._refazer(carregar_llama.TUCANO, True)
    assert carregar_gpt2._como_refazer("pasta", False) == carregar_llama._refazer("pasta", False)
    assert "Salve o modelo de novo na pasta 'pasta'" in hub.como_refazer("pasta", False, "x")
    assert carregar_gpt2.ModeloIndisponivel is carregar_llama.ModeloIndisponivel \
        is hub.ModeloIndisponivel


VM_STAT_M1 = """\
Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                                3712.
Pages active:                            187254.
Pages inactive:                          183541.
Pages speculative:                         1861.
Pages throttled:                              0.
Pages wired down:                         86012.
Pages purgeable:                           5431.
"Translation faults":                 436158795.
Pages copy-on-write:                   19076540.
Pages zero filled:                    207745215.
Pages reactivated:                     16353473.
Pages purged:                           1981013.
File-backed pages:                        91583.
Anonymous pages:                         281073.
Pages stored in compressor:              958467.
Pages occupied by compressor:             49066.
Decompressions:                        20203357.
Compressions:                          27302555.
Pageins:                                7658401.
Pageouts:                                167436.
Swapins:                                2412003.
Swapouts:                               2841541.
"""


def test_memoria_no_macos_vem_do_vm_stat():
    """No macOS valia a RAM total como livre; agora livres + inativas + especulativas."""
    assert hub.ler_vm_stat(VM_STAT_M1) == 16384 * (3712 + 183541 + 1861)
    intel = VM_STAT_M1.replace("16384", "4096")
    assert hub.ler_vm_stat(intel) == 4096 * (3712 + 183541 + 1861)
    assert hub.ler_vm_stat("vm_stat: comando estranho") is None


def test_memoria_no_macos_sem_vm_stat_nao_inventa(monkeypatch):
    import subprocess as sp

    monkeypatch.setattr(hub.sys, "platform", "darwin")
    real_open = open

    def sem_proc(caminho, *a, **k):
        if str(caminho).startswith("/proc"):
            raise OSError("não há /proc no macOS")
        return real_open(caminho, *a, **k)

    monkeypatch.setattr("builtins.open", sem_proc)

    def falha(*a, **k):
        raise FileNotFoundError("vm_stat")

    monkeypatch.setattr(sp, "run", falha)
    assert hub.memoria_disponivel() is None

    class Saida:
        stdout = VM_STAT_M1

    monkeypatch.setattr(sp, "run", lambda *a, **k: Saida())
    assert hub.memoria_disponivel() == 16384 * (3712 + 183541 + 1861)
