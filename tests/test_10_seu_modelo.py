"""O modelo do aluno nas lições 04, 05 e 07: a pasta que a lição 10 exporta (--exportar).

A pasta sai da própria lição 10 (o experimento 3 com poucos passos e --exportar), uma vez
na sessão: o mesmo caminho de código do aluno, com a arquitetura padrão dela (V = 128
caracteres, 4 blocos, d = 128, 64 posições). As três lições rodam inteiras nela, como um
aluno no Windows (cp1252, 80 colunas, num pipe), e o que imprimem sobre o modelo é
conferido contra oráculos independentes: o config.json lido aqui, contas fechadas
(ln V, 12d² + 13d, 2 x L x d x 4) e o GPT2LMHeadModel do transformers nos mesmos pesos
(logits, generate(), atenções eager, perdas).
"""
from __future__ import annotations

import json
import math
import re

import pytest
import torch

from conftest import construir_tokenizador, modelo_compartilhado, pasta_da_sessao, rodar_script
from comum.console import inteiro, num, pct
from comum import importar_licao

L04 = importar_licao("04_multihead")
L05 = importar_licao("05_block")
L07 = importar_licao("07_generation")

# O menor treino que faz uma pasta de verdade: um passo (o experimento 3 avalia e sorteia
# amostras nos passos 0 e 1; cada passo a mais custaria outro sorteio de amostras). Já um
# passo do AdamW separa o espaço dos outros caracteres (na gulosa, o maior logit fica uns
# 0,7 acima do segundo), então nenhum veredito depende de logits quase empatados.
PASSOS = 1


def _exportar(pasta):
    ck = pasta_da_sessao("meu_gpt_checkpoint") / "10_gpt.pt"
    r = rodar_script("10_treino.py", "--so", "3", "--passos", str(PASSOS), "--checkpoint",
                     str(ck), "--exportar", str(pasta), "--sem-figuras", "--html", str(ck.parent),
                     timeout=400)
    assert r.returncode == 0, r.saida[-3000:] + r.erros[-3000:]
    assert "logits iguais aos do nosso GPT2" in r.saida


@pytest.fixture(scope="session")
def meu_gpt():
    """A pasta que a lição 10 grava com --exportar depois de um treino curto."""
    return modelo_compartilhado("meu_gpt", _exportar)


@pytest.fixture(scope="module")
def hf(meu_gpt):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    modelo = GPT2LMHeadModel.from_pretrained(meu_gpt, use_safetensors=True,
                                             attn_implementation="eager").eval()
    return modelo, AutoTokenizer.from_pretrained(meu_gpt)


@pytest.fixture(scope="module")
def config(meu_gpt):
    return json.loads((meu_gpt / "config.json").read_text(encoding="utf-8"))


def _rodar(script, meu_gpt):
    figuras = pasta_da_sessao(f"figuras_meu_gpt_{script[:2]}")
    r = rodar_script(script, "--modelo", str(meu_gpt), "--figuras", str(figuras))
    r.figuras = figuras
    return r


@pytest.fixture(scope="module")
def saida04(meu_gpt):
    return _rodar("04_multihead.py", meu_gpt)


@pytest.fixture(scope="module")
def saida05(meu_gpt):
    return _rodar("05_block.py", meu_gpt)


@pytest.fixture(scope="module")
def saida07(meu_gpt):
    return _rodar("07_generation.py", meu_gpt)


def _secao(saida, k, n):
    return saida.split(f"Experimento {k}/{n}")[1].split("\nExperimento ")[0]


def _inteira(r, meu_gpt, n, figuras):
    tudo = r.saida + r.erros
    assert r.returncode == 0, tudo[-3000:]
    assert "Traceback" not in tudo and "NÃO" not in r.saida
    assert f"{n} de {n} experimentos rodaram." in r.saida
    largas = [linha for linha in r.saida.splitlines() if len(linha) > 80
              and str(meu_gpt) not in linha and str(r.figuras) not in linha]
    assert not largas, largas
    for figura in figuras:
        assert (r.figuras / figura).stat().st_size > 10_000, figura


