"""Lição 07 · Gerando texto: amostragem e o cache KV (leia junto: apostilas/07_generation.md)
1. O laço autorregressivo: um token por vez
2. Temperatura: a mesma distribuição, mais ou menos achatada
3. top-k e top-p: quem sobrevive ao corte
4. Sorteio com semente: o mesmo texto de novo
5. O cache KV à mão: os mesmos logits, muito menos conta
6. Quanto ocupa o cache: 2 x L x d x bytes por token
7. Por que o cache precisa de causalidade"""
from comum import Licao, importar_licao, inteiro_entre, opcao, paginas, real_entre, texto_utf8
LICAO = Licao.da_docstring(__doc__, usa_gpt2={1, 2, 3, 4, 5, 6, 7}, opcoes=[
    opcao("--texto", texto_utf8('--texto "O gato"'), None, 'a frase (padrão: "The cat sat on '
          'the"; num modelo de caracteres, como o da lição 10: "A atenção é")', "FRASE"),
    opcao("--temperatura", real_entre(0.01, 100, "--temperatura 0.7"), 1.0, "temperatura do "
          "experimento 4 (padrão: 1; perto de 0 = quase gulosa)", "T"),
    opcao("--top-k", inteiro_entre(0, exemplo="--top-k 40"), 0, "top-k do experimento 4 "
          "(padrão: 0 = desligado)", "K"),
    opcao("--top-p", real_entre(0, 1, "--top-p 0.9", inclui_minimo=False), 0.9, "top-p do "
          "experimento 4 (padrão: 0,9; 1 = desligado)", "P"),
    opcao("--fp16", "flag", None, "a tabela do experimento 6 em float16 (2 bytes por número)"),
    opcao("--conversas", inteiro_entre(1, 1000, "--conversas 32"), 8, "conversas ao mesmo "
          "tempo no gpt2-xl, no experimento 6", "N"), *paginas.opcoes()])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch

L03 = importar_licao("03_attention")  # a máscara causal (futuro), a entropia e o SDPA da 03
L04 = importar_licao("04_multihead")  # juntar_cabecas


# ============================================================ a peça: o cache KV
class CacheKV:
    """Chaves e valores já calculados, por camada: k[i] e v[i] têm forma (B, h, S, d/h)."""

    def __init__(self, camadas, cabecas):
        self.cabecas = cabecas
        self.k, self.v = [None] * camadas, [None] * camadas

    @classmethod
    def para(cls, config):
        return cls(config.n_layer, config.n_head)

    @property
    def tamanho(self):                  # S: quantos tokens já estão guardados
        return 0 if self.k[0] is None else self.k[0].shape[2]

    def primeiros(self, n):
        """Outro cache com os n primeiros tokens deste: vistas, nenhuma cópia (o passo não
        escreve nos tensores guardados, só concatena os novos num tensor novo)."""
        outro = CacheKV(len(self.k), self.cabecas)
        outro.k = [k[:, :, :n] for k in self.k]             # (B, h, n, d/h)
        outro.v = [v[:, :, :n] for v in self.v]             # (B, h, n, d/h)
        return outro

    def bytes(self):
        return sum(t.numel() * t.element_size() for t in self.k + self.v if t is not None)


