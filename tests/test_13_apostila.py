"""Apostila 13: o que ela afirma, contra o que a lição imprime e as contas da lição.

Os números que ela cita (o cache por token, a conta de 162.417.408), as regras e tamanhos que
ela descreve nos experimentos 4 e 6 e a seção que o fim da lição aponta. Um teste vermelho
aqui é o texto da apostila ou a saída que ele descreve; o código da lição, contra os oráculos
(o transformers, a conta fechada), está em test_13_tucano."""
from __future__ import annotations

import math
import re
import shlex

import pytest
import torch

from conftest import RAIZ, modelo_compartilhado, rodar_script
from copia_do_aluno import copia_da_licao, rodar_copia
from gpt2_real import construir_gpt2_real, tokenizador_real
from modelos_de_teste import construir_llama
from comum import inteiro, licao, num, tamanho

L13 = licao.importar_licao("13_tucano")
L08 = licao.importar_licao("08_since_2017")
L01 = licao.importar_licao("01_tokens")
L11 = licao.importar_licao("11_inducao")
APOSTILA = (RAIZ / "apostilas" / "13_tucano.md").read_text(encoding="utf-8")
TEXTO = " ".join(APOSTILA.split())
CARTAO = 162_417_408
MARCA_GPT2 = re.compile(r"<!--\s*saida-gpt2:(.*?)-->\s*\n```text\n(.*?)\n```", re.S)


def diz(trecho: str):
    trecho = " ".join(trecho.split())
    assert trecho in TEXTO, f"a apostila deveria dizer: {trecho!r}"


@pytest.fixture(scope="module")
def llama_tucano():
    """O Llama de teste como o Tucano (saída própria, MHA): a mesma pasta da sessão que
    test_13_tucano usa."""
    return modelo_compartilhado("llama_tucano", lambda p: construir_llama(p, "tucano"))


def rodar(pasta, gpt2, *args):
    return rodar_script("13_tucano.py", "--modelo", str(pasta), "--gpt2", str(gpt2),
                        "--sem-figuras", *args)


def test_a_apostila_cita_as_contas_que_o_script_faz(llama_tucano, gpt2_pequeno):
    """Os números que a apostila cita do experimento 4 e das contas: saem da tela e das
    funções da lição."""
    por_token = L13.bytes_do_cache_por_token
    assert por_token(12, 12, 64) == 73_728 and por_token(32, 8, 128, 2) == 131_072
    assert por_token(30, 3, 64) == 46_080                       # a resposta 1 (SmolLM2)
    assert "**73.728 bytes**" in APOSTILA and "**131.072 bytes**" in APOSTILA
    assert "46.080 bytes" in APOSTILA
    with torch.device("meta"):
        um = sum(p.numel() for p in L08.BlocoConfiguravel(768, 12, 12, 3072).parameters())
    assert um == 9_438_720 and 12 * um + 2 * 24_576_000 + 768 == CARTAO
    assert "12 × 9.438.720 + 2 × 24.576.000 + 768 =\n**162.417.408**" in APOSTILA
    r = rodar(llama_tucano, gpt2_pequeno, "--so", "4")
    linhas = [l.split() for l in r.saida.splitlines() if l.startswith("  GPT-2 (124M)")
              or l.startswith("  Llama 3 8B")]
    assert [l[-1] for l in linhas] == ["73.728", "131.072"]


def test_a_apostila_descreve_a_saida_como_ela_e(llama_tucano, gpt2_pequeno):
    """As regras e tamanhos que a apostila cita dos experimentos 4 e 6 são os da tela."""
    r = rodar(llama_tucano, gpt2_pequeno, "--so", "4,6")
    saida = " ".join(r.saida.split())
    texto = " ".join(APOSTILA.split())
    assert "(temperatura 0,8, top-k 40, top-p 0,9, semente 0)" in saida
    assert "temperatura 0,8, top-k 40, top-p 0,9, semente (*seed*) 0" in texto
    assert "A tarefa da lição 11: 8 sequências de 48 tokens" in saida
    assert "A tarefa da lição 11 com 8 sequências de 48 tokens" in texto
    assert "Gulosa, 32 tokens novos" in saida and "32 tokens gulosos" in texto
    assert "K e V de forma (1, 4, " in saida and "(B, cabeças de K/V, tokens, d_h)" in saida
    # as cabeças como nas lições 04 e 11: bloco.cabeça, o bloco contado do 0
    assert "(bloco.cabeça, como na lição 11):" in saida and "contando do 0" in texto
    blocos = {int(b) for b in re.findall(r"\b(\d+)\.\d+ \d,\d\d", saida.split("as maiores")[1])}
    assert 0 in blocos and max(blocos) < 3                    # o Llama de teste tem 3 blocos


def test_a_proxima_licao_e_a_14_opcional():
    """O fim da lição (test_13_tucano confere a tela) manda o aluno para a 14, a corrida,
    opcional como a 12; o fim do curso mora na apostila dela (test_14_apostila)."""
    proxima = APOSTILA.split("\n## Próxima lição\n", 1)[1]
    assert "lab/14_corrida.py" in proxima and "(14_corrida.md)" in proxima
    assert "opcional" in proxima and f"## {licao.FIM_DO_CURSO}" not in APOSTILA


