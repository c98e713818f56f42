"""Desafio da lição 03: a atenção de uma cabeça, atencao(q, k, v, causal).

As notas q·kᵀ/raiz(d_k), a máscara causal (alinhada pelo canto de baixo quando há mais
chaves que consultas, como no passo do cache da lição 07), o softmax de cada linha e a
média ponderada dos v. A referência é a atencao() da lição 03 (a saída; ela devolve também
os pesos)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L03 = importar_licao("03_attention")
APOSTILA = "apostilas/03_attention.md"


def atencao(q, k, v, causal=False):
    """A atenção de uma cabeça: a média dos valores v, cada um pesado pela semelhança entre
    a consulta e a chave dele.

    q: (..., T, d_k), as consultas; k: (..., S, d_k), as chaves; v: (..., S, d_v), os
    valores. Devolve a saída, (..., T, d_v): só ela (a atencao da lição 03 devolve também
    os pesos; aqui, não).

    As notas são q·kᵀ divididas por raiz(d_k); cada linha delas (uma consulta) passa por um
    softmax sobre as chaves, e os pesos que saem fazem a média dos v.
    causal=True: nenhuma consulta vê uma chave do futuro. Com S > T (consultas novas sobre
    um passado guardado, como no passo do cache da lição 07), a consulta i está na posição
    S - T + i: ela vê as chaves 0 .. S - T + i.
    """


def referencia(q, k, v, causal=False):
    return L03.atencao(q, k, v, causal)[0]


def versao(ajustes, q, k, v, causal=False):
    """A atenção com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    escala, eixo, mascara = (ajustes.get("escala", "raiz"), ajustes.get("eixo", -1),
                             ajustes.get("mascara", "certa"))
    T, S, d_k = q.shape[-2], k.shape[-2], q.shape[-1]
    notas = q @ k.transpose(-2, -1)                                    # (..., T, S)
    notas = notas / {"raiz": math.sqrt(d_k), "d_k": d_k, "nenhuma": 1.0}[escala]
    futuro = None
    if causal:
        inicio = {"vaza": S - T + 2, "esconde": S - T, "desalinhada": 1}.get(mascara, S - T + 1)
        futuro = torch.ones(T, S, dtype=torch.bool).triu(inicio)      # (T, S)
        if mascara == "zero":
            notas = notas.masked_fill(futuro, 0.0)
        elif mascara != "depois":
            notas = notas.masked_fill(futuro, float("-inf"))
    pesos = notas.softmax(dim=eixo)                                    # (..., T, S)
    if causal and mascara == "depois":
        pesos = pesos.masked_fill(futuro, 0.0)
    return pesos @ v                                                   # (..., T, d_v)


