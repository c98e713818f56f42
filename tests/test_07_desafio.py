"""--com-o-seu 07: a lição 07 roda os experimentos dela com as peças que o aluno escreveu nos
desafios dela (o passo com o cache e o top-p).

Os testes genéricos (test_desafios.py) conferem o catálogo; aqui, que a troca acontece na
lição rodada como script: com as peças certas, os cortes do brinquedo (experimento 3), os
logits com cache (5) e as chaves guardadas (7) conferem; com a posição dos tokens novos
começando do zero e o top-p que tira o token que cruza p, os três mostram o erro.
"""
from __future__ import annotations

from conftest import rodar_script
from test_05_desafio import arquivo_do_aluno


def _licao_07(modelo, pasta):
    return rodar_script("07_generation.py", "--so", "3,5,7", "--sem-figuras", "--com-o-seu",
                        "07", env={"LAB_MODELO": str(modelo), "LAB_DESAFIOS": str(pasta)})


def test_com_as_pecas_certas_a_licao_confere(gpt2_pequeno, tmp_path):
    for chave in ("07_filtrar_top_p", "07_passo"):
        arquivo_do_aluno(tmp_path, chave)
    r = _licao_07(gpt2_pequeno, tmp_path)
    corrido = " ".join(r.saida.split())
    assert r.returncode == 0, r.saida
    assert corrido.count("no lugar do da lição 07: confere com a referência.") == 2
    assert "top-p 0,50: ficam 1" in r.saida and "top-p 0,90: ficam 4" in r.saida
    assert "-> os mesmos" in r.saida and "Causal: o cache é a conta certa." in r.saida


def test_com_as_pecas_erradas_os_experimentos_mostram(gpt2_pequeno, tmp_path):
    arquivo_do_aluno(tmp_path, "07_filtrar_top_p", {"corte": "um_a_menos"})
    arquivo_do_aluno(tmp_path, "07_passo", {"posicao": "zero"})
    r = _licao_07(gpt2_pequeno, tmp_path)
    corrido = " ".join(r.saida.split())
    assert r.returncode == 1, r.saida
    assert corrido.count("no lugar do da lição 07: ainda NÃO confere") == 2
    assert "top-p 0,50: ficam 0" in r.saida and "top-p 0,90: ficam 3" in r.saida
    assert "-> NÃO conferem" in r.saida and "Causal: o cache NÃO confere." in r.saida
