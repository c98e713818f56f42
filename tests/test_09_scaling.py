"""Lição 09: contagens de FLOPs, a régua, os ótimos ajustados e o ótimo com inferência.

Oráculos independentes: a contagem fechada das multiplicações de matrizes, o
GPT2LMHeadModel do transformers contado pelo mesmo FlopCounterMode, os números
de fatos.md (régua, reajuste de Besiroglu et al., pontos de Sardana et al. com
o reajuste) e buscas em grade feitas aqui com numpy, sem o código da lição. O que a
apostila afirma (as respostas, o fim): test_09_apostila.
"""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from comum.console import cientifico
from conftest import RAIZ, pasta_da_sessao, rodar_script
from copia_do_aluno import copia_da_licao, rodar_copia
from comum import importar_licao

licao = importar_licao("09_scaling")
L06 = importar_licao("06_gpt2")          # o GPT2 que a lição conta


def parametros(modelo) -> int:
    return sum(p.numel() for p in modelo.parameters())   # o peso amarrado conta uma vez

# Constantes do reajuste (Besiroglu et al. 2024), copiadas de fatos.md, não da lição.
E, A, B, ALFA, BETA = 1.8172, 482.01, 2085.43, 0.3478, 0.3658


def perda(N, D):
    return E + A / N ** ALFA + B / D ** BETA


# ------------------------------------------------------------ experimento 1: FLOPs
def flops_fechados(L, d, V, T):
    """Forward por token: 2 x (pesos de matriz) + 4 L T d da atenção (matriz T x T inteira)."""
    return 2 * (L * 12 * d * d + V * d) + 4 * L * T * d


def test_flops_com_pesos_de_verdade_batem_com_a_conta_fechada():
    import torch

    torch.manual_seed(0)
    L, d, h, V, T = 2, 64, 4, 100, 16
    modelo = L06.GPT2(L, d, h, V, posicoes=32)
    assert next(modelo.parameters()).device.type == "cpu"
    ida = licao.flops_por_token(modelo, T, treino=False)
    ida_e_volta = licao.flops_por_token(modelo, T, treino=True)
    assert ida == flops_fechados(L, d, V, T)
    assert ida_e_volta == 3 * ida               # backward = 2 x forward, exatamente
    assert licao.flops_ida_e_volta(modelo, T) == (ida * T, 2 * ida * T)


def test_contar_o_treino_nao_mexe_nos_gradientes():
    """Uma lição que treina (a 10) conta os FLOPs do próprio modelo antes de treinar: a
    contagem não pode deixar gradientes nos pesos (o otimizador os usaria)."""
    import torch

    torch.manual_seed(0)
    modelo = L06.GPT2(2, 32, 2, 50, posicoes=16)
    antes = {n: p.detach().clone() for n, p in modelo.named_parameters()}
    licao.flops_por_token(modelo, 8, treino=True)
    assert all(p.grad is None for p in modelo.parameters())
    assert all(torch.equal(p, antes[n]) for n, p in modelo.named_parameters())


def test_flops_iguais_aos_do_gpt2_do_transformers():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    L, d, h, V, T = 2, 64, 4, 100, 16
    config = GPT2Config(vocab_size=V, n_positions=32, n_embd=d, n_layer=L, n_head=h,
                        bos_token_id=0, eos_token_id=0)
    config._attn_implementation = "eager"
    hf = GPT2LMHeadModel(config).eval()
    ids = torch.zeros(1, T, dtype=torch.long)
    with torch.no_grad():
        ida_hf = licao.contar_flops(lambda: hf(ids))
    total_hf = licao.contar_flops(lambda: hf(ids, labels=ids).loss.backward())
    nosso = L06.GPT2(L, d, h, V, posicoes=32)
    assert ida_hf == licao.flops_por_token(nosso, T, treino=False) * T
    assert total_hf == licao.flops_por_token(nosso, T, treino=True) * T
    assert parametros(hf) == parametros(nosso)


