"""Apostila 13: o que ela afirma, contra o que a lição imprime e as contas da lição.

Os números que ela cita (o cache por token, a conta de 162.417.408), as regras e tamanhos que
ela descreve nos experimentos 4 e 6 e a seção que o fim da lição aponta. Um teste vermelho
aqui é o texto da apostila ou a saída que ele descreve; o código da lição, contra os oráculos
(o transformers, a conta fechada), está em test_13_tucano."""
from __future__ import annotations

import re

import pytest
import torch

from conftest import RAIZ, modelo_compartilhado, rodar_script
from modelos_de_teste import construir_llama
from comum import licao

L13 = licao.importar_licao("13_tucano")
L08 = licao.importar_licao("08_since_2017")
APOSTILA = (RAIZ / "apostilas" / "13_tucano.md").read_text(encoding="utf-8")
CARTAO = 162_417_408


@pytest.fixture(scope="module")
def llama_tucano():
    """O Llama de teste como o Tucano (saída própria, MHA): a mesma pasta da sessão que
    test_13_tucano usa."""
    return modelo_compartilhado("llama_tucano", lambda p: construir_llama(p, "tucano"))


def rodar(pasta, gpt2, *args):
    return rodar_script("13_tucano.py", "--modelo", str(pasta), "--gpt2", str(gpt2),
                        "--sem-figuras", *args)


def test_a_apostila_cita_as_contas_que_o_script_faz(llama_tucano, gpt2_pequeno):
    """Os números que a apostila cita do experimento 4 e das contas: saem da tela e das
    funções da lição."""
    por_token = L13.bytes_do_cache_por_token
    assert por_token(12, 12, 64) == 73_728 and por_token(32, 8, 128, 2) == 131_072
    assert por_token(30, 3, 64) == 46_080                       # a resposta 1 (SmolLM2)
    assert "**73.728 bytes**" in APOSTILA and "**131.072 bytes**" in APOSTILA
    assert "46.080 bytes" in APOSTILA
    with torch.device("meta"):
        um = sum(p.numel() for p in L08.BlocoConfiguravel(768, 12, 12, 3072).parameters())
    assert um == 9_438_720 and 12 * um + 2 * 24_576_000 + 768 == CARTAO
    assert "12 × 9.438.720 + 2 × 24.576.000 + 768 =\n**162.417.408**" in APOSTILA
    r = rodar(llama_tucano, gpt2_pequeno, "--so", "4")
    linhas = [l.split() for l in r.saida.splitlines() if l.startswith("  GPT-2 (124M)")
              or l.startswith("  Llama 3 8B")]
    assert [l[-1] for l in linhas] == ["73.728", "131.072"]


def test_a_apostila_descreve_a_saida_como_ela_e(llama_tucano, gpt2_pequeno):
    """As regras e tamanhos que a apostila cita dos experimentos 4 e 6 são os da tela."""
    r = rodar(llama_tucano, gpt2_pequeno, "--so", "4,6")
    saida = " ".join(r.saida.split())
    texto = " ".join(APOSTILA.split())
    assert "(temperatura 0,8, top-k 40, top-p 0,9, semente 0)" in saida
    assert "temperatura 0,8, top-k 40, top-p 0,9, semente (*seed*) 0" in texto
    assert "A tarefa da lição 11: 8 sequências de 48 tokens" in saida
    assert "A tarefa da lição 11 com 8 sequências de 48 tokens" in texto
    assert "Gulosa, 32 tokens novos" in saida and "32 tokens gulosos" in texto
    assert "K e V de forma (1, 4, " in saida and "(B, cabeças de K/V, tokens, d_h)" in saida
    # as cabeças como nas lições 04 e 11: bloco.cabeça, o bloco contado do 0
    assert "(bloco.cabeça, como na lição 11):" in saida and "contando do 0" in texto
    blocos = {int(b) for b in re.findall(r"\b(\d+)\.\d+ \d,\d\d", saida.split("as maiores")[1])}
    assert 0 in blocos and max(blocos) < 3                    # o Llama de teste tem 3 blocos


def test_a_proxima_licao_e_a_14_opcional():
    """O fim da lição (test_13_tucano confere a tela) manda o aluno para a 14, a corrida,
    opcional como a 12; o fim do curso mora na apostila dela (test_14_apostila)."""
    proxima = APOSTILA.split("\n## Próxima lição\n", 1)[1]
    assert "lab/14_corrida.py" in proxima and "(14_corrida.md)" in proxima
    assert "opcional" in proxima and f"## {licao.FIM_DO_CURSO}" not in APOSTILA
