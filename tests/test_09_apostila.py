"""Apostila 09: as respostas dos exercícios e o fim da apostila, contra as leis recalculadas aqui
(os expoentes publicados e as constantes do reajuste, de tests/apoio/fatos.md) e contra o que
a lição imprime; a resposta do exercício 8 roda numa cópia da lição, como o aluno faria."""
from __future__ import annotations

import re

import pytest

from comum.console import num
from comum.opcoes import criar_parser
from conftest import RAIZ
from copia_do_aluno import copia_da_licao, rodar_copia
from comum import importar_licao

licao = importar_licao("09_scaling")

# Constantes do reajuste (Besiroglu et al. 2024), copiadas de fatos.md, não da lição.
A, B, ALFA, BETA = 482.01, 2085.43, 0.3478, 0.3658


# ------------------------------------------------------------ exercícios e fechamento
APOSTILA = (RAIZ / "apostilas" / "09_scaling.md").read_text(encoding="utf-8")


def respostas() -> str:
    """O texto da seção de respostas, dentro do <details> (fechado para o aluno)."""
    secao = APOSTILA.split("## Respostas dos exercícios", 1)[1].split("\n## ", 1)[0]
    assert secao.lstrip().startswith("<details>\n<summary>Abra depois de tentar</summary>")
    assert secao.rstrip().endswith("</details>")
    return secao


def test_toda_pergunta_tem_resposta_e_as_secoes_do_fim_em_ordem():
    exercicios = APOSTILA.split("## 7. Exercícios", 1)[1].split("\n## ", 1)[0]
    numeros = re.findall(r"^(\d+)\. ", exercicios, re.M)
    assert numeros == [str(k) for k in range(1, len(numeros) + 1)] and len(numeros) >= 8
    assert re.findall(r"^\*\*(\d+)\.\*\*", respostas(), re.M) == numeros
    titulos = re.findall(r"^## (.+)$", APOSTILA, re.M)
    assert titulos[-4:] == ["7. Exercícios", "Notas para o professor",
                            "Respostas dos exercícios", "Próxima lição"]
    assert [t.split(".")[0] for t in titulos[:7]] == [str(k) for k in range(1, 8)]


def test_respostas_3_e_4_sao_as_contas_das_leis():
    """Os fatores citados na resposta 3 e os D/N da eq. 10 na resposta 4, recalculados
    pelas fórmulas (expoentes publicados), não copiados da apostila."""
    texto = respostas()
    nk = [licao.otimo_kaplan(C) for C in (1e22, 1e26)]
    assert nk[1][0] / nk[0][0] == pytest.approx(10 ** (4 * 0.73))
    assert round(nk[1][0] / nk[0][0], -1) == 830 and round(nk[1][1] / nk[0][1]) == 12
    assert "multiplica *N* por cerca de 830" in texto and "e *D* por 12" in texto
    nr = [REAJUSTE_OTIMO(C) for C in (1e22, 1e26)]
    assert round(nr[1][0] / nr[0][0]) == 112 and round(nr[1][1] / nr[0][1]) == 89
    assert "*N* por cerca de 112" in texto and "*D* por 89" in texto
    # eq. 10: D/N = (C/6)^((alfa - beta)/(alfa + beta)) / G^2 cresce 1,25x por década
    e10 = [licao.EQ10.otimo(C) for C in (1e20, 5.76e23, 1e26)]
    razoes = [d / n for n, d in e10]
    assert [round(razoes[0]), round(razoes[1], 1), round(razoes[2])] == [40, 92.6, 153]
    assert "cerca de 40 tokens" in texto and "92,6" in texto and "153 em 10²⁶" in texto
    assert num((0.34 - 0.28) / 0.62, 3) == "0,097" and "+0,097" in texto


def REAJUSTE_OTIMO(C):
    """Ótimo do reajuste com as constantes de fatos.md (não as da lição)."""
    a = BETA / (ALFA + BETA)
    G = (ALFA * A / (BETA * B)) ** (1 / (ALFA + BETA))
    N = G * (C / 6) ** a
    return N, C / (6 * N)


def test_exercicio_8_copia_com_o_orcamento_inteiro(tmp_path):
    """A modificação do exercício 8 numa cópia: a linha de 1e21 que a resposta cita."""
    original = (RAIZ / "lab" / "09_scaling.py").read_text(encoding="utf-8")
    trecho = "(C / 2 / PF_DIA)"
    assert original.count(trecho) == 1
    copia = copia_da_licao(tmp_path, "09_scaling.py", (trecho, "(C / PF_DIA)"))
    r = rodar_copia(copia, "--so", "3", "--sem-figuras", env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    linha = next(x for x in r.stdout.decode("utf-8").splitlines()
                 if x.startswith("       1e21 "))
    N = 1.3e9 * (1e21 / 8.64e19) ** 0.73                 # Kaplan com C inteiro, à mão
    assert linha.split()[1] == licao.grande(N) == "7,77B"
    assert f"```text\n{linha}\n```" in respostas()
    assert N / licao.otimo_kaplan(1e21)[0] == pytest.approx(2 ** 0.73)
    assert "1,66×" in respostas()


def test_resposta_1_seu_modelo_na_regua():
    """A resposta 1: 6ND e 2N à mão para N = 1e9 e D = 100e9 (a linha que a lição imprime
    com --seu-modelo 1e9 100e9: test_09_scaling)."""
    N, D = 1e9, 100e9
    assert (6 * N * D, 2 * N) == (6e20, 2e9)
    assert "6·10²⁰ FLOPs" in respostas() and "2·10⁹" in respostas()


def test_a_apostila_aponta_para_a_10():
    """A apostila termina na "Próxima lição", que aponta para a 10 (o próximo passo que a
    lição imprime: test_09_scaling) e diz que as contas desta lição num treino de verdade
    (os FLOPs de um passo, a fronteira com --escala) são da 12, opcional."""
    proxima = APOSTILA.split("\n## Próxima lição\n", 1)[1]
    assert "lab/10_treino.py" in proxima and "(10_treino.md)" in proxima
    assert "lab/12_escala.py" in proxima and "(12_escala.md)" in proxima
    assert proxima.index("(12_escala.md)") < proxima.index("`--escala`")
    ajuda = {n: criar_parser("x", "x", L.titulos, L.opcoes).format_help()
             for n, L in ((n, importar_licao(n).LICAO) for n in ("10_treino", "12_escala"))}
    assert "--escala" in ajuda["12_escala"] and "--escala" not in ajuda["10_treino"]
