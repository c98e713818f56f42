"""Apostila 12: as contas que ela escreve (a memória de um modelo de 175B, os dias de GPU, o
ZeRO) saem das contas que ela descreve, refeitas aqui; as constantes dos experimentos 4 e 5
são as do script; e os números que ela cita da saída (os FLOPs de um passo, os passos até
20 tokens por parâmetro, as épocas) são os que a lição imprime."""
from __future__ import annotations

import re

from conftest import RAIZ, rodar_script
from comum.console import inteiro, num
from comum import importar_licao

L10 = importar_licao("10_treino")
L12 = importar_licao("12_escala")


def apostila():
    return " ".join((RAIZ / "apostilas" / "12_escala.md").read_text(encoding="utf-8").split())


def test_os_numeros_do_custo_e_dos_tokens_que_a_apostila_cita():
    """O passo = 1,062 x 6NBT, os 21.300 passos e as 60 épocas: da saída da lição (os
    experimentos 1 e 2), não de uma conta da apostila."""
    r = rodar_script("12_escala.py", "--so", "1,2", "--sem-figuras")
    assert r.returncode == 0, r.saida[-2000:]
    a = apostila()
    razao = re.search(r"\(contado / 6NBT = (\d,\d+)\)", r.saida).group(1)
    assert f"o passo custa {razao} × 6*NBT*" in a
    sem_matriz = re.search(r"os ganhos \(([\d.]+) parâmetros\)", r.saida).group(1)
    assert f"os vieses e os ganhos (*gains*) ({sem_matriz} parâmetros)" in a
    produtos = re.search(r"Só os (\d+) produtos de matrizes do passo", r.saida).group(1)
    assert f"roda, sozinhos, os mesmos {produtos} produtos de matrizes de um passo" in a
    passos = re.search(r"Chegar a 20 pediria [\d.]+ tokens: ([\d.]+) passos", r.saida).group(1)
    epocas = re.search(r"São (\d+) épocas do texto de treino", " ".join(r.saida.split())).group(1)
    assert f"**3.** {passos} passos e {epocas} épocas do texto de treino" in a
    _, _, _, treino, _ = L10.dados()
    assert (f"com os {round(len(treino) / 1000)} mil caracteres de treino, "
            f"{num(20 * 817_920 / len(treino), 0)} épocas") in a


def test_as_contas_das_secoes_3_e_4_da_apostila():
    """Os números que a apostila escreve nas seções 3 (dividir o treino) e 4 (até a escala
    da internet) saem das contas que ela mesma descreve, refeitas aqui; e os dos experimentos 4 e 5
    (o teto, os passos) são as constantes do script."""
    a = apostila()
    N = 817_920
    assert f"{inteiro(N)} números de 4 bytes, {num(N * 4 / 1e6, 1)} MB por passo" in a
    assert f"{inteiro(N)} × 16 = {num(N * 16 / 1e6, 1)} MB" in a
    psi = 175e9
    assert num(psi * 16 / 1e12, 1) == "2,8" and "= 2{,}8 \\text{ TB}" in a
    assert f"1/{round(psi * 16 / 80e9)} disso" in a
    assert f"{num(6 * psi * 300e9 / 1e23, 2)}·10²³ FLOPs" in a
    dias = {k: k * psi * 300e9 / (1024 * 140e12) / 86400 for k in (6, 8)}
    assert f"leva {round(dias[6])} dias em 1.024 GPUs" in a and f"chega a {round(dias[8])} dias" in a
    zero = [16 * 7.5, 4 * 7.5 + 12 * 7.5 / 64, 2 * 7.5 + 14 * 7.5 / 64, 16 * 7.5 / 64]
    assert (f"{num(zero[0], 0)} GB por GPU sem o ZeRO, {num(zero[1], 1)} GB, {num(zero[2], 1)} GB "
            f"e {num(zero[3], 1)} GB nos três estágios") in a
    assert f"2,8 TB / 64 = {num(psi * 16 / 64 / 1e9, 2)} GB por GPU" in a
    assert L12.TETO_PESOS == 1e-4 and "com um teto, 10⁻⁴" in a and "(`< 1e-4`)" in a
    assert f"treina três vezes, {L12.PASSOS_DIVIDIDOS} passos cada" in a
    assert L12.PROCESSOS == 2 and "a frase de baixo diz, calculada deles" in a
