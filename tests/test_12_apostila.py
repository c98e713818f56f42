"""Apostila 12: as contas que ela escreve (a memória de um modelo de 175B, os dias de GPU, o
ZeRO) saem das contas que ela descreve, refeitas aqui; as constantes dos experimentos 4 e 5
são as do script; os números que ela cita da saída (os FLOPs de um passo, os passos até
20 tokens por parâmetro, as épocas) são os que a lição imprime; o que ela diz do torchrun
(a tela da outra máquina, a versão do PyTorch) é o que a lição e o requirements.txt têm; e
a resposta do exercício 1, o treino de 3.000 passos que ele pede (LAB_LENTO=1)."""
from __future__ import annotations

import os
import re

import pytest

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


def test_o_que_a_apostila_diz_do_torchrun():
    """A linha que a tela da outra máquina mostra e a do fim são as da lição (comum/
    distribuido.py escreve a do fim); o PyTorch cujo Windows ela descreve é o que o lab fixa;
    os comandos do PowerShell desfazem as variáveis que põem na janela."""
    a = apostila()
    assert f'"{L12.OUTRA_MAQUINA}"' in a and '"Processo 1 de 2: terminou."' in a
    fixo = re.search(r"^torch==(\d+\.\d+)\.", (RAIZ / "requirements.txt").read_text("utf-8"),
                     re.M).group(1)
    assert f"(no PyTorch {fixo}, o que o laboratório instala)" in a
    assert "<https://github.com/pytorch/pytorch/issues/148283>" in a
    texto = (RAIZ / "apostilas" / "12_escala.md").read_text(encoding="utf-8")
    blocos = re.findall(r"```powershell\n(.*?)```", texto, re.S)
    com_env = [b for b in blocos if "$env:OMP_NUM_THREADS" in b]
    assert len(com_env) == 2
    assert all(b.rstrip().endswith("Remove-Item Env:OMP_NUM_THREADS, Env:USE_LIBUV")
               for b in com_env)


@pytest.mark.skipif(not os.environ.get("LAB_LENTO"),
                    reason="um treino de 3.000 passos (uns minutos): rode com LAB_LENTO=1")
def test_a_resposta_do_exercicio_1(tmp_path):
    """O exercício 1 manda treinar o modelo de 2 blocos e d = 64 na lição 10 por 3.000
    passos, num checkpoint à parte; a resposta cita a perda de validação final dele (1,99;
    a mesma nos kernels genéricos, AVX2, MKL compatível, 1 e 2 threads, conferido à mão),
    abaixo da faixa do treino padrão que a apostila 10 cita."""
    a = apostila()
    comando = ("--so 3 --camadas 2 --largura 64 --cabecas 2 --passos 3000 --checkpoint "
               "checkpoints/pequeno.pt")
    assert f".venv/bin/python lab/10_treino.py {comando}" in a
    assert comando.replace("/", "\\") in a
    r = rodar_script("10_treino.py", *comando.split()[:-1], str(tmp_path / "pequeno.pt"),
                     "--sem-figuras", "--html", str(tmp_path / "pag"), timeout=1800)
    assert r.returncode == 0, r.saida[-2000:]
    final = re.findall(r"^ +3\.000 +\S+ +\S+ +(\d,\d\d) ", r.saida, re.M)[-1]
    faixa = re.search(r"termina entre (\d,\d\d) e (\d,\d\d) na validação", " ".join(
        (RAIZ / "apostilas" / "10_treino.md").read_text(encoding="utf-8").split()))
    assert f"termina em {final} na validação, contra {faixa[1]} a {faixa[2]} do treino padrão" in a
    assert float(final.replace(",", ".")) < float(faixa[1].replace(",", "."))