# ---------------------------------------------------------------- o que a apostila afirma
def test_o_titulo_e_o_ano_do_modelo():
    """O título é o do script (e das tabelas das lições); o Tucano-160m não é "um modelo de
    2026": é de 2024, com o desenho do Llama 2, e a apostila diz o que é de hoje e o que não."""
    titulo = L13.__doc__.splitlines()[0].split(" (leia junto")[0]
    assert APOSTILA.startswith(f"# {titulo}\n") and titulo == "Lição 13 · Um Llama que fala português: o Tucano"
    for arquivo in ("README.md", "apostilas/README.md", "apostilas/11_inducao.md",
                    "apostilas/12_escala.md", "apostilas/13_tucano.md", "apostilas/14_corrida.md",
                    "lab/13_tucano.py"):
        texto = " ".join((RAIZ / arquivo).read_text(encoding="utf-8").split())
        assert "modelo de 2026" not in texto and "modelo inteiro de 2026" not in texto, arquivo
        assert "nunca leu inglês" not in texto, arquivo
    diz("O Tucano-160m saiu em 2024 (o artigo, em 2025) com o desenho do Llama 2, de 2023")
    diz("A atenção não é de hoje.")


def test_os_tokens_do_treino_e_o_quase_so_portugues():
    """200 bilhões é o tamanho do GigaVerbo; o 160m viu 320.000 passos de 524.288 tokens."""
    vistos = 320_000 * 524_288
    assert round(vistos / 1e9) == 168
    diz("GigaVerbo, um corpus de textos em português de 200 bilhões de tokens")
    diz(f"cerca de {round(vistos / 1e9)} bilhões de tokens: 320.000 passos de treino, de "
        "524.288 tokens cada")
    assert "nunca leu" not in TEXTO and "só leu português" not in TEXTO
    assert "leu quase só português" in L13.__doc__ and "leu quase só português" in TEXTO


def test_o_texto_vale_para_os_experimentos_2_a_5():
    """--texto muda a frase dos experimentos 2 a 5 (o 3 a corta nos dois tokenizadores:
    test_13_tucano confere na tela); a ajuda e a apostila dizem o mesmo."""
    ajuda = rodar_script("13_tucano.py", "--help").saida
    assert "a frase dos experimentos 2 a 5" in " ".join(ajuda.split())
    diz("`--texto` troca a frase dos experimentos 2 a 5.")


def test_a_regra_do_imposto_e_a_do_codigo():
    """A margem de 0,1 e a condição da inversão, como veredito_do_imposto as aplica."""
    diz(f"Se a do modelo ficar pelo menos **{num(L13.MARGEM, 1)}** abaixo da do GPT-2, o "
        "imposto **cai**")
    diz("a do modelo ficar abaixo de 1 enquanto a do GPT-2 fica acima, ele **se inverte**")
    assert "se inverte" in L13.veredito_do_imposto(1.0, 0.85)
    assert "se inverte" not in L13.veredito_do_imposto(0.99, 0.5)


@pytest.fixture(scope="module")
def pasta_real():
    """O tokenizador do GPT-2 de verdade (a mesma pasta da sessão que test_01 usa)."""
    return modelo_compartilhado("tok_real", lambda p: construir_gpt2_real(p, com_pesos=False))


