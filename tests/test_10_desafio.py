"""O desafio da lição 10 numa lição seguinte (--com-o-seu 10): o passo de treino do aluno
treina o modelo da lição 11 no lugar do da lição 10. O arquivo do aluno, escrito à mão (sem
o catálogo dos desafios), anota num arquivo ao lado dele cada passo que dá num modelo em
float32 (as sondas são em float64): a lição 11 dá os 50 passos do treino com ele."""
from __future__ import annotations

from conftest import rodar_script

ALUNO = """import torch
import torch.nn.functional as F


def passo_de_treino(modelo, otimizador, x, y, marcar=lambda: None):
    logits = modelo(x)
    p = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    marcar()
    modelo.zero_grad()
    p.backward()
    marcar()
    torch.nn.utils.clip_grad_norm_(modelo.parameters(), 1.0)
    otimizador.step()
    if next(modelo.parameters()).dtype == torch.float32:     # o treino da lição, não as sondas
        with open(__file__.replace("10_passo_de_treino.py", "passos.txt"), "a") as f:
            f.write("passo\\n")
    return p
"""
ARGS = ("--so", "2", "--passos", "50", "--lote", "8", "--largura", "16", "--sem-figuras")


def test_a_licao_11_treina_com_o_passo_do_aluno(tmp_path):
    pasta = tmp_path / "meus_desafios"
    pasta.mkdir()
    (pasta / "10_passo_de_treino.py").write_text(ALUNO, encoding="utf-8")
    r = rodar_script("11_inducao.py", *ARGS, "--html", str(tmp_path), "--com-o-seu", "10",
                     env={"LAB_DESAFIOS": str(pasta)})
    assert r.returncode == 0, r.saida[-3000:] + r.erros[-2000:]
    antes_do_torch = " ".join(r.saida.split("(carregando o PyTorch")[0].split())
    assert "no lugar do da lição 10: confere com a referência." in antes_do_torch
    assert (pasta / "passos.txt").read_text().count("passo") == 50
    assert "(carregando o PyTorch" in r.saida and "1 de 1 experimento rodou." in r.saida