def test_sdpa_na_cpu_esconde_a_atencao_do_contador():
    """A apostila avisa: com a atenção 'sdpa' do transformers, na CPU, o contador não
    vê QK e AV. Se o PyTorch passar a contá-los, a apostila precisa mudar."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    L, d, h, V, T = 2, 64, 4, 100, 16
    config = GPT2Config(vocab_size=V, n_positions=32, n_embd=d, n_layer=L, n_head=h,
                        bos_token_id=0, eos_token_id=0)
    config._attn_implementation = "sdpa"
    hf = GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        contado = licao.contar_flops(lambda: hf(torch.zeros(1, T, dtype=torch.long)))
    assert contado == flops_fechados(L, d, V, T) * T - 4 * L * T * T * d


def test_gpt2_pequeno_em_meta_da_2N_e_6N():
    import torch

    with torch.device("meta"):
        modelo = L06.GPT2()
    N = parametros(modelo)
    assert N == 124_439_808                                   # fatos.md
    ida1 = licao.flops_por_token(modelo, 1, treino=False)
    total1 = licao.flops_por_token(modelo, 1, treino=True)
    assert ida1 == flops_fechados(12, 768, 50257, 1)
    assert abs(ida1 / (2 * N) - 1) < 0.01                      # C ~ 2N por token no forward
    assert abs(total1 / (6 * N) - 1) < 0.01                    # e 6N no treino
    ida = licao.flops_por_token(modelo, 1024, treino=False)
    assert ida == flops_fechados(12, 768, 50257, 1024)
    assert 0.14 < ida / (2 * N) - 1 < 0.16                     # a atenção: +15 % em T = 1.024


@pytest.mark.parametrize("d, T", [(64, 32), (768, 4608), (4096, 24576)])
def test_flops_de_um_bloco(d, T):
    medido = licao.flops_bloco(d, T)
    assert medido == 24 * T * d * d + 4 * T * T * d
    if T == 6 * d:                                             # o empate que a lição anuncia
        assert 4 * T * T * d == 24 * T * d * d


# ------------------------------------------------------------ experimento 2: a régua
def test_regua_contra_fatos():
    modelos = {nome: (N, D) for nome, _, N, D in licao.MODELOS}
    esperado = {"GPT-3": 3.15e23, "Gopher": 5.04e23, "Chinchilla": 5.88e23,
                "Llama 3 8B": 7.2e23}
    for nome, C in esperado.items():
        assert licao.custo_treino(*modelos[nome]) == pytest.approx(C, rel=1e-9)
    N, D = modelos["Llama 3 8B"]
    assert D / N == 1875
    assert round(D / N / 20) == 94
    assert modelos["Chinchilla"][0] / N == pytest.approx(8.75)   # ~9x mais barato por token
    assert licao.custo_inferencia(N) == 2 * N == 1.6e10
    assert licao.custo_inferencia(N, 1e12) == 2 * N * 1e12
    # o empate do experimento 2, à mão: (7,20e23 - 5,88e23) / (2 x (70 - 8) x 1e9)
    Nc, Dc = modelos["Chinchilla"]
    empate = licao.tokens_de_empate(Nc, Dc, N, D)
    assert empate == pytest.approx((6 * N * D - 6 * Nc * Dc) / (2 * (Nc - N)))
    assert cientifico(empate) == "1,06e12"
    assert 6 * Nc * Dc + 2 * Nc * empate == pytest.approx(6 * N * D + 2 * N * empate)


# ------------------------------------------------------------ experimentos 3 e 4
def otimo_em_grade(C):
    """Mínimo de L ao longo de 6ND = C, por força bruta numa grade fina de log N."""
    Ns = np.logspace(6, 14, 400_001)
    Ls = perda(Ns, C / (6 * Ns))
    return Ns[np.argmin(Ls)]


@pytest.mark.parametrize("C", [1e19, 1e21, 5.76e23, 1e25])
def test_otimo_do_reajuste_contra_grade(C):
    N_formula, D_formula = licao.REAJUSTE.otimo(C)
    N_busca, _ = licao.otimo_por_busca(C)
    assert 6 * N_formula * D_formula == pytest.approx(C)
    assert N_formula == pytest.approx(otimo_em_grade(C), rel=1e-4)
    assert N_busca == pytest.approx(N_formula, rel=1e-5)


def test_reajuste_e_eq10_contra_fatos():
    r, q = licao.REAJUSTE, licao.EQ10
    assert (r.E, r.A, r.B, r.alfa, r.beta) == (E, A, B, ALFA, BETA)
    assert (q.E, q.A, q.B, q.alfa, q.beta) == (1.69, 406.4, 410.7, 0.34, 0.28)
    N, D = licao.REAJUSTE.otimo(5.76e23)
    assert N == pytest.approx(72.3e9, rel=0.005)               # fatos.md: 72,3B
    assert D / N == pytest.approx(18.4, abs=0.05)              # a 18,4 tokens por parâmetro
    N10, D10 = licao.EQ10.otimo(5.76e23)
    assert D10 / N10 == pytest.approx(93, abs=1)               # fatos.md: ~93, não 20
    for C in (1e19, 1e22, 1e25):                               # "cerca de 20" no reajuste
        Nr, Dr = licao.REAJUSTE.otimo(C)
        assert 15 < Dr / Nr < 25


def test_kaplan_contra_a_tabela_6_e_a_tabela_3():
    N, D = licao.otimo_kaplan(2 * 8.64e19)                    # C_min = 1 PF-dia
    assert N == pytest.approx(1.3e9)
    assert 6 * N * D == pytest.approx(2 * 8.64e19)
    # fatos.md: o apêndice do Chinchilla lê Kaplan como 4,68B em 1e21 FLOPs (C = 2 C_min)
    assert licao.otimo_kaplan(1e21)[0] == pytest.approx(4.68e9, rel=2e-3)
    n1, _ = licao.otimo_kaplan(1e22)
    n2, _ = licao.otimo_kaplan(1e23)
    assert n2 / n1 == pytest.approx(10 ** 0.73)
    tabela = {round(n / 1e6): (c, t) for n, c, t in licao.TABELA3}
    assert tabela[67_000] == (5.76e23, 1.5e12)                 # fatos.md, tabela 3
    assert tabela[400] == (1.92e19, 8.0e9)
    assert len(licao.TABELA3) == 7
    for n, c, _ in licao.TABELA3:                              # "no máximo 15 %" (apostila)
        assert abs(licao.REAJUSTE.otimo(c)[0] / n - 1) < 0.15
    # a figura: GPT-3 e Gopher entre as duas retas; Llama 3 8B abaixo das duas
    for nome, _, N, D in licao.MODELOS:
        C = 6 * N * D
        kaplan, chinchilla = licao.otimo_kaplan(C)[0], licao.REAJUSTE.otimo(C)[0]
        if nome in ("GPT-3", "Gopher"):
            assert chinchilla < N < kaplan, nome
        if nome == "Llama 3 8B":
            assert N < chinchilla < kaplan
    # com as constantes da eq. 10, D/N cresce com o orçamento; no reajuste, cai devagar
    razoes = [(lambda n, d: d / n)(*licao.EQ10.otimo(C)) for C in (1e17, 1e21, 1e25)]
    assert razoes == sorted(razoes) and razoes[-1] > 100


# ------------------------------------------------------------ experimento 5
def otimo_inferencia_em_grade(alvo, Dinf):
    Nmin = (A / (alvo - E)) ** (1 / ALFA)
    Ns = np.logspace(math.log10(Nmin) + 1e-6, 12, 400_001)
    resto = alvo - E - A / Ns ** ALFA
    D = (B / resto) ** (1 / BETA)
    return Ns[np.argmin(6 * Ns * D + 2 * Ns * Dinf)]


@pytest.mark.parametrize("Dinf, N_ref", [(0.0, 33.9e9), (1e12, 23.3e9), (1e13, 13.5e9),
                                          (1e14, 8.75e9), (1e15, 6.8e9)])
def test_otimo_com_inferencia_contra_fatos(Dinf, N_ref):
    alvo = licao.perda_alvo()
    assert alvo == pytest.approx(2.022, abs=5e-4)
    assert alvo == pytest.approx(perda(8_030_261_248, 15e12))
    N, D = licao.otimo_com_inferencia(alvo, Dinf)
    assert N == pytest.approx(N_ref, rel=0.03)                 # pontos de fatos.md
    assert N == pytest.approx(otimo_inferencia_em_grade(alvo, Dinf), rel=1e-4)
    assert perda(N, D) == pytest.approx(alvo, abs=1e-9)        # a qualidade ficou fixa
    if Dinf == 0:
        assert D == pytest.approx(0.65e12, rel=0.01)           # 33,9B em 0,65T
        # sem inferência, é o ótimo do Chinchilla no mesmo compute (o problema dual)
        assert licao.REAJUSTE.otimo(6 * N * D)[0] == pytest.approx(N, rel=1e-5)


def test_demanda_que_torna_otimo_inverte_a_busca():
    alvo = licao.perda_alvo()
    for N in (6e9, 8_030_261_248, 20e9):
        Dinf = licao.demanda_que_torna_otimo(N, alvo)
        assert licao.otimo_com_inferencia(alvo, Dinf)[0] == pytest.approx(N, rel=1e-5)
    anteriores = math.inf
    for Dinf in (0, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16):
        N, _ = licao.otimo_com_inferencia(alvo, Dinf)
        assert N < anteriores                                  # mais demanda, modelo menor
        anteriores = N
    assert licao.n_minimo(alvo) < N                            # e nunca abaixo do mínimo


def test_ler_volume_do_modo_interativo():
    """O modo interativo lê com o mesmo validador das opções (licao.real_entre)."""
    import argparse

    ler = licao.LER_VOLUME
    assert ler("1e13") == 1e13 and ler(" 2,5e12 ") == 2.5e12 and ler("1_000") == 1000
    assert ler("10T") == 1e13 and ler("1,4T") == 1.4e12 and ler("0") == 0
    for ruim in ("abc", "-1", "inf", "nan", "", "1,2,3", "2e30"):
        with pytest.raises(argparse.ArgumentTypeError):
            ler(ruim)


# ------------------------------------------------------------ o script de ponta a ponta
@pytest.fixture(scope="module")
def execucao_completa(tmp_path_factory):
    pasta = pasta_da_sessao("licao09")
    r = rodar_script("09_scaling.py", "--figuras", str(pasta / "fig"),
                     env={"LAB_MODELO": str(pasta / "nada")})
    return r, pasta / "fig"


def sem_tempos(texto):
    return [x for x in texto.splitlines()
            if not (x.startswith("(") and x.endswith(" s)")) and not x.startswith("Figura")]


def test_script_inteiro(execucao_completa):
    r, figuras = execucao_completa
    saida = r.saida + r.erros
    assert r.returncode == 0, saida
    assert "Traceback" not in saida
    for k in range(1, 7):
        assert f"Experimento {k}/6" in r.saida
    assert "6 de 6 experimentos rodaram." in r.saida
    for nome in ("09_kaplan_chinchilla.png", "09_iso_flop.png", "09_inferencia.png"):
        assert (figuras / nome).stat().st_size > 10_000
    linhas = r.saida.splitlines()
    assert linhas[0] == "Lição 09 · Leis de escala"
    assert max(len(x) for x in linhas if not x.startswith("Figura salva:")) <= 80
    # números que a apostila cita, conferidos contra fatos.md na saída do script
    for trecho in ("124.439.808", "3,15e23", "5,04e23", "5,88e23", "7,20e23", "1.875",
                   "94x", "33,9B", "23,3B", "13,5B", "8,75B", "6,77B", "92,6 tokens",
                   "5,76e23 FLOPs para o Gopher (Rae et al.) e 6,3e23 para o", "4,68B"):
        assert trecho in r.saida, trecho


def test_so_da_os_mesmos_numeros_que_a_execucao_completa(execucao_completa):
    completa = sem_tempos(execucao_completa[0].saida)
    r = rodar_script("09_scaling.py", "--so", "3,5", "--sem-figuras")
    assert r.returncode == 0, r.erros
    parcial = sem_tempos(r.saida)
    inicio = parcial.index("Experimento 3/6 · Kaplan contra Chinchilla: como repartir o orçamento")
    fim = parcial.index("Resumo")
    trecho = [x for x in parcial[inicio:fim] if x]
    a, b = completa.index(trecho[0]), completa.index("Experimento 4/6 · A perda ajustada "
                                                      "L(N, D) e as curvas de iso-FLOP")
    c = completa.index("Experimento 5/6 · Precificar a inferência também")
    d = completa.index("Experimento 6/6 · Dados finitos e compute na inferência")
    assert trecho == [x for x in completa[a:b] + completa[c:d] if x]


def test_tokens_inferencia_muda_a_varredura():
    r = rodar_script("09_scaling.py", "--so", "5", "--sem-figuras",
                     "--tokens-inferencia", "1e14")
    assert r.returncode == 0, r.erros
    assert "Varredura em N com 1,00e14 tokens de inferência" in r.saida
    assert "N ótimo 8,75B" in r.saida


def test_tokens_inferencia_com_sufixo_da_o_mesmo_que_em_notacao_cientifica():
    """A saída escreve 100T, 8,75B: a opção aceita o mesmo jeito de escrever."""
    r = rodar_script("09_scaling.py", "--so", "5", "--sem-figuras", "--tokens-inferencia",
                     "100T")
    assert r.returncode == 0, r.erros
    assert "Varredura em N com 1,00e14 tokens de inferência" in r.saida
    assert "N ótimo 8,75B" in r.saida


@pytest.mark.parametrize("valor, motivo", [
    ("abc", "'abc' não é um número; exemplo: --tokens-inferencia 1e13"),
    ("-1", "-1 está fora do intervalo; use um número entre 0 e 1e30"),
    ("inf", "inf está fora do intervalo"), ("1e300", "1e300 está fora do intervalo"),
    ("2e30", "2e30 está fora do intervalo"), ("3X", "'3X' não é um número")])
def test_tokens_inferencia_invalido(valor, motivo):
    r = rodar_script("09_scaling.py", f"--tokens-inferencia={valor}")
    assert r.returncode == 2
    assert motivo in " ".join(r.erros.split())                 # a mensagem quebra em 80
    assert "Traceback" not in r.saida + r.erros
    assert "carregando o PyTorch" not in r.saida               # falhou antes do torch
    assert max(len(x) for x in r.erros.splitlines()) <= 80


def test_interativo_aguenta_entrada_ruim_e_fim_de_arquivo():
    r = rodar_script("09_scaling.py", "--so", "5", "--sem-figuras", "--interativo",
                     entrada="abc\n-3\n1e15\n1e30\n")        # termina sem linha vazia: EOF
    assert r.returncode == 0, r.erros
    assert "Traceback" not in r.saida + r.erros
    assert "Modo interativo" in r.saida
    assert "'abc' não é um número; exemplo: 1e13 ou 10T." in r.saida
    assert "-3 está fora do intervalo; use um número entre 0 e 1e30" in r.saida
    assert "Com 1,00e15 tokens de inferência: N ótimo 6,77B" in r.saida
    assert "Com 1,00e30 tokens de inferência" in r.saida


def test_interativo_recusa_volume_que_estoura_as_contas():
    r = rodar_script("09_scaling.py", "--so", "5", "--sem-figuras", "--interativo",
                     entrada="1e300\n1e30\n\n")
    assert r.returncode == 0, r.saida + r.erros
    assert "1e300 está fora do intervalo" in r.saida and "FALHOU" not in r.saida
    assert "Com 1,00e30 tokens de inferência" in r.saida


@pytest.mark.skipif(__import__("sys").platform == "win32", reason="<&- é coisa de shell POSIX")
def test_interativo_com_stdin_fechado_nao_falha():
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(RAIZ / "lab" / "09_scaling.py"), "--so", "5",
                        "--sem-figuras", "--interativo"], cwd=RAIZ, capture_output=True,
                       preexec_fn=lambda: os.close(0), timeout=240,
                       env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    saida = r.stdout.decode("utf-8") + r.stderr.decode("utf-8")
    assert r.returncode == 0, saida
    assert "FALHOU" not in saida and "Traceback" not in saida


def test_dados_efetivos_de_muennighoff():
    """D' = U + U R* (1 - e^(-R/R*)), R = épocas - 1 (Muennighoff et al. 2023, R* ~ 15)."""
    assert licao.R_ESTRELA == 15
    assert licao.dados_efetivos(1.0, 1) == 1.0                  # uma época: só dados novos
    for epocas in (2, 4, 16, 64):
        R = epocas - 1
        assert licao.dados_efetivos(7.0, epocas) == pytest.approx(
            7.0 * (1 + 15 * (1 - math.exp(-R / 15))))
    assert licao.dados_efetivos(1.0, 4) / 4 > 0.9              # "até 4 épocas, quase igual"
    assert licao.dados_efetivos(1.0, 10_000) == pytest.approx(16.0)   # o teto 1 + R*
    # amostras independentes: 1 - (1 - p)^k
    assert licao.cobertura_independente(0.159, 1) == pytest.approx(0.159)
    assert licao.cobertura_independente(0.159, 250) > 0.999


