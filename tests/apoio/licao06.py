"""O que test_06_gpt2 e test_06_apostila conferem juntos: o tamanho do modelo da lição 10,
a perda de um modelo novo em tokens sorteados e o orçamento de linhas do --codigo."""
from __future__ import annotations

import torch

LICAO10 = dict(camadas=4, d=128, h=4, vocab=163, posicoes=64)   # o tamanho da lição 10
ORCAMENTO = 150   # linhas de Python do modelo inteiro (issue 19: "em poucas telas")


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
