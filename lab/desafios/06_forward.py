"""Desafio da lição 06: o forward do GPT-2 inteiro, forward(self, ids, so_a_ultima=False).

wte[ids] + wpe[0..T-1], os L blocos em sequência, o ln_f e a cabeça amarrada (x vezes o wte
transposto); com so_a_ultima, só a última posição, (B, 1, V). A referência é o GPT2.forward
da lição 06. A sonda é um GPT2 pequeno em float64 com TODOS os parâmetros sorteados de novo
(os ganhos dos LayerNorm longe de 1, os vieses longe de 0: um ln_f esquecido aparece), e B, T,
h, d, V e P diferentes entre si."""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L06 = importar_licao("06_gpt2")
APOSTILA = "apostilas/06_gpt2.md"
_FORWARD = L06.GPT2.forward        # o da lição, guardado antes de qualquer --com-o-seu


def forward(self, ids, so_a_ultima=False):
    """O GPT-2 inteiro: dos ids aos logits (é um método do GPT2 da lição 06; self é o
    modelo, com self.wte e self.wpe (nn.Embedding), self.h (a lista dos L blocos da
    lição 05) e self.ln_f (o LayerNorm final)).

    ids: (B, T), inteiros (torch.long). Devolve os logits, (B, T, V): a linha t é a nota
    de cada token do vocabulário para a posição t + 1. A entrada do bloco 1 é
    wte[ids] + wpe[0..T-1] (a posição de cada token na frase, de 0); cada bloco recebe a
    saída do anterior (o Bloco já soma as suas conexões residuais); depois o ln_f, e a
    cabeça é o próprio wte, transposto. so_a_ultima=True: só a última posição, (B, 1, V)
    (o eixo do tempo fica, com tamanho 1).
    """


def referencia(self, ids, so_a_ultima=False):
    return _FORWARD(self, ids, so_a_ultima)


def versao(ajustes, self, ids, so_a_ultima=False):
    """O forward com os defeitos do catálogo ligados (ajustes vazio: o certo)."""
    B, T = ids.shape
    posicoes = ajustes.get("posicoes", "certas")
    x = self.wte(ids)                                                 # (B, T, C)
    if posicoes == "certas":
        x = x + self.wpe(torch.arange(T))                             # (B, T, C) + (T, C)
    elif posicoes == "de_1":
        x = x + self.wpe(torch.arange(1, T + 1))                      # (B, T, C) + (T, C)
    for bloco in self.h:
        x = x + bloco(x) if ajustes.get("blocos") == "residuo" else bloco(x)  # (B, T, C)
    if ajustes.get("ln_f", True):
        x = self.ln_f(x)                                              # (B, T, C)
    if so_a_ultima:
        x = x[:, -1] if ajustes.get("ultima") == "sem_eixo" else x[:, -1:]   # (B, [1,] C)
    logits = x @ self.wte.weight.T                                    # (B, T, V)
    return logits.softmax(-1) if ajustes.get("saida") == "softmax" else logits


def modelo_sorteado(semente, camadas=2, d=12, h=3, vocab=11, posicoes=9):
    """Um GPT2 da lição 06 em float64 com todo parâmetro sorteado de novo: ganhos perto de
    1 e vieses perto de 0, mas nenhum igual (nem o do ln_f)."""
    g = torch.Generator().manual_seed(semente)
    modelo = L06.GPT2(camadas, d, h, vocab, posicoes).double().eval()
    with torch.no_grad():
        for nome, p in modelo.named_parameters():
            ruido = torch.randn(p.shape, generator=g, dtype=torch.float64)
            if "ln" in nome and nome.endswith("weight"):
                p.copy_(1 + 0.3 * ruido)                              # ganhos
            elif p.dim() == 1:
                p.copy_(0.3 * ruido)                                  # vieses
            else:
                p.copy_(0.5 * ruido)                                  # matrizes e tabelas
    return modelo


def sondas():
    g = torch.Generator().manual_seed(6)
    modelo, outro = modelo_sorteado(60), modelo_sorteado(61, camadas=3, d=8, h=2, vocab=7,
                                                         posicoes=10)

    def ids(B, T, V=11):
        return torch.randint(0, V, (B, T), generator=g)

    return [
        Sonda(1, "GPT2(2 blocos, d=12, h=3, V=11, P=9), ids (2, 5): a saída (2, 5, 11)",
              (modelo, ids(2, 5))),
        Sonda(2, "um token só (T = 1): a posição 0", (modelo, ids(2, 1))),
        Sonda(2, "o mesmo id em todas as posições: só o wpe as distingue",
              (modelo, torch.full((1, 4), 7))),
        Sonda(2, "so_a_ultima=True: só a última posição, (2, 1, 11)",
              (modelo, ids(2, 5)), {"so_a_ultima": True}),
        Sonda(2, "so_a_ultima=True com um token só: (3, 1, 11)",
              (modelo, ids(3, 1)), {"so_a_ultima": True}),
        Sonda(3, "uma frase qualquer: B = 3, T = 7", (modelo, ids(3, 7))),
        Sonda(3, "outro GPT2 (3 blocos, d=8, h=2, V=7, P=10), ids (2, 6)",
              (outro, ids(2, 6, V=7))),
        Sonda(3, "o mesmo outro, so_a_ultima=True, ids (1, 8)",
              (outro, ids(1, 8, V=7)), {"so_a_ultima": True}),
    ]


