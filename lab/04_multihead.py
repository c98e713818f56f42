"""Lição 04 · Atenção multicabeça.

h cabeças em paralelo, cada uma numa fatia de C/h números: separar e juntar as
cabeças com as formas certas; a AtencaoMultiCabeca (que as lições 05, 06 e 08
importam daqui) contra a atenção do GPT-2 do transformers; parâmetros e custo;
as cabeças do GPT-2 de verdade e as cabeças de indução. Leia junto:
apostilas/04_multihead.md.
"""
import math
import sys

import common

LICAO = common.Licao(
    "04", "Atenção multicabeça",
    [
        (1, "Separar e juntar as cabeças: as formas, e um erro silencioso", False),
        (2, "AtencaoMultiCabeca = a atenção do GPT-2 do transformers", False),
        (3, "Parâmetros e custo: 4d² + 4d, qualquer que seja h", False),
        (4, "As cabeças do GPT-2: mapas e padrões medidos", True),
        (5, "Cabeças de indução: o modelo copia", True),
        (6, "Por que várias cabeças, e não uma larga", False),
    ],
    proxima=("lab/05_block.py", "apostilas/05_block.md"),
)
if __name__ == "__main__":
    LICAO.abrir()  # a primeira linha aparece antes do torch

import torch  # noqa: E402
from torch import nn  # noqa: E402

L03 = common.importar_licao("03_attention")   # atencao() e pesos_de_atencao() da lição 03
dizer, num, inteiro, pct = common.dizer, common.num, common.inteiro, common.pct


# ============================================================ a peça
def separar_cabecas(x, h):
    """(B, T, C) -> (B, h, T, C/h): cada cabeça fica com uma fatia de C/h números."""
    B, T, C = x.shape
    return x.view(B, T, h, C // h).transpose(1, 2)             # (B, h, T, C/h)


def juntar_cabecas(y):
    """(B, h, T, C/h) -> (B, T, C): as saídas das cabeças lado a lado de novo."""
    B, h, T, dh = y.shape
    return y.transpose(1, 2).reshape(B, T, h * dh)             # (B, T, C)


class AtencaoMultiCabeca(nn.Module):
    """h cabeças de atenção causal; nomes dos pesos como no GPT-2 (c_attn, c_proj)."""

    def __init__(self, d=768, h=12, causal=True):
        super().__init__()
        assert d % h == 0, "d precisa ser múltiplo de h"
        self.h, self.causal = h, causal
        self.c_attn = nn.Linear(d, 3 * d)  # Q, K e V de uma vez
        self.c_proj = nn.Linear(d, d)      # mistura as cabeças de volta em d

    def qkv(self, x):
        """q, k, v de todas as cabeças: 3 x (B, h, T, C/h)."""
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=-1)   # 3 x (B, T, C)
        return [separar_cabecas(t, self.h) for t in (q, k, v)]  # 3 x (B, h, T, C/h)

    def forward(self, x):                                      # x (B, T, C)
        q, k, v = self.qkv(x)
        y, _ = L03.atencao(q, k, v, self.causal)               # (B, h, T, C/h)
        return self.c_proj(juntar_cabecas(y))                  # (B, T, C)

    def pesos(self, x):
        """Os pesos de atenção de cada cabeça: (B, h, T, T)."""
        q, k, _ = self.qkv(x)
        return L03.pesos_de_atencao(q, k, self.causal)         # (B, h, T, T)
