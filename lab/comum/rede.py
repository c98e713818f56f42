"""O caminho até o hub do Hugging Face: há rede? o certificado que chega é aceito?

Os downloads do lab confiam nos certificados do sistema operacional (truststore, como o pip):
numa rede de escola ou empresa que inspeciona o HTTPS, o certificado da rede que a TI
instalou no Windows vale também para o GPT-2. Quando nem ele resolve, a falha vira uma
mensagem em português (como_resolver_certificado), não um traceback em inglês.
"""
from __future__ import annotations

import os

__all__ = ["hub_offline", "rede_disponivel", "confiar_nos_certificados_do_sistema",
           "certificado_recusado", "certificado_do_hub_recusado", "como_resolver_certificado"]


def _com_proxy() -> bool:
    return any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY",
                                           "all_proxy"))


def hub_offline() -> bool:
    """HF_HUB_OFFLINE ligada: o aluno (ou o CI) pediu para não procurar o hub."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def rede_disponivel() -> bool:
    """Teste rápido (1 s) de que o hub responde; evita esperas longas sem rede."""
    import socket

    if _com_proxy():
        return True  # atrás de um proxy, a conexão direta falharia: deixa o hub tentar
    from urllib.parse import urlsplit

    endereco = urlsplit(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        porta = endereco.port or (80 if endereco.scheme == "http" else 443)
        socket.create_connection((endereco.hostname or "huggingface.co", porta),
                                 timeout=1.5).close()
        return True
    except (OSError, ValueError):  # ValueError: uma porta inválida em HF_ENDPOINT
        return False


def confiar_nos_certificados_do_sistema() -> None:
    """O HTTPS deste processo passa a confiar nos certificados do sistema operacional
    (truststore: o repositório de certificados do Windows, o Keychain do macOS, o do
    Linux), como o pip já faz. Numa rede de escola ou empresa que inspeciona o HTTPS, o
    certificado da rede que a TI instalou no Windows vale também para o download."""
    try:
        import truststore
    except ImportError:  # sem o pacote, fica o que o cliente HTTP já usa
        return
    truststore.inject_into_ssl()  # pode ser chamado de novo: não muda nada


def certificado_recusado(erro: BaseException) -> bool:
    """A falha (ou uma das que a causaram) é um certificado que não se conseguiu validar?"""
    vistos = set()
    while erro is not None and id(erro) not in vistos:
        vistos.add(id(erro))
        texto = f"{type(erro).__name__} {erro}".lower()
        if ("certificate_verify_failed" in texto or "certificate verify failed" in texto
                or "sslcertverificationerror" in texto or "unknownissuer" in texto):
            return True
        erro = erro.__cause__ or erro.__context__
    return False


def como_resolver_certificado(nome: str) -> str:
    return (f"a conexão segura com o Hugging Face foi recusada ao baixar '{nome}': o "
            "certificado que chegou não é de uma autoridade em que este computador confia "
            "(CERTIFICATE_VERIFY_FAILED).\n"
            "Isso acontece numa rede de escola ou empresa que inspeciona o HTTPS com um "
            "certificado próprio. O lab já usa os certificados do sistema; falta o desta "
            "rede. Peça à TI que instale o certificado raiz da rede neste computador (no "
            "Windows: Autoridades de Certificação Raiz Confiáveis) ou que libere "
            "huggingface.co e hf.co da inspeção; ou use outra rede. Sem rede nenhuma: copie "
            "o cache do Hugging Face de outro computador num pen drive (README, \"Sala sem "
            "wifi\").")


def certificado_do_hub_recusado() -> bool:
    """Um aperto de mão TLS com o hub antes de baixar, com os certificados do sistema: um
    certificado recusado vira na hora a mensagem em português, em vez de cinco novas
    tentativas do huggingface_hub (uns 23 s de avisos em inglês). Atrás de um proxy, ou com
    outra falha qualquer, não conclui nada (False): o download diz o que houve."""
    import socket
    import ssl
    from urllib.parse import urlsplit

    if _com_proxy():
        return False
    endereco = urlsplit(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    if endereco.scheme != "https" or not endereco.hostname:
        return False
    try:
        with socket.create_connection((endereco.hostname, endereco.port or 443), timeout=5) as s:
            with ssl.create_default_context().wrap_socket(s, server_hostname=endereco.hostname):
                pass
    except ssl.SSLCertVerificationError:
        return True
    except (OSError, ValueError):
        return False
    return False
