"""Lição 03 · Uma cabeça de atenção (leia junto: apostilas/03_attention.md)
1. Q, K e V à mão em 4 tokens
2. Por que dividir por raiz(d_k), medido
3. A máscara causal: o futuro não vaza
4. Uma média ponderada de V: linear em V, não em x
5. Igual ao SDPA do PyTorch; o custo quadrático em T
6. Uma cabeça do GPT-2 de verdade"""
from comum import Licao, inteiro_entre, opcao, paginas

LICAO = Licao.da_docstring(__doc__, usa_gpt2={6}, opcoes=[
    opcao("--linha", ("o", "gato", "subiu", "no"), "gato",
          "linha do experimento 1 cujo softmax sai passo a passo"),
    opcao("--camada", inteiro_entre(0, exemplo="--camada 4"), 4,
          "camada da cabeça do experimento 6; a 1ª é 0", "L"),
    opcao("--cabeca", inteiro_entre(0, exemplo="--cabeca 11"), 11,
          "cabeça do experimento 6; a 1ª é 0", "H"), *paginas.opcoes()])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import math

import torch
import torch.nn.functional as F
from torch import nn


# ============================================================ a peça
def futuro(T, dispositivo, S=None):
    """Máscara causal (T, S): True onde a chave j está no futuro da consulta i.

    Com S > T (consultas novas sobre um passado guardado, lição 07), a consulta
    i é a posição S - T + i: a máscara se alinha pelo canto de baixo."""
    S = T if S is None else S
    uns = torch.ones(T, S, dtype=torch.bool, device=dispositivo)   # (T, S)
    return uns.triu(S - T + 1)             # True onde j > S - T + i: o futuro


def pesos_de_atencao(q, k, causal=False):
    """softmax(q k^T / raiz(d_k)), linha a linha: q (..., T, d_k),
    k (..., S, d_k)."""
    T, S = q.shape[-2], k.shape[-2]
    notas = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])   # (..., T, S)
    if causal:
        notas = notas.masked_fill(futuro(T, q.device, S), float("-inf"))
    return notas.softmax(dim=-1)                               # (..., T, S)


def atencao(q, k, v, causal=False):
    """A média ponderada dos v: devolve (saída (..., T, d_v),
    pesos (..., T, S))."""
    pesos = pesos_de_atencao(q, k, causal)                     # (..., T, S)
    return pesos @ v, pesos                                    # (..., T, d_v)


def atencao_rapida(q, k, v, causal=False):
    """A saída de atencao() (..., T, d_v), pelo SDPA do PyTorch, sem guardar os T x S pesos
    (o experimento 5 confere que dá o mesmo). O is_causal dele alinha pelo canto de CIMA:
    só serve com T = S; com T < S, a máscara vai escrita, com True = PODE olhar."""
    T, S = q.shape[-2], k.shape[-2]
    if not causal or T == 1:      # sem máscara, ou um token novo: ele vê todas as chaves
        return F.scaled_dot_product_attention(q, k, v)
    if T == S:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=~futuro(T, q.device, S))


def entropia(p):
    """Entropia, em nats, de cada distribuição p (..., S) (linhas que somam 1), com
    0 ln 0 = 0: xlogy dá 0 onde p = 0 em qualquer dtype (um clamp em 1e-300 vira 0 em
    float32, e 0 * log 0 dava NaN)."""
    return -torch.special.xlogy(p, p).sum(-1)                  # (...)


class Cabeca(nn.Module):
    """Uma cabeça: projeta cada token em q, k e v (d -> d_k) e mistura os v."""

    def __init__(self, d, d_k, causal=True):
        super().__init__()
        self.causal = causal
        self.q, self.k, self.v = (nn.Linear(d, d_k, bias=False) for _ in range(3))

    def forward(self, x):                                      # x (B, T, d)
        y, _ = atencao(self.q(x), self.k(x), self.v(x), self.causal)
        return y                                               # (B, T, d_k)


def cabeca_aleatoria(d, d_k, causal=True, semente=0):
    torch.manual_seed(semente)
    return Cabeca(d, d_k, causal).double()


