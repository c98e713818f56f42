"""--pausa em todas as lições, num terminal de verdade de 80 x 30 (tmux).

A lição 05 tem o roteiro detalhado em test_05_pausa.py (e a 11, em test_11_pausa.py). Aqui,
para cada outra lição, apertamos Enter em cada pausa e conferimos o que importa no projetor:
- a linha de baixo diz o que vem ("[Enter] 3/6 · título" ou "[Enter] 3/6, a seguir: ...")
  e cabe numa linha;
- nada rolou para fora: a tela ainda começa pelo cabeçalho da parte (o título da lição,
  o do experimento, ou o do experimento com "(continuação)");
- há uma pausa antes de cada experimento e antes do resumo, e a lição termina com 0.

O GPT-2 do teste tem 12 camadas, como o gpt2 de verdade: tabelas por camada ocupam as
linhas que ocupariam na aula.
"""
from __future__ import annotations

import re
import shlex
import sys

import pytest

from conftest import RAIZ
from terminal import COLUNAS, Tela, sem_tmux

# lição -> argumentos (além de --pausa --sem-figuras)
LICOES = {
    "01_tokens.py": "",
    "02_embeddings.py": "",
    "03_attention.py": "",
    "04_multihead.py": "",
    "06_gpt2.py": "",
    "07_generation.py": "",
    "08_since_2017.py": "",
    "09_scaling.py": "",
}
AVISO = re.compile(r"\[Enter\] (\d+/\d+ · \S|\d+/\d+, a seguir: \S|Resumo)")
CABECALHO = re.compile(r"(Lição \d\d · |Experimento \d+/\d+ · )")


def _experimentos(script: str) -> int:
    """Quantos experimentos a lição tem, pelo título do primeiro na saída."""
    return int(re.search(r"Experimento 1/(\d+)", _conteudo[script]).group(1))


_conteudo: dict[str, str] = {}


@sem_tmux
@pytest.mark.parametrize("script", list(LICOES))
def test_pausas_cabem_na_tela(script, gpt2_12_camadas, tmp_path):
    comando = (f"LAB_MODELO={shlex.quote(str(gpt2_12_camadas))} "
               f"{shlex.quote(sys.executable)} lab/{script} --pausa --sem-figuras "
               f"{LICOES[script]}")
    tela = Tela(tmp_path, f"cd {shlex.quote(str(RAIZ))} && {comando}")
    avisos = []
    try:
        for vistas, linhas, aviso in tela.pausas():
            quadro = "\n".join(linhas)
            assert AVISO.match(aviso), f"{script}, pausa {vistas}: a linha de baixo não " \
                f"diz o que vem\n{quadro}"
            assert len(aviso) < COLUNAS, f"{script}, pausa {vistas}: aviso longo\n{quadro}"
            assert CABECALHO.match(linhas[0]), (
                f"{script}, pausa {vistas}: o começo da parte rolou para fora da tela de "
                f"30 linhas (falta uma licao.pausa antes da tabela ou figura)\n{quadro}")
            avisos.append(aviso)
        linhas = tela.linhas()
        quadro = "\n".join(linhas)
        assert "fim: 0" in linhas, quadro
        _conteudo[script] = tela.registro.read_bytes().decode("utf-8", "replace")
        n = _experimentos(script)
        entre = [a for a in avisos if re.match(r"\[Enter\] (\d+/\d+ · |Resumo)", a)]
        assert len(entre) == n, f"{script}: {len(entre)} pausas entre experimentos, " \
            f"esperava {n}: {avisos}"
    finally:
        tela.fechar()
