"""Pesos que não deixam um erro se esconder, para comparar um modelo nosso com o do
transformers: os testes das lições 06 e 07 usam os mesmos."""
from __future__ import annotations

import torch


def perturbar(modelo, semente=1, atencao_forte=False):
    """Sorteia os vieses (nascem 0) e os ganhos do LayerNorm (nascem 1): assim um viés ou um
    LayerNorm copiado no lugar errado também muda os logits (as matrizes já são sorteadas).
    atencao_forte: notas de atenção maiores e posições que pesam; num GPT-2 recém-criado a
    atenção é quase uniforme, e um erro de posição ou de máscara quase não apareceria."""
    g = torch.Generator().manual_seed(semente)
    with torch.no_grad():
        for nome, p in modelo.named_parameters():
            if p.dim() == 1:
                ruido = torch.randn(p.shape, generator=g)
                p.copy_(1 + 0.1 * ruido if ".ln_" in nome and nome.endswith("weight")
                        else 0.02 * ruido)
        if atencao_forte:
            for bloco in modelo.transformer.h:
                bloco.attn.c_attn.weight.mul_(4)
            modelo.transformer.wpe.weight.mul_(10)
    return modelo
