"""Desafio da lição 07: o passo com o cache KV, passo(modelo, ids, cache, causal).

Os T tokens novos passam pelo GPT2 da lição 06 nas posições S, S + 1, ... (S: os tokens já
no cache); em cada camada, K e V dos novos entram no fim dos guardados (eixo das posições),
o cache fica com todos, e os novos olham para as chaves guardadas e as suas, com a máscara
alinhada pelo canto de baixo. Devolve os logits da última posição. A referência é o passo
da lição 07; a saída comparada (observar) são os logits E o que ficou no cache, camada a
camada. As sondas: GPT2 pequenos em float64 com todo parâmetro sorteado, o cache vazio ou
com um passado que o passo da lição guardou antes."""
from __future__ import annotations

import copy
import functools
import math

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L03 = importar_licao("03_attention")
L06 = importar_licao("06_gpt2")
L07 = importar_licao("07_generation")
PASSO = L07.passo                     # o da lição, guardado antes de um --com-o-seu trocá-lo
APOSTILA = "apostilas/07_generation.md"


def passo(modelo, ids, cache, causal=True):
    """Um passo da geração com o cache KV: só os tokens novos passam pelo modelo.

    modelo: o GPT2 da lição 06 (modelo.wte, modelo.wpe, os blocos modelo.h, modelo.ln_f;
    em cada bloco, ln_1, attn.c_attn, attn.c_proj, ln_2 e mlp). ids: (B, T), os tokens
    NOVOS. cache: o CacheKV da lição 07, com cache.cabecas (h) e as listas cache.k e
    cache.v, uma entrada por camada: None enquanto vazio, senão um tensor (B, h, S, d/h),
    as chaves e os valores dos S tokens já vistos (cache.tamanho é S). Devolve os logits
    da última posição, (B, V).

    Os novos estão nas posições S .. S + T - 1 (o wpe deles). Em cada camada, as chaves e
    os valores dos novos (do c_attn, como na atenção da lição 04, separados em h cabeças)
    entram DEPOIS dos guardados, no eixo das posições, e o cache passa a guardar todos
    (S + T). Os novos olham para todas essas chaves; causal=True: o novo i (posição
    S + i) não vê as chaves depois dele (a máscara alinhada pelo canto de baixo, como na
    atenção da lição 03). O resto do bloco é o da lição 05 (Pre-LN, as duas somas), e no
    fim: ln_f da última posição vezes o wte transposto.
    """


def referencia(modelo, ids, cache, causal=True):
    return PASSO(modelo, ids, cache, causal)


def observar(funcao, modelo, ids, cache, causal=True):
    """Os logits e o cache depois do passo (a função muda o cache que recebe: uma cópia)."""
    cache = copy.deepcopy(cache)
    with torch.no_grad():
        logits = funcao(modelo, ids, cache, causal)
    saida = {"os logits": logits}
    for nome in ("k", "v"):
        for i, t in enumerate(getattr(cache, nome)):
            saida[f"cache.{nome}[{i}]"] = t
    return saida


