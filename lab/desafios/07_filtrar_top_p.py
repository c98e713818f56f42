"""Desafio da lição 07: o corte do núcleo, filtrar_top_p(logits, p).

Ficam os tokens mais prováveis, do primeiro para baixo, até a probabilidade somada chegar a
p (o que cruza p entra); os outros viram -inf, e os que ficam guardam o logit que tinham
(o softmax, depois, renormaliza entre eles). p >= 1: os logits voltam como vieram. A
referência é a filtrar_top_p da lição 07. As posições de -inf são comparadas exatamente.
As sondas ficam longe de um acerto exato da soma com p e não têm logits iguais: num
empate, a ordem do sort (que o PyTorch não garante) decidiria quem fica na
fronteira, e o que alguns defeitos do catálogo devolvem."""
from __future__ import annotations

import torch

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L07 = importar_licao("07_generation")
FILTRAR_TOP_P = L07.filtrar_top_p
APOSTILA = "apostilas/07_generation.md"


def filtrar_top_p(logits, p):
    """O corte do núcleo (top-p): quem fica para o sorteio.

    logits: (..., V), uma linha de V logits por posição (o último eixo é o vocabulário;
    pode haver -inf, de um top-k feito antes); p: um número em (0, 1]. Devolve um tensor
    da forma de logits, com os mesmos números nos tokens que ficam e -inf nos que saem.

    Ficam, em cada linha, os tokens mais prováveis (pelo softmax da linha), do primeiro
    para baixo, até a probabilidade somada chegar a p: o token que cruza p entra, o
    seguinte não (o mais provável fica sempre). p >= 1: nada sai, os logits voltam como
    vieram (nem um token de probabilidade 0 vira -inf). As sondas não têm logits iguais
    numa linha (com um empate na fronteira, a ordem do sort decidiria quem fica).
    """


def referencia(logits, p):
    return FILTRAR_TOP_P(logits, p)


def _ordenar(logits):
    """Do maior ao menor; num empate, o de índice menor primeiro (stable=True: a mesma
    ordem em toda CPU)."""
    return logits.sort(dim=-1, descending=True, stable=True)


def versao(ajustes, logits, p):
    """O top-p com os defeitos do catálogo ligados (ajustes vazio: o certo), na ordem
    decrescente: um token fica se a massa dos mais prováveis que ele não chega a p."""
    corte = ajustes.get("corte", "certo")
    if p >= 1 and corte != "sem_atalho":
        return logits
    ordenados, ordem = _ordenar(logits)                              # (..., V) cada
    if ajustes.get("probs") == "exp":
        probs = ordenados.exp()                                      # sem dividir pela soma
    elif ajustes.get("probs") == "eixo":
        probs = ordenados.softmax(dim=0)                             # o eixo do lote
    else:
        probs = ordenados.softmax(dim=-1)
    acumulada = probs.cumsum(dim=-1)                                 # (..., V)
    antes = acumulada - probs                                        # a massa dos anteriores
    if corte == "um_a_menos":            # sai o que cruza p (e, se o 1º já cruza, todos)
        fora = acumulada > p
    elif corte == "um_a_mais":           # deslocou duas vezes: entra um depois do que cruza
        fora = torch.cat([torch.zeros_like(antes[..., :1]), antes[..., :-1]], -1) >= p
    elif corte == "do_fim":              # a regra 'do menos provável' na ordem decrescente
        fora = acumulada <= 1 - p
        fora[..., -1] = False
    else:                                # a regra da lição: a cauda (ele e os menos
        cauda = probs.flip(-1).cumsum(dim=-1).flip(-1)   # prováveis) que soma até 1 - p
        fora = cauda <= 1 - p            # (com p = 1, só probabilidade 0 exata: o mesmo
        fora[..., 0] = False             # em toda CPU, que uma soma perto de 1 não seria)
    if ajustes.get("volta") == "nao_volta":
        return ordenados.masked_fill(fora, float("-inf"))            # na ordem do sort
    if ajustes.get("volta") == "gather":
        return logits.masked_fill(fora.gather(-1, ordem), float("-inf"))
    return logits.masked_fill(fora.scatter(-1, ordem, fora), float("-inf"))


