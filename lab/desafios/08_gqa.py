"""Desafio da lição 08: a repetição das cabeças de K/V da GQA, repetir_kv(k, h).

(B, kv, S, d_h) -> (B, h, S, d_h): cada cabeça de K (ou de V) repetida h/kv vezes, uma ao
lado da outra, para o grupo de consultas que a lê. A lição faz isso dentro do SDPA
(enable_gqa=True; o experimento 7 mostra que é o mesmo que repeat_interleave no eixo das
cabeças); a referência é o repeat_interleave, o repeat_kv do transformers. As sondas têm
kv >= 2 e h/kv >= 2, onde repeat e repeat_interleave dão ordens diferentes."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L08 = importar_licao("08_since_2017")
APOSTILA = "apostilas/08_since_2017.md"


def repetir_kv(k, h):
    """A GQA: as kv cabeças de chave (ou de valor) repetidas para as h cabeças de consulta.

    k: (B, kv, S, d_h), kv cabeças de K/V de S tokens; h: o número de cabeças de consulta
    (kv divide h). Devolve (B, h, S, d_h): a cabeça de consulta j lê a cabeça de K/V
    j // (h/kv). Isto é, as h/kv primeiras consultas leem a cabeça 0 de K/V, as h/kv
    seguintes leem a cabeça 1, e assim por diante: cada cabeça de K/V aparece h/kv vezes
    SEGUIDAS (é o repeat_kv do transformers, e o que o enable_gqa=True do SDPA faz).
    """


def referencia(k, h):
    return k.repeat_interleave(h // k.shape[1], dim=1)                 # (B, h, S, d_h)


def versao(ajustes, k, h):
    """A repetição com os defeitos do catálogo ligados (ajustes vazio: a certa)."""
    n = h if ajustes.get("fator") == "h" else h // k.shape[1]
    eixo = ajustes.get("eixo", 1)
    if ajustes.get("como") == "repeat":                    # em bloco: 0, 1, 0, 1 (np.tile)
        if eixo is None:
            return k.flatten().repeat(n)
        vezes = [1] * k.dim()
        vezes[eixo] = n
        return k.repeat(*vezes)
    return k.repeat_interleave(n, dim=eixo)                # seguidas: 0, 0, 1, 1 (np.repeat)


def sondas():
    g = torch.Generator().manual_seed(87)

    def sorteio(*forma):
        return torch.randn(*forma, generator=g, dtype=torch.float64)

    return [
        Sonda(1, "as formas: k (2, 3, 5, 4), h = 6 (2 consultas por cabeça de K/V)",
              (sorteio(2, 3, 5, 4), 6)),
        Sonda(2, "MHA: kv = h = 3, nada a repetir", (sorteio(2, 3, 5, 4), 3)),
        Sonda(2, "MQA: kv = 1, h = 4, uma cabeça de K/V para todas", (sorteio(2, 1, 5, 4), 4)),
        Sonda(2, "kv = 2, h = 8: 4 consultas por cabeça, a ordem pesa",
              (sorteio(3, 2, 1, 4), 8)),
        Sonda(3, "um lote qualquer: k (1, 4, 7, 6), h = 8", (sorteio(1, 4, 7, 6), 8)),
        Sonda(3, "a forma do Llama 3 8B, encolhida: k (2, 8, 3, 16), h = 32",
              (sorteio(2, 8, 3, 16), 32)),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_expand(k, h):
    """O repeat_kv do transformers: um eixo novo logo depois das cabeças, expandido (uma
    vista, nenhuma cópia) e fundido com o das cabeças."""
    B, kv, S, dh = k.shape
    return k[:, :, None].expand(B, kv, h // kv, S, dh).reshape(B, h, S, dh)


def por_indice(k, h):
    """Cada consulta j escolhe a sua cabeça de K/V, j // (h/kv)."""
    grupo = h // k.shape[1]
    return k[:, torch.arange(h) // grupo]                              # (B, h, S, d_h)


def por_pilha(k, h):
    grupo = h // k.shape[1]
    return torch.stack([k] * grupo, dim=2).flatten(1, 2)               # (B, h, S, d_h)


# ---------------------------------------------------------------- o catálogo
GQA = f'{APOSTILA}, seção "7. GQA: menos cabeças de K/V"'

DEFEITOS = [
    Defeito("repeat_no_lugar_de_repeat_interleave", {"como": "repeat"},
            "as cabeças de K/V foram repetidas em bloco (repeat: 0, 1, 0, 1), não cada uma "
            "seguida de si mesma (repeat_interleave: 0, 0, 1, 1). A consulta j lê a cabeça "
            "j // (h/kv): as consultas de um grupo são vizinhas. Cuidado: o repeat do "
            "PyTorch é o tile do numpy, e o repeat do numpy é o repeat_interleave do "
            "PyTorch.", GQA),
    Defeito("eixo_dos_tokens", {"eixo": 2},
            "a repetição foi no eixo dos tokens (dim=2), não no das cabeças (dim=1): k é "
            "(B, kv, S, d_h), e são as kv cabeças que viram h.", GQA),
    Defeito("eixo_do_lote", {"eixo": 0},
            "a repetição foi no eixo do lote (dim=0), não no das cabeças (dim=1): k é "
            "(B, kv, S, d_h), e são as kv cabeças que viram h.", GQA),
    Defeito("sem_dim", {"eixo": None},
            "o repeat_interleave foi chamado sem dim: sem ele, o PyTorch achata o tensor e "
            "repete cada número. Diga o eixo das cabeças: dim=1.", GQA),
    Defeito("repetiu_h_vezes", {"fator": "h"},
            "cada cabeça de K/V foi repetida h vezes; são h/kv (as consultas de um grupo), "
            "para que as kv cabeças virem h.", GQA),
]


def _atencao_com(sua):
    """O Atencao.forward da lição 08 com a repetição do aluno no lugar do enable_gqa=True do
    SDPA (a mesma conta: o experimento 7 da lição confere)."""
    def forward(self, x, rot=None, memoria=None, causal=True):
        B, T, C = x.shape                                            # (B, T, C)
        fonte = x if memoria is None else memoria
        S = fonte.shape[1]
        q = self.wq(x).view(B, T, self.h, self.dh).transpose(1, 2)       # (B, h, T, dh)
        k = self.wk(fonte).view(B, S, self.kv, self.dh).transpose(1, 2)  # (B, kv, S, dh)
        v = self.wv(fonte).view(B, S, self.kv, self.dh).transpose(1, 2)  # (B, kv, S, dh)
        if rot is not None:
            q, k = L08.aplicar_rope(q, *rot), L08.aplicar_rope(k, *rot)
        k, v = sua(k, self.h), sua(v, self.h)                            # (B, h, S, dh)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal and memoria is None)
        return self.wo(y.transpose(1, 2).reshape(B, T, C))              # (B, T, C)
    return forward


DESAFIO = Desafio(
    licao="08", nome="gqa", titulo="a repetição das cabeças de K/V (GQA)",
    modelo=repetir_kv, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import torch",
    secao=f'{APOSTILA}, seção "GQA: repetir_kv()"',
    dicas=[
        "O grupo: cada cabeça de K/V serve h // kv consultas, com kv = k.shape[1]. A saída "
        "tem h cabeças no eixo 1.",
        "Repetir cada cabeça seguida de si mesma (0, 0, 1, 1) é repeat_interleave; repetir "
        "o bloco inteiro (0, 1, 0, 1) é repeat. A GQA quer o primeiro.",
        "k.repeat_interleave(h // k.shape[1], dim=1).",
    ],
    alternativas={"expand": por_expand, "indice": por_indice, "pilha": por_pilha},
    substituir=lambda sua: {"08_since_2017": {"Atencao.forward": _atencao_com(sua)}},
    com_o_seu=[("13_tucano.py", "os logits do Llama contra os do transformers, num modelo "
                "com GQA", "--so", "2,4")],
)