def versao(ajustes, modelo, ids, cache, causal=True):
    """O passo com os defeitos do catálogo ligados (ajustes vazio: o certo)."""
    B, T = ids.shape
    inicio = 0 if ajustes.get("posicao") == "zero" else cache.tamanho
    x = modelo.wte(ids) + modelo.wpe(torch.arange(inicio, inicio + T))   # (B, T, C)
    C, h = x.shape[-1], cache.cabecas
    for i, bloco in enumerate(modelo.h):
        q, k, v = bloco.attn.c_attn(bloco.ln_1(x)).split(C, dim=2)      # 3 x (B, T, C)
        q, k, v = (t.view(B, T, h, C // h).transpose(1, 2)               # 3 x (B, h, T, C/h)
                   for t in (q, k, v))
        K, V = k, v
        if cache.k[i] is not None:
            par = (k, cache.k[i]) if ajustes.get("ordem") == "novo_antes" else (cache.k[i], k)
            K = torch.cat(par, dim=2)                                    # (B, h, S, C/h)
            if cache.v[i] is not None:
                par = (v, cache.v[i]) if ajustes.get("ordem") == "novo_antes" else (
                    cache.v[i], v)
                V = torch.cat(par, dim=2)                                # (B, h, S, C/h)
        if ajustes.get("guardar") == "so_o_novo":
            cache.k[i] = k
        else:
            cache.k[i] = K
        if ajustes.get("v") != "sem_v":
            cache.v[i] = v if ajustes.get("guardar") == "so_o_novo" else V
        S = K.shape[2]
        notas = q @ K.transpose(-2, -1) / math.sqrt(C // h)              # (B, h, T, S)
        mascara = ajustes.get("mascara", "certa")
        if causal and mascara != "nenhuma":
            inicio_do_futuro = 1 if mascara == "desalinhada" else S - T + 1
            futuro = torch.ones(T, S, dtype=torch.bool).triu(inicio_do_futuro)   # (T, S)
            notas = notas.masked_fill(futuro, float("-inf"))
        y = notas.softmax(dim=-1) @ V                                    # (B, h, T, C/h)
        y = y.transpose(1, 2).reshape(B, T, C)                           # (B, T, C)
        x = x + bloco.attn.c_proj(y)
        x = x + bloco.mlp(bloco.ln_2(x))                                 # (B, T, C)
    return modelo.ln_f(x[:, -1]) @ modelo.wte.weight.T                   # (B, V)


# ---------------------------------------------------------------- as sondas
def _gpt2(g, camadas, d, h):
    """Um GPT2 da lição 06, pequeno, em float64, com todo parâmetro sorteado de novo."""
    modelo = L06.GPT2(camadas, d, h, vocab=17, posicoes=16).double().eval()
    with torch.no_grad():
        for nome, p in modelo.named_parameters():
            base = 1.0 if "ln_" in nome and nome.endswith("weight") else 0.0
            p.copy_(base + 0.4 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return modelo


def _com_passado(g, modelo, h, B, S):
    """Um cache com S tokens sorteados já guardados (pelo passo da lição)."""
    cache = L07.CacheKV(len(modelo.h), h)
    if S:
        with torch.no_grad():
            PASSO(modelo, torch.randint(0, 17, (B, S), generator=g), cache)
    return cache


@functools.lru_cache(maxsize=1)
def _sondas():
    g = torch.Generator().manual_seed(77)
    B, h = 2, 3
    m = _gpt2(g, 2, 15, h)                 # d = 15, h = 3: d/h = 5; B = 2, T = 4
    outro = _gpt2(g, 3, 8, 2)              # outro modelo: 3 camadas, d = 8, h = 2

    def novos(T, b=B):
        return torch.randint(0, 17, (b, T), generator=g)

    return [
        Sonda(1, "6 tokens no cache, 4 novos: logits (2, 17), K e V (2, 3, 10, 5)",
              (m, novos(4), _com_passado(g, m, h, B, 6))),
        Sonda(2, "cache vazio, 4 tokens (o prefill)", (m, novos(4), _com_passado(g, m, h, B, 0))),
        Sonda(2, "cache vazio, um token só (T = 1)", (m, novos(1), _com_passado(g, m, h, B, 0))),
        Sonda(2, "6 tokens no cache, 1 novo (o passo da geração): a posição dele é 6",
              (m, novos(1), _com_passado(g, m, h, B, 6))),
        Sonda(2, "6 no cache, 4 novos, causal=False: sem máscara",
              (m, novos(4), _com_passado(g, m, h, B, 6), False)),
        Sonda(3, "outro modelo (L = 3, d = 8, h = 2), B = 3: 5 no cache, 2 novos",
              (outro, novos(2, 3), _com_passado(g, outro, 2, 3, 5))),
        Sonda(3, "outro modelo: 9 no cache, 1 novo", (outro, novos(1), _com_passado(
            g, outro, 2, B, 9))),
    ]


def sondas():
    """As mesmas sondas a cada pedido (ninguém as muda: observar trabalha numa cópia do
    cache), montadas uma vez por processo."""
    return list(_sondas())


# ---------------------------------------------------------------- outras versões certas
def pela_atencao_da_03(modelo, ids, cache, causal=True):
    """As cabeças com reshape/permute, a atenção da lição 03 (ela alinha a máscara pelo
    canto de baixo quando S > T)."""
    B, T = ids.shape
    S0 = cache.tamanho
    x = modelo.wte(ids) + modelo.wpe(torch.arange(S0, S0 + T))           # (B, T, C)
    C, h = x.shape[-1], cache.cabecas
    for i, bloco in enumerate(modelo.h):
        qkv = bloco.attn.c_attn(bloco.ln_1(x)).reshape(B, T, 3, h, C // h)   # (B, T, 3, h, dh)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)                             # 3 x (B, h, T, dh)
        if S0:
            k = torch.cat([cache.k[i], k], dim=-2)                       # (B, h, S, dh)
            v = torch.cat([cache.v[i], v], dim=-2)
        cache.k[i], cache.v[i] = k, v
        y, _ = L03.atencao(q, k, v, causal)                              # (B, h, T, dh)
        x = x + bloco.attn.c_proj(y.permute(0, 2, 1, 3).reshape(B, T, C))
        x = x + bloco.mlp(bloco.ln_2(x))
    return modelo.ln_f(x)[:, -1] @ modelo.wte.weight.T                   # (B, V)


def por_einsum(modelo, ids, cache, causal=True):
    """Tudo com os pesos: einsum, a máscara pelas posições de verdade, o SDPA nenhum."""
    B, T = ids.shape
    S0 = cache.tamanho
    posicoes = torch.arange(S0, S0 + T)                                  # (T,)
    x = F.embedding(ids, modelo.wte.weight) + F.embedding(posicoes, modelo.wpe.weight)
    C, h = x.shape[-1], cache.cabecas
    for i, bloco in enumerate(modelo.h):
        n = F.layer_norm(x, (C,), bloco.ln_1.weight, bloco.ln_1.bias, bloco.ln_1.eps)
        q, k, v = torch.einsum("btc,oc->bto", n, bloco.attn.c_attn.weight).add(
            bloco.attn.c_attn.bias).reshape(B, T, 3, h, C // h).unbind(2)   # (B, T, h, dh)
        k, v = k.transpose(1, 2), v.transpose(1, 2)                      # (B, h, T, dh)
        if cache.k[i] is not None:
            k, v = torch.cat([cache.k[i], k], 2), torch.cat([cache.v[i], v], 2)
        cache.k[i], cache.v[i] = k, v
        S = k.shape[2]
        notas = torch.einsum("bthd,bhsd->bhts", q, k) / math.sqrt(C // h)   # (B, h, T, S)
        if causal:
            chaves = torch.arange(S)                                     # posição de cada chave
            notas = notas.masked_fill(chaves[None, :] > posicoes[:, None], float("-inf"))
        y = torch.einsum("bhts,bhsd->bthd", notas.softmax(-1), v).reshape(B, T, C)
        x = x + bloco.attn.c_proj(y)
        x = x + bloco.mlp(bloco.ln_2(x))
    return modelo.ln_f(x[:, -1]) @ modelo.wte.weight.T                   # (B, V)


def em_float32(modelo, ids, cache, causal=True):
    """Tudo em float32: o modelo e o passado convertidos; o cache guarda float32."""
    m32 = copy.deepcopy(modelo).float()
    cache.k = [None if t is None else t.float() for t in cache.k]
    cache.v = [None if t is None else t.float() for t in cache.v]
    return por_einsum(m32, ids, cache, causal).double()


# ---------------------------------------------------------------- o catálogo
CACHE = f'{APOSTILA}, seção "5. O cache KV"'
DEFEITOS = [
    Defeito("posicao_do_zero", {"posicao": "zero"},
            "os tokens novos entraram na posição 0 (wpe de 0, 1, ...), e não onde a frase "
            "parou: com S tokens no cache, o novo está na posição S (wpe[S]). Não dá erro "
            "nenhum; só muda os logits.",
            CACHE),
    Defeito("mascara_desalinhada", {"mascara": "desalinhada"},
            "com tokens no cache, a máscara foi alinhada pelo canto de cima (triu(1), ou o "
            "is_causal=True do scaled_dot_product_attention): o novo i está na posição "
            "S - T + i e vê as chaves 0 .. S - T + i; com um token novo, ele vê todas, e a "
            "máscara de cima o deixa ver só a chave 0.",
            CACHE),
    Defeito("sem_mascara", {"mascara": "nenhuma"},
            "sem máscara: com vários tokens novos (o prefill, ou T < S), um novo viu as "
            "chaves dos que vêm depois dele. Com um token só não há o que mascarar, mas com "
            "T > 1 há: triu(S - T + 1) com -inf antes do softmax.",
            CACHE),
    Defeito("cache_so_com_os_novos", {"guardar": "so_o_novo"},
            "o cache ficou só com os tokens novos: K e V foram guardados antes de o passado "
            "entrar (cache.k[i] = k e depois k = cat(...)). Os logits deste passo saem "
            "certos, mas o próximo passo perde o passado: guarde o K e o V já concatenados.",
            CACHE),
    Defeito("v_nao_guardado", {"v": "sem_v"},
            "o V não foi guardado no cache (só o K): os logits deste passo saem certos, mas "
            "o próximo passo não tem os valores do passado. cache.v[i] recebe o V "
            "concatenado, como cache.k[i].",
            CACHE),
    Defeito("novos_antes_do_passado", {"ordem": "novo_antes"},
            "os novos entraram ANTES dos guardados: cat([novo, passado]). As posições do "
            "cache são as da frase, em ordem: o passado primeiro, cat([passado, novo], "
            "dim=2).",
            CACHE),
]

DESAFIO = Desafio(
    licao="07", nome="passo", titulo="o passo da geração com o cache KV",
    modelo=passo, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import math\n\nimport torch",
    secao=f'{APOSTILA}, seção "Desafio: escreva o passo com o cache"',
    dicas=[
        "Comece pelas posições: S = cache.tamanho, e os novos usam "
        "modelo.wpe(torch.arange(S, S + T)). Depois, bloco a bloco: x = x + atenção com "
        "cache(ln_1(x)); x = x + bloco.mlp(bloco.ln_2(x)).",
        "Na atenção: q, k, v = bloco.attn.c_attn(n).split(C, dim=2), cada um com "
        ".view(B, T, h, C // h).transpose(1, 2). Se cache.k[i] não é None, "
        "k = torch.cat([cache.k[i], k], dim=2) (e o mesmo com v); depois guarde os dois.",
        "As notas q @ k.transpose(-2, -1) / math.sqrt(C // h) são (B, h, T, S); a máscara é "
        "torch.ones(T, S, dtype=torch.bool).triu(S - T + 1), com -inf, antes do softmax. No "
        "fim: modelo.ln_f(x[:, -1]) @ modelo.wte.weight.T.",
    ],
    proibidas=[(L07, "passo"), (L07, "atencao_com_cache")],
    alternativas={"atencao_da_03": pela_atencao_da_03, "einsum": por_einsum,
                  "float32": em_float32},
    substituir=lambda seu: {"07_generation": {
        "passo": lambda modelo, ids, cache, causal=True, rapida=True: seu(
            modelo, ids, cache, causal)}},
    com_o_seu=[("07_generation.py", "a gulosa do experimento 1 contra o generate() e os "
                "logits com cache do experimento 5, com o seu passo")],
    observar=observar,
)