# ---------------------------------------------------------------- outras versões certas
def ln_f_depois_do_corte(self, ids, so_a_ultima=False):
    """O corte da última posição ANTES do ln_f: o LayerNorm age em cada posição sozinha,
    então normalizar e depois cortar ou cortar e depois normalizar dá o mesmo."""
    T = ids.shape[1]
    x = self.wte.weight[ids] + self.wpe.weight[:T]                    # (B, T, C)
    for bloco in self.h:
        x = bloco(x)                                                  # (B, T, C)
    if so_a_ultima:
        x = x[:, -1:]                                                 # (B, 1, C)
    return F.linear(self.ln_f(x), self.wte.weight)                    # (B, T, V)


def por_functional(self, ids, so_a_ultima=False):
    """As tabelas por F.embedding, o ln_f escrito com F.layer_norm e a cabeça por einsum."""
    T = ids.shape[1]
    x = F.embedding(ids, self.wte.weight) + F.embedding(torch.arange(T), self.wpe.weight)
    for bloco in self.h:
        x = bloco(x)                                                  # (B, T, C)
    x = F.layer_norm(x, x.shape[-1:], self.ln_f.weight, self.ln_f.bias, self.ln_f.eps)
    x = x[:, -1:] if so_a_ultima else x                               # (B, T ou 1, C)
    return torch.einsum("btc,vc->btv", x, self.wte.weight)            # (B, T, V)


def em_float32(self, ids, so_a_ultima=False):
    """O mesmo modelo em float32 (uma cópia: o do aluno não muda)."""
    return ln_f_depois_do_corte(copy.deepcopy(self).float(), ids, so_a_ultima)


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


PECAS = "2. As peças em volta da pilha"
GERAR = "4. Gerar é repetir o forward"
CAMINHO = "1. Do texto à próxima palavra: o caminho completo"

DEFEITOS = [
    Defeito("sem_wpe", {"posicoes": "nenhuma"},
            "faltou somar o wpe: a entrada do bloco 1 é só wte[ids]. Sem a posição, a "
            "atenção não sabe em que ordem os tokens vieram. A entrada é "
            "wte[ids] + wpe[0..T-1].",
            secao(PECAS)),
    Defeito("posicoes_de_1", {"posicoes": "de_1"},
            "as posições começaram em 1: o primeiro token ganhou wpe[1], não wpe[0]. As "
            "posições vão de 0 a T - 1, torch.arange(T); com T = 1.024 no GPT-2, o wpe[1024] "
            "nem existe.",
            secao(PECAS)),
    Defeito("sem_ln_f", {"ln_f": False},
            "faltou o ln_f antes da cabeça. No Pre-LN, o fluxo residual nunca é normalizado "
            "dentro da pilha, e a norma dele cresce bloco a bloco: o LayerNorm final é o que "
            "o põe na escala que a cabeça (o wte transposto) espera.",
            secao(PECAS)),
    Defeito("residuo_somado_de_novo", {"blocos": "residuo"},
            "o resíduo foi somado de novo em volta de cada bloco (x = x + bloco(x)). O Bloco "
            "da lição 05 já soma as suas duas conexões residuais e devolve o x novo: "
            "x = bloco(x).",
            secao(PECAS)),
    Defeito("ultima_sem_o_eixo", {"ultima": "sem_eixo"},
            "com so_a_ultima=True, a saída ficou (B, V): x[:, -1] tira o eixo do tempo. O "
            "forward devolve sempre (B, T, V), e com so_a_ultima, (B, 1, V): x[:, -1:] "
            "mantém o eixo (quem gera lê logits[:, -1]).",
            secao(GERAR)),
    Defeito("softmax_no_fim", {"saida": "softmax"},
            "o forward devolveu as probabilidades (o softmax dos logits), e não os logits. "
            "O softmax é de quem usa a saída: a geração e a perda (a entropia cruzada do "
            "treino, lição 10, faz o seu próprio log-softmax).",
            secao(CAMINHO)),
]

DESAFIO = Desafio(
    licao="06", nome="forward", titulo="o forward do GPT-2, dos ids aos logits",
    modelo=forward, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    secao=f'{APOSTILA}, seção "Desafio: escreva o forward do GPT-2"',
    dicas=[
        "Siga o desenho da seção 1: embeddings, a pilha de blocos, ln_f, cabeça. A forma "
        "fica (B, T, C) da entrada do bloco 1 até a saída do ln_f.",
        "T = ids.shape[1]; x = self.wte(ids) + self.wpe(torch.arange(T)); depois, para "
        "cada bloco em self.h, x = bloco(x).",
        "Depois do ln_f, se so_a_ultima, x = x[:, -1:] (fica (B, 1, C)); os logits são "
        "x @ self.wte.weight.T.",
    ],
    proibidas=[(L06.GPT2, "forward")],
    alternativas={"ln_f_depois_do_corte": ln_f_depois_do_corte,
                  "functional": por_functional, "float32": em_float32},
    substituir=lambda seu: {"06_gpt2": {"GPT2.forward": seu}},
    com_o_seu=[("07_generation.py", "o experimento 5: os logits do passo com cache contra "
                "os do seu forward", "--so", "5")],
)
