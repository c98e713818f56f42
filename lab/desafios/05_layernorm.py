"""Desafio da lição 05: o LayerNorm, layer_norm(x, peso, vies, eps).

A média e a variância (dividida por d) nas d coordenadas de cada token, x - média dividido
pela raiz de (variância + eps), vezes o ganho e mais o viés. A lição usa o do PyTorch,
nn.LayerNorm(d, eps=1e-5); a referência é a mesma conta, F.layer_norm. As sondas sorteiam o
ganho e o viés (com ganho 1 e viés 0, um LayerNorm que esqueceu o `* peso + vies` passaria)
e têm uma com eps = 0,1 (com 1e-5, o eps fora da raiz muda a saída em milionésimos)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from comum.desafio import ComTrocas, Remendo

from .motor import Defeito, Desafio, Sonda

APOSTILA = "apostilas/05_block.md"


def layer_norm(x, peso, vies, eps=1e-5):
    """O LayerNorm do GPT-2: cada token normalizado sozinho, nas suas d coordenadas.

    x: (..., d), um vetor de d números por token (o último eixo); peso e vies: (d,), o
    ganho e o viés aprendidos. Devolve um tensor da forma de x.

    Para cada token: a média das d coordenadas e a variância delas (a média dos quadrados
    dos desvios: divida por d); o token centrado (x - média) dividido pela raiz de
    (variância + eps); depois, coordenada a coordenada, vezes peso e mais vies. É o que o
    nn.LayerNorm(d, eps=1e-5) da lição faz; aqui você escreve a conta (sem chamar o
    LayerNorm do PyTorch).
    """


def referencia(x, peso, vies, eps=1e-5):
    return F.layer_norm(x, (x.shape[-1],), peso, vies, eps)


def versao(ajustes, x, peso, vies, eps=1e-5):
    """O LayerNorm com os defeitos do catálogo ligados (ajustes vazio: o certo)."""
    eixo = {"tensor_inteiro": None, "posicoes": -2}.get(ajustes.get("eixo"), -1)
    dims = tuple(range(x.dim())) if eixo is None else (eixo,)
    centrar = ajustes.get("media") != "sem_centrar"
    media = x.mean(dim=dims, keepdim=True) if centrar else torch.zeros_like(x)
    desvio = x - media                                            # (..., d)
    correcao = 1 if ajustes.get("var") == "d_menos_1" else 0
    n = x.numel() if eixo is None else x.shape[eixo]
    var = desvio.pow(2).sum(dim=dims, keepdim=True) / (n - correcao)
    regra = ajustes.get("eps", "dentro")
    if regra == "fora":
        xn = desvio / (var.sqrt() + eps)
    elif regra == "nenhum":
        xn = desvio / var.sqrt()
    else:
        xn = desvio / (var + eps).sqrt()
    if ajustes.get("afim") == "nenhum":
        return xn
    return xn * peso + vies


# ---------------------------------------------------------------- as sondas
def sondas():
    g = torch.Generator().manual_seed(5)

    def sorteio(*forma, vezes=1.0):
        return torch.randn(*forma, generator=g, dtype=torch.float64) * vezes

    def afim(d):          # ganho e viés sorteados: nenhum 1, nenhum 0
        return 1 + sorteio(d, vezes=0.5), sorteio(d, vezes=0.5)

    B, T, d = 2, 5, 6
    # cada token constante (valores diádicos: a média sai exata, a variância é 0 exato)
    constantes = torch.tensor([[1.25, -2.0, 0.5], [3.0, 0.0, -0.75]], dtype=torch.float64)
    return [
        Sonda(1, "a forma: x (2, 5, 6), peso e vies (6,)", (sorteio(B, T, d), *afim(d))),
        Sonda(2, "eps grande (0,1): onde fica o eps, dentro ou fora da raiz",
              (sorteio(3, 4, d), *afim(d), 0.1)),
        Sonda(2, "cada token constante (variância 0): sai o viés",
              (constantes[..., None].expand(2, 3, d).clone(), *afim(d))),
        Sonda(2, "variância pequena (x vezes 0,001): o eps pesa",
              (sorteio(B, T, d, vezes=1e-3), *afim(d))),
        Sonda(2, "média longe de zero (x + 5): centrar pesa",
              (sorteio(B, T, d) + 5, *afim(d))),
        Sonda(2, "um token só: x (1, 1, 6)", (sorteio(1, 1, d), *afim(d))),
        Sonda(3, "um lote qualquer: x (3, 4, 8)", (sorteio(3, 4, 8, vezes=2), *afim(8))),
        Sonda(3, "sem lote: x (7, 5), eps = 1e-3", (sorteio(7, 5), *afim(5), 1e-3)),
    ]


# ---------------------------------------------------------------- outras versões certas
def a_mao(x, peso, vies, eps=1e-5):
    media = x.mean(dim=-1, keepdim=True)                          # (..., 1)
    var = x.var(dim=-1, unbiased=False, keepdim=True)            # (..., 1): divide por d
    return (x - media) / torch.sqrt(var + eps) * peso + vies


def por_var_mean(x, peso, vies, eps=1e-5):
    var, media = torch.var_mean(x, dim=-1, correction=0, keepdim=True)   # (..., 1) cada
    return torch.addcmul(vies, (x - media) * torch.rsqrt(var + eps), peso)


def em_float32(x, peso, vies, eps=1e-5):
    return a_mao(x.float(), peso.float(), vies.float(), eps).double()


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


DEFEITOS = [
    Defeito("eps_fora_da_raiz", {"eps": "fora"},
            "o eps ficou fora da raiz: (x - média) / (desvio + eps). A fórmula soma o eps à "
            "variância, dentro da raiz: raiz(variância + eps). Com eps = 1e-5 e desvio perto "
            "de 1, a diferença é de milionésimos e passa despercebida; com eps = 0,1 (ou um "
            "token de variância pequena), aparece.",
            secao("A fórmula")),
    Defeito("sem_eps", {"eps": "nenhum"},
            "o eps não entrou na conta: num token de coordenadas iguais (variância 0), a "
            "divisão é 0 / 0 e sai NaN. O eps existe para isso: raiz(variância + eps).",
            secao("A fórmula")),
    Defeito("variancia_com_d_menos_1", {"var": "d_menos_1"},
            "a variância foi dividida por d - 1 (a variância 'amostral', o padrão de x.var() "
            "e x.std() no PyTorch), não por d. O LayerNorm divide por d: use "
            "x.var(dim=-1, unbiased=False) ou a média dos quadrados dos desvios.",
            secao("A fórmula")),
    Defeito("sem_centrar", {"media": "sem_centrar"},
            "a média não foi subtraída: x dividido pela raiz da média de x². Isso é o "
            "RMSNorm (lição 08), que só reescala; o LayerNorm do GPT-2 centra cada token "
            "antes (x - média) e mede a variância em torno da média.",
            secao("A fórmula")),
    Defeito("sem_peso_e_vies", {"afim": "nenhum"},
            "faltou o final: vezes peso e mais vies, coordenada a coordenada. Num LayerNorm "
            "recém-criado (peso 1, viés 0) não faz diferença, por isso as sondas sorteiam "
            "os dois; num GPT-2 treinado, faz.",
            secao("A fórmula")),
    Defeito("normalizou_as_posicoes", {"eixo": "posicoes"},
            "a média e a variância foram tiradas no eixo das posições (dim=-2), não nas d "
            "coordenadas de cada token (dim=-1): cada token é normalizado sozinho.",
            secao("A fórmula")),
    Defeito("normalizou_o_tensor_inteiro", {"eixo": "tensor_inteiro"},
            "a média e a variância foram tiradas do tensor inteiro (x.mean() sem dim), não "
            "de cada token: use dim=-1 e keepdim=True, uma média por token.",
            secao("A fórmula")),
]


# ---------------------------------------------------------------- --com-o-seu
def substituir(sua):
    """O LayerNorm do aluno no lugar do nn.LayerNorm que as lições 05 e 06 montam (os
    ln_1 e ln_2 de todo bloco, o ln_f), pelo `nn` delas."""
    class SeuLayerNorm(nn.LayerNorm):
        """O nn.LayerNorm (os mesmos parâmetros weight e bias) com a conta do aluno."""

        def forward(self, x):
            return sua(x, self.weight, self.bias, self.eps)

    remendo = Remendo(lambda atual: ComTrocas(atual, LayerNorm=SeuLayerNorm))
    return {"05_block": {"nn": remendo}, "06_gpt2": {"nn": remendo}}


DESAFIO = Desafio(
    licao="05", nome="layernorm", titulo="o LayerNorm (a média, a variância, o eps, o ganho)",
    modelo=layer_norm, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import torch",
    secao=f'{APOSTILA}, seção "Desafio: escreva o LayerNorm"',
    dicas=[
        "Tudo é por token: as contas vão no último eixo, com dim=-1 e keepdim=True, para a "
        "média (..., 1) se subtrair de x (..., d).",
        "A variância divide por d, não por d - 1: ((x - media) ** 2).mean(dim=-1, "
        "keepdim=True), ou x.var(dim=-1, unbiased=False, keepdim=True).",
        "(x - media) / torch.sqrt(var + eps): o eps dentro da raiz. No fim, * peso + vies.",
    ],
    proibidas=[(F, "layer_norm"), (torch, "layer_norm"), (nn.LayerNorm, "forward")],
    alternativas={"a_mao": a_mao, "var_mean": por_var_mean, "float32": em_float32},
    substituir=substituir,
    com_o_seu=[("06_gpt2.py", "os logits do GPT-2 com o seu LayerNorm em todo bloco e no "
                "ln_f, contra os do transformers", "--so", "2")],
)
