"""Desafio da lição 01: as fusões do BPE numa palavra, fundir(simbolos, ranks).

A cada passo, entre os pares vizinhos que a palavra tem agora, o de menor posto se funde em
toda a palavra, da esquerda para a direita; de novo, até nenhum par vizinho estar na tabela.
A referência é a fundir() da lição 01 (sem o argumento passos, que só a tela da lição usa).
A peça não usa o torch: as sondas são listas de str, comparadas exatamente."""
from __future__ import annotations

import functools

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L01 = importar_licao("01_tokens")
APOSTILA = "apostilas/01_tokens.md"
INF = float("inf")


def fundir(simbolos, ranks):
    """Aplica as fusões do BPE a uma palavra, como o GPT-2.

    simbolos: a palavra como lista de símbolos (str), ex. ['Ġ', 't', 'o', 'k', 'e', 'n'];
    ranks: um dicionário {(a, b): posto} com os pares que se fundem (postos diferentes
    entre si; 0 é a fusão aprendida primeiro). Devolve uma lista NOVA de str (não mude a
    lista que recebeu).

    A cada passo, entre os pares de símbolos vizinhos que a palavra tem AGORA, o de MENOR
    posto se funde em toda a palavra, da esquerda para a direita: ['a', 'a', 'a'] com o
    par ('a', 'a') dá ['aa', 'a']. Repita até nenhum par vizinho estar em ranks.
    """


def referencia(simbolos, ranks):
    return L01.fundir(simbolos, ranks)


def _juntar(simbolos, par, avanco):
    """O par fundido na palavra inteira: avanco 2 (o certo: o par consome os dois), 1 (o
    segundo símbolo fica e conta de novo) ou 'direita' (da direita para a esquerda)."""
    if avanco == "direita":
        novos = list(simbolos)
        i = len(novos) - 2
        while i >= 0:
            if (novos[i], novos[i + 1]) == par:
                novos[i:i + 2] = [novos[i] + novos[i + 1]]
            i -= 1
        return novos
    novos, i = [], 0
    while i < len(simbolos):
        if i + 1 < len(simbolos) and (simbolos[i], simbolos[i + 1]) == par:
            novos.append(simbolos[i] + simbolos[i + 1])
            i += avanco
        else:
            novos.append(simbolos[i])
            i += 1
    return novos