# ---------------------------------------------------------------- as sondas
def sondas():
    g = torch.Generator().manual_seed(11)

    def sorteio(*forma, vezes=2.0):
        return torch.randn(*forma, generator=g, dtype=torch.float64) * vezes

    B, V = 3, 11
    ja_cortados = sorteio(B, V)
    ja_cortados[[0, 1, 2], [4, 0, 9]] = float("-inf")      # um corte feito antes (um por
    #                                        linha: dois -inf empatam, e a ordem deles no sort
    #                                        decidiria o que um defeito do catálogo devolve)
    confiante_e_em_duvida = torch.stack([sorteio(V, vezes=4), sorteio(V, vezes=0.3)])
    # temperatura 0,01 (logits / 0,01): logits a menos de 5 do maior (probabilidades de
    # pelo menos e^-500, longe do 0 do float64) e, na 1ª e na 2ª linha, 3 e 1 a mais de 10
    # (e^-1000: 0 exato, em qualquer CPU)
    frio = 5 * torch.rand(B, V, generator=g, dtype=torch.float64)
    frio[0, [2, 5, 8]] = -10 - sorteio(3).abs()
    frio[1, 6] = -12.0
    frio = frio / 0.01                                     # (3, 11)
    return [
        Sonda(1, "a forma: logits (2, 3, 11), p = 0,9", (sorteio(2, B, V), 0.9)),
        Sonda(2, "p = 1, temperatura 0,01: nada sai (nem probabilidade 0 exata)",
              (frio, 1.0)),
        Sonda(2, "p pequeno (0,05): só o mais provável fica", (sorteio(B, V), 0.05)),
        Sonda(2, "uma linha só, sem lote: logits (11,), p = 0,7", (sorteio(V), 0.7)),
        Sonda(2, "logits que já têm -inf (um corte antes), p = 0,8", (ja_cortados, 0.8)),
        Sonda(2, "uma linha confiante e uma em dúvida: o núcleo muda de tamanho",
              (confiante_e_em_duvida, 0.9)),
        Sonda(2, "logits grandes (+ 8): as probabilidades são o softmax, não exp",
              (sorteio(B, V) + 8, 0.75)),
        Sonda(3, "um lote qualquer: logits (4, 50), p = 0,9", (sorteio(4, 50), 0.9)),
        Sonda(3, "logits (2, 3, 20), p = 0,5", (sorteio(2, 3, 20), 0.5)),
    ]


# ---------------------------------------------------------------- outras versões certas
def decrescente(logits, p):
    """Como a definição: do mais provável para baixo; sai quem já tem p antes de si."""
    if p >= 1:
        return logits
    ordenados, ordem = logits.sort(dim=-1, descending=True)          # (..., V)
    probs = ordenados.softmax(dim=-1)
    antes = probs.cumsum(dim=-1) - probs                             # (..., V)
    sai = torch.zeros_like(antes, dtype=torch.bool).scatter(-1, ordem, antes >= p)
    return torch.where(sai, torch.tensor(float("-inf"), dtype=logits.dtype), logits)


def por_limiar(logits, p):
    """O menor logit do núcleo vira o limiar (como no top-k): fica quem não está abaixo."""
    if p >= 1:
        return logits
    ordenados = logits.sort(dim=-1, descending=True).values          # (..., V)
    probs = ordenados.softmax(dim=-1)
    k = ((probs.cumsum(dim=-1) - probs) < p).sum(dim=-1, keepdim=True)   # (..., 1)
    limiar = ordenados.gather(-1, k - 1)                             # (..., 1)
    return logits.masked_fill(logits < limiar, float("-inf"))


def em_laco_float32(logits, p):
    """Linha a linha, com um laço em Python, em float32."""
    if p >= 1:
        return logits
    linhas = logits.reshape(-1, logits.shape[-1])                    # (N, V)
    saida = torch.full_like(linhas, float("-inf"))
    for i, linha in enumerate(linhas):
        probs = linha.float().softmax(-1)
        massa = 0.0
        for j in probs.argsort(descending=True).tolist():
            saida[i, j] = linha[j]
            massa += float(probs[j])
            if massa >= p:
                break
    return saida.reshape(logits.shape)


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