# ------------------------------------------------------------ a regra e a pasta
def test_a_regra_do_modelo_de_caracteres(meu_gpt, tmp_path):
    from comum.carregar_gpt2 import de_caracteres
    from transformers import AutoTokenizer

    caracteres = AutoTokenizer.from_pretrained(meu_gpt)
    assert len(caracteres) == 128 and de_caracteres(caracteres)
    assert not de_caracteres(construir_tokenizador(tmp_path))     # o BPE dos testes


def test_a_pasta_e_a_da_licao_10(config, hf):
    assert (config["vocab_size"], config["n_layer"], config["n_embd"], config["n_head"],
            config["n_positions"]) == (128, 4, 128, 4, 64)
    _, tok = hf
    assert tok("A atenção é")["input_ids"] == importar_licao("10_treino").Caracteres() \
        .codificar("A atenção é")


# ------------------------------------------------------------ lição 04
def _pesos_de_atencao(modelo, ids):
    with torch.no_grad():
        return torch.cat(modelo(ids, output_attentions=True).attentions)  # (L, h, T, T)


def test_04_inteira_no_modelo_do_aluno(saida04, meu_gpt, config, hf):
    r = saida04
    _inteira(r, meu_gpt, 6, ("04_cabecas_camada.png", "04_inducao.png"))
    modelo, tok = hf
    L, h = config["n_layer"], config["n_head"]
    secao = _secao(r.saida, 4, 6)
    corrido = " ".join(secao.split())
    ids = tok(L04.TEXTO_CARACTERES, return_tensors="pt")["input_ids"]
    T = ids.shape[1]
    assert T == len(L04.TEXTO_CARACTERES) <= config["n_positions"]
    assert f'o texto é "{L04.TEXTO_CARACTERES}", {T} tokens, um por caractere' in corrido
    assert f"{T} tokens de texto; as {L * h} cabeças ({L} camadas x {h})" in corrido
    # as 5 maiores notas do token anterior, pelas atenções do transformers (eager)
    pesos = _pesos_de_atencao(modelo, ids)
    anterior = pesos.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1).flatten()   # (L*h,)
    linha = secao.split("no token anterior, as 5 maiores:")[1].splitlines()[1]
    impressos = re.findall(r"(\d+)\.(\d+) \((\d+,\d+)\)", linha)
    assert len(impressos) == 5
    for c, j, valor in impressos:
        assert abs(float(anterior[int(c) * h + int(j)]) - float(valor.replace(",", "."))) \
            <= 0.0051, (c, j, valor)
    maiores = anterior.sort(descending=True).values[:5]
    assert all(abs(float(m) - float(v.replace(",", "."))) <= 0.0051
               for m, (_, _, v) in zip(maiores, impressos))


