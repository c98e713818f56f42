"""Desafio da lição 13: o passo do Llama com o cache KV, passo(modelo, ids, cache).

Só os tokens novos pelo modelo, nas posições que continuam o cache: o RoPE da posição de
cada um em Q e K, o cache com K JÁ GIRADA e só as kv cabeças de K/V (GQA), a máscara do
canto de baixo quando T < S. A referência é o passo() da lição 13 (com a atencao_com_cache
dela). O que se compara são os logits de cada chamada E o que fica no cache: cada sonda
passa os pedaços de uma frase, um depois do outro, pela função do aluno, a partir de um
cache vazio, e observa os logits de cada pedaço e as chaves e os valores guardados no fim.
Um erro que dá os logits certos e guarda outra coisa (K sem girar, as cabeças repetidas)
aparece no cache."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L13 = importar_licao("13_tucano")
L08 = importar_licao("08_since_2017")
APOSTILA = "apostilas/13_tucano.md"
_PASSO, _NOVO_CACHE = L13.passo, L13.novo_cache      # as originais


def passo(modelo, ids, cache):
    """Um passo do Llama com o cache KV: só os tokens novos `ids` (B, T) passam pelo
    modelo, nas posições que continuam o cache. Devolve os logits da ÚLTIMA posição, (B, V),
    e deixa no cache as chaves e os valores dos tokens novos, depois dos que já estavam.

    modelo: o Llama desta lição. modelo.embed(ids) dá (B, T, C); modelo.blocos, cada bloco
    com ln_1, attn, ln_2 e mlp; modelo.norm e modelo.cabeca(x) (a saída, (..., V));
    modelo.rotacao(inicio, T) dá o (cos, sen) do RoPE das posições inicio .. inicio + T - 1,
    que o aplicar_rope da lição 08 usa: L08.aplicar_rope(q, *rot), com
    L08 = importar_licao("08_since_2017"). Em bloco.attn: wq, wk, wv e wo (nn.Linear sem
    viés), h cabeças de consulta, kv cabeças de K/V, dh = C / h.
    cache: o CacheKV da lição 07 (o novo_cache desta lição): cache.k[i] e cache.v[i] são
    None (vazio) ou (B, kv, S, dh), as S chaves e valores já guardados da camada i; e
    cache.tamanho é S.

    As regras:
    - os T tokens novos estão nas posições S .. S + T - 1 (S = cache.tamanho ANTES do passo);
    - cada bloco: x = x + atenção(ln_1(x)), depois x = x + mlp(ln_2(x)); no fim, modelo.norm
      e modelo.cabeca na última posição;
    - na atenção, Q e K dos tokens novos giram pelo RoPE da posição de cada um; o cache
      guarda K JÁ GIRADA (o que já está lá não gira de novo) e só as kv cabeças de K/V: a
      consulta j lê a cabeça j // (h/kv), sem guardar cópias repetidas;
    - a máscara causal: o token novo i (posição S + i) vê as chaves 0 .. S + i.
    """


def referencia(modelo, ids, cache):
    return _PASSO(modelo, ids, cache)


def _atencao(ajustes, modelo, attn, x, rot, cache, camada):
    B, T, C = x.shape                                               # (B, T, C)
    q = attn.wq(x).view(B, T, attn.h, attn.dh).transpose(1, 2)      # (B, h, T, dh)
    k = attn.wk(x).view(B, T, attn.kv, attn.dh).transpose(1, 2)     # (B, kv, T, dh)
    v = attn.wv(x).view(B, T, attn.kv, attn.dh).transpose(1, 2)     # (B, kv, T, dh)
    q = L08.aplicar_rope(q, *rot)
    modo = ajustes.get("k", "girada")
    repetidas = ajustes.get("cabecas") == "repetidas"
    if repetidas:                                                   # GQA expandida no cache
        k, v = (t.repeat_interleave(attn.h // attn.kv, dim=1) for t in (k, v))  # (B, h, T, dh)
    if modo == "girada":
        k = L08.aplicar_rope(k, *rot)
    if cache.k[camada] is not None:
        k = torch.cat([cache.k[camada], k], dim=2)                  # (B, ., S, dh)
        v = torch.cat([cache.v[camada], v], dim=2)                  # (B, ., S, dh)
    S = k.shape[2]
    if modo == "duas_vezes":          # gira o cache inteiro de novo, e guarda o que girou
        k = L08.aplicar_rope(k, *modelo.rotacao(0, S))
    cache.k[camada], cache.v[camada] = k, v
    if modo == "crua":                # guarda K sem girar e gira tudo na leitura
        k = L08.aplicar_rope(k, *modelo.rotacao(0, S))
    mascara = ajustes.get("mascara", "certa")
    pode = None
    if T > 1 and mascara != "nenhuma":
        pode = torch.ones(T, S, dtype=torch.bool).tril(S - T if mascara == "certa" else 0)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=pode,
                                       enable_gqa=not repetidas)    # (B, h, T, dh)
    return attn.wo(y.transpose(1, 2).reshape(B, T, C))              # (B, T, C)


def versao(ajustes, modelo, ids, cache):
    """O passo com os defeitos do catálogo ligados (ajustes vazio: o certo)."""
    S, T = cache.tamanho, ids.shape[1]
    x = modelo.embed(ids)                                           # (B, T, C)
    for i, bloco in enumerate(modelo.blocos):
        # "depois": a posição lida do cache dentro do laço, quando o bloco 0 já guardou
        inicio = {"zero": 0, "depois": cache.tamanho}.get(ajustes.get("posicao"), S)
        rot = modelo.rotacao(inicio, T)
        x = x + _atencao(ajustes, modelo, bloco.attn, bloco.ln_1(x), rot, cache, i)
        x = x + bloco.mlp(bloco.ln_2(x))                            # (B, T, C)
    return modelo.cabeca(modelo.norm(x[:, -1]))                     # (B, V)


def observar(funcao, modelo, pedacos):
    """Um cache novo; cada pedaço de ids pela função, um depois do outro. Devolve (os
    logits de cada pedaço, as chaves e os valores do cache no fim, por camada)."""
    cache = _NOVO_CACHE(modelo)
    with torch.no_grad():
        logits = tuple(funcao(modelo, ids, cache) for ids in pedacos)
    return logits, tuple(cache.k), tuple(cache.v)


def sondas():
    g = torch.Generator().manual_seed(13)
    V = 11

    def llama(camadas, d, h, kv, largura, base):
        """Um Llama da lição, minúsculo, em float64, todo peso sorteado (os ganhos das
        RMSNorm longe de 1)."""
        with torch.random.fork_rng(devices=[]):      # o sorteio de agora não mexe no global
            m = L13.Llama(camadas, d, h, kv, largura, V, base).double().eval()
        with torch.no_grad():
            for nome, p in m.named_parameters():
                if p.dim() == 1:                                    # os ganhos das normas
                    p.copy_(torch.rand(p.shape, generator=g, dtype=torch.float64) + 0.5)
                else:
                    escala = 1.0 if nome.startswith("embed") else p.shape[1] ** -0.5
                    p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * escala)
        return m

    def frase(*tamanhos, B=3):
        return [torch.randint(0, V, (B, t), generator=g) for t in tamanhos]

    gqa = llama(2, 24, 4, 2, 10, 1000.0)       # C = 24, h = 4, kv = 2, dh = 6, V = 11
    mha = llama(3, 18, 3, 3, 8, 10_000.0)      # MHA: kv = h = 3
    return [
        Sonda(1, "as formas: a frase de 5 tokens (B = 3), cache vazio", (gqa, frase(5))),
        Sonda(2, "um token só (T = 1), cache vazio: a posição 0", (gqa, frase(1))),
        Sonda(2, "a frase (5) e depois um token, na posição 5", (gqa, frase(5, 1))),
        Sonda(2, "a frase (5) e depois 3 tokens de uma vez (T = 3 < S = 8)",
              (gqa, frase(5, 3))),
        Sonda(2, "um token por vez, 4 vezes: o que está no cache não gira de novo",
              (gqa, frase(1, 1, 1, 1))),
        Sonda(3, "a frase (6), 2 tokens e mais 1 (B = 1)", (gqa, frase(6, 2, 1, B=1))),
        Sonda(3, "outro Llama, MHA (kv = h = 3) e 3 blocos: 4 tokens, 1 e mais 1",
              (mha, frase(4, 1, 1, B=2))),
    ]


# ---------------------------------------------------------------- outras versões certas
def _rope_a_mao(x, inicio, base):
    """O RoPE das metades (o rotate_half do transformers), com os ângulos calculados aqui."""
    T, dh = x.shape[-2], x.shape[-1]
    theta = base ** (-torch.arange(0, dh, 2, dtype=torch.float64) / dh)          # (dh/2,)
    angulo = torch.arange(inicio, inicio + T, dtype=torch.float64)[:, None] * theta
    cos, sen = angulo.cos().to(x.dtype), angulo.sin().to(x.dtype)               # (T, dh/2)
    a, b = x[..., :dh // 2], x[..., dh // 2:]
    return torch.cat([a * cos - b * sen, a * sen + b * cos], dim=-1)


def a_mao(modelo, ids, cache):
    """A atenção escrita à mão: o RoPE calculado aqui, K e V repetidos para as h cabeças
    só na conta (o cache guarda as kv), as notas, a máscara de -inf e o softmax."""
    B, T = ids.shape
    S0 = cache.tamanho
    x = modelo.embed(ids)                                           # (B, T, C)
    for i, bloco in enumerate(modelo.blocos):
        a, u = bloco.attn, bloco.ln_1(x)                            # (B, T, C)
        q = a.wq(u).view(B, T, a.h, a.dh).transpose(1, 2)           # (B, h, T, dh)
        k = a.wk(u).view(B, T, a.kv, a.dh).transpose(1, 2)          # (B, kv, T, dh)
        v = a.wv(u).view(B, T, a.kv, a.dh).transpose(1, 2)          # (B, kv, T, dh)
        q, k = _rope_a_mao(q, S0, modelo.base), _rope_a_mao(k, S0, modelo.base)
        if cache.k[i] is not None:
            k, v = torch.cat([cache.k[i], k], 2), torch.cat([cache.v[i], v], 2)  # (B, kv, S, dh)
        cache.k[i], cache.v[i] = k, v
        S = k.shape[2]
        grupo = a.h // a.kv
        kh, vh = k.repeat_interleave(grupo, 1), v.repeat_interleave(grupo, 1)   # (B, h, S, dh)
        notas = q @ kh.transpose(-2, -1) / math.sqrt(a.dh)         # (B, h, T, S)
        futuro = torch.arange(S)[None, :] > (S - T + torch.arange(T))[:, None]  # (T, S)
        pesos = notas.masked_fill(futuro, float("-inf")).softmax(-1)
        y = (pesos @ vh).transpose(1, 2).reshape(B, T, -1)          # (B, T, C)
        x = x + a.wo(y)
        x = x + bloco.mlp(bloco.ln_2(x))                            # (B, T, C)
    return modelo.cabeca(modelo.norm(x[:, -1]))                     # (B, V)


def por_einsum(modelo, ids, cache):
    """As cabeças de consulta agrupadas por cabeça de K/V num eixo a mais (g = h/kv), com
    einsum, sem repetir K e V; a rotação do modelo (a tabela da lição 08)."""
    B, T = ids.shape
    S0 = cache.tamanho
    cos, sen = modelo.rotacao(S0, T)                                # 2 x (T, dh)
    x = modelo.embed(ids)                                           # (B, T, C)
    for i, bloco in enumerate(modelo.blocos):
        a, u = bloco.attn, bloco.ln_1(x)
        metade = a.dh // 2

        def girar(t):
            return t * cos + torch.cat([-t[..., metade:], t[..., :metade]], -1) * sen

        q = girar(a.wq(u).view(B, T, a.h, a.dh).transpose(1, 2))   # (B, h, T, dh)
        k = girar(a.wk(u).view(B, T, a.kv, a.dh).transpose(1, 2))  # (B, kv, T, dh)
        v = a.wv(u).view(B, T, a.kv, a.dh).transpose(1, 2)          # (B, kv, T, dh)
        if cache.k[i] is not None:
            k, v = torch.cat([cache.k[i], k], 2), torch.cat([cache.v[i], v], 2)
        cache.k[i], cache.v[i] = k, v
        S, g = k.shape[2], a.h // a.kv
        qg = q.view(B, a.kv, g, T, a.dh)                            # (B, kv, g, T, dh)
        notas = torch.einsum("bkgtd,bksd->bkgts", qg, k) / math.sqrt(a.dh)
        pode = torch.ones(T, S, dtype=torch.bool).tril(S - T)       # (T, S)
        pesos = notas.masked_fill(~pode, float("-inf")).softmax(-1)  # (B, kv, g, T, S)
        y = torch.einsum("bkgts,bksd->bkgtd", pesos, v).reshape(B, a.h, T, a.dh)
        x = x + a.wo(y.transpose(1, 2).reshape(B, T, -1))           # (B, T, C)
        x = x + bloco.mlp(bloco.ln_2(x))
    return modelo.cabeca(modelo.norm(x[:, -1]))                     # (B, V)


# ---------------------------------------------------------------- o catálogo
CACHE = f'{APOSTILA}, seção "4. O cache KV com RoPE e GQA"'

DEFEITOS = [
    Defeito("token_novo_na_posicao_0", {"posicao": "zero"},
            "os tokens novos giraram como se estivessem na posição 0: eles continuam a "
            "frase, nas posições S .. S + T - 1, com S = cache.tamanho antes do passo "
            "(modelo.rotacao(cache.tamanho, T)). Na posição 0 o token novo fica sem posição "
            "diante das chaves guardadas.", CACHE),
    Defeito("posicao_lida_depois_de_guardar", {"posicao": "depois"},
            "a posição foi lida do cache dentro do laço dos blocos: depois que o bloco 0 "
            "guarda as suas chaves, cache.tamanho já conta os tokens novos, e os blocos "
            "seguintes giram T posições adiante. Leia S = cache.tamanho uma vez, antes do "
            "primeiro bloco.", CACHE),
    Defeito("rope_duas_vezes_no_cache", {"k": "duas_vezes"},
            "as chaves do cache foram giradas de novo: o cache já guarda K girada pela "
            "posição de cada token, e girar K inteira (as guardadas e as novas) a cada passo "
            "soma a rotação outra vez nas antigas. Gire só as chaves novas, antes de "
            "guardá-las.", CACHE),
    Defeito("cache_sem_girar", {"k": "crua"},
            "o cache guardou K sem girar (a rotação veio só na leitura): os logits saem "
            "certos, mas o cache não é o da lição, e cada passo gira de novo todas as S "
            "chaves. A rotação depende só da posição do token, que não muda: gire uma vez e "
            "guarde K girada (o experimento 4 confere isso).", CACHE),
    Defeito("gqa_repetida_no_cache", {"cabecas": "repetidas"},
            "o cache guardou K e V repetidas para as h cabeças de consulta: os logits saem "
            "certos, mas o cache fica h/kv vezes maior, e economizar esse cache é a razão de "
            "ser da GQA. Guarde as kv cabeças e repita só na conta (enable_gqa=True no SDPA, "
            "ou repeat_interleave depois de ler o cache).", CACHE),
    Defeito("mascara_desalinhada", {"mascara": "desalinhada"},
            "com tokens novos sobre um cache (1 < T < S), a máscara foi alinhada pelo canto "
            "de cima: o token novo i está na posição S - T + i e vê as chaves 0 .. S - T + i "
            "(tril(S - T)), não só 0 .. i. É o que o is_causal=True do SDPA faz: com T < S "
            "a máscara vai escrita.", CACHE),
    Defeito("sem_mascara", {"mascara": "nenhuma"},
            "faltou a máscara causal quando entram vários tokens de uma vez (T > 1): a frase "
            "inteira passa no primeiro passo, e cada token viu os que vêm depois dele. Com "
            "T = 1 ela não faz falta; com T > 1, sim.", CACHE),
]

DESAFIO = Desafio(
    licao="13", nome="passo", titulo="o passo do Llama com o cache KV",
    modelo=passo, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    observar=observar,
    imports=("import math\n\nimport torch\nimport torch.nn.functional as F\n\n"
             "from comum import importar_licao\n\n"
             "L08 = importar_licao(\"08_since_2017\")   # aplicar_rope"),
    secao=f'{APOSTILA}, seção "Desafio: escreva o passo com o cache"',
    dicas=[
        "Leia S = cache.tamanho antes de tudo e faça rot = modelo.rotacao(S, T) uma vez. "
        "Depois, bloco a bloco: x = x + atenção(bloco.ln_1(x)); x = x + bloco.mlp(bloco.ln_2(x)).",
        "Na atenção: q, k, v de wq, wk, wv com view e transpose para (B, cabeças, T, dh); "
        "gire q e k com L08.aplicar_rope(..., *rot); só então junte k e v ao que está em "
        "cache.k[i] e cache.v[i] (torch.cat no eixo 2) e guarde.",
        "A conta: F.scaled_dot_product_attention(q, k, v, attn_mask=pode, enable_gqa=True), "
        "com pode = torch.ones(T, S, dtype=torch.bool).tril(S - T) quando T > 1 (None com "
        "T = 1); depois attn.wo(y.transpose(1, 2).reshape(B, T, C)).",
    ],
    proibidas=[(L13, "passo"), (L13, "atencao_com_cache"), (L13, "gerar")],
    alternativas={"a_mao": a_mao, "einsum": por_einsum},
)
