"""O nosso modelo sobre os pesos carregados (lab/comum/montagem.py), o mesmo caminho para o
GPT2 das lições 06 e 07 e o Llama da 13: carregado e montado uma vez por execução, o --texto
em ids com as mesmas guardas nos dois tokenizadores, a tolerância do float32 e a contagem
de parâmetros. (O caminho inteiro, com a memória conferida antes: test_06_gpt2.py.)"""
from __future__ import annotations

import pytest
import torch

from comum import licao as encanamento
from comum import montagem
from comum.hub import ModeloIndisponivel
from conftest import modelo_compartilhado
from modelos_de_teste import construir_llama


def _licao(*argumentos):
    li = encanamento.Licao("99", "teste", ["um experimento"])
    li.args = encanamento.criar_parser("x", "x", li.titulos, [
        encanamento.opcao("--texto", str, "O gato", "a frase", '"FRASE"')]).parse_args(
        list(argumentos))
    return li


def test_carrega_e_monta_uma_vez_por_execucao(capsys):
    carregados, montados = [], []

    def carregar(nome, margem, base):
        carregados.append((nome, margem, base))
        return "hf", "tok"

    def montar(hf):
        montados.append(hf)
        return "nosso"

    li = _licao("--modelo", "pasta")
    for _ in range(3):
        assert montagem.modelos(li, montar, carregar, "o nosso Llama") == ("nosso", "hf", "tok")
    assert carregados == [("pasta", montagem.FOLGA, montagem.BASE)] and montados == ["hf"]
    saida = capsys.readouterr().out
    assert saida.count("(o nosso Llama montado sobre os pesos do transformers, sem cópia:") == 1


def test_modelo_indisponivel_pula_o_experimento_e_nao_tenta_de_novo():
    tentativas = []

    def carregar(nome, margem, base):
        tentativas.append(nome)
        raise ModeloIndisponivel("não há pasta 'x'.\nUse outra.")

    li = _licao("--modelo", "x")
    for _ in range(2):
        with pytest.raises(encanamento.ExperimentoPulado, match="não há pasta 'x'"):
            montagem.modelos(li, lambda hf: pytest.fail("montou sem modelo"), carregar)
    assert tentativas == ["x"]


@pytest.fixture(scope="module")
def tokenizadores(gpt2_pequeno):
    from transformers import AutoTokenizer

    llama = modelo_compartilhado("llama_tucano", lambda p: construir_llama(p, "tucano"))
    return AutoTokenizer.from_pretrained(gpt2_pequeno), AutoTokenizer.from_pretrained(llama)


def test_um_token_especial_digitado_e_texto_nos_dois(tokenizadores):
    """'<|endoftext|>' no GPT-2 e '<s>' num Llama, digitados no --texto, são texto: só o
    programa põe o token especial (o <s> da frente, no Llama). Sem eles, os ids são os de
    sempre do tokenizador."""
    gpt2, llama = tokenizadores
    for tok, especial in ((gpt2, "<|endoftext|>"), (llama, "<s>")):
        _, ids = montagem.tokenizar(_licao("--texto", f"O gato {especial} subiu"), tok, 256)
        digitado = tok.convert_tokens_to_ids(especial)
        frente = 1 if tok is llama else 0
        assert digitado not in ids[0, frente:].tolist()
        _, comum_ = montagem.tokenizar(_licao("--texto", "O gato subiu no telhado"), tok, 256)
        assert comum_.tolist() == tok("O gato subiu no telhado", return_tensors="pt")[
            "input_ids"].tolist()
    assert llama("O gato")["input_ids"][0] == llama.convert_tokens_to_ids("<s>")


def test_texto_vazio_ou_longo_demais_pula_com_o_motivo(tokenizadores):
    gpt2, _ = tokenizadores
    with pytest.raises(encanamento.ExperimentoPulado, match="o --texto está vazio"):
        montagem.tokenizar(_licao("--texto", ""), gpt2, 64)
    _, ids = montagem.tokenizar(_licao("--texto", "O gato subiu no telhado"), gpt2, 64)
    T = ids.shape[1]
    montagem.tokenizar(_licao("--texto", "O gato subiu no telhado"), gpt2, T + 5, reserva=5)
    with pytest.raises(encanamento.ExperimentoPulado) as erro:
        montagem.tokenizar(_licao("--texto", "O gato subiu no telhado"), gpt2, T + 4, reserva=5)
    assert str(erro.value) == (f"o --texto tem {T} tokens mais os 5 novos: passa das {T + 4} "
                               "posições deste modelo. Use uma frase mais curta.")


def test_a_tolerancia_e_relativa_ao_maior_logit():
    assert montagem.confere(1e-4, 0.5) and not montagem.confere(1.1e-4, 0.5)   # < 1: absoluta
    assert montagem.confere(9e-3, 100.0) and not montagem.confere(1.1e-2, 100.0)


def test_contar_conta_o_peso_amarrado_uma_vez():
    embedding = torch.nn.Embedding(10, 4)
    saida = torch.nn.Linear(4, 10, bias=False)
    saida.weight = embedding.weight                         # amarrada, como no GPT-2
    assert montagem.contar(torch.nn.ModuleList([embedding, saida])) == 40
