"""Desafio da lição 08: a RMSNorm, rms_norm(x, peso, eps).

Cada vetor x (o último eixo) dividido pela raiz da média dos seus quadrados mais eps, e
multiplicado pelo ganho. A lição usa a do PyTorch (nn.RMSNorm, no normalizador() da peça);
a referência é a mesma conta, F.rms_norm. A sonda de eps = 0,1 pega o eps fora da raiz, que
com eps = 1e-5 passa em qualquer tolerância de float32."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L08 = importar_licao("08_since_2017")
APOSTILA = "apostilas/08_since_2017.md"
_RMS_NORM = F.rms_norm          # a original (--com-o-seu troca peças, nunca esta)


def rms_norm(x, peso, eps=1e-5):
    """A RMSNorm do bloco de hoje: cada vetor x dividido pela sua raiz da média dos
    quadrados (RMS) e multiplicado pelo ganho aprendido.

    x: (..., d), um vetor de d números por token; peso: (d,), o ganho (gama), um número por
    coordenada; eps: um número pequeno que entra DENTRO da raiz, somado à média dos
    quadrados (ele só existe para nunca dividir por zero). Devolve (..., d), a forma de x.

    A média é sobre o último eixo (as d coordenadas de um token), cada token por si.
    Nenhuma centragem (tirar a média é coisa da LayerNorm) e nenhum viés.
    """


def referencia(x, peso, eps=1e-5):
    return _RMS_NORM(x, (x.shape[-1],), peso, eps)


def versao(ajustes, x, peso, eps=1e-5):
    """A RMSNorm com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    raiz, ganho = ajustes.get("raiz", "certa"), ajustes.get("ganho", "peso")
    eixo, centra = ajustes.get("eixo", -1), ajustes.get("centra", False)
    if centra:                                                     # a LayerNorm sem viés
        x = x - x.mean(eixo, keepdim=True)                         # (..., d)
    quadrados = x.pow(2).mean(eixo, keepdim=True)                  # (..., 1)
    if raiz == "eps_fora":
        escala = quadrados.sqrt() + eps
    elif raiz == "sem":
        escala = quadrados + eps
    elif raiz == "modulo":
        escala = x.abs().mean(eixo, keepdim=True) + eps
    else:
        escala = (quadrados + eps).sqrt()
    y = x / escala                                                 # (..., d)
    return {"peso": y * peso, "sem": y, "mais_um": y * (1 + peso)}[ganho]


