"""Desafio da lição 02: a entrada do bloco 1, entrada(wte, wpe, ids) = wte[ids] + wpe[0..T-1].

A linha do wte de cada id mais a linha do wpe da POSIÇÃO dele na frase (0, 1, ..., T - 1,
a mesma em toda frase do lote). A referência é a entrada() da lição 02. As sondas têm o wpe
maior que o wte (13 posições, 11 tokens), para que os erros que indexam o wpe com outra
coisa (os ids, o número da frase, a posição corrida no lote) deem números, e não um erro."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L02 = importar_licao("02_embeddings")
APOSTILA = "apostilas/02_embeddings.md"
_ENTRADA = L02.entrada          # a da lição, guardada antes de qualquer --com-o-seu


def entrada(wte, wpe, ids):
    """O vetor de cada token que entra no bloco 1 do GPT-2.

    wte: (V, d), uma linha por token do vocabulário; wpe: (P, d), uma linha por posição;
    ids: (B, T), inteiros (torch.long), B frases de T tokens. Devolve (B, T, d): para o
    token t da frase b, a linha wte[ids[b, t]] mais a linha wpe[t] (a posição dele na
    frase, contada de 0; a mesma em toda frase do lote).
    """


def referencia(wte, wpe, ids):
    return _ENTRADA(wte, wpe, ids)


def versao(ajustes, wte, wpe, ids):
    """A entrada com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    B, T = ids.shape
    tokens = wte[ids]                                               # (B, T, d)
    if ajustes.get("escala") == "raiz_d":
        tokens = tokens * math.sqrt(wte.shape[1])
    posicoes = ajustes.get("posicoes", "certas")
    if posicoes == "nenhuma":
        return tokens
    if posicoes == "de_1":
        return tokens + wpe[torch.arange(1, T + 1)]                 # (B, T, d) + (T, d)
    if posicoes == "ids":
        return tokens + wpe[ids]                                    # (B, T, d)
    if posicoes == "lote":
        return tokens + wpe[torch.arange(B)][:, None]               # (B, 1, d): a frase b
    if posicoes == "corridas":
        return tokens + wpe[torch.arange(B * T)].view(B, T, -1)     # (B, T, d)
    return tokens + wpe[torch.arange(T)]                            # (B, T, d) + (T, d)


