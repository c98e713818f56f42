"""O otimizador dos treinos do lab: Adam (e AdamW, com decaimento de peso), à mão.

Não é o conceito de nenhuma lição: os experimentos da 05 e da 08 e o laço de treino da 10
o usam. Por que não torch.optim? Criar um otimizador de lá importa o compilador do PyTorch
(1 a 2 s de espera numa aula); as contas são estas, e os testes conferem que dão o mesmo
passo que torch.optim.Adam e torch.optim.AdamW.
"""
from __future__ import annotations

import math

__all__ = ["Adam"]


class Adam:
    """Adam (Kingma e Ba, 2014) em poucas linhas: o mesmo passo de torch.optim.Adam.

    Com decaimento > 0 é o AdamW (Loshchilov e Hutter, 2019): antes do passo, cada peso
    encolhe um pouco, p = p (1 - lr·decaimento), o mesmo que torch.optim.AdamW faz.
    `sem_decaimento`: parâmetros que não encolhem (vieses, LayerNorm, como no GPT-2).
    Mude a taxa com `otimizador.lr = ...` (aquecimento, cosseno).
    """

    def __init__(self, parametros, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, decaimento=0.0,
                 sem_decaimento=()):
        import torch

        self.parametros = [p for p in parametros if p.requires_grad]
        self.lr, (self.b1, self.b2), self.eps = lr, betas, eps
        self.decaimento = decaimento
        livres = {id(p) for p in sem_decaimento}
        self.encolhem = [p for p in self.parametros if id(p) not in livres]
        self.m = [torch.zeros_like(p) for p in self.parametros]  # média dos gradientes
        self.v = [torch.zeros_like(p) for p in self.parametros]  # média dos quadrados
        self.t = 0

    def zero_grad(self):
        for p in self.parametros:
            p.grad = None

    def step(self):
        import torch

        vivos = [i for i, p in enumerate(self.parametros) if p.grad is not None]
        if not vivos:         # nenhum gradiente (um zero_grad fora do lugar): nada a fazer,
            return            # como no torch.optim (o _foreach_ quebraria numa lista vazia)
        self.t += 1
        correcao1 = 1 - self.b1 ** self.t
        raiz_correcao2 = math.sqrt(1 - self.b2 ** self.t)
        ps = [self.parametros[i] for i in vivos]
        gs = [p.grad for p in ps]
        ms = [self.m[i] for i in vivos]
        vs = [self.v[i] for i in vivos]
        with torch.no_grad():  # as mesmas contas, em todos os tensores de uma vez (_foreach_)
            if self.decaimento:
                encolhem = [p for p in self.encolhem if p.grad is not None]
                torch._foreach_mul_(encolhem, 1 - self.lr * self.decaimento)  # AdamW
            torch._foreach_mul_(ms, self.b1)
            torch._foreach_add_(ms, gs, alpha=1 - self.b1)            # m = b1 m + (1-b1) g
            torch._foreach_mul_(vs, self.b2)
            torch._foreach_addcmul_(vs, gs, gs, value=1 - self.b2)     # v = b2 v + (1-b2) g²
            denominador = torch._foreach_sqrt(vs)
            torch._foreach_div_(denominador, raiz_correcao2)
            torch._foreach_add_(denominador, self.eps)                 # raiz(v corrigido) + eps
            torch._foreach_addcdiv_(ps, ms, denominador, value=-self.lr / correcao1)
