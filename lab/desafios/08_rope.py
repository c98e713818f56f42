"""Desafio da lição 08: o RoPE inteiro, rope(x, inicio, base): os ângulos e a rotação.

Os T tokens de x estão nas posições inicio .. inicio + T - 1; o par i junta as coordenadas
i e i + d_h/2 (a convenção do transformers e da lição) e gira pelo ângulo m * theta_i, com
theta_i = base^(-2i/d_h). A referência é a lição 08: aplicar_rope(x, *tabela_rope(...)).
Os ângulos saem da base e das posições que o aluno calcula: a base errada, as posições a
partir de 1 e o inicio esquecido (o passo do cache) aparecem."""
from __future__ import annotations

import torch

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L08 = importar_licao("08_since_2017")
APOSTILA = "apostilas/08_since_2017.md"
_TABELA, _APLICAR = L08.tabela_rope, L08.aplicar_rope   # as originais (--com-o-seu as troca)


def rope(x, inicio=0, base=10_000.0):
    """O RoPE: gira cada par de coordenadas de x por um ângulo proporcional à posição do
    token.

    x: (..., T, d_h), as consultas ou as chaves de T tokens (d_h par), que estão nas
    posições inicio, inicio + 1, ..., inicio + T - 1 (o primeiro token de uma frase está na
    posição 0; inicio > 0 são tokens novos depois de um passado guardado no cache). base: a
    base das frequências (10.000 no artigo; 500.000 no Llama 3). Devolve x girado, com a
    forma e o tipo de x.

    O par i (i = 0 .. d_h/2 - 1) junta as coordenadas i e i + d_h/2 (a convenção do
    transformers, a das metades). O token na posição m gira o par i pelo ângulo m * theta_i,
    com theta_i = base^(-2i/d_h), no sentido anti-horário:
        novo x_i          = x_i cos(m theta_i) - x_(i + d_h/2) sen(m theta_i)
        novo x_(i + d_h/2) = x_i sen(m theta_i) + x_(i + d_h/2) cos(m theta_i)
    """


def referencia(x, inicio=0, base=10_000.0):
    T, dh = x.shape[-2], x.shape[-1]
    return _APLICAR(x, *_TABELA(range(inicio, inicio + T), dh, base, x.dtype))