def sondas():
    g = torch.Generator().manual_seed(3)

    def sorteio(*forma, vezes=1.0):
        return torch.randn(*forma, generator=g, dtype=torch.float64) * vezes

    B, h, T, dk, dv = 2, 3, 5, 4, 6           # todos diferentes: um eixo trocado aparece
    q, k, v = sorteio(B, h, T, dk), sorteio(B, h, T, dk), sorteio(B, h, T, dv)
    return [
        Sonda(1, f"as formas: q e k (2, 3, 5, 4), v (2, 3, 5, 6), causal", (q, k, v, True)),
        Sonda(2, "um token só (T = S = 1): ele só vê a si mesmo",
              (sorteio(B, h, 1, dk), sorteio(B, h, 1, dk), sorteio(B, h, 1, dv), True)),
        Sonda(2, "sem máscara (causal=False): só as notas e o softmax",
              (sorteio(B, h, T, dk), sorteio(B, h, T, dk), sorteio(B, h, T, dv), False)),
        Sonda(2, "consultas zero (q = 0): pesos iguais nas chaves que cada uma vê",
              (torch.zeros(B, h, T, dk, dtype=torch.float64), sorteio(B, h, T, dk),
               sorteio(B, h, T, dv), True)),
        Sonda(2, "3 consultas novas sobre 7 chaves (T < S, como no passo do cache)",
              (sorteio(B, h, 3, dk), sorteio(B, h, 7, dk), sorteio(B, h, 7, dv), True)),
        Sonda(2, "notas grandes (q e k x 3): onde dividir por raiz(d_k) pesa",
              (sorteio(B, h, T, dk, vezes=3), sorteio(B, h, T, dk, vezes=3),
               sorteio(B, h, T, dv), False)),
        Sonda(3, "uma frase qualquer, causal (T = 6)",
              (sorteio(B, h, 6, dk), sorteio(B, h, 6, dk), sorteio(B, h, 6, dv), True)),
        Sonda(3, "sem lote nem cabeças: q e k (7, 8), v (7, 3), causal",
              (sorteio(7, 8), sorteio(7, 8), sorteio(7, 3), True)),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_sdpa(q, k, v, causal=False):
    """O SDPA do PyTorch. O is_causal dele alinha pelo canto de CIMA (só vale com T = S):
    com T < S a máscara vai escrita, True = PODE olhar."""
    T, S = q.shape[-2], k.shape[-2]
    if not causal:
        return F.scaled_dot_product_attention(q, k, v)
    pode = torch.ones(T, S, dtype=torch.bool).tril(S - T)                 # (T, S)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=pode)


def por_einsum(q, k, v, causal=False):
    T, S = q.shape[-2], k.shape[-2]
    notas = torch.einsum("...td,...sd->...ts", q, k) / q.shape[-1] ** 0.5  # (..., T, S)
    if causal:
        i, j = torch.arange(T)[:, None] + (S - T), torch.arange(S)[None, :]
        notas = torch.where(j > i, torch.tensor(float("-inf"), dtype=notas.dtype), notas)
    return torch.einsum("...ts,...sd->...td", notas.softmax(-1), v)        # (..., T, d_v)


def em_float32(q, k, v, causal=False):
    return por_einsum(q.float(), k.float(), v.float(), causal)


# ---------------------------------------------------------------- o catálogo
def secao(numero_e_titulo):
    return f'{APOSTILA}, seção "{numero_e_titulo}"'


DEFEITOS = [
    Defeito("sem_raiz", {"escala": "nenhuma"},
            "as notas não foram divididas por raiz(d_k). Sem isso, a variância de q·k cresce "
            "com d_k e o softmax satura: um peso perto de 1, os outros perto de 0.",
            secao("2. Por que dividir por √d_k")),
    Defeito("divide_por_d_k", {"escala": "d_k"},
            "as notas foram divididas por d_k, não pela raiz de d_k: o softmax fica achatado "
            "demais (pesos quase iguais) quando d_k é grande.",
            secao("2. Por que dividir por √d_k")),
    Defeito("softmax_no_eixo_errado", {"eixo": -2},
            "o softmax foi feito na coluna (sobre as consultas), não na linha (sobre as "
            "chaves): são os pesos de UMA consulta que somam 1. Use dim=-1.",
            secao("1. A ideia: perguntar, anunciar, entregar")),
    Defeito("mascara_vaza_um", {"mascara": "vaza"},
            "a máscara deixa passar uma chave do futuro: a consulta i vê a chave i + 1. O "
            "futuro começa logo depois da diagonal: triu(1), não triu(2).",
            secao("3. A máscara causal")),
    Defeito("mascara_esconde_o_proprio", {"mascara": "esconde"},
            "a máscara esconde também a própria posição (a diagonal): a consulta 0 fica sem "
            "nenhuma chave, o softmax de uma linha toda -inf dá NaN. Cada token vê a si "
            "mesmo: o futuro começa em triu(1).",
            secao("3. A máscara causal")),
    Defeito("mascara_depois_do_softmax", {"mascara": "depois"},
            "a máscara veio depois do softmax: os pesos do futuro viram 0, mas os outros não "
            "somam mais 1. Ponha -inf nas notas ANTES do softmax, que aí renormaliza.",
            secao("3. A máscara causal")),
    Defeito("mascara_com_zero", {"mascara": "zero"},
            "as notas do futuro viraram 0, não -inf: exp(0) = 1, e o futuro continua com "
            "peso. Só -inf some no softmax.",
            secao("3. A máscara causal")),
    Defeito("mascara_desalinhada", {"mascara": "desalinhada"},
            "com mais chaves que consultas (T < S, o passo do cache), a máscara foi alinhada "
            "pelo canto de cima: a consulta i é a posição S - T + i, não i. É o que o "
            "is_causal do SDPA faz, e por isso a lição 07 escreve a máscara.",
            secao("3. A máscara causal")),
]

DESAFIO = Desafio(
    licao="03", nome="atencao", titulo="a atenção de uma cabeça",
    modelo=atencao, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import math\n\nimport torch",
    secao=f'{APOSTILA}, seção "Desafio: escreva a atenção"',
    dicas=[
        "Comece pelas formas: q (..., T, d_k) vezes k transposta nos dois últimos eixos "
        "(k.transpose(-2, -1)) dá as notas (..., T, S). A saída é pesos @ v.",
        "Divida as notas por math.sqrt(d_k), com d_k = q.shape[-1], antes do softmax; o "
        "softmax é sobre as chaves: notas.softmax(dim=-1).",
        "A máscara: torch.ones(T, S, dtype=torch.bool).triu(S - T + 1) é True onde a chave "
        "está no futuro; notas.masked_fill(futuro, float('-inf')) antes do softmax.",
    ],
    proibidas=[(L03, "atencao"), (L03, "pesos_de_atencao"), (L03, "atencao_rapida")],
    alternativas={"sdpa": por_sdpa, "einsum": por_einsum, "float32": em_float32},
    substituir=lambda sua: {"03_attention": {
        "atencao": lambda q, k, v, causal=False: (sua(q, k, v, causal),
                                                  L03.pesos_de_atencao(q, k, causal))}},
    com_o_seu=[("06_gpt2.py", "os logits do GPT-2 contra os do transformers", "--so", "2")],
)
