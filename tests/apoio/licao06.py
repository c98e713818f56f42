"""O que test_06_gpt2 e test_06_apostila conferem juntos: as contagens do GPT-2 de fatos.md,
o tamanho do modelo da lição 10, a perda de um modelo novo em tokens sorteados e o orçamento
de linhas do --codigo."""
from __future__ import annotations

import torch

# Números conferidos em fatos.md (seção GPT-2).
TOTAIS = {"gpt2": 124_439_808, "gpt2-medium": 354_823_168,
          "gpt2-large": 774_030_080, "gpt2-xl": 1_557_611_200}
POR_BLOCO = {"gpt2": 7_087_872, "gpt2-medium": 12_596_224,
             "gpt2-large": 19_677_440, "gpt2-xl": 30_740_800}
STATE_DICT_GPT2 = 163_037_184   # soma do state_dict(): a cabeça amarrada conta duas vezes

LICAO10 = dict(camadas=4, d=128, h=4, vocab=163, posicoes=64)   # o tamanho da lição 10
ORCAMENTO = 150   # linhas de Python do modelo inteiro (issue 19: "em poucas telas")


def contar(modulo) -> int:
    """Os parâmetros de um módulo (o GPT2 inteiro, um bloco, o wte...)."""
    return sum(p.numel() for p in modulo.parameters())


def perda_em_tokens_aleatorios(modelo, semente=0, B=8, T=64):
    """Entropia cruzada ao prever um próximo token sorteado: o palpite ideal é uniforme,
    ln V; um modelo recém-criado deve estar perto disso."""
    g = torch.Generator().manual_seed(semente)
    ids = torch.randint(0, LICAO10["vocab"], (B, T + 1), generator=g)
    with torch.no_grad():
        saida = modelo(ids[:, :-1])
        logits = saida if torch.is_tensor(saida) else saida.logits     # (B, T, V)
        return float(torch.nn.functional.cross_entropy(logits.flatten(0, 1),
                                                       ids[:, 1:].flatten()))