def test_interativo_enter_vazio_encerra(monkeypatch, capsys):
    respostas = iter(["2e13", "", "1e12"])
    monkeypatch.setattr("builtins.input", lambda _prompt="": next(respostas))
    licao.perguntar_demandas(licao.perda_alvo())
    saida = capsys.readouterr().out
    assert "Com 2,00e13 tokens" in saida
    assert "1,00e12" not in saida                              # parou no Enter vazio
    assert next(respostas) == "1e12"


def test_ajuda_em_portugues():
    r = rodar_script("09_scaling.py", "--help")
    assert r.returncode == 0
    assert "--tokens-inferencia" in r.saida and "--interativo" in r.saida
    assert "tokens servidos na vida útil" in r.saida
    assert "--seu-modelo N D " in r.saida and "[N D ...]" not in r.saida   # dois, não "N ou mais"


# ------------------------------------------------------------ --seu-modelo e o fechamento
def test_seu_modelo_na_regua_contra_a_conta_fechada():
    r = rodar_script("09_scaling.py", "--so", "2", "--sem-figuras", "--seu-modelo",
                     "1e9", "100e9")
    assert r.returncode == 0, r.erros
    linha = next(x for x in r.saida.splitlines() if x.startswith("  seu modelo"))
    N, D = 1e9, 100e9                                    # a resposta 1: 6ND e 2N à mão
    assert linha.split()[-2:] == [cientifico(6 * N * D), cientifico(2 * N)]
    assert linha.split()[-3] == "100"                    # D/N
    r = rodar_script("09_scaling.py", "--so", "2", "--sem-figuras", "--seu-modelo",
                     "1B", "100B")                       # como a régua os escreve
    assert r.returncode == 0, r.erros
    assert linha in r.saida.splitlines()


