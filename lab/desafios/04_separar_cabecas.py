"""Desafio da lição 04: separar as cabeças, separar_cabecas(x, h): (B, T, C) -> (B, h, T, C/h).

A cabeça j fica com as colunas j*C/h .. (j+1)*C/h - 1 de cada token, e as posições continuam
na ordem: view(B, T, h, C/h) e transpose(1, 2). A referência é a separar_cabecas() da lição
04. As sondas têm B, T, h e C/h diferentes entre si: um eixo trocado aparece na forma, e o
reshape direto, que dá a forma certa, aparece nos números."""
from __future__ import annotations

import torch

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L04 = importar_licao("04_multihead")
APOSTILA = "apostilas/04_multihead.md"
_SEPARAR = L04.separar_cabecas     # a da lição, guardada antes de qualquer --com-o-seu


def separar_cabecas(x, h):
    """Corta o vetor de cada token em h fatias, uma por cabeça.

    x: (B, T, C), B frases de T tokens com C números cada; h: quantas cabeças (C é
    múltiplo de h). Devolve (B, h, T, C/h): a cabeça j da frase b tem, na linha t, as
    colunas j*C/h até (j+1)*C/h - 1 do token t (a primeira fatia é a cabeça 0).
    """


def referencia(x, h):
    return _SEPARAR(x, h)


def versao(ajustes, x, h):
    """A separação com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    B, T, C = x.shape
    jeito = ajustes.get("jeito", "certo")
    if jeito == "reshape_direto":
        return x.reshape(B, h, T, C // h)                             # (B, h, T, C/h)
    if jeito == "intercaladas":
        return x.reshape(B, T, C // h, h).permute(0, 3, 1, 2)         # (B, h, T, C/h)
    if jeito == "sem_transpose":
        return x.view(B, T, h, C // h)                                # (B, T, h, C/h)
    if jeito == "h_trocado":
        return x.view(B, T, C // h, h).transpose(1, 2)                # (B, C/h, T, h)
    return x.view(B, T, h, C // h).transpose(1, 2)                    # (B, h, T, C/h)


def sondas():
    g = torch.Generator().manual_seed(4)

    def sorteio(*forma):
        return torch.randn(*forma, generator=g, dtype=torch.float64)

    B, T, h, dh = 2, 3, 4, 5
    C = h * dh
    return [
        Sonda(1, "x (2, 3, 20), h = 4: a saída (2, 4, 3, 5)", (sorteio(B, T, C), h)),
        Sonda(2, "x = 0, 1, 2, ... (cada número diz de onde veio), (1, 3, 8), h = 2",
              (torch.arange(24, dtype=torch.float64).view(1, 3, 8), 2)),
        Sonda(2, "um token só (T = 1): o reshape direto passa aqui",
              (sorteio(B, 1, C), h)),
        Sonda(2, "uma cabeça só (h = 1): a saída é x com um eixo a mais",
              (sorteio(B, T, 6), 1)),
        Sonda(2, "cabeças de um número só (C/h = 1), h = 6", (sorteio(B, T, 6), 6)),
        Sonda(3, "uma frase qualquer: x (3, 7, 12), h = 2", (sorteio(3, 7, 12), 2)),
        Sonda(3, "x (1, 5, 24), h = 3", (sorteio(1, 5, 24), 3)),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_permute(x, h):
    B, T, C = x.shape
    return x.reshape(B, T, h, C // h).permute(0, 2, 1, 3)             # (B, h, T, C/h)


def por_fatias(x, h):
    """A definição, sem reshape: a fatia de cada cabeça, empilhadas no eixo 1."""
    return torch.stack(x.split(x.shape[-1] // h, dim=-1), dim=1)     # (B, h, T, C/h)


def por_unflatten(x, h):
    return x.unflatten(-1, (h, -1)).movedim(2, 1)                     # (B, h, T, C/h)


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


RESHAPE = "2. O reshape que dá errado em silêncio"
CABECAS = "1. Várias cabeças no mesmo orçamento"
PESOS = "3. Os pesos do GPT-2: `c_attn` fundido e o Conv1D"

DEFEITOS = [
    Defeito("reshape_direto", {"jeito": "reshape_direto"},
            "reshape(B, h, T, C/h) direto, sem o transpose: a forma sai certa e os números "
            "não. A memória guarda os números token por token, e o reshape só a relê em "
            "outra forma: a 'linha 1 da cabeça 0' vira um pedaço do token 0. Corte cada "
            "token em h fatias com view(B, T, h, C/h) e traga as cabeças para a frente com "
            "transpose(1, 2).",
            secao(RESHAPE)),
    Defeito("cabecas_intercaladas", {"jeito": "intercaladas"},
            "as cabeças saíram intercaladas: a cabeça j ficou com as colunas j, j + h, "
            "j + 2h... (o view foi para (B, T, C/h, h), e o eixo das cabeças é o último). "
            "Cada cabeça tem uma fatia CONTÍNUA de C/h números, na ordem das colunas de "
            "c_attn: view(B, T, h, C/h).",
            secao(PESOS)),
    Defeito("sem_transpose", {"jeito": "sem_transpose"},
            "faltou o transpose(1, 2): a saída ficou (B, T, h, C/h), com as posições antes "
            "das cabeças. A atenção da lição 03 trata os dois últimos eixos como (T, d_k): "
            "o eixo das cabeças precisa vir antes do das posições.",
            secao(RESHAPE)),
    Defeito("h_e_largura_trocados", {"jeito": "h_trocado"},
            "h e C/h trocaram de lugar no view: a saída tem C/h 'cabeças' de h números. "
            "São h cabeças, cada uma com C/h = C // h números: view(B, T, h, C // h).",
            secao(CABECAS)),
]

DESAFIO = Desafio(
    licao="04", nome="separar_cabecas", titulo="separar as cabeças, (B, T, C) -> (B, h, T, C/h)",
    modelo=separar_cabecas, referencia=referencia, versao=versao, sondas=sondas,
    defeitos=DEFEITOS,
    secao=f'{APOSTILA}, seção "Desafio: separe e junte as cabeças"',
    dicas=[
        "São dois passos: primeiro cortar cada token em h fatias, depois trazer o eixo das "
        "cabeças para a frente do eixo das posições.",
        "B, T, C = x.shape; x.view(B, T, h, C // h) tem forma (B, T, h, C/h): a fatia j de "
        "cada token está em [:, :, j].",
        "Falta trocar os eixos 1 e 2: .transpose(1, 2) dá (B, h, T, C/h).",
    ],
    proibidas=[(L04, "separar_cabecas")],
    alternativas={"permute": por_permute, "fatias": por_fatias, "unflatten": por_unflatten},
    substituir=lambda sua: {"04_multihead": {"separar_cabecas": sua}},
    com_o_seu=[("06_gpt2.py", "os logits do GPT-2 com as suas cabeças contra os do "
                "transformers", "--so", "2")],
)
