"""O caminho até o hub (lab/comum/rede.py): os certificados do sistema (truststore) e o
certificado recusado de uma rede que inspeciona o HTTPS, explicado em português."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from comum import rede
from conftest import RAIZ, ambiente_de_aluno


def test_certificado_recusado_acha_a_causa_no_meio_da_cadeia():
    import ssl

    try:
        try:
            raise ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
                                                  "verify failed: unable to get local issuer")
        except ssl.SSLError as erro:
            raise OSError("We couldn't connect to 'https://huggingface.co'") from erro
    except OSError as erro:
        assert rede.certificado_recusado(erro)
    assert not rede.certificado_recusado(OSError("Network is unreachable"))


def test_confiar_nos_certificados_do_sistema_e_o_truststore():
    """O SSLContext do processo passa a ser o do truststore (os certificados do sistema)."""
    codigo = ("import sys, ssl; sys.path.insert(0, 'lab'); from comum import rede; "
              "rede.confiar_nos_certificados_do_sistema(); "
              "print(ssl.SSLContext.__module__, ssl.create_default_context().__class__.__module__)")
    r = subprocess.run([sys.executable, "-c", codigo], capture_output=True, text=True,
                       cwd=RAIZ, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["truststore._api", "truststore._api"], r.stdout


def test_download_com_o_certificado_da_rede_no_sistema_e_sem_ele(gpt2_pequeno, tmp_path):
    """Um hub de mentira em HTTPS no loopback (tests/apoio/hub_https.py), com um certificado
    de uma autoridade de teste, como o de uma rede que inspeciona o HTTPS. Com a autoridade
    no repositório de certificados do sistema (só para este processo: um namespace de
    montagem), lab/00_check.py baixa o GPT-2 e fica pronto; sem ela, diz em português que o
    certificado foi recusado e o que fazer, sem traceback e sem ficar tentando de novo."""
    import hub_https

    motivo = hub_https.namespace_disponivel()
    if motivo:
        pytest.skip(motivo)
    certs = hub_https.autoridade_de_teste(tmp_path / "certs")
    hub = hub_https.HubLocal(gpt2_pequeno, "openai-community/gpt2", certs)

    def rodar(com_autoridade: bool, url: str):
        cache = tmp_path / f"cache-{com_autoridade}"
        ambiente = ambiente_de_aluno({"HF_ENDPOINT": url, "HF_HUB_CACHE": str(cache),
                                      "HF_HOME": str(cache)})
        for variavel in ("HF_HUB_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY",
                         "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
            ambiente.pop(variavel, None)
        comando = [sys.executable, str(RAIZ / "lab" / "00_check.py"), "--so", "3,4",
                   "--modelo", "gpt2"]
        if com_autoridade:
            comando = hub_https.no_repositorio_do_sistema(comando, certs["ca"], tmp_path)
        r = subprocess.run(comando, env=ambiente, capture_output=True, timeout=240)
        return r.returncode, r.stdout.decode("cp1252"), r.stderr.decode("cp1252", "replace")

    with hub as url:
        codigo, saida, erros = rodar(False, url)
        pedidos_sem = list(hub.pedidos)
        assert codigo == 1, saida + erros
        assert "Traceback" not in saida + erros and "Retry" not in erros
        texto = " ".join(saida.split())
        assert "a conexão segura com o Hugging Face foi recusada ao baixar 'gpt2'" in texto
        assert "CERTIFICATE_VERIFY_FAILED" in texto
        assert "Peça à TI que instale o certificado raiz da rede" in texto
        assert "Sala sem wifi" in texto
        assert pedidos_sem == []  # recusado no aperto de mão: nada chegou a ser pedido

        codigo, saida, erros = rodar(True, url)
        assert codigo == 0, saida + erros
        assert "Baixando 'gpt2' do Hugging Face" in saida
        assert "Pronto: este computador está preparado para o lab." in saida
        assert any(p.endswith("/model.safetensors") and p.startswith("GET")
                   for p in hub.pedidos), hub.pedidos
    assert os.path.exists(hub_https.REPOSITORIO_DO_SISTEMA)
    assert certs["ca"].read_bytes() not in hub_https.REPOSITORIO_DO_SISTEMA.read_bytes()