CORTE = secao("3. top-k e top-p: cortar a cauda")
DEFEITOS = [
    Defeito("um_token_a_menos", {"corte": "um_a_menos"},
            "o núcleo ficou com um token a menos: saiu o token que CRUZA p, e ele entra (a "
            "soma só chega a p com ele). Com p pequeno, até o mais provável sai e a linha "
            "fica toda -inf. Sai quem já tem p de massa ANTES de si: acumulada - probs >= p "
            "na ordem decrescente (ou, da cauda, acumulada <= 1 - p na crescente).",
            CORTE),
    Defeito("um_token_a_mais", {"corte": "um_a_mais"},
            "o núcleo ficou com um token a mais: depois do que cruza p, entrou também o "
            "seguinte (a máscara deslocada duas vezes). O que cruza p é o último a entrar.",
            CORTE),
    Defeito("cortou_os_mais_provaveis", {"corte": "do_fim"},
            "saíram os tokens MAIS prováveis: a regra 'a cauda que soma até 1 - p' vale com "
            "os logits em ordem CRESCENTE (do menos provável ao mais provável); com "
            "descending=True ela corta a cabeça, não a cauda.",
            CORTE),
    Defeito("p_1_corta", {"corte": "sem_atalho"},
            "com p = 1 o corte ainda tirou tokens: os de probabilidade 0 exata (com "
            "temperatura baixa, logits / T têm diferenças de milhares, e exp(-1000) é 0 em "
            "float). p >= 1 é 'sem top-p': devolva os logits como vieram.",
            CORTE),
    Defeito("sem_voltar_a_ordem", {"volta": "nao_volta"},
            "a saída ficou na ordem do sort, não na do vocabulário: a posição i tem de ser "
            "o token i. Volte a máscara para a ordem original com scatter(-1, ordem, ...).",
            CORTE),
    Defeito("gather_no_lugar_de_scatter", {"volta": "gather"},
            "a máscara voltou para a ordem do vocabulário com gather(-1, ordem): isso aplica "
            "a permutação ao contrário. O elemento i do sort é o token ordem[i]: "
            "mascara.scatter(-1, ordem, mascara) põe cada um no seu lugar.",
            CORTE),
    Defeito("exp_sem_normalizar", {"probs": "exp"},
            "as 'probabilidades' foram exp(logits), sem dividir pela soma: não somam 1, e a "
            "soma acumulada não se compara com p. Use o softmax da linha.",
            secao("2. Temperatura")),
    Defeito("softmax_no_eixo_errado", {"probs": "eixo"},
            "o softmax foi feito no eixo do lote (dim=0), não no do vocabulário: cada linha "
            "tem a sua distribuição, softmax(dim=-1).",
            CORTE),
]

DESAFIO = Desafio(
    licao="07", nome="filtrar_top_p", titulo="o corte do núcleo (top-p)",
    modelo=filtrar_top_p, referencia=referencia, versao=versao, sondas=sondas,
    defeitos=DEFEITOS, imports="import torch",
    secao=f'{APOSTILA}, seção "Desafio: escreva o top-p"',
    dicas=[
        "Ordene cada linha (logits.sort(dim=-1, descending=True) devolve os valores e a "
        "ordem), tire o softmax dos ordenados e a soma acumulada (cumsum).",
        "Um token fica se a massa dos que vêm ANTES dele ainda não chegou a p: "
        "acumulada - probs < p. Assim o que cruza p entra, e o primeiro sempre fica.",
        "A máscara 'sai' está na ordem do sort: sai.scatter(-1, ordem, sai) a põe na ordem "
        "do vocabulário; logits.masked_fill(..., float('-inf')). E p >= 1: return logits.",
    ],
    proibidas=[(L07, "filtrar_top_p")],
    alternativas={"decrescente": decrescente, "limiar": por_limiar,
                  "laco_float32": em_laco_float32},
    substituir=lambda sua: {"07_generation": {"filtrar_top_p": sua}},
    com_o_seu=[("07_generation.py", "os cortes do experimento 3 e os sorteios do 4 com o "
                "seu top-p")],
)
