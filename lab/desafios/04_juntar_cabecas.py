"""Desafio da lição 04: juntar as cabeças, juntar_cabecas(y): (B, h, T, C/h) -> (B, T, C).

O inverso de separar_cabecas: as saídas das h cabeças lado a lado de novo, em cada posição,
a cabeça 0 nas primeiras C/h colunas: transpose(1, 2) e reshape(B, T, C). A referência é a
juntar_cabecas() da lição 04. As sondas têm B, h, T e C/h diferentes entre si."""
from __future__ import annotations

import torch

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L04 = importar_licao("04_multihead")
APOSTILA = "apostilas/04_multihead.md"
_JUNTAR = L04.juntar_cabecas       # a da lição, guardada antes de qualquer --com-o-seu


def juntar_cabecas(y):
    """Põe as saídas das cabeças lado a lado de novo (o inverso de separar_cabecas).

    y: (B, h, T, C/h), a saída de cada uma das h cabeças em cada posição. Devolve
    (B, T, C), com C = h * C/h: na linha do token t da frase b, as colunas j*C/h até
    (j+1)*C/h - 1 são y[b, j, t] (a cabeça 0 primeiro).
    """


def referencia(y):
    return _JUNTAR(y)


def versao(ajustes, y):
    """A junção com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    B, h, T, dh = y.shape
    jeito = ajustes.get("jeito", "certo")
    if jeito == "sem_transpose":
        return y.reshape(B, T, h * dh)                                # (B, T, C)
    if jeito == "intercaladas":
        return y.permute(0, 2, 3, 1).reshape(B, T, h * dh)            # (B, T, C)
    if jeito == "transpose_errado":
        return y.transpose(-2, -1).reshape(B, T, h * dh)              # (B, T, C)
    if jeito == "soma":
        return y.sum(dim=1)                                           # (B, T, C/h)
    if jeito == "cat_no_tempo":
        return torch.cat(y.unbind(1), dim=1)                          # (B, h*T, C/h)
    return y.transpose(1, 2).reshape(B, T, h * dh)                    # (B, T, C)


def sondas():
    g = torch.Generator().manual_seed(40)

    def sorteio(*forma):
        return torch.randn(*forma, generator=g, dtype=torch.float64)

    return [
        Sonda(1, "y (2, 4, 3, 5): a saída (2, 3, 20)", (sorteio(2, 4, 3, 5),)),
        Sonda(2, "y = 0, 1, 2, ... (cada número diz de onde veio), (1, 2, 3, 4)",
              (torch.arange(24, dtype=torch.float64).view(1, 2, 3, 4),)),
        Sonda(2, "um token só (T = 1): sem o transpose passa aqui", (sorteio(2, 4, 1, 5),)),
        Sonda(2, "uma cabeça só (h = 1): a saída é y sem o eixo das cabeças",
              (sorteio(2, 1, 3, 6),)),
        Sonda(2, "cabeças de um número só (C/h = 1), h = 6", (sorteio(2, 6, 3, 1),)),
        Sonda(3, "uma frase qualquer: y (3, 2, 7, 6)", (sorteio(3, 2, 7, 6),)),
        Sonda(3, "y (1, 3, 5, 8)", (sorteio(1, 3, 5, 8),)),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_permute(y):
    B, h, T, dh = y.shape
    return y.permute(0, 2, 1, 3).reshape(B, T, h * dh)                # (B, T, C)


def por_cat(y):
    """A definição: as saídas das cabeças concatenadas no último eixo."""
    return torch.cat(y.unbind(1), dim=-1)                             # (B, T, C)


def por_flatten(y):
    return y.movedim(1, 2).flatten(2)                                 # (B, T, C)


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


RESHAPE = "2. O reshape que dá errado em silêncio"
CABECAS = "1. Várias cabeças no mesmo orçamento"
PESOS = "3. Os pesos do GPT-2: `c_attn` fundido e o Conv1D"

DEFEITOS = [
    Defeito("sem_transpose", {"jeito": "sem_transpose"},
            "reshape(B, T, C) direto, sem o transpose(1, 2): a forma sai certa e os números "
            "não. Em y (B, h, T, C/h) a memória guarda cabeça por cabeça; o reshape relê "
            "essa ordem como se fosse token por token, e a linha de um token recebe números "
            "de outras posições (até do futuro). Traga as posições para a frente antes: "
            "y.transpose(1, 2), (B, T, h, C/h), e só então o reshape.",
            secao(RESHAPE)),
    Defeito("cabecas_intercaladas", {"jeito": "intercaladas"},
            "as cabeças saíram intercaladas: a coluna 0 veio da cabeça 0, a 1 da cabeça 1... "
            "(o eixo das cabeças foi para o fim antes do reshape). Cada cabeça ocupa C/h "
            "colunas SEGUIDAS, a cabeça 0 primeiro, na ordem que c_proj espera: "
            "(B, T, h, C/h) e então (B, T, C).",
            secao(PESOS)),
    Defeito("transpose_errado", {"jeito": "transpose_errado"},
            "o transpose trocou os dois últimos eixos (T e C/h, como em k.transpose(-2, -1) "
            "na atenção), e não as cabeças com as posições: transpose(1, 2).",
            secao(RESHAPE)),
    Defeito("somou_as_cabecas", {"jeito": "soma"},
            "as cabeças foram somadas: a saída ficou (B, T, C/h). As cabeças não se somam "
            "nem se tira a média delas; elas ficam lado a lado (concatenadas), C/h colunas "
            "cada, e quem as mistura é o c_proj.",
            secao(CABECAS)),
    Defeito("concatenou_no_tempo", {"jeito": "cat_no_tempo"},
            "as cabeças foram concatenadas no eixo das posições: a saída ficou (B, h*T, C/h), "
            "como se fossem h*T tokens. Concatene no último eixo (dim=-1), o das colunas.",
            secao(CABECAS)),
]

DESAFIO = Desafio(
    licao="04", nome="juntar_cabecas", titulo="juntar as cabeças, (B, h, T, C/h) -> (B, T, C)",
    modelo=juntar_cabecas, referencia=referencia, versao=versao, sondas=sondas,
    defeitos=DEFEITOS,
    secao=f'{APOSTILA}, seção "Desafio: separe e junte as cabeças"',
    dicas=[
        "É o caminho de separar_cabecas ao contrário: primeiro as posições voltam para a "
        "frente das cabeças, depois as cabeças viram colunas.",
        "B, h, T, dh = y.shape; y.transpose(1, 2) tem forma (B, T, h, C/h).",
        "O transpose deixa o tensor não contíguo: use .reshape(B, T, h * dh) (um .view "
        "daria erro sem um .contiguous() antes).",
    ],
    proibidas=[(L04, "juntar_cabecas")],
    alternativas={"permute": por_permute, "cat": por_cat, "flatten": por_flatten},
    substituir=lambda sua: {"04_multihead": {"juntar_cabecas": sua}},
    com_o_seu=[("06_gpt2.py", "os logits do GPT-2 com as suas cabeças contra os do "
                "transformers", "--so", "2")],
)
