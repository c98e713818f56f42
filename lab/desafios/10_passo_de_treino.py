"""Desafio da lição 10: o passo de treino, passo_de_treino(modelo, otimizador, x, y, marcar).

A perda, o gradiente dela e só dela (zero_grad antes do backward), o corte da norma do
gradiente em 1 e o passo do otimizador. O que se compara não é só o que a função devolve:
cada sonda monta um GPT2 da lição 06 minúsculo em float64 (todo peso sorteado) e um
otimizador, chama a função do aluno uma ou mais vezes e observa as perdas, os pesos e os
gradientes depois, e quantas vezes marcar() foi chamada. Um gradiente velho no .grad (um
backward anterior, como o da contagem de FLOPs da lição 12) e dois passos seguidos pegam o
zero_grad esquecido; um SGD com gradiente grande pega o corte fora do lugar."""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L10 = importar_licao("10_treino")
GPT2 = importar_licao("06_gpt2").GPT2
APOSTILA = "apostilas/10_treino.md"
_PASSO, _PERDA, _ADAMW = L10.passo_de_treino, L10.perda, L10.adamw   # as originais


def passo_de_treino(modelo, otimizador, x, y, marcar=lambda: None):
    """Um passo de treino: a perda do lote, o gradiente, o corte e o passo do otimizador.

    modelo: o GPT2 da lição 06 (modelo(x) dá os logits, (B, T, V)); otimizador: um objeto
    com zero_grad() e step() (o AdamW do lab; as sondas usam também um SGD); x e y: (B, T),
    os ids de entrada e o alvo, JÁ deslocado (y[:, t] é o token que vem depois de x[:, t]).
    Devolve a perda do lote, calculada ANTES do passo: um tensor de um número (quem chama
    faz .item()).

    Na ordem:
      1. a perda: a entropia cruzada média dos logits de x contra y (a perda() da lição 10,
         importar_licao("10_treino").perda, faz essa conta); depois, marcar();
      2. o gradiente desta perda, e só dela: o .grad dos pesos pode chegar com o resto de
         um backward anterior (zere antes do backward); depois, marcar();
      3. o corte: a norma de TODOS os gradientes juntos limitada a 1;
      4. o passo do otimizador.
    Ao voltar, o .grad de cada peso é o gradiente desta perda, já cortado.
    marcar() não muda a conta: a lição 12 cronometra as partes do passo por ela.
    """


def referencia(modelo, otimizador, x, y, marcar=lambda: None):
    return _PASSO(modelo, otimizador, x, y, marcar)


def versao(ajustes, modelo, otimizador, x, y, marcar=lambda: None):
    """O passo com os defeitos do catálogo ligados (ajustes vazio: o certo)."""
    zero, corte = ajustes.get("zero_grad", "antes"), ajustes.get("corte", "antes")
    if not ajustes.get("marcar", True):
        def marcar():
            return None
    if ajustes.get("perda") == "deslocada":            # desloca de novo o que já veio deslocado
        logits = modelo(x)                                              # (B, T, V)
        p = F.cross_entropy(logits[:, :-1].flatten(0, 1), y[:, 1:].flatten())
    else:
        p = _PERDA(modelo, x, y)
    marcar()
    if zero == "antes":
        otimizador.zero_grad()
    p.backward()
    marcar()
    if zero == "depois_do_backward":
        otimizador.zero_grad()
    if corte == "antes":
        torch.nn.utils.clip_grad_norm_(modelo.parameters(), 1.0)
    elif corte == "valor":
        torch.nn.utils.clip_grad_value_(modelo.parameters(), 1.0)
    otimizador.step()
    if corte == "depois":
        torch.nn.utils.clip_grad_norm_(modelo.parameters(), 1.0)
    if zero == "fim":
        otimizador.zero_grad()
    return p


# ---------------------------------------------------------------- o que as sondas montam
B, T, V, D, H = 3, 5, 7, 6, 2      # todos diferentes: um eixo trocado aparece


class SGD:
    """O mais simples dos otimizadores: p = p - lr * grad. Nas sondas, onde o tamanho do
    gradiente pesa direto no passo (o Adam quase não o vê: ele divide pelo tamanho típico)."""

    def __init__(self, parametros, lr):
        self.parametros, self.lr = list(parametros), lr

    def zero_grad(self):
        for p in self.parametros:
            p.grad = None

    def step(self):
        with torch.no_grad():
            for p in self.parametros:
                if p.grad is not None:
                    p -= self.lr * p.grad