def sondas():
    g = torch.Generator().manual_seed(8)

    def sorteio(*forma, vezes=1.0, mais=0.0):
        return torch.randn(*forma, generator=g, dtype=torch.float64) * vezes + mais

    def ganho(d):                  # longe de 1 e diferente em cada coordenada
        return torch.rand(d, generator=g, dtype=torch.float64) * 1.5 + 0.25

    B, T, d = 2, 3, 7              # todos diferentes: um eixo trocado aparece
    return [
        Sonda(1, "as formas: x (2, 3, 7), peso (7,), eps 1e-5",
              (sorteio(B, T, d), ganho(d), 1e-5)),
        Sonda(2, "eps grande (0,1): onde o eps fica pesa",
              (sorteio(B, T, d), ganho(d), 0.1)),
        Sonda(2, "x = 0: o eps evita dividir por zero",
              (torch.zeros(B, T, d, dtype=torch.float64), ganho(d), 1e-5)),
        Sonda(2, "um token só (T = 1): a média é sobre as d coordenadas",
              (sorteio(B, 1, d), ganho(d), 1e-5)),
        Sonda(2, "vetores com média longe de 0 (x + 3): a RMSNorm não centra",
              (sorteio(B, T, d, mais=3.0), ganho(d), 1e-5)),
        Sonda(2, "x pequeno (x / 100): perto de raiz(eps)",
              (sorteio(B, T, d, vezes=0.01), ganho(d), 1e-5)),
        Sonda(3, "uma frase qualquer: x (2, 5, 7), eps 1e-6", (sorteio(B, 5, d), ganho(d), 1e-6)),
        Sonda(3, "d = 16, x x 4, eps 1e-5: x (4, 6, 16)",
              (sorteio(4, 6, 16, vezes=4.0), ganho(16), 1e-5)),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_rsqrt(x, peso, eps=1e-5):
    """Como o LlamaRMSNorm do transformers: a conta em float32, rsqrt, e o ganho no fim."""
    x32 = x.float()
    y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return peso.float() * y


def pela_norma(x, peso, eps=1e-5):
    """A RMS é a norma euclidiana dividida por raiz(d)."""
    d = x.shape[-1]
    rms2 = torch.linalg.vector_norm(x, dim=-1, keepdim=True).pow(2) / d   # (..., 1)
    return x / torch.sqrt(rms2 + eps) * peso


def por_einsum(x, peso, eps=1e-5):
    quadrados = torch.einsum("...d,...d->...", x, x)[..., None] / x.shape[-1]   # (..., 1)
    return torch.einsum("...d,d->...d", x / (quadrados + eps).sqrt(), peso)


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


RMS = secao("4. RMSNorm: só reescalar")

DEFEITOS = [
    Defeito("eps_fora_da_raiz", {"raiz": "eps_fora"},
            "o eps foi somado depois da raiz: x / (raiz(média(x²)) + eps). Ele vai DENTRO: "
            "x / raiz(média(x²) + eps). Com eps = 1e-5 a diferença é pequena demais para "
            "aparecer numa tolerância de float32; com eps = 0,1, ou com x pequeno, ela "
            "aparece.", RMS),
    Defeito("sem_raiz", {"raiz": "sem"},
            "a divisão foi pela média dos quadrados, sem a raiz: x / (média(x²) + eps). A "
            "RMSNorm divide pela RAIZ da média dos quadrados (RMS = root mean square), que "
            "tem a unidade de x; sem a raiz, a saída não tem escala 1.", RMS),
    Defeito("media_do_modulo", {"raiz": "modulo"},
            "a escala foi a média dos valores absolutos, média(|x|), e não a raiz da média "
            "dos quadrados, raiz(média(x²) + eps). As duas medem o tamanho de x, mas não são "
            "a mesma: a RMSNorm é a dos quadrados.", RMS),
    Defeito("sem_ganho", {"ganho": "sem"},
            "faltou multiplicar pelo ganho (peso). A RMSNorm normaliza e depois reescala cada "
            "coordenada pelo seu ganho aprendido; com o ganho novo (todo 1) o erro não "
            "aparece, com um ganho treinado, sim.", RMS),
    Defeito("ganho_mais_um", {"ganho": "mais_um"},
            "multiplicou por (1 + peso), a convenção do Gemma, que guarda o ganho menos 1. "
            "No Llama (e na lição) o ganho é o próprio peso: x / RMS * peso.", RMS),
    Defeito("centrou_como_a_layernorm", {"centra": True},
            "subtraiu a média de x antes de dividir: isso é a LayerNorm (sem viés). A "
            "RMSNorm não centra: só divide pela RMS e multiplica pelo ganho (o experimento 4 "
            "mostra a diferença em [3; 4]).", RMS),
    Defeito("eixo_errado", {"eixo": -2},
            "a média dos quadrados foi tirada sobre o eixo dos tokens (dim=-2), e não sobre "
            "as d coordenadas de cada token (dim=-1, com keepdim=True). Cada token se "
            "normaliza sozinho.", RMS),
]


class _RMSNormDoAluno(nn.RMSNorm):
    """Uma nn.RMSNorm (os mesmos nomes de pesos: carrega como a da lição) cujo forward é a
    rms_norm() do aluno."""

    funcao = None

    def forward(self, x):
        eps = self.eps if self.eps is not None else torch.finfo(x.dtype).eps
        return type(self).funcao(x, self.weight, eps)


def substituir(sua):
    original = L08.normalizador
    classe = type("RMSNormDoAluno", (_RMSNormDoAluno,), {"funcao": staticmethod(sua)})

    def normalizador(tipo, d, vieses):
        if tipo != "rmsnorm":
            return original(tipo, d, vieses)
        return classe(d, eps=1e-5)                  # só o ganho: nunca teve viés
    return {"08_since_2017": {"normalizador": normalizador}}


DESAFIO = Desafio(
    licao="08", nome="rmsnorm", titulo="a RMSNorm",
    modelo=rms_norm, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import torch",
    secao=f'{APOSTILA}, seção "RMSNorm: rms_norm()"',
    dicas=[
        "São três contas no último eixo: a média dos quadrados de x (com keepdim=True, para a "
        "divisão alinhar), a raiz dela somada a eps, e a multiplicação pelo ganho.",
        "x.pow(2).mean(-1, keepdim=True) dá (..., 1): a média dos quadrados de cada token.",
        "x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * peso: o eps DENTRO da raiz.",
    ],
    proibidas=[(F, "rms_norm"), (torch, "rms_norm"), (L08, "rmsnorm")],
    alternativas={"norma": pela_norma, "rsqrt_float32": por_rsqrt, "einsum": por_einsum},
    substituir=substituir,
    com_o_seu=[("13_tucano.py", "os logits do Llama contra os do transformers", "--so", "2,4")],
)