def test_04_inducao_no_modelo_do_aluno(saida04, config, hf):
    modelo, tok = hf
    secao = _secao(saida04.saida, 5, 6)
    n = min(50, (config["n_positions"] - 1) // 2)
    assert f"{n} caracteres sorteados, repetidos duas vezes, depois de uma linha nova" in secao
    assert "<|endoftext|>" not in secao
    # a mesma sequência: caracteres comuns (sem '\n' nem '\ufffd') depois de um '\n'
    comuns = torch.tensor([i for i in range(128) if tok.convert_ids_to_tokens(i)
                           not in ("\n", "\ufffd")])
    r = comuns[torch.randint(0, len(comuns), (n,), generator=torch.Generator().manual_seed(0))]
    ids = torch.cat([torch.tensor(tok("\n")["input_ids"]), r, r])[None]   # (1, 1 + 2n)
    with torch.no_grad():
        perdas = []
        for inicio, fim in ((2, n + 1), (n + 2, 2 * n + 1)):     # prever a 1ª e a 2ª cópia
            rotulos = torch.full_like(ids, -100)
            rotulos[0, inicio:fim] = ids[0, inicio:fim]
            perdas.append(float(modelo(ids, labels=rotulos).loss))
    assert (f"Perda média ao prever a 1ª cópia: {num(perdas[0], 2)} (ln do vocabulário = "
            f"{num(math.log(128), 2)});\nna 2ª cópia: {num(perdas[1], 2)}.") in secao
    notas = _pesos_de_atencao(modelo, ids).diagonal(offset=-(n - 1), dim1=-2, dim2=-1)
    maior = float(notas[..., -n:].mean(-1).max())
    primeira = re.search(r"camada\.cabeça \d+\.\d+: (\d+,\d+)", secao)[1]
    assert primeira == num(maior, 2)
    copia = perdas[1] < 0.5 * perdas[0]
    assert ("Na segunda vez o modelo acerta" in secao) == copia
    assert ("pouco treino?" in secao) == (not copia)


# ------------------------------------------------------------ lição 05
def test_05_inteira_no_modelo_do_aluno(saida05, meu_gpt, config):
    _inteira(saida05, meu_gpt, 6, ("05_norma_residual.png", "05_logit_lens.png"))
    d, L = config["n_embd"], config["n_layer"]
    secao = _secao(saida05.saida, 5, 6)
    assert f"d = {d}, {L} blocos." in " ".join(secao.split())
    assert f"Fórmula fechada 12d² + 13d com d = {d}: {inteiro(12 * d * d + 13 * d)}" in secao
    V, P = config["vocab_size"], config["n_positions"]
    total = V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d       # a cabeça é o wte
    assert re.search(rf"modelo inteiro +{re.escape(inteiro(total))}\n", secao)


def test_05_norma_no_modelo_do_aluno(saida05, hf):
    modelo, tok = hf
    secao = _secao(saida05.saida, 3, 6)
    assert "os textos são em português" in " ".join(secao.split())
    with torch.no_grad():
        estados = [modelo(tok(t, return_tensors="pt")["input_ids"], output_hidden_states=True)
                   .hidden_states[0][0].norm(dim=-1) for t in L05.TEXTOS_CARACTERES]
    demais = sum(float(e[1:].mean()) for e in estados) / len(estados)
    pos0 = sum(float(e[0]) for e in estados) / len(estados)
    assert re.search(rf"embedding +{re.escape(num(demais, 1))} +{re.escape(num(pos0, 1))}\n",
                     secao)


def _celula(caractere):
    """Um caractere como a tabela o mostra num console cp1252 (o do aluno nos testes):
    o espaço vira '_', a linha nova '\\n', e o que o cp1252 não tem, '?'."""
    if caractere == " ":
        return "_"
    if caractere == "\n":
        return "\\n"
    try:
        caractere.encode("cp1252")
    except UnicodeEncodeError:
        return "?"
    return caractere


def test_05_logit_lens_no_modelo_do_aluno(saida05, hf):
    """A última linha de cada tabela é a saída do modelo: o argmax dos logits do
    transformers em cada posição, um caractere por célula."""
    modelo, tok = hf
    secao = _secao(saida05.saida, 4, 6)
    for frase in L05.LENTE_CARACTERES:
        ids = tok(frase, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            probs = modelo(ids).logits[0].softmax(-1)               # (T, V)
        esperado = [_celula(tok.decode([int(i)])) for i in probs.argmax(-1)]
        partes = secao.split(f'"{frase}" (posições ')[1:]
        assert len(partes) >= 1, frase
        ultimas = [re.search(r"^\|4 +\|(.*)\|$", p, re.M)[1].split("|") for p in partes]
        assert [c.strip() for c in sum(ultimas, [])] == esperado, (frase, ultimas)
        aposta = f'Depois de "{frase}" o modelo aposta em "{esperado[-1]}" '
        assert aposta + f"({pct(float(probs[-1].max()))})." in " ".join(secao.split())


# ------------------------------------------------------------ lição 07
def test_07_inteira_no_modelo_do_aluno(saida07, meu_gpt, config, hf):
    _inteira(saida07, meu_gpt, 7, ("07_tempo_por_token.png",))
    modelo, tok = hf
    s = saida07.saida
    frase = L07.FRASE_CARACTERES
    ids = tok(frase, return_tensors="pt")["input_ids"]
    um = _secao(s, 1, 7)
    assert "Um modelo de caracteres (todo token do vocabulário, fora os especiais, é um " \
           "caractere só), como o da lição 10" in " ".join(um.split())
    assert f'Frase: "{frase}" ({ids.shape[1]} tokens).' in um
    with torch.no_grad():
        gulosa = modelo.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                 max_new_tokens=L07.NOVOS, pad_token_id=None,
                                 eos_token_id=None)[0].tolist()
    assert "  " + repr(tok.decode(gulosa).replace("\n", " ")) + "\n" in um
    assert f"{L07.NOVOS} de {L07.NOVOS} tokens\niguais -> os mesmos." in um
    with torch.no_grad():
        logits = modelo(ids).logits[0, -1].double()                 # (V,)
    entropia = float(-(logits.softmax(-1) * logits.log_softmax(-1)).sum())
    dois = _secao(s, 2, 7).split("No modelo carregado")[1]
    assert re.search(rf"^ +1,00 +{re.escape(num(entropia, 3))} +"
                     rf"{re.escape(pct(float(logits.softmax(-1).max())))}$", dois, re.M)
    V = config["vocab_size"]
    assert f"Com V = {V} tokens, o teto da entropia é ln V = {num(math.log(V), 3)} nats." in dois
    assert f"Quantos dos {V} tokens sobrevivem" in _secao(s, 3, 7)
    assert f"De n = 2 a {config['n_positions'] - 1}," in _secao(s, 5, 7)
    L, d = config["n_layer"], config["n_embd"]
    assert (f"Modelo carregado (L = {L}, d = {d}): 2 x {L} x {d} x 4 = "
            f"{inteiro(2 * L * d * 4)} bytes por token.") in _secao(s, 6, 7)
    assert "Causal: o cache é a conta certa." in _secao(s, 7, 7)


def test_07_no_gpt2_a_frase_segue_em_ingles(gpt2_pequeno):
    r = rodar_script("07_generation.py", "--so", "1", "--sem-figuras",
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida + r.erros
    assert f'Frase: "{L07.FRASE_GPT2}"' in r.saida and "modelo de caracteres" not in r.saida


# ------------------------------------------------------------ as apostilas
def _apostila(nome):
    from conftest import RAIZ

    return " ".join((RAIZ / "apostilas" / nome).read_text(encoding="utf-8").split())


def test_apostilas_citam_as_contas_do_modelo_da_licao_10(config, saida07):
    """As contas que as seções 'No seu modelo' citam saem da pasta exportada (as que
    dependem do treino vêm marcadas como de uma execução, e não entram aqui)."""
    d, L, V, P = (config[k] for k in ("n_embd", "n_layer", "vocab_size", "n_positions"))
    a04, a05, a07 = (_apostila(n) for n in ("04_multihead.md", "05_block.md",
                                              "07_generation.md"))
    n = (P - 1) // 2
    assert f"63 caracteres e 63 tokens, inteira nas {P} posições" in a04
    assert len(L04.TEXTO_CARACTERES) == 63 and f'"{L04.TEXTO_CARACTERES}"' in a04
    assert f"O 5 sorteia {n} caracteres" in a04
    assert f"4 · {d}² + 4 · {d} = {inteiro(4 * d * d + 4 * d)}" in a04
    assert f"12 · {d}² + 13 · {d} = {inteiro(12 * d * d + 13 * d)}" in a05
    total = V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d
    assert f"o modelo inteiro com {inteiro(total)} ({inteiro(V * d)} do `wte`, " \
           f"{inteiro(P * d)} do `wpe`" in a05
    assert f"2 · {L} · {d} · 4 = {inteiro(2 * L * d * 4)} bytes por token" in a07
    assert f"as {P} posições inteiras cabem em {2 * L * d * 4 * P // 1024} KiB" in a07
    assert f"aqui guarda 50 de {V} ({pct(50 / V, 0)})" in a07
    # o bloco com a regra é a saída da lição, linha a linha
    bloco = a07.split("A tela diz a regra: ```text ")[1].split(" ```")[0]
    assert bloco in " ".join(saida07.saida.split())
    for apostila in (a04, a05, a07):
        assert "--amostrar --exportar meu_gpt" in apostila
        assert "No seu modelo (o GPT da lição 10)" in apostila