def versao(ajustes, x, inicio=0, base=10_000.0):
    """O RoPE com os defeitos do catálogo ligados (ajustes vazio: o certo)."""
    T, dh = x.shape[-2], x.shape[-1]
    primeira = {"de_1": inicio + 1, "sem_inicio": 0}.get(ajustes.get("posicoes"), inicio)
    m = torch.arange(primeira, primeira + T, dtype=torch.float64)          # (T,)
    b = 10_000.0 if ajustes.get("base") == "fixa" else base
    passo = 1 if ajustes.get("base") == "sem_o_2" else 2
    theta = b ** (-torch.arange(0, passo * dh // 2, passo, dtype=torch.float64) / dh)  # (dh/2,)
    angulo = torch.outer(m, theta)                                         # (T, dh/2)
    cos, sen = angulo.cos().to(x.dtype), angulo.sin().to(x.dtype)
    if ajustes.get("sentido") == "trocado":
        sen = -sen
    if ajustes.get("pares") == "vizinhos":                 # (x_2i, x_2i+1): a da Meta
        a, b_ = x[..., 0::2], x[..., 1::2]                              # 2 x (..., T, dh/2)
        return torch.stack([a * cos - b_ * sen, a * sen + b_ * cos], dim=-1).flatten(-2)
    a, b_ = x[..., :dh // 2], x[..., dh // 2:]                          # 2 x (..., T, dh/2)
    return torch.cat([a * cos - b_ * sen, a * sen + b_ * cos], dim=-1)  # (..., T, dh)


def sondas():
    g = torch.Generator().manual_seed(86)

    def sorteio(*forma):
        return torch.randn(*forma, generator=g, dtype=torch.float64)

    B, h, T, dh = 2, 3, 5, 8              # todos diferentes: um eixo trocado aparece
    so_a_coordenada_0 = torch.zeros(1, 1, T, dh, dtype=torch.float64)
    so_a_coordenada_0[..., 0] = 1.0
    return [
        Sonda(1, "as formas: x (2, 3, 5, 8), inicio 0, base 10.000", (sorteio(B, h, T, dh), 0)),
        Sonda(2, "um token na posição 0: nada gira", (sorteio(B, h, 1, dh), 0)),
        Sonda(2, "um token na posição 7 (inicio = 7, o passo do cache)",
              (sorteio(B, h, 1, dh), 7)),
        Sonda(2, "só a coordenada 0 acesa: para onde o par a leva",
              (so_a_coordenada_0, 0, 100.0)),
        Sonda(2, "base 100 (ângulos grandes): as frequências de cada par",
              (sorteio(B, h, T, dh), 0, 100.0)),
        Sonda(3, "3 tokens a partir da posição 4, base 500.000 (a do Llama 3)",
              (sorteio(B, h, 3, dh), 4, 500_000.0)),
        Sonda(3, "sem lote nem cabeças: x (7, 6), inicio 11, base 10.000",
              (sorteio(7, 6), 11, 10_000.0)),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_complexos(x, inicio=0, base=10_000.0):
    """Cada par (x_i, x_(i + d_h/2)) é um número complexo; girar é multiplicar por
    e^(i m theta)."""
    T, dh = x.shape[-2], x.shape[-1]
    theta = 1.0 / base ** (torch.arange(dh // 2, dtype=torch.float64) * 2 / dh)   # (dh/2,)
    m = torch.arange(inicio, inicio + T, dtype=torch.float64)                       # (T,)
    giro = torch.polar(torch.ones(T, dh // 2, dtype=torch.float64), torch.outer(m, theta))
    z = torch.complex(x[..., :dh // 2].double(), x[..., dh // 2:].double()) * giro
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)                         # (..., T, dh)


def por_matrizes(x, inicio=0, base=10_000.0):
    """Uma matriz de rotação 2 x 2 por posição e por par, aplicada com einsum."""
    T, dh = x.shape[-2], x.shape[-1]
    i = torch.arange(dh // 2, dtype=torch.float64)
    angulo = torch.arange(inicio, inicio + T, dtype=torch.float64)[:, None] \
        * base ** (-2 * i / dh)                                                    # (T, dh/2)
    c, s = angulo.cos(), angulo.sin()
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)      # (T, dh/2, 2, 2)
    pares = torch.stack([x[..., :dh // 2], x[..., dh // 2:]], dim=-1)       # (..., T, dh/2, 2)
    girados = torch.einsum("tpij,...tpj->...tpi", R.to(x.dtype), pares)    # (..., T, dh/2, 2)
    return torch.cat([girados[..., 0], girados[..., 1]], dim=-1)                   # (..., T, dh)


def em_float32(x, inicio=0, base=10_000.0):
    """O rotate_half do transformers, com o ângulo em float32 (como os modelos fazem)."""
    T, dh = x.shape[-2], x.shape[-1]
    inv = 1.0 / (base ** (torch.arange(0, dh, 2, dtype=torch.int64).float() / dh))  # (dh/2,)
    angulo = torch.arange(inicio, inicio + T).float()[:, None] * inv[None]          # (T, dh/2)
    angulo = torch.cat([angulo, angulo], dim=-1)                                   # (T, dh)
    x32 = x.float()
    metade = torch.cat([-x32[..., dh // 2:], x32[..., :dh // 2]], dim=-1)          # (..., T, dh)
    return x32 * angulo.cos() + metade * angulo.sin()


# ---------------------------------------------------------------- o catálogo
ROPE = f'{APOSTILA}, seção "6. RoPE: a posição mora na rotação"'

DEFEITOS = [
    Defeito("pares_vizinhos", {"pares": "vizinhos"},
            "os pares foram as coordenadas vizinhas (2i, 2i + 1), a convenção do código da "
            "Meta. A lição e o transformers juntam i com i + d_h/2 (as metades, o "
            "rotate_half): com os pesos de um Llama do hub, só essa dá a conta certa (o "
            "transformers permuta as linhas de W_Q e W_K ao converter os pesos da Meta).",
            ROPE),
    Defeito("posicoes_a_partir_de_1", {"posicoes": "de_1"},
            "as posições começaram em 1: o primeiro token está na posição 0 (ele não gira), "
            "e os tokens de x estão em inicio, inicio + 1, ..., inicio + T - 1.", ROPE),
    Defeito("esqueceu_o_inicio", {"posicoes": "sem_inicio"},
            "as posições começaram sempre em 0, esquecendo o inicio: no passo do cache, o "
            "token novo está na posição inicio (o número de tokens já guardados), não na 0. "
            "Girado na posição 0, ele fica sem posição nenhuma diante das chaves do cache.",
            ROPE),
    Defeito("base_ignorada", {"base": "fixa"},
            "a base do argumento foi ignorada: as frequências saíram de 10.000 sempre. Cada "
            "modelo tem a sua (500.000 no Llama 3), e o config.json a traz.", ROPE),
    Defeito("frequencias_sem_o_2", {"base": "sem_o_2"},
            "as frequências foram base^(-i/d_h), não base^(-2i/d_h): o expoente anda de 2 em "
            "2 (torch.arange(0, d_h, 2) / d_h), porque cada frequência serve um par, e há "
            "d_h/2 pares.", ROPE),
    Defeito("sentido_trocado", {"sentido": "trocado"},
            "a rotação foi no sentido horário (o sinal do seno trocado): o novo x_i é "
            "x_i cos - x_(i + d_h/2) sen, e o novo x_(i + d_h/2) é x_i sen + "
            "x_(i + d_h/2) cos. Girar q e k ao contrário ainda dá notas que só dependem da "
            "distância, mas não as do modelo treinado.", ROPE),
]


class _Guardado:
    """Um valor que a tabela trocada devolve no lugar de cos ou sin: a lição 13 o leva para o
    dispositivo dos pesos (.to), e ele fica como está."""

    def __init__(self, valor):
        self.valor = valor

    def to(self, *_args, **_kwargs):
        return self


def substituir(sua):
    """A tabela_rope da lição passa a devolver (posições, base) e o aplicar_rope a chamar o
    rope() do aluno com elas: os dois sempre andam juntos (aplicar_rope(x, *rot))."""
    def tabela_rope(posicoes, dh, base=10_000.0, dtype=torch.float32):
        return _Guardado([int(p) for p in posicoes]), _Guardado(base)

    def aplicar_rope(x, posicoes, base):
        posicoes, base = posicoes.valor, base.valor
        if not posicoes:
            return x
        if posicoes == list(range(posicoes[0], posicoes[0] + len(posicoes))):
            return sua(x, posicoes[0], base).to(x.dtype)
        return torch.cat([sua(x[..., i:i + 1, :], p, base).to(x.dtype)     # um por posição
                          for i, p in enumerate(posicoes)], dim=-2)
    return {"08_since_2017": {"tabela_rope": tabela_rope, "aplicar_rope": aplicar_rope}}


DESAFIO = Desafio(
    licao="08", nome="rope", titulo="o RoPE: os ângulos e a rotação",
    modelo=rope, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import torch",
    secao=f'{APOSTILA}, seção "RoPE: rope()"',
    dicas=[
        "Primeiro os ângulos: as posições m = torch.arange(inicio, inicio + T) e as "
        "frequências theta = base ** (-torch.arange(0, d_h, 2) / d_h); o ângulo é o produto "
        "externo, (T, d_h/2).",
        "Depois os pares: a = x[..., :d_h // 2] e b = x[..., d_h // 2:] (as metades). cos e "
        "sen do ângulo, (T, d_h/2), alinham com o eixo T de x.",
        "torch.cat([a * cos - b * sen, a * sen + b * cos], dim=-1), com o ângulo em float64 "
        "e cos, sen convertidos para x.dtype.",
    ],
    proibidas=[(L08, "tabela_rope"), (L08, "aplicar_rope")],
    alternativas={"complexos": por_complexos, "matrizes": por_matrizes, "float32": em_float32},
    substituir=substituir,
    com_o_seu=[("13_tucano.py", "os logits do Llama contra os do transformers", "--so", "2,4")],
)