def _otimizador(receita, modelo):
    nome, lr = receita
    return SGD(modelo.parameters(), lr) if nome == "SGD" else _ADAMW(modelo, lr)


def observar(funcao, modelo, otimizador, x, y, passos=1, gradiente_velho=None):
    """Treina uma cópia do modelo com o otimizador da receita (nome, taxa): a função
    chamada `passos` vezes no mesmo lote. gradiente_velho: a semente de um .grad sorteado
    antes do primeiro passo (o resto de um backward de antes). Devolve (as perdas, os pesos
    depois, os gradientes depois, quantas vezes marcar() foi chamada)."""
    m = copy.deepcopy(modelo)
    o = _otimizador(otimizador, m)
    if gradiente_velho is not None:
        g = torch.Generator().manual_seed(gradiente_velho)
        for p in m.parameters():
            p.grad = torch.randn(p.shape, generator=g, dtype=p.dtype)
    marcas, perdas = [], []
    for _ in range(passos):
        p = funcao(m, o, x, y, marcar=lambda: marcas.append(1))
        perdas.append(p.detach().clone() if torch.is_tensor(p) else p)
    return (tuple(perdas), tuple(p.detach().clone() for p in m.parameters()),
            tuple(None if p.grad is None else p.grad.clone() for p in m.parameters()),
            len(marcas))


def sondas():
    g = torch.Generator().manual_seed(10)

    def modelo(escala):
        """Um GPT2 de 1 bloco (d = 6, 2 cabeças, V = 7) em float64, cada peso sorteado,
        vezes a escala (maior: gradientes maiores)."""
        with torch.random.fork_rng(devices=[]):      # o sorteio de agora não mexe no global
            m = GPT2(1, D, H, V, 8).double()
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * escala)
        return m

    def sonda(estagio, descricao, escala, otimizador, passos=1, velho=None):
        x, y = (torch.randint(0, V, (B, T), generator=g) for _ in "xy")          # (B, T)
        return Sonda(estagio, descricao, (modelo(escala), otimizador, x, y),
                     {"passos": passos, "gradiente_velho": velho})

    return [
        sonda(1, "as formas: B = 3, T = 5, V = 7, d = 6; um passo de SGD", 1.0, ("SGD", 0.1)),
        sonda(2, "um passo, gradiente pequeno (norma < 1): o corte não muda nada",
              0.3, ("SGD", 0.1)),
        sonda(2, "um passo com um gradiente velho no .grad (um backward de antes)",
              0.3, ("SGD", 0.1), velho=3),
        sonda(2, "um passo, gradiente grande (norma > 1): o corte pesa", 1.5, ("SGD", 0.1)),
        sonda(2, "dois passos seguidos de SGD no mesmo lote", 1.0, ("SGD", 0.1), passos=2),
        sonda(3, "o AdamW da lição 10, três passos", 1.0, ("AdamW", 0.01), passos=3),
        sonda(3, "o AdamW da lição 10, dois passos, com um gradiente velho",
              1.5, ("AdamW", 0.01), passos=2, velho=7),
    ]


# ---------------------------------------------------------------- outras versões certas
def a_mao(modelo, otimizador, x, y, marcar=lambda: None):
    """A entropia cruzada pelo log_softmax, o gradiente zerado pelo modelo e o corte escrito
    à mão: a norma de todos os gradientes como um vetor só."""
    logits = modelo(x)                                                  # (B, T, V)
    logp = logits.log_softmax(-1).gather(-1, y[..., None])[..., 0]      # (B, T)
    p = -logp.mean()
    marcar()
    modelo.zero_grad()
    p.backward()
    marcar()
    gradientes = [q.grad for q in modelo.parameters() if q.grad is not None]
    norma = torch.sqrt(sum(g.pow(2).sum() for g in gradientes))
    if norma > 1.0:
        with torch.no_grad():
            for g in gradientes:
                g.mul_(1.0 / norma)
    otimizador.step()
    return p


def com_autograd_grad(modelo, otimizador, x, y, marcar=lambda: None):
    """O gradiente por torch.autograd.grad, posto no .grad à mão (o que havia lá vai
    embora), e o corte do PyTorch."""
    pesos = list(modelo.parameters())
    p = F.cross_entropy(modelo(x).transpose(1, 2), y)                  # (B, V, T) contra (B, T)
    marcar()
    for q, g in zip(pesos, torch.autograd.grad(p, pesos)):
        q.grad = g
    marcar()
    torch.nn.utils.clip_grad_norm_(pesos, 1.0)
    otimizador.step()
    return p


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


