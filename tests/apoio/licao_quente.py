"""Um interpretador "quente" para rodar lições nos testes: o torch e o transformers já
importados (uns 5 a 9 s de CPU a menos por execução), cada lição num processo-filho novo.

O servidor é um processo Python começado com o mesmo ambiente que a lição teria (as
variáveis que contam na partida: as de kernel e de threads, HF_*), que
importa os pacotes pesados e espera pedidos. Para cada pedido ele faz fork(): o filho
aponta os descritores 0, 1 e 2 para os arquivos do pedido (os objetos sys.stdin/stdout/
stderr da partida continuam os mesmos, na codificação do pedido), troca o os.environ, o
sys.argv e o sys.path[0] e roda o script com runpy como `python lab/NN.py` rodaria. O pai
do servidor nunca fez conta nenhuma no torch (só importou): o filho começa as threads de
conta e escolhe os kernels como um processo novo. Um servidor serve qualquer
PYTHONIOENCODING sem ":" (cp1252, utf-8): o filho troca a codificação dos três fluxos
(reconfigure, antes de qualquer leitura ou escrita), o que o Python faria na partida.

O que NÃO passa por aqui (a regra está em tests/apoio/sessao.py): a primeira linha antes do
torch, Ctrl+C, tmux, entrada pelo stdin, --help/--lista/--pausa, o 00_check, variáveis
de ambiente lidas na partida que diferem das do servidor; e um código de saída 2 (uso
errado) é sempre refeito num processo novo. tests/test_cpus.py confere que a saída de
um filho é, byte a byte, a de um processo novo.

Uso: python tests/apoio/licao_quente.py FD_PEDIDOS FD_RESPOSTAS (só tests/apoio/sessao.py o começa).
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# O que as lições usam e custa caro importar (nada que leia COLUMNS, LAB_MODELO ou
# NO_COLOR na importação; o matplotlib fica de fora: --sem-figuras não o importa), e a
# tabela de renomes de pesos que o transformers monta no primeiro from_pretrained de cada
# processo (só texto e expressões regulares: nenhuma conta do torch, nenhuma variável lida).
AQUECER = """
import numpy, regex, rich.console, safetensors.torch, tokenizers
import torch, torch.nn.functional
import transformers
from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast
from transformers.models.gpt2 import modeling_gpt2
from transformers.conversion_mapping import get_checkpoint_conversion_mapping
get_checkpoint_conversion_mapping("gpt2")    # monta (e guarda) a tabela de renomes: 0,2 s
"""


# ------------------------------------------------------------------ o servidor
def _codigo_de_saida(excecao: SystemExit) -> int:
    """O código que o Python daria a um SystemExit que chega ao topo."""
    codigo = excecao.code
    if codigo is None:
        return 0
    if isinstance(codigo, int):
        return codigo & 0xFF
    try:
        print(codigo, file=sys.stderr)
    except Exception:
        pass
    return 1


def _executar(script: str, codigo_c: str | None = None) -> int:
    """Roda o script como __main__ (ou, com codigo_c, o código de `python -c`) e devolve o
    código de saída, como o interpretador."""
    import runpy
    import traceback

    try:
        if codigo_c is None:
            runpy.run_path(script, run_name="__main__")
        else:                         # como o Python faz: um módulo __main__ novo, vazio
            import builtins
            import types

            modulo = types.ModuleType("__main__")
            modulo.__builtins__ = builtins
            sys.modules["__main__"] = modulo
            exec(compile(codigo_c, "<string>", "exec"), modulo.__dict__)
        codigo = 0
    except SystemExit as e:
        codigo = _codigo_de_saida(e)
    except BaseException as e:  # noqa: BLE001 - o que o Python faria: traceback e 1
        tb, topo = e.__traceback__, script if codigo_c is None else "<string>"
        while tb is not None and tb.tb_frame.f_code.co_filename != topo:
            tb = tb.tb_next                        # sem os quadros do runpy e daqui
        traceback.print_exception(type(e), e, tb or e.__traceback__)
        codigo = 130 if isinstance(e, KeyboardInterrupt) else 1
    try:
        threading._shutdown()                      # espera as threads, como no fim normal
    except Exception:
        pass
    import atexit

    atexit._run_exitfuncs()
    return codigo


def codificacao_trocavel(valor: str | None) -> bool:
    """PYTHONIOENCODING que o filho sabe trocar: só a codificação, sem ":erros" (com ela, o
    Python muda também o tratamento de erros de cada fluxo)."""
    return bool(valor) and ":" not in valor


def _trocar_codificacao(valor: str | None) -> None:
    """Os fluxos padrão como o Python os abriria com PYTHONIOENCODING=valor (a mesma
    codificação nos três; os erros, os da partida: strict no stdin e no stdout,
    backslashreplace no stderr, que reconfigure mantém)."""
    if valor == os.environ.get("PYTHONIOENCODING") or not codificacao_trocavel(valor):
        return
    for fluxo in (sys.stdin, sys.stdout, sys.stderr):
        fluxo.reconfigure(encoding=valor)


def _filho(pedido: dict, fechar: tuple[int, ...]) -> None:
    codigo = 1
    try:
        for fd in fechar:
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(pedido["cwd"])
        _trocar_codificacao(pedido["env"].get("PYTHONIOENCODING"))   # antes do environ novo
        os.environ.clear()
        os.environ.update(pedido["env"])
        for fd, caminho, modo in ((0, pedido["entrada"], os.O_RDONLY),
                                  (1, pedido["saida"], os.O_WRONLY | os.O_TRUNC),
                                  (2, pedido["erros"], os.O_WRONLY | os.O_TRUNC)):
            novo = os.open(caminho, modo)
            os.dup2(novo, fd)
            os.close(novo)
        argv = list(pedido["argv"])
        if argv[0] == "-c":                        # python -c CÓDIGO [args]: sys.argv[0] é
            codigo_c = argv.pop(1)                 # "-c", e o sys.path[0], a pasta atual
            sys.argv, sys.path[0] = argv, ""
        else:
            codigo_c = None
            sys.argv = argv
            sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
        codigo = _executar(sys.argv[0], codigo_c)
    except BaseException:  # noqa: BLE001 - falha daqui, não da lição: que apareça
        import traceback

        traceback.print_exc()
        codigo = 1
    finally:
        for fluxo in (sys.stdout, sys.stderr):
            try:
                fluxo.flush()
            except Exception:
                codigo = codigo or 120             # o que o Python faz se o flush falha
        os._exit(codigo)


def servir(fd_pedidos: int, fd_respostas: int) -> None:
    exec(compile(AQUECER, "<aquecer>", "exec"), {})
    sys.stdout.flush()
    sys.stderr.flush()
    pedidos = os.fdopen(fd_pedidos, "r", encoding="utf-8")
    respostas = os.fdopen(fd_respostas, "w", encoding="utf-8")

    def responder(**campos):
        respostas.write(json.dumps(campos) + "\n")
        respostas.flush()

    responder(pronto=True)
    for linha in pedidos:                          # fim da entrada: o teste acabou
        pedido = json.loads(linha)
        pid = os.fork()
        if pid == 0:
            _filho(pedido, (fd_pedidos, fd_respostas))
        responder(pid=pid)
        _, status, uso = os.wait4(pid, 0)
        responder(codigo=os.waitstatus_to_exitcode(status),
                  cpu=uso.ru_utime + uso.ru_stime)


# ------------------------------------------------------------------ o cliente
class Indisponivel(Exception):
    """O servidor não subiu limpo (a importação escreveu algo no stderr, ou falhou)."""


class Servidor:
    """Um servidor quente com o ambiente de partida `ambiente` (o do processo filho)."""

    def __init__(self, ambiente: dict, cwd: Path):
        self.ambiente = dict(ambiente)
        self.cwd = str(cwd)
        self._trava = threading.Lock()
        pedidos_r, self._pedidos = os.pipe()
        self._respostas, respostas_w = os.pipe()
        self._erros = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(pedidos_r), str(respostas_w)],
            pass_fds=(pedidos_r, respostas_w), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=self._erros, env=self.ambiente, cwd=self.cwd)
        os.close(pedidos_r)
        os.close(respostas_w)
        self._buffer = b""
        try:
            resposta = self._ler(timeout=300)
        except Exception as erro:
            self.fechar()
            raise Indisponivel(f"o servidor não respondeu: {erro}") from None
        self._erros.seek(0)
        avisos = self._erros.read().decode("utf-8", "replace")
        if not resposta.get("pronto") or avisos:
            self.fechar()
            # um aviso na importação sairia no stderr de uma execução nova e não no do
            # filho: melhor não usar o servidor
            raise Indisponivel(f"a importação escreveu no stderr:\n{avisos[-2000:]}")

    def _ler(self, timeout: float | None) -> dict:
        fim = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            espera = None if fim is None else max(0.0, fim - time.monotonic())
            prontos, _, _ = select.select([self._respostas], [], [], espera)
            if not prontos:
                raise subprocess.TimeoutExpired("servidor quente", timeout)
            dados = os.read(self._respostas, 65536)
            if not dados:
                raise Indisponivel("o servidor quente morreu")
            self._buffer += dados
        linha, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(linha)

    def vivo(self) -> bool:
        return self.proc.poll() is None

    def rodar(self, argv: list[str], env: dict, timeout: float, cwd=None) -> tuple[
            int, bytes, bytes, float]:
        """(código, stdout, stderr, segundos de CPU do filho) de `python *argv` com env, na
        pasta cwd (padrão: a do servidor). argv pode ser ["-c", código, ...]."""
        with self._trava, tempfile.TemporaryDirectory(prefix="licao-quente-") as pasta:
            arquivos = {nome: os.path.join(pasta, nome) for nome in ("entrada", "saida",
                                                                     "erros")}
            for caminho in arquivos.values():
                open(caminho, "wb").close()
            pedido = dict(arquivos, argv=argv, env=env, cwd=str(cwd or self.cwd))
            os.write(self._pedidos, (json.dumps(pedido) + "\n").encode("utf-8"))
            pid = self._ler(timeout=60)["pid"]
            try:
                fim = self._ler(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self._ler(timeout=60)
                raise subprocess.TimeoutExpired(argv, timeout) from None
            with open(arquivos["saida"], "rb") as f:
                saida = f.read()
            with open(arquivos["erros"], "rb") as f:
                erros = f.read()
            return fim["codigo"], saida, erros, fim["cpu"]

    def fechar(self) -> None:
        for fd in (self._pedidos, self._respostas):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=10)         # sem pedidos: ele sai sozinho
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._erros.close()


if __name__ == "__main__":
    servir(int(sys.argv[1]), int(sys.argv[2]))