def versao(ajustes, simbolos, ranks):
    """As fusões com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    maior = ajustes.get("escolha") == "maior"
    laco, avanco = ajustes.get("laco", "ate_acabar"), ajustes.get("avanco", 2)
    simbolos = list(simbolos)
    if laco == "tabela":                      # a tabela inteira, uma vez, na ordem
        for par in sorted(ranks, key=ranks.get, reverse=maior):
            simbolos = _juntar(simbolos, par, avanco)
        return simbolos
    if laco == "pares_do_comeco":             # só os pares que a palavra tinha no começo
        pares = {p for p in zip(simbolos, simbolos[1:]) if p in ranks}
        for par in sorted(pares, key=ranks.get, reverse=maior):
            simbolos = _juntar(simbolos, par, avanco)
        return simbolos
    while len(simbolos) > 1:
        pares = [p for p in zip(simbolos, simbolos[1:]) if p in ranks]
        if not pares:
            break
        par = (max if maior else min)(pares, key=ranks.get)
        simbolos = _juntar(simbolos, par, avanco)
        if laco == "uma":
            break
    return simbolos


# ---------------------------------------------------------------- as sondas
def _caracteres(palavra):
    """A palavra como o bpe() da lição a entrega: um símbolo por byte ('Ġ' é o espaço)."""
    return [L01.BYTE_PARA_CHAR[b] for b in palavra.encode("utf-8")]


@functools.lru_cache(maxsize=1)
def _tabela_aprendida():
    """60 fusões aprendidas pela lição 01 nos seus parágrafos em português (a tabela de
    verdade de um BPE: cada fusão vem depois das que formam as suas partes)."""
    fusoes = L01.treinar_bpe("\n".join(L01.PORTUGUES), 60)
    return {par: posto for posto, (par, _n) in enumerate(fusoes)}


def sondas():
    aprendida = _tabela_aprendida()
    return [
        Sonda(1, "['b','a','n','a','n','a'] e 3 fusões: uma lista de str",
              (list("banana"), {("a", "n"): 0, ("b", "an"): 1, ("an", "a"): 2})),
        Sonda(2, "um símbolo só: nada a fundir", (["x"], {("x", "x"): 0})),
        Sonda(2, "nenhum par vizinho na tabela: a palavra como veio",
              (list("abc"), {("c", "a"): 0, ("b", "a"): 1})),
        Sonda(2, "dois pares na tabela: o de MENOR posto primeiro",
              (list("abc"), {("a", "b"): 1, ("b", "c"): 0})),
        Sonda(2, "o mesmo par duas vezes: as duas se fundem",
              (list("abxab"), {("a", "b"): 0})),
        Sonda(2, "['a','a','a'] com o par ('a', 'a'): da esquerda para a direita",
              (list("aaa"), {("a", "a"): 0})),
        Sonda(2, "uma fusão sobre outra: ('l','o') e depois ('lo','w')",
              (list("low"), {("l", "o"): 0, ("lo", "w"): 1})),
        Sonda(2, "postos fora da ordem de aprendizado (como --ordem inversa)",
              (list("abc"), {("a", "bc"): 0, ("b", "c"): 1, ("a", "b"): 2})),
        Sonda(2, "('ab','c') com posto menor que o de ('a','b'), que a forma",
              (list("abc"), {("ab", "c"): 0, ("a", "b"): 1})),
        Sonda(3, "'tokenizador' com 60 fusões aprendidas na lição",
              (_caracteres("tokenizador"), aprendida)),
        Sonda(3, "'consequências' com as mesmas 60 fusões",
              (_caracteres("consequências"), aprendida)),
        Sonda(3, "'vocabulário' com as mesmas",
              (_caracteres("vocabulário"), aprendida)),
    ]


# ---------------------------------------------------------------- outras versões certas
def como_a_openai(simbolos, ranks):
    """O bpe() do encoder.py da OpenAI (2019), numa lista: o par de menor posto, achado
    com index() a partir de i, em toda a palavra."""
    palavra = tuple(simbolos)
    while len(palavra) > 1:
        pares = set(zip(palavra, palavra[1:]))
        primeiro, segundo = min(pares, key=lambda p: ranks.get(p, INF))
        if (primeiro, segundo) not in ranks:
            break
        nova, i = [], 0
        while i < len(palavra):
            try:
                j = palavra.index(primeiro, i)
            except ValueError:
                nova.extend(palavra[i:])
                break
            nova.extend(palavra[i:j])
            i = j
            if palavra[i] == primeiro and i < len(palavra) - 1 and palavra[i + 1] == segundo:
                nova.append(primeiro + segundo)
                i += 2
            else:
                nova.append(palavra[i])
                i += 1
        palavra = tuple(nova)
    return list(palavra)


def uma_ocorrencia_por_vez(simbolos, ranks):
    """Como o tiktoken: a cada passo, só a ocorrência mais à esquerda do par de menor posto
    (com as fusões de um BPE de verdade, o mesmo que fundir todas de uma vez)."""
    partes = list(simbolos)
    while True:
        postos = [ranks.get(p, INF) for p in zip(partes, partes[1:])]
        if not postos or min(postos) == INF:
            return partes
        i = postos.index(min(postos))
        partes = partes[:i] + [partes[i] + partes[i + 1]] + partes[i + 2:]


def recursiva(simbolos, ranks):
    """Uma fusão (o par de menor posto, por ordenação) e a mesma função no resultado."""
    candidatos = sorted((ranks[p], p) for p in zip(simbolos, simbolos[1:]) if p in ranks)
    if not candidatos:
        return list(simbolos)
    (a, b) = candidatos[0][1]
    texto = "\x00".join(simbolos)           # \x00 não aparece nos símbolos das sondas
    partes, saida, i = texto.split("\x00"), [], 0
    while i < len(partes):
        if partes[i] == a and i + 1 < len(partes) and partes[i + 1] == b:
            saida.append(a + b)
            i += 2
        else:
            saida.append(partes[i])
            i += 1
    return recursiva(saida, ranks)


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


QUATRO = "4. Aplicar as fusões: o tokenizador do GPT-2 em três passos"


DEFEITOS = [
    Defeito("maior_posto", {"escolha": "maior"},
            "a cada passo foi fundido o par de MAIOR posto. O posto é a ordem em que a fusão "
            "foi aprendida: 0 é a primeira (o par mais frequente do texto de treino), e ela "
            "vem primeiro (min, não max). Ao contrário, fusões raras e recentes passam na "
            "frente e os pedaços saem outros.",
            secao(QUATRO)),
    Defeito("uma_passada", {"laco": "uma"},
            "a função parou depois da primeira fusão. Fundir um par cria pares novos (o "
            "'lo' de ('l','o') pode se fundir com o 'w'): repita, escolhendo de novo o de "
            "menor posto, até nenhum par vizinho estar na tabela.",
            secao(QUATRO)),
    Defeito("pares_do_comeco", {"laco": "pares_do_comeco"},
            "os pares foram escolhidos uma vez só, entre os que a palavra tinha no começo: "
            "um par que só existe depois de uma fusão (('lo','w') depois de ('l','o')) nunca "
            "entra. Depois de cada fusão, olhe de novo os pares vizinhos da palavra nova.",
            secao(QUATRO)),
    Defeito("tabela_na_ordem", {"laco": "tabela"},
            "a tabela foi percorrida uma vez, fusão por fusão, na ordem dos postos. Com as "
            "fusões de um BPE de verdade (cada uma vem depois das que formam as suas "
            "partes) isso dá o mesmo, mas a regra é outra: a cada passo, o par de menor "
            "posto entre os que a palavra tem AGORA. Com os postos fora da ordem (o "
            "--ordem inversa do experimento 2), as duas diferem; e percorrer 50 mil fusões "
            "por palavra é lento.",
            secao(QUATRO)),
    Defeito("avanca_um", {"avanco": 1},
            "depois de fundir o par na posição i, o laço foi para i + 1, não i + 2: o "
            "segundo símbolo do par entra de novo na palavra (['a','b'] vira ['ab','b']). "
            "O par fundido consome os dois símbolos.",
            secao(QUATRO)),
    Defeito("pela_direita", {"avanco": "direita"},
            "o par foi fundido da direita para a esquerda: ['a','a','a'] com ('a','a') deu "
            "['a','aa'], e o BPE do GPT-2 dá ['aa','a']. Quando duas ocorrências se "
            "sobrepõem, vale a da esquerda: percorra a palavra do começo para o fim.",
            secao(QUATRO)),
]

DESAFIO = Desafio(
    licao="01", nome="fundir", titulo="as fusões do BPE numa palavra",
    modelo=fundir, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="",
    secao=f'{APOSTILA}, seção "Desafio: escreva as fusões do BPE"',
    dicas=[
        "Os pares vizinhos da palavra são zip(simbolos, simbolos[1:]). O posto de um par é "
        "ranks.get(par, float('inf')): infinito para quem não está na tabela.",
        "Um laço while: ache o par de menor posto (min); se o posto for infinito, pare; "
        "senão, monte uma lista nova com o par fundido e comece de novo.",
        "Para fundir: i = 0; enquanto i < len(simbolos), se (simbolos[i], simbolos[i + 1]) "
        "é o par, acrescente simbolos[i] + simbolos[i + 1] e pule 2; senão, acrescente "
        "simbolos[i] e pule 1.",
    ],
    proibidas=[(L01, "fundir"), (L01, "bpe")],
    alternativas={"openai": como_a_openai, "uma_por_vez": uma_ocorrencia_por_vez,
                  "recursiva": recursiva},
)