def notas_de_padrao(pesos):
    """Peso médio (posições >= 1) no token anterior, no primeiro e no próprio."""
    T = pesos.shape[-1]
    i = torch.arange(1, T)
    return {"no token anterior": pesos[..., i, i - 1].mean(-1),
            "no primeiro token": pesos[..., i, 0].mean(-1),
            "no próprio token": pesos[..., i, i].mean(-1)}


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["futuro", "pesos_de_atencao", "atencao", "atencao_rapida", "Cabeca", "entropia",
           "notas_de_padrao"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import sys

from comum import (Progresso, cientifico, cronometrar, dizer, figuras, inteiro, limite, num,
                   quebrar, tamanho, token)

TOKENS4 = ["o", "gato", "subiu", "no"]


def mostrar(nome, t, linhas=None, colunas=None, casas=2, larg=7):
    """Uma matriz pequena com nome, forma e rótulos."""
    dizer(f"{nome}   forma {tuple(t.shape)}")
    if colunas:
        dizer(" " * 8 + "".join(f"{c[:larg - 1]:>{larg}}" for c in colunas))
    for i, linha in enumerate(t.tolist()):
        rotulo = linhas[i] if linhas else ""
        celulas = "".join(f"{'-inf' if v == -math.inf else num(v, casas):>{larg}}"
                          for v in linha)
        dizer(f"  {rotulo[:6]:<6}{celulas}")


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_a_mao(licao):
    g = torch.Generator().manual_seed(licao.args.semente)
    sorteio = lambda *forma: torch.randn(*forma, generator=g, dtype=torch.float64).round(
        decimals=1)  # noqa: E731  (uma casa: dá para conferir à mão)
    x = sorteio(4, 5)                                          # (T, d)
    W_q, W_k, W_v = sorteio(5, 3), sorteio(5, 3), sorteio(5, 3)  # (d, d_k)
    dizer("4 tokens, cada um um vetor de d = 5 números (sorteados: ainda não é um\n"
          "embedding de verdade); uma cabeça com d_k = 3.\n")
    mostrar("x", x, TOKENS4, casas=1)
    mostrar("W_q (W_k e W_v têm a mesma forma)", W_q, casas=1)
    Q, K, V = x @ W_q, x @ W_k, x @ W_v                        # 3 x (T, d_k)
    licao.pausa("Q, K e V, uma linha por token")
    dizer("\nQ = x W_q, K = x W_k, V = x W_v: uma linha por token.")
    for nome, t in (("Q", Q), ("K", K), ("V", V)):
        mostrar(nome, t, TOKENS4)
    notas = Q @ K.T / math.sqrt(3)                             # (T, T)
    licao.pausa("as notas Q K^T / raiz(3) e o softmax de uma linha")
    dizer("\nNotas: Q K^T / raiz(3). Linha = quem pergunta, coluna = quem responde.")
    mostrar("notas", notas, TOKENS4, TOKENS4)
    i = TOKENS4.index(licao.args.linha)
    e = notas[i].exp()
    dizer(f"\nSoftmax da linha \"{TOKENS4[i]}\", passo a passo:")
    dizer("  exp(notas) = [" + "; ".join(num(v) for v in e.tolist()) + "]")
    dizer(f"  soma       = {num(float(e.sum()))}")
    dizer("  pesos      = [" + "; ".join(num(v) for v in (e / e.sum()).tolist()) + "]")
    A = notas.softmax(dim=-1)                                  # (T, T)
    licao.pausa("A, os pesos de atenção, e a saída Y = A V")
    mostrar("\nA = softmax das notas, linha a linha", A, TOKENS4, TOKENS4)
    Y = A @ V                                                  # (T, d_k)
    mostrar("\nY = A V: a saída de cada token", Y, TOKENS4)
    termos = " + ".join(f"{num(float(A[i, j]))}*v[{t}]" for j, t in enumerate(TOKENS4))
    dizer(f"\ny[{TOKENS4[i]}] = {termos}")
    dizer("Cada saída é uma média de V com os pesos da sua linha de A.")
    y_funcao, _ = atencao(Q, K, V)
    ok = licao.verificar(torch.equal(Y, y_funcao), "à mão = atencao()")
    dizer(f"À mão = atencao(Q, K, V) do script? {'sim, bit a bit' if ok else 'NÃO'}.")


# ============================================================ experimento 2
def saturacao(d_k, gerador, linhas=512, chaves=16):
    """Para q e k com coordenadas N(0, 1): variância de q.k e, com e sem a escala,
    o maior peso, a entropia e a norma do gradiente que volta pelo softmax."""
    q = torch.randn(linhas, 1, d_k, generator=gerador, dtype=torch.float64)
    k = torch.randn(linhas, chaves, d_k, generator=gerador, dtype=torch.float64)
    s = (q * k).sum(-1)                                        # (linhas, chaves)
    g = torch.randn(linhas, chaves, generator=gerador, dtype=torch.float64)
    medidas = {"var": float(s.var())}
    for nome, notas in (("sem", s), ("com", s / math.sqrt(d_k))):
        notas = notas.clone().requires_grad_(True)
        p = notas.softmax(dim=-1)
        (p * g).sum().backward()                              # um sinal qualquer que volta
        p = p.detach()
        medidas[nome] = (float(p.max(-1).values.mean()), float(entropia(p).mean()),
                         float(notas.grad.norm(dim=-1).median()))
    return medidas


@LICAO.experimento(2)
def exp_escala(licao):
    g = torch.Generator().manual_seed(licao.args.semente)
    dizer("q e k com coordenadas N(0, 1); q.k é uma soma de d_k produtos, então sua\n"
          "variância deveria ser d_k. Cada linha: 512 consultas, 16 chaves cada.\n")
    dizer(f"  {'d_k':>5} {'var(q.k)':>10} {'var(q.k/raiz(d_k))':>19}")
    linhas = {}
    for d_k in (16, 64, 256, 1024):
        m = linhas[d_k] = saturacao(d_k, g)
        dizer(f"  {inteiro(d_k):>5} {num(m['var'], 1):>10} {num(m['var'] / d_k, 2):>19}")
    dizer(f"\nSoftmax das 16 notas, sem a escala (sem) e com ela (com). Entropia em nats\n"
          f"(uniforme = ln 16 = {num(math.log(16), 2)}; um só peso 1 = 0).\n")
    dizer(f"  {'d_k':>5} {'maior peso':>14} {'entropia':>13} {'gradiente (med.)':>19}")
    dizer(f"  {'':>5} {'sem':>6} {'com':>7} {'sem':>6} {'com':>6} {'sem':>9} {'com':>9}")
    for d_k, m in linhas.items():
        (p0, h0, g0), (p1, h1, g1) = m["sem"], m["com"]
        dizer(f"  {inteiro(d_k):>5} {num(p0, 2):>6} {num(p1, 2):>7} {num(h0, 2):>6} {num(h1, 2):>6} "
              f"{cientifico(g0, 1):>9} {cientifico(g1, 1):>9}")
    razoes = [m["var"] / d for d, m in linhas.items()]
    cresce = licao.verificar(all(0.8 < r < 1.25 for r in razoes), "var(q.k) acompanha d_k")
    sem, com = linhas[1024]["sem"], linhas[1024]["com"]
    dizer("\nA variância de q.k " + ("cresce como d_k" if cresce else "NÃO acompanha d_k")
          + "; dividir por raiz(d_k) a traz de volta a ~1.")
    dizer(frase_saturacao(sem[0], com[2] / sem[2]))


def frase_saturacao(maior_peso: float, queda: float) -> str:
    """O veredito do experimento 2 em d_k = 1.024, sem a escala: saturado (o maior peso
    médio >= 0,9 e o gradiente >= 100 vezes menor que com a escala) ou não."""
    texto = num(queda, 0) if queda < 1000 else cientifico(queda, 1)
    if maior_peso >= 0.9 and queda >= 100:
        return (f"Com d_k = 1.024 e sem a escala, o maior peso médio é {num(maior_peso, 2)}: "
                f"o softmax\nvirou quase um 'argmax', e o gradiente (mediana por linha) que "
                f"volta por\nele é {texto} vezes menor que com a escala. Um softmax saturado "
                "quase\nnão aprende.")
    fator = queda if queda >= 1 else 1 / queda
    return quebrar(f"Com d_k = 1.024 e sem a escala, o maior peso médio é {num(maior_peso, 2)} "
                   f"e o gradiente (mediana por linha) que volta pelo softmax é "
                   f"{num(fator, 1)} vezes {'menor' if queda >= 1 else 'maior'} que com a "
                   "escala: aqui o softmax não saturou (diria que sim com um peso médio de "
                   "0,9 ou mais e um gradiente 100 vezes menor).")


# ============================================================ experimento 3
@LICAO.experimento(3)
def exp_mascara(licao):
    T, d, d_k = 6, 8, 4
    rotulos = [f"t{i}" for i in range(T)]
    causal = cabeca_aleatoria(d, d_k, causal=True, semente=licao.args.semente)
    livre = cabeca_aleatoria(d, d_k, causal=False, semente=licao.args.semente)
    g = torch.Generator().manual_seed(licao.args.semente + 1)
    x = torch.randn(1, T, d, generator=g, dtype=torch.float64)  # (B, T, C)
    aditiva = torch.zeros(T, T).masked_fill(futuro(T, x.device), float("-inf"))
    mostrar("Máscara somada às notas (-inf acima da diagonal)", aditiva, rotulos, rotulos,
            casas=0, larg=6)
    with torch.no_grad():
        _, pesos = atencao(causal.q(x), causal.k(x), causal.v(x), causal=True)
    mostrar("\nPesos com a máscara: cada linha só vê as colunas até ela", pesos[0],
            rotulos, rotulos, larg=6)
    x2 = x.clone()
    x2[0, -1] = torch.randn(d, generator=g, dtype=torch.float64)  # troca só o último token
    licao.pausa("trocar o último token: o futuro vaza?")
    dizer(f"\nAgora troco só o último token (t{T - 1}) por outro vetor e comparo as saídas")
    dizer(f"das posições t0 a t{T - 2}:")
    with torch.no_grad():
        for nome, cab in (("com máscara", causal), ("sem máscara", livre)):
            a, b = cab(x)[0, :-1], cab(x2)[0, :-1]             # (T-1, d_k)
            texto = ("0: idênticas, bit a bit" if torch.equal(a, b)
                     else num(float((a - b).abs().max()), 3))
            dizer(f"  {nome}: max |diferença| = {texto}")
    licao.verificar(torch.equal(causal(x)[0, :-1], causal(x2)[0, :-1]), "futuro não vaza")
    dizer("\nCom a máscara, nenhuma saída anterior sabe que o futuro mudou: é o que\n"
          "permite treinar todas as posições de uma vez e gerar token a token.")
    linha_inf = torch.full((3,), float("-inf")).softmax(-1)
    linha_grande = torch.full((3,), -1e9).softmax(-1)
    dizer("\nCuidado com uma linha TODA mascarada (acontece com preenchimento):")
    nan = "; ".join("NaN" if math.isnan(v) else num(v, 2) for v in linha_inf.tolist())
    dizer(f"  softmax([-inf, -inf, -inf]) = [{nan}]  (0/0: 'não é um número')")
    dizer(f"  softmax([-1e9, -1e9, -1e9]) = "
          f"[{'; '.join(num(v, 2) for v in linha_grande.tolist())}]")
    dizer("A máscara causal nunca chega a isso: a diagonal (o próprio token) fica aberta.")


# ============================================================ experimento 4
@LICAO.experimento(4)
def exp_media(licao):
    T, d, d_k = 6, 8, 4
    cab = cabeca_aleatoria(d, d_k, causal=True, semente=licao.args.semente)
    g = torch.Generator().manual_seed(licao.args.semente + 1)
    x = torch.randn(1, T, d, generator=g, dtype=torch.float64)  # (B, T, C)
    with torch.no_grad():
        q, k, v = cab.q(x), cab.k(x), cab.v(x)                 # 3 x (B, T, d_k)
        y, pesos = atencao(q, k, v, causal=True)
        somas = (pesos.sum(-1) - 1).abs().max()
        dizer(f"Cada linha de pesos soma 1: max |soma - 1| {limite(float(somas), 1e-12, 2)};")
        positivos = licao.verificar(bool((pesos >= 0).all()), "pesos >= 0")
        dizer(f"todos os pesos >= 0: {'sim' if positivos else 'NÃO'}.")
        dentro = bool(((y >= v.min(1, keepdim=True).values - 1e-12)
                       & (y <= v.max(1, keepdim=True).values + 1e-12)).all())
        dizer("Então cada coordenada de y fica entre o menor e o maior valor daquela\n"
              f"coluna de V: {'confere' if licao.verificar(dentro, 'média') else 'NÃO'}.\n")
        v2 = torch.randn(v.shape, generator=g, dtype=torch.float64)
        soma = atencao(q, k, v + 2 * v2, causal=True)[0]
        partes = y + 2 * atencao(q, k, v2, causal=True)[0]
        erro_v = float((soma - partes).abs().max())
        dizer("Com os pesos fixos, a saída é linear em V:")
        dizer(f"  atenção(V1 + 2 V2) - [atenção(V1) + 2 atenção(V2)]: max "
              f"{limite(erro_v, 1e-12, 2)}")
        licao.verificar(erro_v < 1e-12, "linear em V")
        y1, y2 = cab(x), cab(2 * x)
        rel = float((y2 - 2 * y1).norm() / (2 * y1).norm())
        _, p2 = atencao(cab.q(2 * x), cab.k(2 * x), cab.v(2 * x), causal=True)
    dizer("Mas não é linear em x: dobrar x multiplica as notas por 4 e muda os pesos.")
    dizer(f"  |cabeça(2x) - 2 cabeça(x)| / |2 cabeça(x)| = {num(rel, 2)}")
    dizer(f"  pesos da última linha com x:  [{'; '.join(num(v) for v in pesos[0, -1].tolist())}]")
    dizer(f"  pesos da última linha com 2x: [{'; '.join(num(v) for v in p2[0, -1].tolist())}]")
    dizer("\nO que depende de x de forma não linear são só os PESOS da mistura; o\n"
          "conteúdo (V = x W_v) passa por uma matriz fixa. A atenção transporta\n"
          "informação entre posições; quem faz contas com ela é o MLP (lição 05).")


# ============================================================ experimento 5
def veredito_do_tempo(razoes, Ts):
    """A frase sobre as razões de tempo impressas nos maiores T (a conta diz 4)."""
    lidas = " e ".join(num(r, 1) for r in razoes)
    de = f"De T = {inteiro(Ts[0])} a {inteiro(Ts[-1])}, a razão de tempo foi {lidas}"
    if min(razoes) < 3:
        texto = (f"{de}: abaixo de 3, o relógio mediu mais que a conta (outro programa "
                 "disputando o processador, ou custos fixos que ainda pesam). Rode de novo "
                 "com a máquina livre; os bytes, contados, não mudam.")
    elif max(razoes) > 5:
        texto = (f"{de}: acima de 4. Além das contas (4 vezes mais), uma matriz grande já "
                 "não cabe no cache do processador e cada leitura vai até a memória (numa "
                 "máquina ocupada, o ruído também infla uma razão).")
    else:
        texto = f"{de}: perto de 4, como a matriz. O tempo cresce como T²."
    return quebrar(texto)


@LICAO.experimento(5)
def exp_sdpa(licao):
    g = torch.Generator().manual_seed(licao.args.semente)
    for tipo, teto in ((torch.float32, 1e-5), (torch.float64, 1e-12)):
        q, k, v = (torch.randn(2, 4, 64, 32, generator=g, dtype=tipo) for _ in range(3))
        nosso, _ = atencao(q, k, v, causal=True)                 # (B, h, T, d_k)
        deles = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        dif = float((nosso - deles).abs().max())
        licao.verificar(dif < teto, f"SDPA {tipo}")
        dizer(f"atencao(causal=True) contra F.scaled_dot_product_attention(is_causal=True),\n"
              f"  {str(tipo).replace('torch.', '')}, (2, 4, 64, 32): max |diferença| "
              f"{limite(dif, teto, 2)}")
    errado = F.scaled_dot_product_attention(q, k, v, attn_mask=futuro(64, q.device))
    certo = F.scaled_dot_product_attention(q, k, v, attn_mask=~futuro(64, q.device))
    dizer("\nArmadilha: no SDPA uma máscara booleana diz True = PODE olhar (o contrário\n"
          "do masked_fill). Passar a nossa máscara 'futuro' direto dá outra conta:")
    dizer(f"  com 'futuro': max |diferença| = {num(float((errado - nosso).abs().max()), 2)}; "
          f"com '~futuro': {limite(float((certo - nosso).abs().max()), 1e-12, 2)}\n")
    dizer("atencao_rapida() da peça: o SDPA com o is_causal só quando T = S (com T < S,\n"
          "a máscara '~futuro', alinhada por baixo), contra atencao(), float32 e float64:")
    g2 = torch.Generator().manual_seed(licao.args.semente + 5)  # o g segue para o custo
    for T, nome in ((64, "T = S = 64"), (1, "1 consulta, 64 chaves"),
                    (8, "8 consultas, 64 chaves")):
        limites = []
        for tipo, teto in ((torch.float32, 1e-5), (torch.float64, 1e-12)):
            q = torch.randn(2, 4, T, 32, generator=g2, dtype=tipo)       # (B, h, T, d_k)
            k, v = (torch.randn(2, 4, 64, 32, generator=g2, dtype=tipo) for _ in range(2))
            dif = float((atencao_rapida(q, k, v, causal=True)
                         - atencao(q, k, v, causal=True)[0]).abs().max())
            licao.verificar(dif < teto, f"atencao_rapida = atencao, {nome}, {tipo}")
            limites.append(limite(dif, teto, 2))
        dizer(f"  {nome:<23}{' e '.join(limites)}")
    dizer("Conferida, é ela que o cache KV da lição 07 usa: a mesma conta, sem guardar\n"
          "os T x S pesos.")
    licao.pausa("o custo: a matriz e o tempo, de T = 256 a 4.096")
    dizer("\nCusto: uma cabeça, d_k = 64, float32. A matriz de notas tem T x T números.")
    dizer(f"  {'T':>5} {'matriz T x T':>13} {'razão':>6} {'nossa':>11} {'razão':>6} "
          f"{'SDPA':>11}")
    Ts, nossos, sdpas = [256, 512, 1024, 2048, 4096], [], []
    with Progresso(len(Ts), "medindo o tempo") as barra:
        for T in Ts:
            q, k, v = (torch.randn(1, 1, T, 64, generator=g) for _ in range(3))
            n = 7 if T <= 1024 else 3                           # o menor de n: menos ruído
            nossos.append(cronometrar(lambda: atencao(q, k, v, causal=True), n))
            sdpas.append(cronometrar(
                lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), n))
            barra.avancar()
    razoes = [round(nossos[i] / nossos[i - 1], 1) for i in range(1, len(Ts))]  # as impressas
    for i, T in enumerate(Ts):
        razao_b = "" if i == 0 else num(T * T / Ts[i - 1] ** 2, 2)
        razao_t = "" if i == 0 else num(razoes[i - 1], 1)
        mib = num(4 * T * T / 2**20, 2) + " MiB"          # 0,25 MiB: a razão impressa dá 4
        dizer(f"  {inteiro(T):>5} {mib:>13} {razao_b:>6} {num(1000 * nossos[i], 1):>8} ms "
              f"{razao_t:>6} {num(1000 * sdpas[i], 1):>8} ms")
    dizer("\nDobrar T quadruplica a matriz (razão 4,00, contada em bytes).")
    dizer(veredito_do_tempo(razoes[-2:], Ts[-3:]))
    dizer(f"Com 12 cabeças e T = 1.024, cada camada do GPT-2 pequeno guarda 12 matrizes\n"
          f"dessas: {tamanho(12 * 4 * 1024 ** 2)}.")
    if not licao.quer_figuras:
        return
    fig, ax = figuras.figura(margens=(0.8, 0.15, 0.55, 0.35))
    ax.plot(Ts, nossos, "o-", label="nossa atenção")
    ax.plot(Ts, sdpas, "s-", label="SDPA do PyTorch")
    ax.plot(Ts, [nossos[-1] * (T / Ts[-1]) ** 2 for T in Ts], "k:", label="proporcional a T²")
    figuras.escala_log(ax)
    ax.set_xscale("log")
    ax.set_xticks(Ts, [inteiro(T) for T in Ts])                # os T medidos, como na tabela
    ax.set_xticks([], minor=True)
    ax.set(xlabel="T (tokens)", ylabel="tempo (s)", title="Atenção de uma cabeça: tempo x T")
    ax.legend()
    ax.grid(alpha=0.3)
    licao.salvar_figura(fig, "03_custo_quadratico.png")


