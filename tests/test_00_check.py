"""lab/00_check.py diz a verdade sobre a máquina."""
from __future__ import annotations

import pytest

from conftest import rodar_script


def test_pronto_com_modelo(gpt2_pequeno):
    r = rodar_script("00_check.py", env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida[-1500:] + r.erros[-1500:]
    assert "Traceback" not in r.saida + r.erros
    assert "Pronto: este computador está preparado" in r.saida
    assert "torch " in r.saida and "2.13.0" in r.saida
    # a passada de teste roda de verdade: forma dos logits (1, T, vocabulário do modelo)
    assert ", 400)" in r.saida
    # o próximo passo vem depois do "Pronto", uma vez só
    assert r.saida.rstrip().endswith(
        "Pronto: este computador está preparado para o lab.\n"
        "Próximo passo: lab/01_tokens.py (leia apostilas/01_tokens.md)."), r.saida[-500:]
    assert r.saida.count("Próximo passo") == 1


def test_sem_modelo_lista_o_que_corrigir(tmp_path):
    r = rodar_script("00_check.py", env={"LAB_MODELO": str(tmp_path / "nada")})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert "Ainda não está pronto. O que corrigir:" in r.saida
    assert "não há pasta" in r.saida
    assert "Próximo passo" not in r.saida          # nem acima do "Ainda não está pronto"


def test_gpt2_do_hub_sem_rede_nem_cache(tmp_path):
    r = rodar_script("00_check.py", "--so", "3", "--modelo", "gpt2",
                     env={"HF_HUB_CACHE": str(tmp_path), "HF_HOME": str(tmp_path)})
    assert r.returncode == 1
    assert "ainda não está no cache" in r.saida
    assert "rode lab/00_check.py" in r.saida.replace("\n", " ")
    assert "Nenhuma verificação rodou." in r.saida and "Próximo passo" not in r.saida


def test_avisa_console_legado(gpt2_pequeno):
    r = rodar_script("00_check.py", "--so", "2")
    assert r.returncode == 0
    assert "cp1252" in r.saida and "chcp 65001" in r.saida


def test_o_que_corrigir_traz_o_motivo_inteiro(tmp_path):
    """A segunda linha do motivo é a que diz o que fazer: não pode sumir."""
    r = rodar_script("00_check.py", "--so", "3", "--modelo", "gpt2-xl",
                     env={"HF_HUB_CACHE": str(tmp_path), "HF_HOME": str(tmp_path)})
    assert r.returncode == 1
    corrigir = r.saida.split("O que corrigir:")[1]
    texto = " ".join(corrigir.split())
    assert ("lab/00_check.py --modelo gpt2-xl" in texto   # sem rede: o comando que baixa
            or "Feche outros programas" in texto)          # ou: não cabe na memória


def test_tucano_sem_rede_diz_como_baixar(tmp_path):
    r = rodar_script("00_check.py", "--so", "5", "--tucano",
                     env={"HF_HUB_CACHE": str(tmp_path), "HF_HOME": str(tmp_path)})
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    texto = " ".join(r.saida.split())
    assert "o modelo 'TucanoBR/Tucano-160m' não está no cache deste computador" in texto
    # o conselho vale aqui: baixar com esta verificação, e a pasta é com a lição 13 (o
    # --modelo do 00_check é o do GPT-2)
    assert "HF_HUB_OFFLINE) e rode lab/00_check.py --tucano com internet uma vez" in texto
    assert "Com o modelo salvo numa pasta, é a lição 13 que o lê: rode lab/13_tucano.py " \
        "--modelo PASTA." in texto
    assert "aponte --modelo" not in texto


def test_tucano_baixado_de_um_hub_em_https(tmp_path):
    """--tucano com rede: um hub de mentira em HTTPS no loopback serve um Llama de teste no
    formato do Tucano como TucanoBR/Tucano-160m (a autoridade do certificado no repositório
    do sistema, só para este processo). A verificação diz o disco que ele pede, baixa,
    carrega pelo caminho da lição 13 e fica pronta; a lição 13 o acha depois no cache."""
    import subprocess
    import sys

    import hub_https
    from conftest import RAIZ, ambiente_de_aluno, modelo_compartilhado
    from modelos_de_teste import construir_llama

    motivo = hub_https.namespace_disponivel()
    if motivo:
        pytest.skip(motivo)
    llama = modelo_compartilhado("llama_tucano", lambda p: construir_llama(p, "tucano"))
    certs = hub_https.autoridade_de_teste(tmp_path / "certs")
    cache = tmp_path / "cache"
    with hub_https.HubLocal(llama, "TucanoBR/Tucano-160m", certs) as url:
        ambiente = ambiente_de_aluno({"HF_ENDPOINT": url, "HF_HUB_CACHE": str(cache),
                                      "HF_HOME": str(cache)})
        for variavel in ("HF_HUB_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY",
                         "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"):
            ambiente.pop(variavel, None)
        comando = hub_https.no_repositorio_do_sistema(
            [sys.executable, str(RAIZ / "lab" / "00_check.py"), "--so", "5", "--tucano"],
            certs["ca"], tmp_path)
        r = subprocess.run(comando, env=ambiente, capture_output=True, timeout=240)
    saida = r.stdout.decode("cp1252", "replace")
    assert r.returncode == 0, saida + r.stderr.decode("cp1252", "replace")[-2000:]
    texto = " ".join(saida.split())
    pesos = (llama / "model.safetensors").stat().st_size
    from comum.console import tamanho

    assert f"TucanoBR/Tucano-160m: {tamanho(pesos)} para baixar;" in texto
    assert "Baixando 'TucanoBR/Tucano-160m' do Hugging Face" in texto
    assert "pronto para a lição 13" in texto
    assert "Pronto: este computador está preparado para o lab." in texto
    r = rodar_script("00_check.py", "--so", "5",
                     env={"HF_HUB_CACHE": str(cache), "HF_HOME": str(cache)}, guardar=False)
    assert "TucanoBR/Tucano-160m: já está no cache." in " ".join(r.saida.split())
