"""Desafio da lição 05: a GELU do GPT-2, gelu(x), a aproximação com tanh.

0,5 x (1 + tanh(raiz(2/pi) (x + 0,044715 x³))): a do MLP da lição, nn.GELU(approximate=
"tanh"), com que o GPT-2 foi treinado. A referência é essa, F.gelu(x, approximate="tanh").
A GELU exata (com erf) difere dela em no máximo 4,73e-4 (em x = ±2,70), pouco diante de
valores perto de 3; por isso uma sonda fica na cauda negativa (x de -4 a -2), onde a GELU
vale centésimos e a diferença é de 1 %."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from comum import importar_licao
from comum.desafio import ComTrocas, Remendo

from .motor import Defeito, Desafio, Sonda

L05 = importar_licao("05_block")
APOSTILA = "apostilas/05_block.md"


def gelu(x):
    """A GELU do GPT-2, número a número: a versão com tangente hiperbólica.

    x: um tensor de qualquer forma. Devolve um tensor da mesma forma, com
    0,5 * x * (1 + tanh(raiz(2/pi) * (x + 0,044715 * x**3))) em cada posição.

    É a aproximação com que o GPT-2 foi treinado (no PyTorch, nn.GELU(approximate="tanh"),
    a do MLP da lição 05); a GELU exata, x * Phi(x) com a função erro, é outra função,
    muito parecida, mas não a mesma.
    """


def referencia(x):
    return F.gelu(x, approximate="tanh")


def versao(ajustes, x):
    """A GELU com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    forma = ajustes.get("forma", "tanh")
    if forma == "erf":
        y = 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    elif forma == "sigmoide":
        y = x * torch.sigmoid(1.702 * x)
    elif forma == "relu":
        y = torch.relu(x)
    else:
        raiz = math.sqrt(2 * math.pi) if forma == "raiz_de_2pi" else math.sqrt(2 / math.pi)
        dentro = x if forma == "sem_cubo" else x + 0.044715 * x ** 3
        y = 0.5 * x * (1 + torch.tanh(raiz * dentro))
    return 2 * y if ajustes.get("meio") == "sem" else y


# ---------------------------------------------------------------- as sondas
def sondas():
    g = torch.Generator().manual_seed(7)

    def uniforme(de, ate, *forma):
        return de + (ate - de) * torch.rand(*forma, generator=g, dtype=torch.float64)

    B, T, d = 2, 3, 5
    perto = torch.tensor([-2.75, -2.70, -2.65, 2.65, 2.70, 2.75], dtype=torch.float64)
    return [
        Sonda(1, "a forma: x (2, 3, 5)", (uniforme(-3, 3, B, T, d),)),
        Sonda(2, "a cauda negativa (de -4 a -2): a erf e a tanh diferem em 1 %",
              (uniforme(-4, -2, 4, 6),)),
        Sonda(2, "x grande (de 4 a 8): a GELU é quase o próprio x", (uniforme(4, 8, 7),)),
        Sonda(2, "perto de zero (|x| < 0,5): a inclinação 0,5 e a curva",
              (uniforme(-0.5, 0.5, 3, 4),)),
        Sonda(2, "x perto de ±2,70: a maior diferença absoluta entre a erf e a tanh",
              (perto,)),
        Sonda(3, "valores quaisquer (de -6 a 6)", (uniforme(-6, 6, 4, 9),)),
        Sonda(3, "um tensor (2, 3, 4, 5)", (torch.randn(2, 3, 4, 5, generator=g,
                                                         dtype=torch.float64) * 2,)),
    ]


# ---------------------------------------------------------------- outras versões certas
def do_pytorch(x):
    return torch.nn.GELU(approximate="tanh")(x)


def pela_sigmoide(x):
    """0,5 (1 + tanh(u)) = sigmoide(2u): a mesma função, escrita de outro jeito."""
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x.pow(3))
    return x * torch.sigmoid(2 * u)


def em_float32(x):
    y = x.float()
    return (0.5 * y * (1 + torch.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))).double()


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


DEFEITOS = [
    Defeito("gelu_exata", {"forma": "erf"},
            "esta é a GELU exata, com a função erro (a de F.gelu(x) ou nn.GELU() sem "
            "approximate). O GPT-2 foi treinado com a aproximação com tanh, e é ela que "
            "reproduz o modelo número a número: use approximate=\"tanh\", ou a fórmula com "
            "tanh. A diferença é de no máximo 4,73e-4, mas muda os logits.",
            secao("A versão com tanh, a do GPT-2")),
    Defeito("raiz_de_2pi", {"forma": "raiz_de_2pi"},
            "o fator foi raiz(2 pi); o certo é raiz(2 / pi), cerca de 0,798.",
            secao("A versão com tanh, a do GPT-2")),
    Defeito("sem_o_cubo", {"forma": "sem_cubo"},
            "faltou o termo 0,044715 x³ dentro da tanh: a conta é "
            "tanh(raiz(2/pi) * (x + 0,044715 * x**3)).",
            secao("A versão com tanh, a do GPT-2")),
    Defeito("sigmoide_1702", {"forma": "sigmoide"},
            "esta é a aproximação com sigmoide, x * sigmoide(1,702 x) (a 'quick GELU' de "
            "outros modelos), não a do GPT-2, que usa a tanh.",
            secao("A versão com tanh, a do GPT-2")),
    Defeito("relu", {"forma": "relu"},
            "esta é a ReLU, max(0, x), a do Transformer de 2017: ela zera todo negativo. A "
            "GELU multiplica x pela probabilidade Phi(x) e tem uma barriga abaixo de zero.",
            secao("3. A não linearidade: GELU, não ReLU")),
    Defeito("sem_o_meio", {"meio": "sem"},
            "faltou o 0,5 da frente: a GELU é 0,5 * x * (1 + tanh(...)), que para x grande "
            "dá quase x, e não 2x.",
            secao("A versão com tanh, a do GPT-2")),
]

def substituir(sua):
    """A GELU do aluno no lugar do nn.GELU(approximate="tanh") de todo MLP da lição 05, pelo
    `nn` dela (o experimento 1 chama bloco.mlp.gelu, e o MLP.forward também). A gelu_tanh
    do experimento 6 fica: ele compara as duas fórmulas da apostila."""
    class SuaGELU(torch.nn.Module):
        """O nn.GELU das peças com a conta do aluno (o approximate fica de lado)."""

        def __init__(self, approximate="none"):
            super().__init__()

        def forward(self, x):
            return sua(x)

    remendo = Remendo(lambda atual: ComTrocas(atual, GELU=SuaGELU))
    return {"05_block": {"nn": remendo}}


DESAFIO = Desafio(
    licao="05", nome="gelu", titulo="a GELU do GPT-2 (a aproximação com tanh)",
    modelo=gelu, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import math\n\nimport torch",
    secao=f'{APOSTILA}, seção "Desafio: escreva a GELU do GPT-2"',
    dicas=[
        "A fórmula está na seção 3 da apostila, em 'A versão com tanh, a do GPT-2'; tudo é "
        "número a número (torch.tanh, x ** 3), sem laço.",
        "raiz(2/pi) é math.sqrt(2 / math.pi); o cubo fica dentro da tanh, somado a x.",
        "0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))).",
    ],
    proibidas=[(L05, "gelu_tanh")],
    alternativas={"pytorch": do_pytorch, "sigmoide": pela_sigmoide, "float32": em_float32},
    substituir=substituir,
    com_o_seu=[("06_gpt2.py", "os logits do GPT-2 com a sua GELU em todo MLP, contra os "
                "do transformers", "--so", "2")],
)
