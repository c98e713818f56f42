"""Lição 11 com --pausa num terminal de verdade de 80 x 30 (tmux): os experimentos 1 e 2, os que
rolavam para fora da tela. A cada pausa, a tela começa pelo cabeçalho da parte (o título do
experimento, ou ele com "(continuação)"), e a pausa depois da tabela do treino ainda mostra o
cabeçalho da tabela e a linha do passo 0 (o resumo vem depois do Enter). Os 600 passos do treino
padrão (as 13 linhas da tabela que a aula vê), com lotes de 8 sequências em vez de 32: a tela tem
as mesmas linhas e larguras, por um quarto da conta."""
from __future__ import annotations

import re
import shlex
import sys

from conftest import RAIZ
from terminal import COLUNAS, Tela, sem_tmux

CABECALHO = re.compile(r"(Lição \d\d · |Experimento \d+/\d+ · )")


@sem_tmux
def test_pausas_da_11_cabem_na_tela(tmp_path):
    comando = (f"{shlex.quote(sys.executable)} lab/11_inducao.py --pausa --sem-figuras "
               f"--so 1,2 --lote 8 --html {shlex.quote(str(tmp_path / 'paginas'))}")
    tela = Tela(tmp_path, f"cd {shlex.quote(str(RAIZ))} && {comando}")
    telas = []
    try:
        for vistas, linhas, aviso in tela.pausas(limite=600):
            quadro = "\n".join(linhas)
            assert aviso.startswith("[Enter]") and len(aviso) < COLUNAS, quadro
            assert CABECALHO.match(linhas[0]), f"pausa {vistas}: o começo rolou\n{quadro}"
            telas.append((aviso, quadro))
        assert "fim: 0" in tela.linhas(), "\n".join(tela.linhas())
    finally:
        tela.fechar()
    avisos = [a for a, _ in telas]
    regua = next(q for a, q in telas if "a seguir: a régua e as duas perdas" in a)
    assert "Experimento 1/6 · A tarefa" in regua and "  p = " in regua    # os três exemplos
    tabela = next(q for a, q in telas if "a seguir: o resumo do treino" in a)
    assert "   passo   acaso  repet." in tabela and re.search(r"^ +0 +4,\d\d", tabela, re.M)
    assert re.search(r"^ +600 +\d,\d\d", tabela, re.M)
    resumo = telas[avisos.index(next(a for a in avisos if "a seguir: o resumo" in a)) + 1][1]
    assert "Veredito:" in resumo and "(continuação)" in resumo.splitlines()[0]