@pytest.mark.parametrize("args, motivo", [
    (["1e9"], "opção --seu-modelo: esperava 2 valores"),
    (["0", "1e9"], "0 está fora do intervalo; use um número maior que 0 e até 1e30"),
    (["1e9", "abc"], "'abc' não é um número; exemplo: --seu-modelo 1B 100B"),
    (["1", "2", "3"], "argumentos desconhecidos: 3")])
def test_seu_modelo_invalido(args, motivo):
    r = rodar_script("09_scaling.py", "--so", "2", "--seu-modelo", *args)
    assert r.returncode == 2
    assert motivo in " ".join(r.erros.split()) and "Traceback" not in r.saida + r.erros
    assert "--seu-modelo N D" in r.erros                 # o uso diz: dois números
    assert "expected" not in r.erros                     # em português
    assert "carregando o PyTorch" not in r.saida
    assert max(len(x) for x in r.erros.splitlines()) <= 80


def test_a_09_aponta_para_a_10(execucao_completa):
    """O curso não fecha na 09: ela termina com o próximo passo (a 10) e nenhuma linha de fim
    de curso (a apostila aponta para a 10: test_09_apostila)."""
    r, _ = execucao_completa
    linhas = r.saida.splitlines()
    fim = "\n".join(linhas[linhas.index("Resumo"):])
    assert "Próximo passo: lab/10_treino.py (leia apostilas/10_treino.md)." in fim
    assert "Fim do curso" not in r.saida and not hasattr(licao, "fechar_curso")


def lab_temporario(tmp_path, de, para):
    """Uma cópia do lab com lab/09_scaling.py modificado por substituição de texto."""
    return copia_da_licao(tmp_path, "09_scaling.py", (de, para), nome="09_scaling.py")


def rodar_no_lab(script, *args):
    r = rodar_copia(script, *args)
    return r.returncode, r.saida


def test_depois_de_uma_falha_nao_fecha_o_curso(tmp_path):
    """Um erro num experimento (numa cópia do aluno): o resumo manda corrigir, com o
    arquivo e a linha; nem "Próximo passo" nem "Fim do curso" depois disso."""
    copia = lab_temporario(tmp_path, de="    linhas = [(nome, str(ano), N, D)",
                           para="    linhas = [(nome, str(ano), N, D, None)")
    codigo, saida = rodar_no_lab(copia, "--so", "2")
    assert codigo == 1, saida
    assert "FALHOU: ValueError" in saida and "09_scaling.py:" in saida
    assert "Corrija o que falhou" in saida
    assert "Fim do curso" not in saida and "Próximo passo" not in saida