def atencao_com_cache(attn, x, cache, camada, causal=True, rapida=True):
    """A atenção da lição 05 (mesmos pesos c_attn e c_proj) para os T tokens NOVOS de x,
    que olham para as S chaves e valores: as do cache mais as suas. rapida=False: a conta
    à mão, abaixo; True: a mesma conta pelo SDPA (a atencao_rapida da lição 03)."""
    B, T, C = x.shape                                       # (B, T, C)
    h = cache.cabecas
    q, k, v = attn.c_attn(x).split(C, dim=2)                # 3 x (B, T, C)
    q, k, v = (t.view(B, T, h, C // h).transpose(1, 2)      # 3 x (B, h, T, C/h)
               for t in (q, k, v))
    if cache.k[camada] is not None:                         # o passado, sem recalcular
        k = torch.cat([cache.k[camada], k], dim=2)          # (B, h, S, C/h)
        v = torch.cat([cache.v[camada], v], dim=2)          # (B, h, S, C/h)
    cache.k[camada], cache.v[camada] = k, v
    if rapida:      # conferida igual à de baixo no experimento 5 da 03 (e no 5 desta)
        y = L03.atencao_rapida(q, k, v, causal)            # (B, h, T, C/h)
        return attn.c_proj(L04.juntar_cabecas(y))           # (B, T, C)
    S = k.shape[2]
    notas = q @ k.transpose(-2, -1) / (C // h) ** 0.5      # (B, h, T, S)
    if causal and T > 1:   # o novo i está na posição S - T + i: vê as chaves 0 .. S - T + i
        # (com T = 1, o único token novo vê todas as chaves: não há o que mascarar)
        notas = notas.masked_fill(L03.futuro(T, x.device, S), float("-inf"))  # (T, S)
    y = notas.softmax(dim=-1) @ v                           # (B, h, T, C/h)
    return attn.c_proj(L04.juntar_cabecas(y))               # (B, T, C)


def passo(modelo, ids, cache, causal=True, rapida=True):
    """Roda pelo modelo só os tokens novos `ids` (B, T), guardando K e V no cache.
    Devolve os logits da última posição, (B, V): é deles que sai o próximo token.
    rapida: a atenção pelo SDPA (o padrão) ou à mão (atencao_com_cache)."""
    inicio = cache.tamanho                                  # tokens já vistos
    if inicio + ids.shape[1] > modelo.wpe.num_embeddings:
        raise ValueError(f"a sequência passaria de {modelo.wpe.num_embeddings} tokens, "
                         "o máximo de posições deste modelo")
    posicoes = torch.arange(inicio, inicio + ids.shape[1])  # continuam de onde parou
    x = modelo.wte(ids) + modelo.wpe(posicoes)              # (B, T, C)
    for i, bloco in enumerate(modelo.h):                    # o Bloco (Pre-LN) da lição 05
        x = x + atencao_com_cache(bloco.attn, bloco.ln_1(x), cache, i, causal, rapida)
        x = x + bloco.mlp(bloco.ln_2(x))                    # (B, T, C)
    return modelo.ln_f(x[:, -1]) @ modelo.wte.weight.T      # (B, V)


def bytes_por_token(camadas, d, bytes_por_valor=4):
    return 2 * camadas * d * bytes_por_valor            # K e V, em cada camada


# ============================================================ a peça: escolher o próximo token
def filtrar_top_k(logits, k):
    """Mantém os k maiores logits (e quem empata com o k-ésimo); os outros viram -inf."""
    if k <= 0 or k >= logits.shape[-1]:
        return logits
    limiar = logits.topk(k).values[..., -1, None]           # (..., 1): o k-ésimo maior
    return logits.masked_fill(logits < limiar, float("-inf"))


def filtrar_top_p(logits, p):
    """Núcleo: o menor grupo dos mais prováveis com massa >= p. Do menos provável ao
    mais provável, sai a cauda cuja massa somada não passa de 1 - p."""
    if p >= 1:
        return logits
    ordenados, ordem = logits.sort(dim=-1)                  # crescente, (..., V)
    acumulada = ordenados.softmax(dim=-1).cumsum(dim=-1)    # (..., V)
    fora = acumulada <= 1 - p
    fora[..., -1] = False                                   # o mais provável fica sempre
    return logits.masked_fill(fora.scatter(-1, ordem, fora), float("-inf"))


def escolher(logits, temperatura=0.0, top_k=0, top_p=1.0, geradores=None):
    """O próximo token, (B, 1). Temperatura 0 = gulosa. A ordem é a do generate():
    temperatura -> top-k -> top-p -> softmax -> um sorteio sobre o vocabulário inteiro.
    geradores: um torch.Generator por linha do lote (sem eles, o gerador global, como
    no generate())."""
    if temperatura == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = filtrar_top_p(filtrar_top_k(logits.float() / temperatura, top_k), top_p)
    probs = logits.softmax(dim=-1)                          # (B, V)
    if geradores is None:
        return torch.multinomial(probs, num_samples=1)
    return torch.cat([torch.multinomial(p[None], 1, generator=g)     # (1, 1) cada
                      for p, g in zip(probs, geradores)])


def gerar(modelo, ids, novos, cabecas, cache=True, **amostragem):
    """O laço autorregressivo. Com cache, cada passo roda só o token novo; sem cache,
    a sequência inteira de novo (como na lição 06)."""
    memoria = CacheKV(len(modelo.h), cabecas)
    entrada = ids
    with torch.no_grad():
        for _ in range(novos):
            if not cache:
                memoria, entrada = CacheKV(len(modelo.h), cabecas), ids
            proximo = escolher(passo(modelo, entrada, memoria), **amostragem)  # (B, 1)
            ids = torch.cat([ids, proximo], dim=1)          # (B, T + 1)
            entrada = proximo
    return ids


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["CacheKV", "atencao_com_cache", "passo", "filtrar_top_k", "filtrar_top_p", "escolher",
           "gerar", "bytes_por_token"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import math
import statistics
import sys
import time

from comum import (Progresso, TAMANHOS_GPT2, confere, cronometrar, dizer, inteiro, limite,
                   montagem, num, pct, plural, quebrar, tamanho, token)
from comum.console import citar
from comum.montagem import tokenizar

L06 = importar_licao("06_gpt2")     # o GPT2 sobre os pesos do transformers, sem cópia

FRASE_GPT2 = "The cat sat on the"   # o padrão do --texto: o GPT-2 foi treinado em inglês
FRASE_CARACTERES = "A atenção é"    # e o modelo de caracteres da lição 10, nas apostilas

NOVOS = 16                          # experimento 1: tokens gulosos
PASSOS_CORTE = 12                   # experimento 3: passos sorteados no modelo
NOVOS_SORTEIO = 12                  # experimento 4: tokens de cada texto sorteado
PASSOS_CONFERIDOS = 8               # experimento 5: passos com e sem cache comparados
COMPRIMENTOS = (8, 64, 128, 256)    # experimento 5: tamanhos de sequência medidos
CORTE_DO_EXP3 = dict(temperatura=1.0, top_k=0, top_p=0.9)   # as regras padrão do exp. 4
# Diferenças de arredondamento saem como limite abaixo de um teto FIXO (os dígitos do ruído
# mudam de CPU para CPU): bem acima do arredondamento do float32, bem abaixo de um erro.
TETO_LOGITS = 1e-3                  # logits do GPT-2 vão a ~100: o float32 erra em ~1e-5
TETO_K = 1e-4                       # chaves de ordem 1
POR_TELA = 20                       # linhas da tabela por camada numa tela do projetor
# Logits de brinquedo (escolhidos à mão) para o token depois de "O gato subiu no".
BRINQUEDO = {" telhado": 3.0, " muro": 2.2, " sofá": 1.4, " carro": 1.4,
             " armário": 0.6, " céu": -0.6, " piano": -1.6, " ônibus": -3.0}

# O que uma execução calcula uma vez só e os experimentos reusam (licao.uma_vez): a frase
# passada pelo modelo (o prefill), a continuação gulosa e os textos sorteados. Um servidor
# faz o mesmo com um começo de conversa repetido: guarda o cache dele em vez de recalculá-lo.


def modelos(licao):
    """(nosso GPT2, modelo do transformers, tokenizador) da lição 06. Sem --texto, a frase
    padrão sai do tokenizador: num modelo de caracteres (carregar_gpt2.de_caracteres),
    a frase em português, e a tela diz por quê; senão, a do GPT-2, em inglês."""
    from comum import REGRA_DE_CARACTERES, de_caracteres

    nosso, hf, tok = montagem.modelos(licao, L06.nosso_gpt2)
    if licao.args.texto is None:
        caracteres = de_caracteres(tok)
        licao.args.texto = FRASE_CARACTERES if caracteres else FRASE_GPT2
        if caracteres:
            dizer(quebrar(f"Um modelo de caracteres ({REGRA_DE_CARACTERES}), como o da "
                          f"lição 10: a frase padrão é \"{FRASE_CARACTERES}\", em português "
                          "(outra: --texto \"...\")."))
    return nosso, hf, tok


def frase(licao, reserva=NOVOS):
    """(nosso, hf, tok, ids, cache, logits): a frase do --texto já no cache e os logits da
    última posição. Cada chamada devolve um cache seu (as mesmas chaves, sem cópia)."""
    nosso, hf, tok = modelos(licao)
    _, ids = tokenizar(licao, tok, hf.config.n_positions, reserva=reserva)

    def prefill():
        cache = CacheKV.para(hf.config)
        with torch.no_grad():
            return cache, passo(nosso, ids, cache)                    # (1, V)
    cache, logits = licao.uma_vez("frase", prefill)
    return nosso, hf, tok, ids, cache.primeiros(ids.shape[1]), logits


def continuar(nosso, cache, logits, novos, **regras):
    """O laço do gerar() a partir de uma frase que já está no cache, com os logits da
    última posição dela: novos tokens escolhidos com `regras` (sem regras, a gulosa).
    Devolve os tokens e os logits de onde cada um saiu."""
    tokens, de_onde = [], []
    with torch.no_grad():
        for n in range(novos):
            proximo = escolher(logits, **regras)                      # (1, 1)
            tokens.append(int(proximo))
            de_onde.append(logits[0])                                 # (V,)
            if n < novos - 1:
                logits = passo(nosso, proximo, cache)                 # (1, V)
    return tokens, de_onde


def gulosa(licao):
    """Os NOVOS tokens gulosos depois da frase e os logits de cada passo (com cache): o
    laço do experimento 1, que os experimentos 4, 5 e 7 reusam."""
    nosso, _hf, _tok, _ids, cache, logits = frase(licao)
    return licao.uma_vez("gulosa", lambda: continuar(nosso, cache, logits, NOVOS))


# ============================================================ experimento 1
def generate_deles(hf, ids, novos, **amostragem):
    """O generate() do transformers com as mesmas regras (top_k=0: sem o 50 escondido)."""
    sorteio = amostragem.get("temperatura", 0) > 0
    extra = dict(do_sample=True, temperature=amostragem["temperatura"],
                 top_k=amostragem.get("top_k", 0), top_p=amostragem.get("top_p", 1.0)) \
        if sorteio else dict(do_sample=False)
    return hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=novos,
                       pad_token_id=None, eos_token_id=None, **extra)   # sem parada


def texto_de(tok, ids):
    return tok.decode(ids).replace("\ufffd", "?").replace("\n", " ")


def com_o_fim_da_frase(tok, ids, novos, cabe=60):
    """O texto da frase mais os tokens novos, entre aspas; de uma frase longa, só o fim
    (uns `cabe` caracteres, a partir de uma palavra), depois de '...'."""
    frase_ = texto_de(tok, ids)
    tudo = texto_de(tok, ids + novos)
    if len(frase_) <= 2 * cabe:
        return repr(tudo)
    corte = len(frase_) - cabe
    corte = frase_.find(" ", corte) if " " in frase_[corte:] else corte
    return "..." + repr(tudo[corte:])


@LICAO.experimento(1)
def exp_laco(licao):
    nosso, hf, tok = modelos(licao)
    _, ids = tokenizar(licao, tok, hf.config.n_positions, reserva=NOVOS)
    T = ids.shape[1]
    resto = f" ({plural(T, 'token')}). A cada passo: logits da última"
    dizer(f"Frase: {citar(licao.args.texto, len('Frase: ') + len(resto))}{resto}\n"
          "posição -> escolher um token -> acrescentá-lo -> de novo. Gulosa: o argmax.\n")
    cache, entrada, linhas = CacheKV.para(hf.config), ids, []
    inicio = time.perf_counter()
    with torch.no_grad():
        for n in range(NOVOS):
            logits = passo(nosso, entrada, cache)           # (1, V)
            prox = escolher(logits)                         # (1, 1)
            linhas.append((entrada, prox, logits))
            entrada = prox
    t_nosso = time.perf_counter() - inicio
    nossos = [int(sai) for _, sai, _ in linhas]
    # a frase e a gulosa ficam para os outros experimentos (as mesmas contas do gulosa())
    licao.uma_vez("frase", lambda: (cache.primeiros(T), linhas[0][2]))
    licao.uma_vez("gulosa", lambda: (nossos, [z[0] for _, _, z in linhas]))
    dizer(f"  {'passo':>5}  {'entra':<16}{'sai (argmax)':<16}{'prob.':>7}")
    for n, (entra, sai, logits) in enumerate(linhas):
        rotulo = plural(T, "token") if n == 0 else token(tok, entra[0, 0])
        p = float(logits.softmax(-1)[0, sai[0, 0]])
        if n < 6 or n == NOVOS - 1:
            dizer(f"  {n + 1:>5}  {rotulo:<16}{token(tok, sai[0, 0]):<16}{pct(p):>7}")
        elif n == 6:
            dizer("    ...")
    dizer("\n" + quebrar(com_o_fim_da_frase(tok, ids[0].tolist(), nossos), recuo=2))
    licao.pausa("o generate() do transformers e o tempo")
    inicio = time.perf_counter()
    deles = generate_deles(hf, ids, NOVOS)[0, T:].tolist()
    t_deles = time.perf_counter() - inicio
    iguais = sum(x == y for x, y in zip(nossos, deles))
    ok = licao.verificar(nossos == deles, "a gulosa do nosso laço = generate()")
    dizer(f"\ngenerate(do_sample=False) do transformers no mesmo modelo: {iguais} de "
          f"{len(nossos)} tokens\niguais -> {'os mesmos' if ok else 'DIFERENTES'}."
          f"\nTempo: o nosso laço levou {num(t_nosso / t_deles, 2)} vezes o do generate().")
    dizer("O passo 1 roda a frase inteira; do 2 em diante entra só o token novo:\n"
          "o resto já está no cache KV (experimento 5), como no generate().")


# ============================================================ experimento 2
def barra(p, largura=10):
    return "#" * round(largura * p)


def tabela_temperaturas(nomes, logits, temperaturas):
    """Uma linha por token (os primeiros len(nomes) de logits), uma coluna por T."""
    dizer((f"  {'token':<14}" + "".join(f"{'T = ' + num(t, 1):<19}"
                                        for t in temperaturas)).rstrip())
    probs = [(logits / t).softmax(-1) for t in temperaturas]    # sobre o vocabulário todo
    for i, nome in enumerate(nomes):
        dizer(f"  {nome:<14}" + "".join(f"{pct(float(p[i])):>7} {barra(float(p[i])):<11}"
                                         for p in probs).rstrip())


def tabela_entropias(logits, temperaturas):
    """A entropia da lição 03, em nats, da distribuição em cada temperatura (em float64:
    em float32 as probabilidades minúsculas da cauda viram 0)."""
    dizer(f"\n  {'T':>6}  {'entropia':>9}  {'o mais provável':>15}")
    for t in temperaturas:
        p = (logits.double() / t).softmax(-1)                   # (V,)
        dizer(f"  {num(t, 2):>6}  {num(float(L03.entropia(p)), 3):>9}  "
              f"{pct(float(p.max())):>15}")


@LICAO.experimento(2)
def exp_temperatura(licao):
    nomes = [repr(t) for t in BRINQUEDO]
    logits = torch.tensor(list(BRINQUEDO.values()), dtype=torch.float64)
    dizer("softmax(logits / T): T < 1 acentua as diferenças, T > 1 as apaga.\n"
          'Logits de brinquedo (escolhidos à mão) depois de "O gato subiu no":\n')
    tabela_temperaturas(nomes, logits, (0.5, 1.0, 2.0))
    tabela_entropias(logits, (0.01, 0.5, 1.0, 2.0, 10.0, 100.0))
    dizer(f"Limites: T -> 0 dá o argmax (entropia 0, a gulosa); T -> infinito dá a\n"
          f"uniforme: entropia ln {len(nomes)} = {num(math.log(len(nomes)), 3)} nats.")
    licao.pausa("a mesma tabela no modelo carregado")
    dizer()
    _nosso, _hf, tok, _ids, _cache, logits = frase(licao, reserva=0)
    logits = logits[0]                                          # (V,)
    dizer(f"No modelo carregado, depois de {citar(licao.args.texto, 31)}\n"
          "(os 5 mais prováveis em T = 1):\n")
    ordem = logits.argsort(descending=True)                     # os 5 primeiros na tabela
    tabela_temperaturas([token(tok, i) for i in ordem[:5]], logits[ordem], (0.5, 1.0, 2.0))
    tabela_entropias(logits, (0.5, 1.0, 2.0, 10.0))
    V = logits.shape[0]
    dizer(f"Com V = {inteiro(V)} tokens, o teto da entropia é ln V = {num(math.log(V), 3)} "
          "nats.")


# ============================================================ experimento 3
def sortear(licao, semente, de_novo=False, **regras):
    """(tokens, logits de cada passo) de NOVOS_SORTEIO tokens sorteados depois da frase,
    com torch.manual_seed(semente) antes; um sorteio já feito nesta execução com a mesma
    semente e as mesmas regras é reusado (de_novo=True: sorteia de novo)."""
    nosso, _hf, _tok, _ids, cache, logits = frase(licao)

    def sorteio():
        torch.manual_seed(semente)
        return continuar(nosso, cache, logits, NOVOS_SORTEIO, **regras)
    if de_novo:
        return sorteio()
    return licao.uma_vez(("sorteio", semente, *sorted(regras.items())), sorteio)


def sobreviventes(logits, top_k=0, top_p=1.0, temperatura=1.0):
    return int(filtrar_top_p(filtrar_top_k(logits / temperatura, top_k), top_p)
               .isfinite().sum())


def mediana(valores):
    """A mediana, escrita: com um número par de valores, a média dos dois do meio."""
    m = statistics.median(valores)
    return num(m, 0 if m == int(m) else 1)


@LICAO.experimento(3)
def exp_cortes(licao):
    nomes = [repr(t) for t in BRINQUEDO]
    logits = torch.tensor(list(BRINQUEDO.values()), dtype=torch.float64)
    probs = logits.softmax(-1)
    dizer("top-k: só os k maiores logits. top-p (núcleo): os mais prováveis até a\n"
          "massa somada chegar a p. Quem sai vira -inf (probabilidade 0).\n")
    dizer(f"  {'token':<12}{'logit':>6}{'prob.':>8}{'acum.':>8}")
    for nome, z, p, a in zip(nomes, logits, probs, probs.cumsum(0)):
        dizer(f"  {nome:<12}{num(float(z), 1):>6}{pct(float(p)):>8}{pct(float(a)):>8}")
    dizer("")
    for k in (1, 2, 3):
        dizer(f"  top-k {k}:    ficam {sobreviventes(logits, top_k=k)}")
    dizer("  (' sofá' e ' carro' empatam no 3º lugar: com k = 3 os dois ficam, como\n"
          "  no transformers)")
    for p in (0.5, 0.7, 0.9, 0.95):
        dizer(f"  top-p {num(p, 2)}: ficam {sobreviventes(logits, top_p=p)}")
    antes = sobreviventes(logits, top_p=0.9, temperatura=0.5)
    depois = sobreviventes(logits, top_p=0.9)       # a temperatura depois não tira ninguém
    dizer(f"\nA ordem importa. T = 0,5 e depois top-p 0,9: ficam {antes}. top-p 0,9 e "
          f"depois\nT = 0,5: ficam {depois} (a temperatura não muda quem já passou no corte).")
    dizer("generate() do transformers: temperatura primeiro, depois top-k, depois top-p.")
    licao.pausa(f"{PASSOS_CORTE} passos sorteados no modelo carregado")
    dizer()
    _nosso, hf, tok, _ids, _cache, _logits = frase(licao)
    semente = licao.args.semente
    dizer(f"No modelo carregado: {PASSOS_CORTE} passos sorteados (T = 1, top-p 0,9, semente "
          f"{semente}).\nQuantos dos {inteiro(hf.config.vocab_size)} tokens sobrevivem a "
          "cada passo?\n")
    dizer(f"  {'passo':>5}  {'sorteado':<16}{'top-k 50':>9}{'top-p 0,5':>10}"
          f"{'top-p 0,9':>10}")
    tokens, de_onde = sortear(licao, semente, **CORTE_DO_EXP3)
    nucleo = []
    for n, (sorteado, z) in enumerate(zip(tokens, de_onde)):
        c = [sobreviventes(z, top_k=50), sobreviventes(z, top_p=0.5),
             sobreviventes(z, top_p=0.9)]
        nucleo.append(c[2])
        dizer(f"  {n + 1:>5}  {token(tok, sorteado):<16}"
              f"{inteiro(c[0]):>9}{inteiro(c[1]):>10}{inteiro(c[2]):>10}")
    dizer("\n" + quebrar(frase_do_nucleo(nucleo)))


def frase_do_nucleo(nucleo) -> str:
    """O veredito do experimento 3, pelo núcleo do top-p 0,9 em cada passo: ele se adapta
    (o maior é pelo menos o dobro do menor) ou quase não mudou (pesos aleatórios: o modelo
    em dúvida em todo passo)."""
    menor, maior = min(nucleo), max(nucleo)
    inicio = (f"top-p 0,9 deixou de {inteiro(menor)} a {inteiro(maior)} tokens (mediana "
              f"{mediana(nucleo)}): ")
    fim = "; o top-k 50 deixa sempre 50 (ou mais, se houver empate)."
    if maior >= 2 * menor:
        return inicio + "o corte se adapta à confiança do modelo" + fim
    return (inicio + "o núcleo quase não mudou de um passo para outro, o modelo ficou igualmente "
            "em dúvida em todos (pesos aleatórios?)" + fim)


def frase_dos_tempos(cresce_sem: float, cresce_com: float) -> str:
    """O veredito do experimento 5, pelo quanto cada tempo por token cresceu de n pequeno
    a n grande: o com cache 'quase parado' só se cresceu menos de 1,5 vez."""
    if cresce_sem <= 2 * cresce_com:
        return "aqui a diferença não apareceu (máquina ocupada? rode de novo)."
    if cresce_com < 1.5:
        return "um cresce com n, o outro fica quase parado."
    return "o sem cache cresce bem mais depressa que o com cache."


# ============================================================ experimento 4
@LICAO.experimento(4)
def exp_semente(licao):
    _nosso, _hf, tok, _ids, _cache, _logits = frase(licao)
    a = licao.args
    regras = dict(temperatura=a.temperatura, top_k=a.top_k, top_p=a.top_p)
    semente = a.semente
    dizer(f"Temperatura {num(a.temperatura, 2)}, top-k {a.top_k or 'desligado'}, "
          f"top-p {num(a.top_p, 2)}; {NOVOS_SORTEIO} tokens;\n"
          "torch.manual_seed(s) antes de cada texto.\n")
    textos = {}
    with Progresso(5, "sorteando") as progresso:
        for s in (semente, semente + 1, semente + 2):
            textos[s] = sortear(licao, s, **regras)[0]
            progresso.avancar()
        de_novo = sortear(licao, semente, de_novo=True, **regras)[0]  # a primeira, de novo
        progresso.avancar()
        guloso = gulosa(licao)[0][:NOVOS_SORTEIO]                     # para comparar
        progresso.avancar()
    for rotulo, ids_s in [(f"semente {s}", t) for s, t in textos.items()] + [
            ("gulosa (sem sorteio, para comparar)", guloso)]:
        dizer(f"  {rotulo}:")
        dizer(quebrar(repr(texto_de(tok, ids_s)), recuo=4))
    igual = licao.verificar(de_novo == textos[semente], "a mesma semente, o mesmo texto")
    dizer(f"\nSemente {semente} de novo: "
          + ("o mesmo texto, token a token." if igual else "OUTRO texto."))
    iguais = sum(t == guloso for t in textos.values())
    dizer(f"Iguais ao texto da gulosa, token a token: {iguais} de {len(textos)} sementes.")
    dizer("A mesma semente repete o texto nesta máquina; em outra CPU, GPU ou versão\n"
          "do PyTorch, o sorteio pode sair diferente. Só a gulosa é portátil.")


# ============================================================ experimento 5
def conferir_logits(nosso, ids, tokens, logits):
    """max |logits com cache - logits do forward da lição 06 (sem cache)| nos passos de
    `tokens` (cada um saiu dos logits correspondentes), e o maior |logit|."""
    n = len(tokens)
    seguidos = torch.cat([ids, torch.tensor([tokens])], dim=1)        # (1, T + n)
    with torch.no_grad():
        sem_cache = nosso(seguidos)[0, -n - 1:-1]                     # (n, V)
    com_cache = torch.stack(logits)                                   # (n, V)
    return float((com_cache - sem_cache).abs().max()), float(sem_cache.abs().max())


def medir_tempos(nosso, cabecas, comprimentos, progresso):
    """Tempo para produzir o próximo token com n tokens já vistos, sem e com cache."""
    ids = torch.randint(0, nosso.wte.num_embeddings, (1, max(comprimentos) + 1),
                        generator=torch.Generator().manual_seed(0))
    sem, com = [], []
    with torch.no_grad():   # (o modelo já rodou a frase: nada de aquecimento)
        for n in comprimentos:
            cheio = CacheKV(len(nosso.h), cabecas)     # sem cache: a sequência inteira
            sem.append(cronometrar(lambda: passo(nosso, ids[:, :n + 1], cheio)))
            progresso.avancar()
            # com cache: um token novo sobre os n guardados (o forward acima guardou n + 1)
            com.append(cronometrar(lambda: passo(nosso, ids[:, n:n + 1], cheio.primeiros(n)),
                                   repeticoes=2))
            progresso.avancar()
    return sem, com


def somar(comprimentos, tempos, ate):
    """Tempo total para os tokens 1..ate, interpolando linearmente entre as medidas."""
    total = 0.0
    for n in range(1, ate + 1):
        j = min(max(i for i, c in enumerate(comprimentos) if c <= n or i == 0),
                len(comprimentos) - 2)
        c0, c1 = comprimentos[j], comprimentos[j + 1]
        total += tempos[j] + (tempos[j + 1] - tempos[j]) * (n - c0) / (c1 - c0)
    return total


@LICAO.experimento(5)
def exp_cache(licao):
    nosso, hf, _tok, ids, _cache, _logits = frase(licao)
    cfg = hf.config
    dizer("Sem cache, cada token novo roda a sequência inteira. Com cache, guardamos\n"
          "K e V de cada camada e rodamos só o token novo: ele olha para as chaves\n"
          "guardadas. Conta nenhuma muda; só deixa de ser repetida.\n")
    tokens, logits = gulosa(licao)
    delta, escala = conferir_logits(nosso, ids, tokens[:PASSOS_CONFERIDOS],
                                    logits[:PASSOS_CONFERIDOS])
    ok = licao.verificar(confere(delta, escala), "logits com e sem cache")
    dizer(f"{PASSOS_CONFERIDOS} passos gulosos: logits com cache contra o forward da "
          "lição 06:")
    dizer(f"  max |diferença| {limite(delta, TETO_LOGITS)} (maior |logit|: {num(escala, 1)})"
          f" -> {'os mesmos' if ok else 'NÃO conferem'}")
    dizer("  (o passo com cache usa a atencao_rapida da lição 03, o SDPA; o forward da\n"
          "  lição 06, a conta à mão: dois caminhos independentes)\n")

    fator = min(1.0, (cfg.n_positions - 1) / max(COMPRIMENTOS))   # cabe no contexto
    comprimentos = sorted({max(1, round(n * fator)) for n in COMPRIMENTOS})
    with Progresso(2 * len(comprimentos), "medindo o tempo por token") as progresso:
        sem, com = medir_tempos(nosso, cfg.n_head, comprimentos, progresso)
    dizer("Tempo para o próximo token com n tokens já vistos (esta máquina, agora):")
    dizer(f"  {'n':>5}{'sem cache':>12}{'com cache':>12}{'sem/com':>9}")
    for n, s, c in zip(comprimentos, sem, com):
        dizer(f"  {n:>5}{num(1000 * s, 1) + ' ms':>12}{num(1000 * c, 1) + ' ms':>12}"
              f"{num(s / c, 1) + 'x':>9}")
    ate, cresce_sem, cresce_com = comprimentos[-1], sem[-1] / sem[0], com[-1] / com[0]
    dizer(quebrar(f"De n = {comprimentos[0]} a {ate}, o tempo por token sem cache multiplicou "
                  f"por {num(cresce_sem, 1)}; o com cache, por {num(cresce_com, 1)}: "
                  + frase_dos_tempos(cresce_sem, cresce_com)))
    razao = somar(comprimentos, sem, ate) / somar(comprimentos, com, ate)
    dizer(f"Gerar {ate} tokens a partir de um (somando as medidas acima): sem cache "
          f"leva\n{num(razao, 0)} vezes o tempo com cache.")
    if licao.quer_figuras:
        _figura_tempos(licao, comprimentos, sem, com)


def _figura_tempos(licao, comprimentos, sem, com):
    from comum import figuras

    fig, ax = figuras.figura(7, 4, margens=(0.8, 0.2, 0.6, 0.4))
    ax.plot(comprimentos, [1000 * s for s in sem], "o-", label="sem cache")
    ax.plot(comprimentos, [1000 * c for c in com], "s-", label="com cache")
    ax.set(xlabel="tokens já vistos (n)", ylabel="ms por token novo",
           title=f"Tempo por token com e sem cache KV ({licao.modelo_curto})", ylim=(0, None))
    figuras.eixos_inteiros(ax)
    ax.legend()
    ax.grid(alpha=0.3)
    licao.salvar_figura(fig, "07_tempo_por_token.png")


# ============================================================ experimento 6
@LICAO.experimento(6)
def exp_memoria(licao):
    b, tipo = (2, "fp16") if licao.args.fp16 else (4, "fp32")     # bytes por número
    dizer("Por token, cada camada guarda um K e um V de d números: 2 x L x d valores.\n"
          f"Em {tipo} ({b} bytes), com 1.024 tokens (o contexto inteiro do GPT-2):\n")
    dizer(f"  {'modelo':<12}{'L':>3}{'d':>6}{'por token':>11}{'1.024 tokens':>14}"
          f"{'pesos':>11}{'cache/pesos':>12}")
    for nome, (L, d, _h) in TAMANHOS_GPT2.items():
        por_token, pesos = bytes_por_token(L, d, b), b * L06.parametros_gpt2(L, d)
        dizer(f"  {nome:<12}{L:>3}{d:>6}{num(por_token / 1024, 0) + ' KiB':>11}"
              f"{tamanho(1024 * por_token):>14}{tamanho(pesos):>11}"
              f"{pct(1024 * por_token / pesos):>12}")
    n, (L, d, _h) = licao.args.conversas, TAMANHOS_GPT2["gpt2-xl"]
    xl, pesos = n * 1024 * bytes_por_token(L, d, b), b * L06.parametros_gpt2(L, d)
    dizer(f"\nÉ por conversa: {plural(n, 'conversa')} de 1.024 tokens no gpt2-xl "
          f"guarda{'' if n == 1 else 'm'} {tamanho(xl)}\nsó de cache ({pct(xl / pesos)} dos "
          "pesos). A lição 08 mostra o GQA, que encolhe\nesse K e V.")
    dizer()
    _nosso, hf, _tok, _ids, cache, _logits = frase(licao)
    cfg = hf.config
    formula = bytes_por_token(cfg.n_layer, cfg.n_embd)
    medido = cache.bytes() / cache.tamanho
    ok = licao.verificar(medido == formula, "bytes do cache = fórmula")
    dizer(f"Modelo carregado (L = {cfg.n_layer}, d = {cfg.n_embd}): 2 x {cfg.n_layer} x "
          f"{cfg.n_embd} x 4 = {inteiro(formula)} bytes por token.")
    dizer(f"Medido no nosso CacheKV com a frase ({plural(cache.tamanho, 'token')}): "
          f"{inteiro(cache.bytes())} bytes,\nou {inteiro(round(medido))} por token "
          f"({'= fórmula' if ok else 'NÃO bate com a fórmula'}).")


# ============================================================ experimento 7
def aos_poucos_e_de_uma_vez(nosso, ids, cabecas, causal, inicio=1):
    """K guardado como a geração guarda (os `inicio` primeiros tokens de uma vez, o
    prefill; depois um token por vez) contra K recalculado com a sequência toda.
    Devolve ([max |dif. de K| por camada], max |dif. dos logits do último|, maior |logit|)."""
    aos_poucos = CacheKV(len(nosso.h), cabecas)
    de_uma_vez = CacheKV(len(nosso.h), cabecas)
    with torch.no_grad():
        ultimo = passo(nosso, ids[:, :inicio], aos_poucos, causal)          # (1, V)
        for t in range(inicio, ids.shape[1]):
            ultimo = passo(nosso, ids[:, t:t + 1], aos_poucos, causal)     # (1, V)
        certo = passo(nosso, ids, de_uma_vez, causal)                    # (1, V)
    k = [float((a - b).abs().max()) for a, b in zip(aos_poucos.k, de_uma_vez.k)]
    return k, float((ultimo - certo).abs().max()), float(certo.abs().max())


@LICAO.experimento(7)
def exp_causalidade(licao):
    nosso, hf, _tok, ids, _cache, _logits = frase(licao)
    cfg, T = hf.config, ids.shape[1]
    ids = torch.cat([ids, torch.tensor([gulosa(licao)[0][:3]])], dim=1)   # + 3 gulosos
    dizer(f"{plural(ids.shape[1], 'token')}: a frase e 3 tokens da continuação gulosa. "
          "Duas maneiras\nde calcular K e V: como a geração faz (a frase de uma vez, depois "
          "um token\npor vez, guardando no cache) ou todos de uma vez (a conta certa). Com "
          "a\nmáscara causal e sem máscara:\n")
    resultado = {causal: aos_poucos_e_de_uma_vez(nosso, ids, cfg.n_head, causal, inicio=T)
                 for causal in (True, False)}
    L = cfg.n_layer
    if L > 12:                   # a tabela não cabe com o que já está na tela: outra tela
        licao.pausa("a tabela camada a camada")
    dizer("  max |K guardado - K recalculado|, por camada:")
    partes = math.ceil(L / POR_TELA)
    por_parte = math.ceil(L / partes)            # partes do mesmo tamanho, uma por tela
    for primeira in range(0, L, por_parte):
        ultima = min(primeira + por_parte, L)
        if primeira:
            licao.pausa(f"as camadas {primeira + 1} a {ultima}")
        dizer(f"  {'camada':>6}{'causal':>10}{'sem máscara':>14}")
        for i in range(primeira, ultima):
            dizer(f"  {i + 1:>6}{limite(resultado[True][0][i], TETO_K):>10}"
                  f"{limite(resultado[False][0][i], TETO_K):>14}")
    for causal, nome in ((True, "causal"), (False, "sem máscara")):
        _, d_logit, _escala = resultado[causal]
        dizer(f"  logits do último token, {nome}: max |diferença| "
              f"{limite(d_logit, TETO_LOGITS)}")
    ok = licao.verificar(all(confere(x, 1.0) for x in resultado[True][0])
                         and confere(*resultado[True][1:]), "cache causal = recalculado")
    velhos = [i + 1 for i, x in enumerate(resultado[False][0]) if not confere(x, 1.0)]
    licao.pausa("o veredito: causal e sem máscara")
    dizer("\nCausal: o cache " + ("é a conta certa" if ok else "NÃO confere") + ".\nSem "
          "máscara, " + (f"o K guardado fica velho a partir da camada {velhos[0]}:\n"
                         if velhos else "nada ficou velho aqui:\n")
          + "na camada 1, K só depende do próprio token; nas seguintes, depende do que\n"
          "o token viu nas camadas de baixo, e sem máscara um token novo muda o que\n"
          "todos os antigos veem. Sem causalidade, cada token novo pede recalcular tudo.")


# ============================================================ a página (--html)
# O filtro do sorteio num arquivo que abre com um duplo clique (comum/paginas.py): os logits da
# frase no modelo carregado, o vocabulário inteiro em float32 (os mesmos bits que escolher()
# recebe), e o texto dos MOSTRADOS mais prováveis. A página refaz em JavaScript o caminho do
# escolher() sem o sorteio (temperatura -> top-k -> top-p -> softmax); tests/test_07_paginas.py
# confere quem fica e as probabilidades contra o escolher(), no Node e num navegador. O HTML, o
# CSS e o JavaScript moram em lab/html/07_generation.*.
MOSTRADOS = 30
PARADAS = {  # as posições dos controles deslizantes (mais o valor da linha de comando)
    "temperatura": [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1,
                    1.2, 1.3, 1.4, 1.5, 1.7, 2.0, 2.5, 3.0, 5.0, 10.0, 100.0],
    "top_k": [0, *range(1, 21), 25, 30, 40, 50, 100, 200, 500, 1000],
    "top_p": [round(i / 100, 2) for i in range(1, 101)]}


def pagina() -> str:
    """A página da lição (--html): a distribuição do próximo token depois do --texto e os
    três controles do experimento 4, que começam nos valores desta execução."""
    import base64

    _nosso, hf, tok, _ids, _cache, logits = frase(LICAO, reserva=0)
    z = logits[0].float().contiguous()                                  # (V,)
    a, V = LICAO.args, z.numel()
    inicio = {"temperatura": a.temperatura, "top_k": a.top_k, "top_p": a.top_p}
    paradas = {nome: sorted({*(v for v in lista if nome != "top_k" or v < V), inicio[nome]})
               for nome, lista in PARADAS.items()}
    ordem = z.argsort(descending=True, stable=True)[:MOSTRADOS]         # em qualquer T > 0
    dados = {"texto": a.texto, "modelo": LICAO.modelo_curto, "V": V, "inicio": inicio,
             "paradas": paradas, "mostrados": [[int(i), token(tok, i, 18, "·")] for i in ordem],
             "logits": base64.b64encode(z.numpy().astype("<f4").tobytes()).decode("ascii")}
    corpo, script, estilo = (paginas.fonte(f"07_generation.{e}") for e in ("html", "js", "css"))
    return paginas.documento(f"Lição {LICAO.numero} · O filtro do sorteio", corpo, script, dados,
                             estilo, "Temperatura, top-k e top-p no próximo token de um GPT-2")


if __name__ == "__main__":
    if paginas.pedida(LICAO.args):                  # --html [PASTA] / --abrir: só a página
        sys.exit(paginas.gravar(LICAO, pagina, "07_generation.html"))
    sys.exit(LICAO.rodar())
