"""Um hub do Hugging Face de mentira, só no loopback, em HTTPS com uma autoridade de teste.

Para conferir o download numa rede que inspeciona o HTTPS (README, "Problemas comuns"): o
servidor responde como o hub às perguntas que o huggingface_hub faz para baixar um arquivo
(`/{repo}/resolve/{revisão}/{arquivo}`, com os cabeçalhos X-Repo-Commit e ETag) e serve os
arquivos de uma pasta gravada com save_pretrained. O certificado dele é assinado por uma
autoridade criada na hora (openssl), que nenhum computador conhece: só vale onde o teste a
puser no repositório de certificados do sistema (`no_repositorio_do_sistema`).
"""
from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import ssl
import subprocess
import threading
from pathlib import Path

REPOSITORIO_DO_SISTEMA = Path("/etc/ssl/certs/ca-certificates.crt")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def autoridade_de_teste(pasta: Path) -> dict:
    """Cria (com o openssl) uma autoridade de teste e o certificado do servidor 127.0.0.1
    assinado por ela. Devolve os caminhos: ca, cert, chave."""
    pasta.mkdir(parents=True, exist_ok=True)
    ca, ca_chave = pasta / "ca.pem", pasta / "ca.key"
    cert, chave, pedido = pasta / "servidor.pem", pasta / "servidor.key", pasta / "servidor.csr"
    extensoes = pasta / "ext.cnf"
    extensoes.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                         "basicConstraints=critical,CA:FALSE\n"
                         "keyUsage=critical,digitalSignature,keyEncipherment\n"
                         "extendedKeyUsage=serverAuth\n"
                         "subjectKeyIdentifier=hash\n"
                         "authorityKeyIdentifier=keyid,issuer\n")
    comandos = [
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_chave,
         "-out", ca, "-days", "2", "-subj", "/CN=Autoridade de teste do lab",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", chave, "-out", pedido,
         "-subj", "/CN=127.0.0.1"],
        ["openssl", "x509", "-req", "-in", pedido, "-CA", ca, "-CAkey", ca_chave,
         "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", extensoes],
    ]
    for comando in comandos:
        subprocess.run([str(c) for c in comando], check=True, capture_output=True)
    return {"ca": ca, "cert": cert, "chave": chave}


def no_repositorio_do_sistema(comando: list[str], ca: Path, pasta: Path) -> list[str]:
    """O comando rodado num namespace de montagem (unshare -m) em que o repositório de
    certificados do sistema tem também a autoridade de teste: o resto da máquina não vê
    nada. Pede root (o CI e as sessões rodam como root); sem ele, quem chama pula."""
    pacote = pasta / "repositorio-com-a-autoridade.crt"
    pacote.write_bytes(REPOSITORIO_DO_SISTEMA.read_bytes() + b"\n" + ca.read_bytes())
    script = ('mount --bind "$1" "$2" && shift 2 && exec "$@"')
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
            str(pacote), str(REPOSITORIO_DO_SISTEMA), *comando]


def namespace_disponivel() -> str | None:
    """None se dá para montar o repositório só para um processo; senão, o motivo."""
    if not shutil.which("unshare") or not shutil.which("openssl"):
        return "sem os comandos unshare e openssl"
    if not REPOSITORIO_DO_SISTEMA.is_file():
        return f"sem {REPOSITORIO_DO_SISTEMA}"
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        f"mount --bind {REPOSITORIO_DO_SISTEMA} {REPOSITORIO_DO_SISTEMA}"],
                       capture_output=True)
    if r.returncode != 0:
        return "unshare/mount recusados (precisa de root): " + r.stderr.decode()[:200]
    return None


class HubLocal:
    """O hub de mentira: `with HubLocal(pasta, "openai-community/gpt2", certs) as url:`."""

    def __init__(self, pasta: Path, repo: str, certs: dict):
        self.pasta, self.repo, self.certs = Path(pasta), repo, certs
        self.pedidos: list[str] = []

    def _handler(hub):  # noqa: N805 - a classe do handler vê o hub pelo fechamento
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _arquivo(self):
                prefixo = f"/{hub.repo}/resolve/"
                if not self.path.startswith(prefixo):
                    return None
                _revisao, _, nome = self.path[len(prefixo):].split("?")[0].partition("/")
                caminho = hub.pasta / nome
                return caminho if nome and caminho.is_file() else False

            def _enviar(self, codigo: int, dados: bytes, tipo: str, com_corpo: bool,
                        erro: str | None = None):
                self.send_response(codigo)
                if erro:
                    self.send_header("X-Error-Code", erro)
                    self.send_header("X-Error-Message", "nao existe no hub de teste")
                self.send_header("Content-Length", str(len(dados)))
                self.send_header("Content-Type", tipo)
                self.end_headers()
                if com_corpo:
                    self.wfile.write(dados)

            def _api(self, com_corpo: bool) -> bool:
                """As perguntas da API: as informações do repositório (o commit e a lista
                de arquivos) e a listagem de uma pasta (nenhuma pasta existe aqui)."""
                base = f"/api/models/{hub.repo}"
                caminho = self.path.split("?")[0]
                if caminho == base or caminho.startswith(base + "/revision/"):
                    info = {"id": hub.repo, "modelId": hub.repo, "sha": COMMIT,
                            "private": False, "gated": False, "disabled": False,
                            "siblings": [{"rfilename": a.name}
                                         for a in sorted(hub.pasta.iterdir()) if a.is_file()]}
                    self._enviar(200, json.dumps(info).encode(), "application/json", com_corpo)
                    return True
                if caminho.startswith(base + "/tree/"):
                    self._enviar(404, b"", "application/json", com_corpo, "EntryNotFound")
                    return True
                return False

            def _responder(self, com_corpo: bool):
                hub.pedidos.append(f"{self.command} {self.path}")
                if self.path.startswith("/api/"):
                    if not self._api(com_corpo):
                        self._enviar(404, b"", "application/json", com_corpo)
                    return
                caminho = self._arquivo()
                if not caminho:
                    self._enviar(404, b"", "text/plain", com_corpo,
                                 "EntryNotFound" if caminho is False else "RepoNotFound")
                    return
                dados = caminho.read_bytes()
                etag = hashlib.sha256(dados).hexdigest()
                self.send_response(200)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{etag}"')
                self.send_header("X-Linked-Etag", f'"{etag}"')
                self.send_header("Content-Length", str(len(dados)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                if com_corpo:
                    self.wfile.write(dados)

            def do_HEAD(self):  # noqa: N802
                self._responder(com_corpo=False)

            def do_GET(self):  # noqa: N802
                self._responder(com_corpo=True)

        return Handler

    def __enter__(self) -> str:
        self.servidor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        contexto = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        contexto.load_cert_chain(self.certs["cert"], self.certs["chave"])
        self.servidor.socket = contexto.wrap_socket(self.servidor.socket, server_side=True)
        self.fio = threading.Thread(target=self.servidor.serve_forever, daemon=True)
        self.fio.start()
        return f"https://127.0.0.1:{self.servidor.server_address[1]}"

    def __exit__(self, *_):
        self.servidor.shutdown()
        self.servidor.server_close()
