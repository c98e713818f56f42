"""Apostila 11: o piso da parte ao acaso que ela cita, contra a forma fechada da lição e um Monte
Carlo feito aqui; as faixas e os limiares que ela cita, contra os da lição; as respostas dos
exercícios 1 a 4, contra o que a lição imprime com a semente 0 (LAB_LENTO=1); e a Próxima
lição, contra a que o fim da lição manda rodar.

Ficam em test_11_inducao os testes que leem a apostila junto com um treino (a execução
padrão, as dez sementes, o seu GPT da lição 10): o oráculo deles é o treino, e a frase da
apostila é o que ele confere."""
from __future__ import annotations

import math
import re

import pytest
import torch

from conftest import RAIZ, rodar_script
from comum import importar_licao
from comum.licao import proxima_licao

L11 = importar_licao("11_inducao")
APOSTILA = " ".join((RAIZ / "apostilas" / "11_inducao.md").read_text(encoding="utf-8").split())
METADE = math.log(64) / 2


def test_a_apostila_aponta_para_a_seguinte_e_para_a_13():
    """A Próxima lição aponta para a lição que o fim da 11 manda rodar (proxima_licao, o que
    a lição imprime: test_11_inducao), a 12, e diz que ela é opcional; depois, para a 13,
    que fecha o curso."""
    script, apostila, falta = proxima_licao("11")
    assert (script, apostila, falta) == ("lab/12_escala.py", "apostilas/12_escala.md", None)
    proxima = (RAIZ / "apostilas" / "11_inducao.md").read_text(
        encoding="utf-8").split("\n## Próxima lição\n", 1)[1]
    assert script in proxima and f"({apostila.removeprefix('apostilas/')})" in proxima
    assert "opcional" in proxima.split("(13_tucano.md)")[0]
    assert proxima.index("(12_escala.md)") < proxima.index("(13_tucano.md)")
    assert "lab/13_tucano.py" in proxima and "fecha o curso" in proxima


# ------------------------------------------------------------ o piso, as faixas e os limiares
def test_o_piso_impresso_e_o_da_apostila():
    """O piso das 128 sequências fixas (experimento 1), o da população e o exemplo de p = 8
    da apostila; o da armadilha, 23/24 ln 64; e um Monte Carlo: o melhor palpite aplicado a
    sequências sorteadas da tarefa, posição por posição, perde em média o piso."""
    _, p = L11.avaliacao(0)
    assert L11.num(L11.piso_ao_acaso(p, (8, 24), 64), 2) == "4,05"
    assert L11.num(L11.piso_ao_acaso(range(8, 25), (8, 24), 64), 2) == "4,05"
    assert L11.num(L11.piso_ao_acaso([24], (24, 24), 64), 2) == "3,99" == L11.num(
        23 / 24 * math.log(64), 2)
    assert L11.num(L11.piso_na_posicao(7, 8, (8, 24), 64), 2) == "2,61"
    assert L11.num(L11.piso_ao_acaso([8], (8, 24), 64), 2) == "3,97"
    for trecho in ("**4,05 nats**", "−ln(1/17 + 16/17/64) = 2,61. A média das 8 posições é 3,97.",
                   "média: 4,05 (com todos os períodos igualmente representados, dá o mesmo, "
                   "4,05)", "23/24 × ln 64 = 3,99"):
        assert trecho in APOSTILA, trecho
    ids, p = L11.sequencias(4000, torch.Generator().manual_seed(9), (8, 24), 48, 64)
    perdas = []
    for linha, q in zip(ids.tolist(), p.tolist()):
        for t in range(q):
            w = 1 / (24 - t) if t + 1 >= 8 else 0.0
            perdas.append(-math.log(w * (linha[t + 1] == linha[0]) + (1 - w) / 64))
    assert sum(perdas) / len(perdas) == pytest.approx(L11.piso_ao_acaso(p, (8, 24), 64),
                                                      abs=0.01)


def test_a_apostila_cita_as_faixas_e_os_limiares_dos_testes():
    assert "Nas 8 sementes que formam o circuito clássico, a queda foi de 0,85 a 1,2 nat, entre " \
        "os passos 250 e 350; nas outras duas, de 0,5 a 0,7 nat" in APOSTILA
    assert "fica entre 4,1 e 4,5 o treino todo, acima do piso de 4,05" in APOSTILA
    assert "a parte repetida está abaixo de 0,8 nas 8 do circuito clássico e abaixo de 1,2 " \
        "nas outras duas" in APOSTILA
    assert "ficam no acaso (abaixo de 0,1) em todas as linhas antes do passo em que a " \
        "transição começa" in APOSTILA
    assert f"acima da metade de ln *V* ({L11.num(METADE, 2)})" in APOSTILA
    assert L11.QUEBRA == 0.5 and L11.SUBIU == 0.3 and L11.ANTERIOR == 0.15
    assert "acima de 0,15 e indução acima de 0,3" in APOSTILA
    assert "a parte repetida termina acima de 2,08 (uns 3,2)" in APOSTILA
    assert "cai abaixo de 0,2 em 300 passos, e a nota de indução passa de 0,9" in APOSTILA
    assert "dos passos 250 a 550" in APOSTILA


# ------------------------------------------------------------ as respostas dos exercícios
# As respostas dos exercícios 1 a 4 citam o que o script imprimiu com a semente 0: uns 40 s
# de treino cada, fora da suíte normal (LAB_LENTO=1 as roda).
EXERCICIOS = {
    "--camadas 3": ["transição de fase entre os passos 300 e 350.", "0,98 nats",
                    "0,76 no fim", "1.0 (0,38)"],
    "--periodos 4-12": ["transição de fase entre os passos 200 e 250.", "1,33 nats",
                        re.compile(r"\b0,3\d no fim"), "a maior: 1.1 (0,19)",
                        re.compile(r"como Olsson et al\. \(2022\): 1\.1 0,8\d\."),
                        "o modelo aprendeu a copiar de outro jeito"],
    "--largura 32": ["de 4,16 a 3,49;", "foi de 0,09 nats (menos de 0,5): sem transição de "
                     "fase neste treino.", "a maior: 1.1 (0,03)"],
    "--sem-posicao": ["de 4,17 a 3,31;", "foi de 0,16 nats (menos de 0,5): sem transição de "
                      "fase neste treino.", "nota 0,08 no fim", "a maior: 1.0 (0,10)"],
}


@pytest.mark.skipif(not __import__("os").environ.get("LAB_LENTO"),
                    reason="quatro treinos de ~40 s: rode com LAB_LENTO=1")
@pytest.mark.parametrize("args", list(EXERCICIOS))
def test_as_respostas_dos_exercicios(args):
    r = rodar_script("11_inducao.py", "--so", "2", "--sem-figuras", *args.split(),
                     timeout=900)
    texto = " ".join(r.saida.split())
    for trecho in EXERCICIOS[args]:
        assert (trecho.search(texto) if isinstance(trecho, re.Pattern) else trecho in texto), \
            (args, trecho)
