"""lab/00_check.py diz a verdade sobre a máquina."""
from __future__ import annotations

from conftest import rodar_script


def test_pronto_com_modelo(gpt2_pequeno):
    r = rodar_script("00_check.py", env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida[-1500:] + r.erros[-1500:]
    assert "Traceback" not in r.saida + r.erros
    assert "Pronto: este computador está preparado" in r.saida
    assert "torch " in r.saida and "2.13.0" in r.saida
    # a passada de teste roda de verdade: forma dos logits (1, T, vocabulário do modelo)
    assert ", 400)" in r.saida


def test_sem_modelo_lista_o_que_corrigir(tmp_path):
    r = rodar_script("00_check.py", env={"LAB_MODELO": str(tmp_path / "nada")})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert "Ainda não está pronto. O que corrigir:" in r.saida
    assert "não há pasta" in r.saida


def test_gpt2_do_hub_sem_rede_nem_cache(tmp_path):
    r = rodar_script("00_check.py", "--so", "3", "--modelo", "gpt2",
                     env={"HF_HUB_CACHE": str(tmp_path), "HF_HOME": str(tmp_path)})
    assert r.returncode == 1
    assert "ainda não está no cache" in r.saida
    assert "rode lab/00_check.py" in r.saida.replace("\n", " ")


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