# ============================================================ experimento 6
def padroes(modelo, ids):
    """Pesos de atenção de todas as camadas e cabeças do GPT-2: (L, h, T, T).

    Captura a entrada de cada camada de atenção (depois do ln_1) e refaz a conta com
    a função atencao() desta lição e os próprios c_attn do modelo (Conv1D)."""
    entradas = []
    ganchos = [b.attn.register_forward_pre_hook(
        lambda _m, args, kwargs: entradas.append(
            args[0] if args else kwargs["hidden_states"]), with_kwargs=True)
        for b in modelo.transformer.h]
    try:
        with torch.no_grad():
            modelo.transformer(ids)                            # sem a cabeça de saída
            todas = []
            for bloco, x in zip(modelo.transformer.h, entradas):
                B, T, C = x.shape                              # (B, T, C)
                h = bloco.attn.num_heads
                q, k, _ = bloco.attn.c_attn(x).split(C, dim=-1)  # 3 x (B, T, C)
                q = q.view(B, T, h, C // h).transpose(1, 2)    # (B, h, T, C/h)
                k = k.view(B, T, h, C // h).transpose(1, 2)    # (B, h, T, C/h)
                todas.append(pesos_de_atencao(q, k, causal=True)[0])  # (h, T, T)
    finally:
        for gancho in ganchos:
            gancho.remove()
    return torch.stack(todas)                                  # (L, h, T, T)


RAMPA = " .:-=+*#%@"  # faixas iguais de 0 a 1: ' ' abaixo de 0,1 ... '@' de 0,9 a 1


def mapa_de_calor(pesos, rotulos):
    """As linhas do mapa em caracteres: a régua das colunas, depois uma linha por token."""
    linhas = [(" " * 10 + " ".join(str(j % 10) for j in range(len(rotulos))))]
    for i, celulas in enumerate(figuras.niveis_ascii(pesos, 0.0, 1.0, RAMPA)):
        linhas.append(f"{i:>2} {rotulos[i]:<6} {' '.join(celulas)}".rstrip())
    return linhas


def legenda_do_mapa():
    passo = num(1 / len(RAMPA), 1)
    return (f"  escala: ' ' de 0 a {passo}, depois {' '.join(RAMPA[1:-1])} ({passo} cada) "
            f"e '{RAMPA[-1]}' de {num(1 - 1 / len(RAMPA), 1)} a 1")


FRASE = "The cat sat on the mat. The dog sat on the rug, and the cat slept."
MAX_T = 32
TELA = 27  # linhas de uma tela de projetor (30), fora o "(continuação)" e o aviso da pausa


def cabeca_pedida(licao, cfg):
    """(camada, cabeça, aviso): as de --camada e --cabeca, ou as últimas do modelo se ele
    não as tem (o aviso diz qual ficou; None se nada mudou)."""
    camada, cabeca = licao.args.camada, licao.args.cabeca
    if camada < cfg.n_layer and cabeca < cfg.n_head:
        return camada, cabeca, None
    camada, cabeca = min(camada, cfg.n_layer - 1), min(cabeca, cfg.n_head - 1)
    return camada, cabeca, (f"(Este modelo tem {cfg.n_layer} camadas de {cfg.n_head} cabeças: "
                            f"uso a cabeça {camada}.{cabeca}.)")


@LICAO.experimento(6)
def exp_gpt2(licao):
    modelo, tok = licao.gpt2()
    camada, cabeca, aviso = cabeca_pedida(licao, modelo.config)
    if aviso:
        dizer(aviso)
    ids = tok(FRASE, return_tensors="pt")["input_ids"][:, :MAX_T]  # cabe em 80 colunas
    pesos = padroes(modelo, ids)[camada, cabeca]               # (T, T)
    rotulos = [token(tok, i, 6) for i in ids[0]]
    dizer(f"Frase: \"{FRASE}\"\nCamada {camada}, cabeça {cabeca}: escreve-se {camada}.{cabeca} "
          "(as duas contam de 0).\nLinha = quem olha (a consulta); coluna = para quem ele "
          "olha (a chave).\n")
    licao.pausa(f"o mapa de calor da cabeça {camada}.{cabeca}")
    linhas = mapa_de_calor(pesos, rotulos)
    if len(linhas) + 7 > TELA:                                 # não cabe com o que vem embaixo
        dizer("\n".join(linhas[:TELA]))
        licao.pausa(f"o resto do mapa, a partir do token {TELA - 1}")
        linhas = linhas[TELA:]
    dizer("\n".join(linhas))
    dizer(legenda_do_mapa() + "\n")
    notas = {k: float(v) for k, v in notas_de_padrao(pesos).items()}
    for nome, valor in notas.items():
        dizer(f"  peso médio {nome:<18} {num(valor, 2)}")
    maior = max(notas, key=notas.get)
    dizer(f"Esta cabeça põe mais da metade do peso {maior}." if notas[maior] > 0.5
          else "Esta cabeça espalha a atenção: nenhum dos três padrões passa de 0,5.")
    if not licao.quer_figuras:
        return
    fig, ax = figuras.figura(7.6, 6.4, margens=(1.0, 0.3, 1.0, 0.45))
    imagem = ax.imshow(pesos.numpy(), cmap="viridis", vmin=0, vmax=1)
    fig.colorbar(imagem, ax=ax, label="peso de atenção", fraction=0.046, pad=0.03)
    marcas = [token(tok, i, 8, espaco="·") for i in ids[0]]
    ax.set_xticks(range(len(marcas)), marcas, rotation=90, fontsize=8)
    ax.set_yticks(range(len(marcas)), marcas, fontsize=8)
    ax.set(xlabel="para quem olha (chave)", ylabel="quem olha (consulta)",
           title=f"{licao.modelo_curto}: camada {camada}, cabeça {cabeca}")
    licao.salvar_figura(fig, "03_cabeca_gpt2.png")


# ============================================================ a página (--html)
# Onde cada token olha, numa cabeça do GPT-2 carregado (a do experimento 6), num arquivo que
# abre com um duplo clique (comum/paginas.py): os pesos de atenção que padroes() calcula, sobre
# a FRASE, e o texto de cada token; a página só os mostra e tira deles as três notas do
# experimento 6. tests/test_03_paginas.py confere contra as atenções do transformers e contra
# o que o experimento 6 imprime. O HTML, o CSS e o JavaScript moram em lab/html/03_attention.*
# (e em lab/html/atencao.js, o que a página da 04 também usa).
def pagina() -> str:
    """A página da lição (--html): o mapa de calor da cabeça --camada.--cabeca na FRASE, e,
    para o token que o leitor aponta (ou alcança com Tab), os pesos que ele dá a cada um."""
    modelo, tok = LICAO.gpt2()
    camada, cabeca, aviso = cabeca_pedida(LICAO, modelo.config)
    if aviso:
        dizer(aviso)
    ids = tok(FRASE, return_tensors="pt")["input_ids"][:, :MAX_T]  # (1, T)
    pesos = padroes(modelo, ids)[camada, cabeca]                   # (T, T)
    dados = {"frase": FRASE, "modelo": LICAO.modelo_curto, "camada": camada, "cabeca": cabeca,
             "tokens": [token(tok, i, 12, espaco="·") for i in ids[0]],
             "pesos": [[float(w) for w in linha[:i + 1]] for i, linha in enumerate(pesos)]}
    corpo, script, estilo = (paginas.fonte(f"03_attention.{e}") for e in ("html", "js", "css"))
    script = paginas.fonte("atencao.js") + script       # o que a página da 04 também usa
    return paginas.documento(f"Lição {LICAO.numero} · Onde cada token olha", corpo, script,
                             dados, estilo, "Os pesos de atenção de uma cabeça do GPT-2")


if __name__ == "__main__":
    if paginas.pedida(LICAO.args):                  # --html [PASTA] / --abrir: só a página
        sys.exit(paginas.gravar(LICAO, pagina, "03_attention.html"))
    sys.exit(LICAO.rodar())