def sondas():
    g = torch.Generator().manual_seed(2)
    V, P, d = 11, 13, 5

    def tabela(linhas):
        return torch.randn(linhas, d, generator=g, dtype=torch.float64)

    def ids(B, T):
        return torch.randint(0, V, (B, T), generator=g)

    wte, wpe = tabela(V), tabela(P)
    return [
        Sonda(1, "wte (11, 5), wpe (13, 5), ids (2, 4): a saída (2, 4, 5)",
              (wte, wpe, ids(2, 4))),
        Sonda(2, "um token só (T = 1): a posição 0", (wte, wpe, ids(2, 1))),
        Sonda(2, "uma frase só (B = 1), T = 5", (wte, wpe, ids(1, 5))),
        Sonda(2, "o mesmo id em todas as posições: só o wpe as distingue",
              (wte, wpe, torch.full((2, 4), 3))),
        Sonda(2, "wte zero: sobra só o wpe de cada posição",
              (torch.zeros(V, d, dtype=torch.float64), wpe, ids(2, 3))),
        Sonda(3, "outras tabelas, B = 3, T = 4", (tabela(V), tabela(P), ids(3, 4))),
        Sonda(3, "B = 2, T = 6", (wte, wpe, ids(2, 6))),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_one_hot(wte, wpe, ids):
    """A consulta como produto por um one-hot (o experimento 1 da lição)."""
    T = ids.shape[1]
    um = F.one_hot(ids, wte.shape[0]).to(wte.dtype)                  # (B, T, V)
    return um @ wte + F.one_hot(torch.arange(T), wpe.shape[0]).to(wpe.dtype) @ wpe


def por_embedding(wte, wpe, ids):
    """F.embedding, o que o nn.Embedding faz, e wpe[:T] por fatia."""
    return F.embedding(ids, wte) + wpe[: ids.shape[1]]               # (B, T, d)


def em_float32(wte, wpe, ids):
    return por_embedding(wte.float(), wpe.float(), ids)


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


POSICOES = "3. Posições: aprendidas (GPT-2) ou senoidais (2017)"
ENTRADA = "Experimento 5/6 · A entrada do bloco 1 e a cabeça de saída são a mesma tabela"

DEFEITOS = [
    Defeito("sem_wpe", {"posicoes": "nenhuma"},
            "faltou somar o wpe: a saída é só wte[ids]. Sem a posição, a atenção não sabe "
            "em que ordem os tokens vieram ('o cão mordeu o homem' e 'o homem mordeu o cão' "
            "dariam os mesmos vetores, só em outra ordem).",
            secao(POSICOES)),
    Defeito("posicoes_de_1", {"posicoes": "de_1"},
            "as posições começaram em 1: o primeiro token ganhou wpe[1], não wpe[0]. Como "
            "os índices do Python, as posições do GPT-2 vão de 0 a T - 1 "
            "(torch.arange(T)); com T = 1.024, wpe[1024] nem existe.",
            secao(POSICOES)),
    Defeito("wpe_pelos_ids", {"posicoes": "ids"},
            "o wpe foi indexado pelos ids dos tokens, não pelas posições: wpe[ids] em vez "
            "de wpe[0..T-1]. A linha do wpe depende de ONDE o token está, não de qual ele é "
            "(com o GPT-2 de verdade, um id acima de 1.023 nem cabe no wpe).",
            secao(POSICOES)),
    Defeito("posicao_e_a_frase", {"posicoes": "lote"},
            "cada frase do lote ganhou o wpe do número dela (a frase b, wpe[b], em todos os "
            "tokens), e não o da posição de cada token: o índice do lote (o eixo 0) no "
            "lugar do tempo (o eixo 1). As posições são torch.arange(T), com "
            "T = ids.shape[1], as mesmas em toda frase.",
            secao(POSICOES)),
    Defeito("posicoes_corridas", {"posicoes": "corridas"},
            "as posições correram pelo lote inteiro: a segunda frase começou na posição T, "
            "não em 0 (o lote achatado, ids.view(-1), com torch.arange(B*T)). Cada frase "
            "começa de novo em 0: o wpe[0..T-1], de forma (T, d), se soma igual a todas "
            "(broadcast).",
            secao(POSICOES)),
    Defeito("vezes_raiz_de_d", {"escala": "raiz_d"},
            "o wte[ids] foi multiplicado por raiz(d), como no Transformer de 2017. O GPT-2 "
            "não faz isso: a entrada é a soma simples wte[ids] + wpe[0..T-1] (é o que o "
            "experimento 5 confere contra o hidden_states[0] do transformers).",
            secao(ENTRADA)),
]


def _forward_com(sua):
    """O forward da lição 06 com a SUA entrada no lugar de wte(ids) + wpe(posicoes): o
    resto (os blocos, o ln_f, a cabeça amarrada) é o da lição."""
    def forward(self, ids, so_a_ultima=False):
        x = sua(self.wte.weight, self.wpe.weight, ids)     # (B, T, C): a sua entrada
        for bloco in self.h:
            x = bloco(x)                                    # (B, T, C)
        x = self.ln_f(x)                                    # (B, T, C)
        if so_a_ultima:
            x = x[:, -1:]                                   # (B, 1, C)
        return x @ self.wte.weight.T                        # (B, T, V)
    return forward


DESAFIO = Desafio(
    licao="02", nome="entrada", titulo="a entrada do bloco 1, wte[ids] + wpe[0..T-1]",
    modelo=entrada, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    secao=f'{APOSTILA}, seção "Desafio: escreva a entrada do bloco 1"',
    dicas=[
        "Consultar uma tabela é indexá-la: wte[ids] pega uma linha por id e dá (B, T, d).",
        "As posições são 0, 1, ..., T - 1, com T = ids.shape[1] (o eixo 1, o do tempo): "
        "torch.arange(T).",
        "wpe[torch.arange(T)] tem forma (T, d); somado a wte[ids], (B, T, d), o broadcast "
        "dá a mesma linha de posição a toda frase do lote.",
    ],
    proibidas=[(L02, "entrada")],
    alternativas={"one_hot": por_one_hot, "embedding": por_embedding, "float32": em_float32},
    substituir=lambda sua: {"06_gpt2": {"GPT2.forward": _forward_com(sua)}},
    com_o_seu=[("07_generation.py", "o experimento 5: os logits do passo com cache, que "
                "soma wte e wpe por conta própria, contra os do forward da lição 06 com a "
                "sua entrada", "--so", "5")],
)
