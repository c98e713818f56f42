"""Desafio da lição 08: o forward do SwiGLU, forward(self, x).

w2( SiLU(x w1) * (x w3) ): w3 propõe o conteúdo, a SiLU de x w1 é a porta que decide quanto
dele passa, e w2 volta para d. A referência é o SwiGLU.forward da lição 08; as sondas passam
um SwiGLU da lição com todos os pesos sorteados (w1 e w3 diferentes: a porta trocada
aparece)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L08 = importar_licao("08_since_2017")
APOSTILA = "apostilas/08_since_2017.md"
_FORWARD = L08.SwiGLU.forward          # a original (--com-o-seu troca a da classe)


def forward(self, x):
    """O forward do SwiGLU, o MLP com porta do bloco de hoje (self é um SwiGLU da lição 08).

    self.w1 e self.w3 são nn.Linear de d para largura, sem viés: w1 dá a PORTA, w3 dá o
    CONTEÚDO; self.w2 é um nn.Linear de largura para d, sem viés. x: (..., d). Devolve
    (..., d):

        w2( SiLU(x w1) * (x w3) ),   com SiLU(z) = z / (1 + e^(-z))

    o produto elemento a elemento: a SiLU vai só no ramo de w1 (a porta), e o ramo de w3
    entra sem ativação nenhuma.
    """


def referencia(self, x):
    return _FORWARD(self, x)


def versao(ajustes, self, x):
    """O SwiGLU com os defeitos do catálogo ligados (ajustes vazio: o certo)."""
    ativacao = {"silu": F.silu, "gelu": F.gelu, "relu": F.relu,
                "sigmoide": torch.sigmoid}[ajustes.get("ativacao", "silu")]
    porta, conteudo = self.w1(x), self.w3(x)                       # 2 x (..., largura)
    if ajustes.get("porta") == "trocada":
        porta, conteudo = conteudo, porta
    meio = (ativacao(porta) + conteudo if ajustes.get("junta") == "soma"
            else ativacao(porta) * conteudo)                        # (..., largura)
    return meio if ajustes.get("saida") == "sem_w2" else self.w2(meio)   # (..., d)


def sondas():
    g = torch.Generator().manual_seed(85)

    def sorteio(*forma, vezes=1.0):
        return torch.randn(*forma, generator=g, dtype=torch.float64) * vezes

    def swiglu(d, largura):        # todo peso sorteado, na escala 1/raiz(entrada)
        mlp = L08.SwiGLU(d, largura).double()
        with torch.no_grad():
            for linear in (mlp.w1, mlp.w3, mlp.w2):
                linear.weight.copy_(sorteio(*linear.weight.shape,
                                            vezes=linear.in_features ** -0.5))
        return mlp

    B, T, d, largura = 2, 5, 6, 10        # todos diferentes: um eixo trocado aparece
    mlp = swiglu(d, largura)
    return [
        Sonda(1, "as formas: x (2, 5, 6), d = 6, largura 10", (mlp, sorteio(B, T, d))),
        Sonda(2, "um token só: x (1, 1, 6)", (mlp, sorteio(1, 1, d))),
        Sonda(2, "x = 0: a saída é 0", (mlp, torch.zeros(B, T, d, dtype=torch.float64))),
        Sonda(2, "x pequeno (x / 10): a porta quase fechada", (mlp, sorteio(B, T, d, vezes=0.1))),
        Sonda(2, "x grande (x x 3): portas abertas e fechadas", (mlp, sorteio(B, T, d, vezes=3))),
        Sonda(3, "outro SwiGLU: d = 4, largura 12, x (3, 7, 4)",
              (swiglu(4, 12), sorteio(3, 7, 4))),
        Sonda(3, "sem lote: x (9, 6)", (mlp, sorteio(9, d))),
    ]


# ---------------------------------------------------------------- outras versões certas
def pelas_matrizes(self, x):
    """As contas com as matrizes: nn.Linear guarda (saída, entrada), daí o .T; a SiLU à
    mão, z * sigmoid(z)."""
    a = x @ self.w1.weight.T                                        # (..., largura)
    return (a * torch.sigmoid(a) * (x @ self.w3.weight.T)) @ self.w2.weight.T   # (..., d)


def por_einsum(self, x):
    a = torch.einsum("...d,ld->...l", x, self.w1.weight)           # (..., largura)
    b = torch.einsum("...d,ld->...l", x, self.w3.weight)           # (..., largura)
    return torch.einsum("...l,dl->...d", a / (1 + torch.exp(-a)) * b, self.w2.weight)


def em_float32(self, x):
    w1, w3, w2 = (m.weight.float() for m in (self.w1, self.w3, self.w2))
    x = x.float()
    return (F.silu(x @ w1.T) * (x @ w3.T)) @ w2.T


# ---------------------------------------------------------------- o catálogo
SWIGLU = f'{APOSTILA}, seção "5. SwiGLU: um MLP com porta"'

DEFEITOS = [
    Defeito("porta_e_conteudo_trocados", {"porta": "trocada"},
            "a SiLU foi no ramo de w3 e não no de w1: porta e conteúdo trocados. No Llama, "
            "w1 (gate_proj) é a porta, SiLU(x w1), e w3 (up_proj) é o conteúdo, x w3. Com "
            "pesos treinados os dois ramos não são intercambiáveis: os pesos carregados de um "
            "Llama dariam outra conta.", SWIGLU),
    Defeito("gelu_no_lugar_da_silu", {"ativacao": "gelu"},
            "a porta usou a GELU (a do GPT-2), não a SiLU: SiLU(z) = z / (1 + e^(-z)) = "
            "z·sigmoide(z). As duas se parecem, mas não são a mesma função (o Sw de SwiGLU é "
            "a Swish, outro nome da SiLU).", SWIGLU),
    Defeito("relu_no_lugar_da_silu", {"ativacao": "relu"},
            "a porta usou a ReLU, não a SiLU: os negativos viram 0 exatos, e a SiLU deixa "
            "passar um pouco deles (ela desce até -0,28).", SWIGLU),
    Defeito("sigmoide_no_lugar_da_silu", {"ativacao": "sigmoide"},
            "a porta foi sigmoide(x w1): esse é o GLU original (Dauphin et al., 2017). A "
            "SiLU é z·sigmoide(z): falta multiplicar por z = x w1.", SWIGLU),
    Defeito("soma_no_lugar_do_produto", {"junta": "soma"},
            "a porta e o conteúdo foram somados: SiLU(x w1) + x w3. Uma porta multiplica, "
            "elemento a elemento: SiLU(x w1) * (x w3); é o produto que deixa a entrada "
            "abrir ou fechar cada dimensão.", SWIGLU),
    Defeito("sem_w2", {"saida": "sem_w2"},
            "faltou a última camada, w2: a saída ficou com a largura oculta, não com d. O "
            "SwiGLU abre para a largura (w1 e w3) e volta para d (w2).", SWIGLU),
]

DESAFIO = Desafio(
    licao="08", nome="swiglu", titulo="o forward do SwiGLU",
    modelo=forward, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import torch\nimport torch.nn.functional as F",
    secao=f'{APOSTILA}, seção "SwiGLU: forward()"',
    dicas=[
        "Três camadas: self.w1(x) e self.w3(x) dão (..., largura); a saída é self.w2 de "
        "alguma coisa de largura.",
        "A porta é F.silu(self.w1(x)); o conteúdo, self.w3(x), sem ativação.",
        "self.w2(F.silu(self.w1(x)) * self.w3(x)).",
    ],
    proibidas=[(L08.SwiGLU, "forward")],
    alternativas={"matrizes": pelas_matrizes, "einsum": por_einsum, "float32": em_float32},
    substituir=lambda sua: {"08_since_2017": {"SwiGLU.forward": sua}},
    com_o_seu=[("13_tucano.py", "os logits do Llama contra os do transformers", "--so", "2,4")],
)
