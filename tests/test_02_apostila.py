"""Apostila 02: os números do texto corrido que os blocos <!-- saida --> não cobrem,
recalculados por caminhos independentes (tokenizador real, forma fechada, transformers)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from comum.console import inteiro, num, pct, tamanho
from conftest import RAIZ, modelo_compartilhado, rodar_script
from copia_do_aluno import lab_copiado, rodar_copia
from gpt2_real import construir_gpt2_real, tokenizador_real
from comum import importar_licao

L02 = importar_licao("02_embeddings")
BRUTO = (RAIZ / "apostilas" / "02_embeddings.md").read_text(encoding="utf-8")
TEXTO = " ".join(re.sub(r"^>\s?", "", BRUTO, flags=re.M).split())  # sem os '>' das citações


def diz(trecho: str):
    trecho = " ".join(trecho.split())
    assert trecho in TEXTO, f"a apostila deveria dizer: {trecho!r}"


def test_ids_do_diagrama_e_pedacos():
    tok = tokenizador_real()
    diz(f"ids {tok.encode(L02.FRASE)}".replace("ids [", "ids        ["))
    assert len(tok.encode(" informação")) == 4
    diz("` informação` são 4 tokens no GPT-2")
    assert tok.encode(" Paris") == [6342]
    diz("o id 6342 (`·Paris`)")


def test_contas_do_one_hot():
    n, V, d = 8, 50257, 768
    diz(f"402.056 números, 402.048 deles zeros")
    assert n * V == 402_056 and n * V - n == 402_048
    diz(f"2·*n*·*V*·*d* ≈ {round(2 * n * V * d / 1e6)} milhões")
    diz(f"para copiar {inteiro(n * d)} números")
    diz(f"1,6 MB")
    assert round(4 * n * V / 1e6, 1) == 1.6


def test_formula_fechada_da_senoidal():
    d = 768
    w = 10_000.0 ** (-np.arange(0, d, 2) / d)
    diz(f"$\\frac{{2}}{{d}}\\sum_i \\cos(\\omega_i)$ = {num(2 / d * np.cos(w).sum(), 3)}")
    diz(f"até {num(2 / d * np.cos(1023 * w).sum(), 3)} entre a primeira e a última")


def test_parametros_no_texto():
    from transformers import GPT2Config, GPT2LMHeadModel
    import torch

    with torch.device("meta"):
        m = GPT2LMHeadModel(GPT2Config())
    wte = m.transformer.wte.weight.numel()
    total = sum(p.numel() for p in m.parameters())
    diz(f"economiza {inteiro(wte)} parâmetros")
    diz(f"o `wte` sozinho é **{pct(wte / total)}** do modelo")
    diz(f"são {tamanho(4 * wte)}")


@pytest.fixture(scope="module")
def pasta(tmp_path_factory):
    return modelo_compartilhado("gpt2_real", construir_gpt2_real)


@pytest.mark.cpus
def test_bloco_do_experimento_5(pasta):
    """O bloco sem marca do experimento 5: as linhas que não dependem dos pesos saem
    iguais num GPT-2 pequeno com o tokenizador real (só a largura d muda: 32 aqui)."""
    bloco = re.search(r"saem assim:\n\n```text\n(.*?)\n```", BRUTO, re.S).group(1)
    r = rodar_script("02_embeddings.py", "--so", "5", "--modelo", str(pasta),
                     env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0, r.erros
    saida = r.stdout.decode("utf-8").replace("(1, 5, 32)", "(1, 5, 768)").splitlines()
    for linha in bloco.splitlines():
        if linha.strip():
            assert linha in saida, linha


# ------------------------------------------------------------ respostas dos exercícios
def test_resposta_sem_amarrar():
    """Exercício 5: o GPT-2 pequeno com a cabeça de saída separada, contado pelo
    transformers (tie_word_embeddings=False), contra o que a resposta diz."""
    from transformers import GPT2Config, GPT2LMHeadModel
    import torch

    with torch.device("meta"):
        amarrado = GPT2LMHeadModel(GPT2Config())
        solto = GPT2LMHeadModel(GPT2Config(tie_word_embeddings=False))
    assert solto.lm_head.weight is not solto.transformer.wte.weight
    n_amarrado = sum(p.numel() for p in amarrado.parameters())
    n_solto = sum(p.numel() for p in solto.parameters())
    cabeca = solto.lm_head.weight.numel()
    assert n_solto == n_amarrado + cabeca
    diz(f"{inteiro(n_amarrado)} + {inteiro(cabeca)} = "
        f"**{inteiro(n_solto)}**, e a cabeça seria {pct(cabeca / n_solto)} dele")
    soma_state_dict = sum(t.numel() for t in amarrado.state_dict().values())
    assert soma_state_dict == n_solto  # a matriz amarrada aparece duas vezes no state_dict


@pytest.mark.cpus
def test_resposta_tabela_senoidal(tmp_path):
    """Exercício 4: o código da resposta, salvo como lab/ex4.py e rodado como o enunciado
    manda (o encanamento e as lições ao lado), imprime o 0,973 que ela cita."""
    trecho = BRUTO[BRUTO.index("**4. A tabela senoidal.**"):]
    codigo = re.search(r"```python\n(.*?)\n```", trecho, re.S).group(1)
    lab = lab_copiado(tmp_path)
    (lab / "ex4.py").write_text(codigo, encoding="utf-8")
    r = rodar_copia(lab / "ex4.py", cwd=tmp_path)
    assert r.returncode == 0, r.erros
    valores = [float(x) for x in r.saida.split()]
    assert len(valores) == 2 and abs(valores[0] - valores[1]) < 1e-12
    assert num(valores[0], 3) == "0,973"
    diz("As duas contas dão 0,973 (com três casas)")
    diz('`L02 = importar_licao("02_embeddings")`')
    diz("`from comum import importar_licao`")
    assert "L08" not in BRUTO  # o enunciado usava um L08 que ele não dizia de onde vinha


@pytest.mark.cpus
def test_resposta_gradiente_esparso():
    """Exercício 1: nn.Embedding, um oráculo independente do one-hot do script."""
    import torch

    tabela = torch.nn.Embedding(50257, 768)
    tabela(torch.tensor([5, 5, 5, 7])).sum().backward()
    linhas = (tabela.weight.grad.abs().sum(dim=1) > 0).nonzero().flatten().tolist()
    assert linhas == [5, 7]
    assert torch.equal(tabela.weight.grad[5], torch.full((768,), 3.0))
    assert torch.equal(tabela.weight.grad[7], torch.ones(768))
    diz("O gradiente da linha 5 é 3 em cada coordenada e o da linha 7 é 1")


def test_legenda_do_mapa_ascii():
    faixa = num(1 / len(L02.RAMPA), 2)
    diz(f"em {len(L02.RAMPA)} faixas iguais, uma por caractere de `'{L02.RAMPA}'`")
    diz(f"e o `=`, a faixa do meio, vai de −{faixa} a {faixa}")


def test_resultados_publicados_com_referencia():
    """Seção 1 da issue 22: quem só lê a apostila encontra o que foi publicado sobre o
    GPT-2 de verdade nos experimentos que dependem dos pesos, marcado como tal."""
    assert TEXTO.count("**No GPT-2 de verdade (resultado publicado):**") == 3
    for referencia in ("Tom Tseng, 2022", "Adam Yedidia (2023)", "James Simon (2024)",
                       "Sander Land e Max Bartolo (2024)", "arXiv:2405.05417",
                       "explicam só 3,1 % da variância", "umas 30 direções"):
        diz(referencia)
    diz("Guarde o resultado para a lição 05: lá você vai medir")   # a 05 vem depois
    assert "lá, a posição 0 do fluxo residual" not in BRUTO


def test_resposta_analogias_carrega_o_modelo(tmp_path, pasta):
    """Issue 40: o exercício 3 não dizia como carregar `modelo, tok`. O enunciado dá as duas
    linhas, e o código da resposta, salvo como lab/analogia.py e rodado como ela manda (com
    LAB_MODELO, como as lições), roda e imprime os 8 tokens mais próximos."""
    diz('`from comum.carregar_gpt2 import carregar_gpt2` e `modelo, tok = carregar_gpt2("gpt2")`')
    trecho = BRUTO[BRUTO.index("**3. Analogias.** Um jeito de fazer"):]
    codigo = re.search(r"```python\n(.*?)\n```", trecho, re.S).group(1)
    assert 'carregar_gpt2(os.environ.get("LAB_MODELO") or "gpt2")' in codigo
    lab = lab_copiado(tmp_path)
    (lab / "analogia.py").write_text(codigo, encoding="utf-8")
    r = rodar_copia(lab / "analogia.py", cwd=tmp_path,
                    env={"LAB_MODELO": str(pasta), "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.saida + r.erros
    import ast

    lista = ast.literal_eval(r.saida.strip().splitlines()[-1])
    assert isinstance(lista, list) and len(lista) == 8, lista