@pytest.fixture(scope="module")
def com_o_gpt2_real(pasta_real, llama_tucano):
    """O experimento 3 com o tokenizador do GPT-2 de verdade (o Llama de teste no lugar do
    Tucano, que não está aqui)."""
    r = rodar_script("13_tucano.py", "--so", "3", "--sem-figuras", "--gpt2", str(pasta_real),
                     "--modelo", str(llama_tucano), env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0, r.erros
    return [linha.rstrip() for linha in r.stdout.decode("utf-8").splitlines()]


def test_as_linhas_do_gpt2_sao_reais(com_o_gpt2_real):
    blocos = MARCA_GPT2.findall(APOSTILA)
    assert len(blocos) == 1 and shlex.split(blocos[0][0]) == ["--so", "3"]
    posicao = 0
    for linha in blocos[0][1].splitlines():
        if linha.strip() in ("", "..."):
            continue
        assert linha.rstrip() in com_o_gpt2_real[posicao:], f"não aparece: {linha!r}"
        posicao = com_o_gpt2_real.index(linha.rstrip(), posicao) + 1


def test_o_imposto_e_o_da_licao_01(com_o_gpt2_real):
    """Uma definição só: a razão de tokens, como na lição 01 (2,03 com o GPT-2); a dos tokens
    por palavra (1,99) a apostila explica por que não é o imposto. O oráculo: as contas com o
    tokenizador de verdade."""
    tok = tokenizador_real()
    pt, en = ("\n".join(t) for t in (L01.PORTUGUES, L01.INGLES))
    tokens = [len(tok(t)["input_ids"]) for t in (pt, en)]
    palavras = [len(t.split()) for t in (pt, en)]
    assert tokens == [238, 117] and palavras == [101, 99]
    razao, por_palavra = tokens[0] / tokens[1], (tokens[0] / palavras[0]) / (tokens[1] / palavras[1])
    assert (num(razao, 2), num(por_palavra, 2)) == ("2,03", "1,99")
    impressa = " ".join(" ".join(com_o_gpt2_real).split())
    assert f"lição 01 o mede): GPT-2 (BPE) {num(razao, 2)};" in impressa
    diz(f"com o GPT-2, ({tokens[0]} / {palavras[0]}) / ({tokens[1]} / {palavras[1]}) dá "
        f"{num(por_palavra, 2)}, não {num(razao, 2)}")
    diz(f"{tokens[0]} / {tokens[1]} dá a razão de tokens de {num(razao, 2)}")
    # a lição 01 imprime a mesma razão, com a mesma conta
    assert "Razão de tokens português/inglês: 2,03" in (
        RAIZ / "apostilas" / "01_tokens.md").read_text(encoding="utf-8")


def test_o_que_a_apostila_diz_de_outra_arquitetura():
    """Só o GPT-2 tem outra lição que o carrega (test_13_tucano confere as duas mensagens)."""
    assert "de outra família recebe uma mensagem" not in TEXTO
    diz("um GPT-2 recebe uma mensagem em português que diz qual lição serve para ele; um modelo "
        "de outra arquitetura (um Mistral, por exemplo), uma que diz que esta lição monta só a "
        "família Llama")


def test_o_que_procurar_com_o_tucano_de_verdade():
    """Os números que a apostila descreve da saída com o Tucano-160m sem a ter copiado: as
    formas da tabela dos nomes, a memória dos pesos, o cache, a lente e a busca, das funções
    da lição."""
    f = L13.FORMA_160M
    with torch.device("meta"):
        formas = {n: tuple(p.shape) for n, p in L13.Llama(**f).named_parameters()
                  if not n.startswith("blocos.") or n.startswith("blocos.0.")}
    assert len(formas) == 12
    assert formas["embed.weight"] == formas["lm_head.weight"] == (32_000, 768)
    assert {formas[f"blocos.0.attn.{w}.weight"] for w in ("wq", "wk", "wv", "wo")} == {(768, 768)}
    assert formas["blocos.0.mlp.w1.weight"] == formas["blocos.0.mlp.w3.weight"] == (3072, 768)
    assert formas["blocos.0.mlp.w2.weight"] == (768, 3072) and formas["norm.weight"] == (768,)
    diz("tem 12 linhas")
    diz("o embedding e a saída (`lm_head`), 32000 x 768; - Q, K, V e a saída da atenção do "
        "bloco 0, 768 x 768 cada")
    diz("a porta e o conteúdo do SwiGLU (`w1`, `w3`), 3072 x 768, e a descida (`w2`), 768 x 3072")
    diz(f'"os blocos 1 a {f["camadas"] - 1}: o mesmo"')
    assert L13.os_outros_blocos(f["camadas"]) == f'; os blocos 1 a {f["camadas"] - 1}: o mesmo'
    diz(f"(os do transformers: {tamanho(4 * CARTAO)})")
    diz(f'"{L13.quem_serve_quem(f["h"], f["kv"])}"')
    diz(f"(1, {f['kv']}, *T*, {f['d'] // f['h']})")
    diz(f"{f['camadas'] + 1} com o Tucano-160m (o embedding e os {f['camadas']} blocos)")
    diz(f"(das {f['camadas'] * f['h']} do Tucano-160m: 12 blocos de 12)")
    diz(f"ln *V* = {num(math.log(f['vocab']), 2)}")
    diz(f"quantas passam de {num(L11.SUBIU, 1)}")
    por_token = L13.bytes_do_cache_por_token(12, 12, 64)
    assert 2048 * por_token == 144 * 2**20
    diz(f"{inteiro(por_token)} bytes por token, 144 MiB com as 2.048 posições")


def test_exercicio_3_numa_copia(llama_tucano, gpt2_pequeno, tmp_path):
    """O exercício 3 como a apostila pede: numa cópia (lab/meu_13.py), a rotação sempre da
    posição 0; a resposta diz que só a gulosa contra o generate() falha, e o script sai com 1."""
    diz("Copie `lab/13_tucano.py` para `lab/meu_13.py` e, na cópia, no `Llama`, troque "
        "`L08.tabela_rope(range(inicio, inicio + T), ...)` por `L08.tabela_rope(range(T), ...)`")
    copia = copia_da_licao(tmp_path, "13_tucano.py",
                           ("L08.tabela_rope(range(inicio, inicio + T),", "L08.tabela_rope(range(T),"))
    r = rodar_copia(copia, "--so", "4", "--sem-figuras", "--modelo", str(llama_tucano),
                    "--gpt2", str(gpt2_pequeno))
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    texto = " ".join(r.saida.split())
    assert "NÃO são os mesmos" in texto and "gulosa com o nosso cache = generate()" in texto
    assert "JÁ GIRADA" in texto and "(NÃO confere)" not in texto and "a conta." in texto
    diz("a conferência \"os mesmos tokens\" falha, e o script sai com 1")
