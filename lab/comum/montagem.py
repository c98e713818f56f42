"""O nosso modelo montado sobre os pesos que o transformers carregou, e o que as lições fazem
com ele (o GPT2 nas lições 06 e 07, o Llama na 13):

- modelos: (nosso, modelo do transformers, tokenizador), carregados e montados uma vez por
  execução, com a memória que a lição pede (BASE e FOLGA) conferida antes;
- tokenizar: o --texto em ids, com as guardas do texto vazio e do texto longo demais;
- confere: a tolerância do float32 ao comparar os nossos logits com os do transformers;
- contar: os parâmetros distintos de um modelo (o peso amarrado conta uma vez só).

Nada aqui importa o torch no topo: a primeira linha de uma lição sai antes dele.
"""
from __future__ import annotations

import time

from .console import dizer, num
from .erros import ExperimentoPulado
from .hub import ModeloIndisponivel

__all__ = ["contar", "modelos", "montar_nosso", "tokenizar", "confere", "TOLERANCIA", "FOLGA",
           "BASE"]


# ---------------------------------------------------------------- contar parâmetros
def contar(modulo) -> int:
    """Parâmetros distintos: parameters() já conta o peso amarrado uma vez só."""
    return sum(p.numel() for p in modulo.parameters())


# ---------------------------------------------------------------- o nosso sobre os pesos
TOLERANCIA = 1e-4
# Memória que a lição usa: UMA cópia dos pesos (o nosso modelo divide a do transformers), mais
# o Python com PyTorch e transformers importados e as ativações, uns 0,45 GiB em qualquer
# tamanho (ferramentas/benchmark.py --tamanhos: pico de 0,90 GiB no gpt2, 1,77 no medium,
# 3,33 no large: 1,94x, 1,34x e 1,16x os pesos).
BASE = 2**29                                           # 0,5 GiB
FOLGA = 1.1                                            # +10 % sobre os pesos


def montar_nosso(hf, montar, nome="nosso GPT2"):
    """O nosso modelo sobre os pesos de `hf` (nenhuma cópia: não precisa de memória a mais);
    montar é a peça da lição que o monta (nosso_gpt2 da 06, nosso_llama da 13)."""
    inicio = time.perf_counter()
    nosso = montar(hf)
    dizer(f"({nome} montado sobre os pesos do transformers, sem cópia: "
          f"{num(time.perf_counter() - inicio, 2)} s)")
    return nosso


def modelos(licao, montar, carregar=None, nome="nosso GPT2"):
    """(nosso modelo, modelo do transformers, tokenizador), montados uma vez por execução.

    carregar(modelo, margem=, base=) -> (modelo do transformers, tokenizador) lê o --modelo
    (carregar_llama na lição 13); sem ele, o GPT-2 do --modelo (Licao.gpt2). O modelo que
    não dá para carregar (ModeloIndisponivel) pula o experimento, com o motivo."""
    if carregar is None:
        hf, tokenizador = licao.gpt2(margem=FOLGA, base=BASE)
    else:
        def ler():
            try:
                return carregar(licao.args.modelo, margem=FOLGA, base=BASE)
            except ModeloIndisponivel as erro:
                raise ExperimentoPulado(str(erro)) from None

        hf, tokenizador = licao.uma_vez(("carregado", nome), ler)
    return licao.uma_vez(nome, lambda: montar_nosso(hf, montar, nome)), hf, tokenizador


def tokenizar(licao, tokenizador, posicoes, reserva=0):
    """(--texto, ids (1, T)), com o que o tokenizador põe em volta (o <s> de um Llama); um
    token especial digitado ('<|endoftext|>', '<s>') é texto (no GPT-2, 7 tokens comuns, como
    no codificador da OpenAI e na lição 01), não o token que só o programa põe. reserva: as
    posições que a lição ainda vai gerar depois da frase."""
    texto = licao.args.texto
    ids = tokenizador(texto, return_tensors="pt", split_special_tokens=True)["input_ids"]  # (1, T)
    if ids.shape[1] == 0 or not texto.strip():     # um Llama põe o <s> até num texto vazio
        raise ExperimentoPulado("o --texto está vazio: escreva uma frase.")
    if ids.shape[1] + reserva > posicoes:
        mais = f" mais os {reserva} novos" if reserva else ""
        raise ExperimentoPulado(f"o --texto tem {ids.shape[1]} tokens{mais}: passa das "
                                f"{posicoes} posições deste modelo. Use uma frase mais curta.")
    return texto, ids


def confere(delta, escala, tolerancia=TOLERANCIA) -> bool:
    """float32 guarda uns 7 algarismos: logits perto de 100 já erram na casa de 1e-5.
    Tolerância: 1e-4 vezes o maior |logit| (ou 1e-4 absoluto, se os logits forem < 1)."""
    return delta <= tolerancia * max(1.0, escala)
