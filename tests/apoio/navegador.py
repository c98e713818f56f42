"""Um navegador de verdade para os testes das páginas (lab/comum/paginas.py).

`Navegador` abre o Chromium do sistema (o pacote `chromium` do Debian; ou o executável
em LAB_CHROMIUM) sem tela e sem rede, e fala com ele pelo protocolo do DevTools (CDP)
num par de pipes (--remote-debugging-pipe: o Chromium lê os pedidos no descritor 3 e
responde no 4, cada mensagem um JSON terminado em \\0). Nada a instalar do PyPI e
nenhum driver com versão casada com a do navegador.

    nav.abrir(caminho, 390, 844)              # a página, na largura de um celular
    nav.deslizar("#orcamento", 23.5)          # como arrastar: value + eventos input/change
    nav.teclar("#orcamento", "ArrowRight", 3) # teclas de verdade no controle (e Tab)
    nav.apontar("#tokens .tok")               # o mouse em cima, sem clicar
    nav.clicar("#inferencia")                 # clique do mouse no meio do elemento
    nav.campos()                              # {data-campo: texto na tela}
    nav.avaliar("PAGINA.ler()")               # o estado que a página leu dos controles
    nav.erros                                 # exceções de JS, console.error, rede
    nav.captura(caminho_png)                  # a página inteira em PNG

`rodar_no_node(html, expressao)` roda o script de uma página no Node.js, sem
navegador, e devolve o valor da expressão (em JSON): uma grade inteira de estados
numa chamada só.

Sem Chromium (ou no Windows, sem os descritores 3 e 4), os testes do navegador pulam
com o motivo; um Chromium que existe mas não abre é falha, não pulo.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

BANDEIRAS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-quic", "--disable-extensions", "--no-default-browser-check",
             "--mute-audio", "--disable-dev-shm-usage", "--remote-debugging-pipe"]
NOMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
SEM_NAVEGADOR = ("sem Chromium: os testes do navegador pulam (no Debian/Ubuntu: "
                 "apt-get install chromium; ou LAB_CHROMIUM=/caminho/do/executável)")


def achar_chromium() -> str | None:
    """O executável do Chromium (ou Chrome), ou None."""
    if os.environ.get("LAB_CHROMIUM"):
        return os.environ["LAB_CHROMIUM"]
    return next((caminho for nome in NOMES if (caminho := shutil.which(nome))), None)


def motivo_para_pular() -> str | None:
    if sys.platform == "win32":
        return ("no Windows os testes do navegador pulam (o pipe do DevTools usa os "
                "descritores 3 e 4)")
    if not achar_chromium():
        return SEM_NAVEGADOR
    return None


class ErroDaPagina(AssertionError):
    """Uma exceção de JavaScript ao avaliar uma expressão na página."""


class Navegador:
    """Um Chromium sem tela, com uma aba, controlado pelo CDP num par de pipes."""

    def __init__(self, executavel: str | None = None, espera: float = 30.0):
        import fcntl

        self.espera = espera
        self.perfil = tempfile.mkdtemp(prefix="lab-chromium-")
        ler_dele, escrever_nosso = os.pipe()     # nós -> Chromium (o descritor 3 dele)
        ler_nosso, escrever_dele = os.pipe()     # Chromium (o descritor 4 dele) -> nós
        # Acima do 4 antes do fork, para o dup2 no filho não pisar num deles.
        alto_ler = fcntl.fcntl(ler_dele, fcntl.F_DUPFD, 10)
        alto_escrever = fcntl.fcntl(escrever_dele, fcntl.F_DUPFD, 10)

        def no_filho():
            os.dup2(alto_ler, 3)
            os.dup2(alto_escrever, 4)

        self._log = tempfile.TemporaryFile()
        self.processo = subprocess.Popen(
            [executavel or achar_chromium(), *BANDEIRAS, f"--user-data-dir={self.perfil}",
             "about:blank"], stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            close_fds=False, preexec_fn=no_filho)
        for fd in (ler_dele, escrever_dele, alto_ler, alto_escrever):
            os.close(fd)
        self._saida, self._entrada = escrever_nosso, ler_nosso
        self._id = 0
        self._respostas: dict[int, dict] = {}
        self._eventos: list[dict] = []
        self._cond = threading.Condition()
        self._fechado = False
        threading.Thread(target=self._ler, daemon=True).start()
        self.sessao = None
        try:
            alvo = self.enviar("Target.createTarget", {"url": "about:blank"}, sessao=False)
            self.sessao = self.enviar("Target.attachToTarget",
                                      {"targetId": alvo["targetId"], "flatten": True},
                                      sessao=False)["sessionId"]
            for dominio in ("Page", "Runtime", "Network", "Log"):
                self.enviar(f"{dominio}.enable")
        except Exception:
            self.fechar()
            raise

    # -- o protocolo
    def _ler(self):
        resto = b""
        while True:
            try:
                bloco = os.read(self._entrada, 1 << 16)
            except OSError:
                bloco = b""
            if not bloco:
                with self._cond:
                    self._fechado = True
                    self._cond.notify_all()
                return
            resto += bloco
            *mensagens, resto = resto.split(b"\0")
            with self._cond:
                for bruta in mensagens:
                    mensagem = json.loads(bruta)
                    if "id" in mensagem:
                        self._respostas[mensagem["id"]] = mensagem
                    else:
                        self._eventos.append(mensagem)
                self._cond.notify_all()

    def enviar(self, metodo: str, parametros: dict | None = None, sessao: bool = True) -> dict:
        """Um comando do CDP; devolve o 'result' (ou levanta o erro do navegador)."""
        self._id += 1
        numero = self._id
        mensagem = {"id": numero, "method": metodo, "params": parametros or {}}
        if sessao and self.sessao:
            mensagem["sessionId"] = self.sessao
        dados = json.dumps(mensagem).encode() + b"\0"
        while dados:
            dados = dados[os.write(self._saida, dados):]
        limite = time.monotonic() + self.espera
        with self._cond:
            while numero not in self._respostas:
                if self._fechado:
                    raise RuntimeError(f"o Chromium fechou durante {metodo}:\n{self.log()}")
                if not self._cond.wait(timeout=max(0.0, limite - time.monotonic())):
                    raise TimeoutError(f"o Chromium não respondeu a {metodo} em {self.espera} s")
            resposta = self._respostas.pop(numero)
        if "error" in resposta:
            raise RuntimeError(f"{metodo}: {resposta['error'].get('message')}")
        return resposta.get("result", {})

    def _esperar_evento(self, nome: str, desde: int, segundos: float) -> dict:
        limite = time.monotonic() + segundos
        with self._cond:
            while True:
                for evento in self._eventos[desde:]:
                    if evento.get("method") == nome:
                        return evento
                if self._fechado or not self._cond.wait(
                        timeout=max(0.0, limite - time.monotonic())):
                    raise TimeoutError(f"a página não chegou a {nome} em {segundos} s")

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-3000:]

    # -- a página
    def abrir(self, caminho: Path, largura: int = 1280, altura: int = 800) -> None:
        """Abre o arquivo numa janela largura x altura (abaixo de 600 px, como um
        celular: a <meta viewport> vale) e espera a página preencher os campos."""
        self.enviar("Emulation.setDeviceMetricsOverride",
                    {"width": largura, "height": altura, "deviceScaleFactor": 1,
                     "mobile": largura < 600})
        with self._cond:
            self._eventos.clear()
        self.enviar("Page.navigate", {"url": Path(caminho).resolve().as_uri()})
        self._esperar_evento("Page.loadEventFired", 0, self.espera)
        limite = time.monotonic() + self.espera
        while not self.avaliar("Number(document.documentElement.dataset.atualizacoes || 0)"
                               " > 0 || (window.__erros || []).length > 0"):
            if time.monotonic() > limite:
                raise TimeoutError("a página não preencheu os campos")
            time.sleep(0.02)

    def avaliar(self, expressao: str):
        """O valor (JSON) de uma expressão de JavaScript na página."""
        r = self.enviar("Runtime.evaluate", {"expression": expressao, "returnByValue": True,
                                             "awaitPromise": True})
        if "exceptionDetails" in r:
            detalhe = r["exceptionDetails"]
            raise ErroDaPagina(detalhe.get("exception", {}).get("description")
                               or detalhe.get("text"))
        return r["result"].get("value")

    @property
    def erros(self) -> list[str]:
        """Exceções de JavaScript, console.error, erros do navegador (política de
        segurança, arquivo que não carregou) e todo pedido que não é o próprio arquivo."""
        achados = []
        with self._cond:
            eventos = list(self._eventos)
        for evento in eventos:
            metodo, p = evento.get("method"), evento.get("params", {})
            if metodo == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                achados.append("exceção: " + (d.get("exception", {}).get("description")
                                              or d.get("text", "")))
            elif metodo == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                achados.append("console.error: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif metodo == "Log.entryAdded" and p["entry"].get("level") == "error":
                achados.append("navegador: " + p["entry"].get("text", ""))
            elif metodo == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith("file://"):
                    achados.append("pedido à rede: " + url)
        try:
            achados += [f"na página: {e}" for e in self.avaliar("window.__erros || []")]
        except ErroDaPagina as erro:
            achados.append(str(erro))
        return achados

    def _centro(self, seletor: str) -> tuple[float, float]:
        """O meio do elemento, rolado para a tela; falha se outro elemento o cobre."""
        x, y, coberto = self.avaliar(f"""(() => {{
            const el = document.querySelector({json.dumps(seletor)});
            if (!el) throw new Error("não achei " + {json.dumps(seletor)});
            el.scrollIntoView({{block: "center", inline: "center"}});
            const r = el.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            const topo = document.elementFromPoint(x, y);
            const ok = topo && (topo === el || el.contains(topo) || (topo.control === el));
            return [x, y, ok ? "" : (topo ? topo.outerHTML.slice(0, 80) : "nada")];
        }})()""")
        assert not coberto, f"{seletor} está coberto por {coberto}"
        return x, y

    def clicar(self, seletor: str) -> None:
        """Um clique do mouse de verdade no meio do elemento."""
        x, y = self._centro(seletor)
        for tipo in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.enviar("Input.dispatchMouseEvent", {"type": tipo, "x": x, "y": y,
                                                     "button": "left", "clickCount": 1})

    def apontar(self, seletor: str) -> None:
        """O mouse parado em cima do elemento (mouseenter, :hover), sem clicar."""
        x, y = self._centro(seletor)
        self.enviar("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def focado(self):
        """O id (ou o data-i) do elemento com o foco do teclado."""
        return self.avaliar("document.activeElement.id || document.activeElement.dataset.i")

    def marcar(self, seletor: str, ligado: bool = True) -> None:
        """Liga ou desliga uma caixa de seleção com um clique (só se precisar)."""
        if self.avaliar(f"document.querySelector({json.dumps(seletor)}).checked") != ligado:
            self.clicar(seletor)
        assert self.avaliar(f"document.querySelector({json.dumps(seletor)}).checked") == ligado

    def teclar(self, seletor: str, tecla: str, vezes: int = 1) -> None:
        """Teclas de verdade (ArrowRight, ArrowLeft, Home, End...) no controle focado."""
        codigos = {"ArrowRight": 39, "ArrowLeft": 37, "ArrowUp": 38, "ArrowDown": 40,
                   "Home": 36, "End": 35, "PageUp": 33, "PageDown": 34, "Tab": 9}
        self._centro(seletor)
        self.avaliar(f"document.querySelector({json.dumps(seletor)}).focus()")
        for _ in range(vezes):
            for tipo in ("rawKeyDown", "keyUp"):
                self.enviar("Input.dispatchKeyEvent", {
                    "type": tipo, "key": tecla, "code": tecla,
                    "windowsVirtualKeyCode": codigos[tecla]})

    def deslizar(self, seletor: str, valor) -> str:
        """Põe o controle deslizante em `valor`, como um arrasto (input e change).
        Devolve o valor que o controle aceitou (ele arredonda ao passo)."""
        self._centro(seletor)
        return self.avaliar(f"""(() => {{
            const el = document.querySelector({json.dumps(seletor)});
            el.value = {json.dumps(str(valor))};
            el.dispatchEvent(new Event("input", {{bubbles: true}}));
            el.dispatchEvent(new Event("change", {{bubbles: true}}));
            return el.value;
        }})()""")

    def campos(self) -> dict[str, str]:
        """{data-campo: texto} como está na tela (o primeiro elemento de cada nome)."""
        return self.avaliar("""(() => { const c = {};
            for (const el of document.querySelectorAll("[data-campo]"))
                if (!(el.dataset.campo in c)) c[el.dataset.campo] = el.textContent;
            return c; })()""")

    def menor_fonte(self) -> float:
        """O menor tamanho de letra (px) entre os elementos visíveis de <main> com texto."""
        return self.avaliar("""Math.min(...Array.from(document.querySelectorAll("main *"))
            .filter(el => Array.from(el.childNodes).some(
                n => n.nodeType === 3 && n.textContent.trim()) && el.getClientRects().length)
            .map(el => parseFloat(getComputedStyle(el).fontSize)))""")

    def alcancaveis(self, seletor: str) -> bool:
        """Todo elemento do seletor se alcança pelo teclado (nenhum tabindex negativo,
        nenhum desligado)."""
        return self.avaliar(f"""Array.from(document.querySelectorAll({seletor!r}))
            .every(el => el.tabIndex >= 0 && !el.disabled)""")

    def transbordos(self) -> list[str]:
        """O que não cabe na largura da janela: a página rolando para o lado, ou uma
        caixa (tabela, figura) mais larga que o lugar dela."""
        return self.avaliar("""(() => { const fora = [], w = document.documentElement.clientWidth;
            if (document.documentElement.scrollWidth > w)
                fora.push(`a página tem ${document.documentElement.scrollWidth} px de ${w}`);
            for (const el of document.querySelectorAll("main *")) {
                const r = el.getBoundingClientRect();
                if (r.width && (r.right > w + 0.5 || r.left < -0.5))
                    fora.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}` +
                              `${el.dataset.campo ? "[" + el.dataset.campo + "]" : ""}` +
                              ` vai de ${Math.round(r.left)} a ${Math.round(r.right)} px`);
                if (el.scrollWidth > el.clientWidth + 1 &&
                    getComputedStyle(el).overflowX !== "visible")
                    fora.push(`${el.tagName.toLowerCase()}.${el.className} rola para o lado`);
            }
            return fora; })()""")

    def captura(self, caminho: Path, pagina_inteira: bool = True) -> Path:
        """Um PNG da janela (ou da página inteira, rolando)."""
        parametros = {"format": "png"}
        if pagina_inteira:
            tamanho = self.enviar("Page.getLayoutMetrics")["cssContentSize"]
            largura = self.avaliar("document.documentElement.clientWidth")
            parametros.update(captureBeyondViewport=True, clip={
                "x": 0, "y": 0, "width": largura, "height": tamanho["height"], "scale": 1})
        dados = self.enviar("Page.captureScreenshot", parametros)["data"]
        Path(caminho).write_bytes(base64.b64decode(dados))
        return Path(caminho)

    def fechar(self) -> None:
        if self.processo.poll() is None:
            try:
                self.enviar("Browser.close", sessao=False)
            except (RuntimeError, TimeoutError, OSError):
                pass
            try:
                self.processo.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.processo.kill()
                self.processo.wait()
        for fd in (self._saida, self._entrada):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self.perfil, ignore_errors=True)


@pytest.fixture(scope="module")
def navegador():
    """Um Chromium por arquivo de teste (abrir custa ~1 s); pula sem Chromium."""
    motivo = motivo_para_pular()
    if motivo:
        pytest.skip(motivo)
    nav = Navegador()
    yield nav
    nav.fechar()


# ---------------------------------------------------------------- sem navegador: Node.js
DADOS = re.compile(r"^const DADOS = (.*);$", re.M)   # a linha em que a lição põe os dados


def dados_de(pagina) -> dict:
    """Os dados que a lição gravou na página (o arquivo), lidos da linha const DADOS."""
    return json.loads(DADOS.search(pagina.read_text(encoding="utf-8")).group(1))


def script_da_pagina(html: str) -> str:
    """O JavaScript de dentro da página (o único <script> dela)."""
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1, f"a página tem {len(scripts)} scripts; esperava um, embutido"
    return scripts[0]


def rodar_no_node(html: str, expressao: str, timeout: float = 60):
    """Roda o script da página no Node.js (sem document: a página não se liga a nada) e
    devolve o valor de `expressao` em JSON. Pula sem o Node.js."""
    node = shutil.which("node")
    if not node:
        pytest.skip("sem Node.js: a grade de contas da página pula (no Debian/Ubuntu: "
                    "apt-get install nodejs)")
    codigo = (script_da_pagina(html)
              + f"\n;process.stdout.write(JSON.stringify({expressao}));\n")
    r = subprocess.run([node, "-"], input=codigo.encode("utf-8"), capture_output=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    return json.loads(r.stdout)


def pagina_gravada(script: str, modelo, pasta: Path) -> tuple[Path, object]:
    """A página de uma lição como o aluno a grava: lab/<script> --html PASTA com o GPT-2 de
    teste (modelo=None: uma lição que não usa o GPT-2). Devolve (o arquivo da página, a
    execução), já conferida: código 0, nenhum experimento rodado (só a página) e nenhum
    traceback."""
    from conftest import rodar_script

    env = {"LAB_MODELO": str(modelo)} if modelo is not None else None
    r = rodar_script(script, "--html", str(pasta), env=env)
    assert r.returncode == 0, r.saida + r.erros
    assert "Experimento" not in r.saida and "Traceback" not in r.saida + r.erros
    return pasta / script.replace(".py", ".html"), r
