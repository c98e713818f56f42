"""Um terminal de verdade de 80 x 30 (tmux) para os testes do --pausa.

O tmux é um emulador de terminal real: o que `capture-pane` devolve é o que a sala
veria na tela do projetor.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

LINHAS, COLUNAS = 30, 80

sem_tmux = pytest.mark.skipif(
    not shutil.which("tmux"),
    reason="sem tmux: o teste do --pausa num terminal 80x30 precisa dele "
    "(apt-get install -y tmux; o .ci/run instala quando é root)")


class Tela:
    """Uma sessão tmux de 80 x 30 num servidor só do teste (-L), com o registro do
    que o programa escreveu (pipe-pane) para contar as pausas."""

    def __init__(self, pasta: Path, comando: str):
        # Um servidor novo por tela, com nome só dele: com o nome do processo só, a tela
        # seguinte do mesmo trabalhador podia ligar-se ao servidor da anterior enquanto o
        # kill-server o encerrava ("server exited unexpectedly", visto no CI).
        self.soquete = f"lab-pausa-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.registro = pasta / "terminal.log"
        self.registro.write_bytes(b"")
        ambiente = {k: v for k, v in os.environ.items()
                    if k not in ("TMUX", "LAB_MODELO", "NO_COLOR", "COLUMNS", "LINES")}
        ambiente.update({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HF_HUB_OFFLINE": "1",
                         "TERM": "xterm-256color"})
        self.ambiente = ambiente
        # O programa só começa depois do pipe-pane ligado (o 'read' espera um Enter).
        inicio = f"read _; printf '\\033[2J\\033[H'; {comando}; echo \"fim: $?\"; sleep 600"
        self.tmux("new-session", "-d", "-x", str(COLUNAS), "-y", str(LINHAS),
                  "bash", "--norc", "--noprofile", "-c", inicio)
        self.tmux("set-option", "-g", "status", "off")  # as 30 linhas são do programa
        self.tmux("pipe-pane", "-o", f"cat >> {shlex.quote(str(self.registro))}")
        self.tmux("send-keys", "Enter")

    def tmux(self, *argumentos) -> str:
        r = subprocess.run(["tmux", "-u", "-L", self.soquete, *argumentos],
                           capture_output=True, text=True, env=self.ambiente, timeout=30)
        assert r.returncode == 0, r.stderr
        return r.stdout

    def linhas(self) -> list[str]:
        tela = self.tmux("capture-pane", "-p").split("\n")[:LINHAS]
        return [linha.rstrip() for linha in tela]

    def pausas_vistas(self) -> int:
        return self.registro.read_bytes().decode("utf-8", "replace").count("[Enter]")

    def esperar(self, condicao, o_que: str, limite: float = 240):
        """As linhas da tela quando a condição vale e a tela parou de mudar (duas capturas
        iguais seguidas: o programa está parado na pausa, ou terminou)."""
        fim = time.monotonic() + limite
        while time.monotonic() < fim:
            if condicao():
                antes = self.linhas()
                while time.monotonic() < fim:
                    time.sleep(0.05)
                    agora = self.linhas()
                    if agora == antes:
                        return agora
                    antes = agora
            time.sleep(0.05)
        pytest.fail(f"esperei {o_que} por {limite:.0f} s; a tela:\n" + "\n".join(self.linhas()))

    def pausas(self, limite: float = 300):
        """Cada pausa do --pausa, até o programa terminar: (número da pausa, as linhas da
        tela parada nela, o aviso da última linha escrita); depois de cada uma, o Enter."""
        vistas = 0
        while True:
            linhas = self.esperar(
                lambda: self.pausas_vistas() > vistas
                or any(x.startswith("fim: ") for x in self.linhas()),
                f"a pausa {vistas + 1} ou o fim", limite=limite)
            if self.pausas_vistas() == vistas:
                return
            vistas += 1
            yield vistas, linhas, [linha for linha in linhas if linha][-1]
            self.tmux("send-keys", "Enter")

    def fechar(self):
        subprocess.run(["tmux", "-L", self.soquete, "kill-server"], capture_output=True)


class Pty:
    """Uma lição num pseudoterminal (pty) como o do aluno, com a barra de progresso, para os
    testes do Ctrl+C: `with Pty([script, args...]) as t:` e então t.esperar(padrão),
    t.sinal(signal.SIGINT), t.ler(segundos), t.codigo() e t.texto (o que a tela recebeu).
    No fim, o processo que sobrou é morto."""

    def __init__(self, argumentos: list[str], cwd: Path):
        import pty
        import sys

        self.mestre, escravo = pty.openpty()
        ambiente = dict(os.environ, COLUMNS="80", TERM="xterm", NO_COLOR="1", HF_HUB_OFFLINE="1")
        self.proc = subprocess.Popen([sys.executable, *map(str, argumentos)], stdin=escravo,
                                     stdout=escravo, stderr=escravo, env=ambiente, cwd=cwd)
        os.close(escravo)
        self.saida = b""

    def ler(self, segundos: float) -> None:
        import select

        fim = time.monotonic() + segundos
        while time.monotonic() < fim:
            pronto, _, _ = select.select([self.mestre], [], [], 0.05)
            if pronto:
                try:
                    dados = os.read(self.mestre, 4096)
                except OSError:
                    return
                if not dados:
                    return
                self.saida += dados

    def esperar(self, padrao: bytes, prazo: float = 200) -> None:
        """Lê até a saída ter o padrão (uma expressão regular em bytes)."""
        import re

        inicio = time.monotonic()
        while not re.search(padrao, self.saida):
            assert time.monotonic() - inicio < prazo, self.saida[-500:]
            self.ler(0.2)

    def sinal(self, sinal: int) -> None:
        self.proc.send_signal(sinal)

    def codigo(self, prazo: float = 60) -> int:
        return self.proc.wait(timeout=prazo)

    @property
    def texto(self) -> str:
        return self.saida.decode("utf-8", "replace")

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.proc.poll() is None:
            self.proc.kill()
        os.close(self.mestre)