LACO, CORTE = secao("4. O laço de treino"), secao("O corte do gradiente")

DEFEITOS = [
    Defeito("sem_zero_grad", {"zero_grad": "nunca"},
            "o gradiente não foi zerado antes do backward: o PyTorch SOMA o gradiente novo "
            "ao que já está no .grad, e o passo anda na soma deste lote com os anteriores. "
            "Chame otimizador.zero_grad() antes de p.backward().", LACO),
    Defeito("zero_grad_no_fim", {"zero_grad": "fim", "corte": "antes"},
            "o gradiente foi zerado no fim do passo, não antes do backward: o passo confia "
            "que o .grad chegou limpo, e um backward de antes (a contagem de FLOPs da lição "
            "12 faz um) entra no primeiro passo; e quem olha o .grad depois do passo não "
            "acha o gradiente deste lote. Zere antes do backward.", LACO),
    Defeito("zero_grad_depois_do_backward", {"zero_grad": "depois_do_backward", "corte": "antes"},
            "o gradiente foi zerado depois do backward, antes do passo: o otimizador não "
            "acha gradiente nenhum e os pesos não mudam (a perda nunca cai). A ordem é "
            "zero_grad, backward, corte, step.", LACO),
    Defeito("corte_depois_do_passo", {"corte": "depois"},
            "o gradiente foi cortado depois do passo do otimizador: o passo já usou o "
            "gradiente sem corte, e o corte não serviu para nada. Corte antes do "
            "otimizador.step().", CORTE),
    Defeito("sem_corte", {"corte": "nenhum"},
            "faltou o corte do gradiente: torch.nn.utils.clip_grad_norm_(modelo.parameters(), "
            "1.0), entre o backward e o passo. Sem ele, um lote esquisito dá um passo "
            "gigante.", CORTE),
    Defeito("corte_por_valor", {"corte": "valor"},
            "o corte foi valor por valor (clip_grad_value_), não pela norma de todos os "
            "gradientes juntos (clip_grad_norm_): cortar cada número em 1 muda a direção do "
            "gradiente; dividir todos pela norma só encurta o vetor.", CORTE),
    Defeito("alvo_deslocado_de_novo", {"perda": "deslocada"},
            "o alvo foi deslocado de novo (logits[:, :-1] contra y[:, 1:]): o y que chega já "
            "é o texto um token à frente de x (o lote() da lição faz isso). Deslocado outra "
            "vez, cada posição aprende a prever o token de DOIS passos adiante.",
            secao("O lote: a entrada e o alvo, um caractere à frente")),
    Defeito("sem_marcar", {"marcar": False},
            "marcar() não foi chamada (ela vai depois da perda e depois do backward). Ela "
            "não muda a conta, mas a lição 12 cronometra as partes do passo por ela: sem as "
            "marcas, o experimento 2 de lá não tem o que medir.", LACO),
]

DESAFIO = Desafio(
    licao="10", nome="passo_de_treino", titulo="o passo de treino",
    modelo=passo_de_treino, referencia=referencia, versao=versao, sondas=sondas,
    defeitos=DEFEITOS, observar=observar,
    imports="import torch\nimport torch.nn.functional as F\n\nfrom comum import importar_licao",
    secao=f'{APOSTILA}, seção "Desafio: escreva o passo de treino"',
    dicas=[
        "São quatro coisas, nesta ordem: a perda, o backward, o corte, o step. E antes do "
        "backward, limpe o gradiente que sobrou de antes.",
        "A perda: importar_licao(\"10_treino\").perda(modelo, x, y). O backward: "
        "p.backward(). Limpar: otimizador.zero_grad(), antes dele.",
        "O corte: torch.nn.utils.clip_grad_norm_(modelo.parameters(), 1.0), depois do "
        "backward e antes de otimizador.step(); marcar() depois da perda e depois do backward.",
    ],
    proibidas=[(L10, "passo_de_treino"), (L10, "treinar")],
    alternativas={"a_mao": a_mao, "autograd_grad": com_autograd_grad},
    substituir=lambda sua: {"10_treino": {"passo_de_treino": sua}},
    com_o_seu=[("11_inducao.py", "o treino que faz nascer a cabeça de indução"),
               ("12_escala.py", "o passo cronometrado parte por parte e o treino da "
                "fronteira")],
)
