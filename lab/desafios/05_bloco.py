"""Desafio da lição 05: o forward do Bloco, forward(self, x).

Pre-LN (o GPT-2): x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)), as duas somas no fluxo
residual. Post-LN (pre_ln=False, o Transformer de 2017 do experimento 2): x = ln_1(x +
attn(x)); x = ln_2(x + mlp(x)). As sondas montam Blocos pequenos da lição em float64 com
todo parâmetro sorteado de novo (os LayerNorm também: trocar ln_1 por ln_2 aparece)."""
from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F

from comum import importar_licao

from .motor import Defeito, Desafio, Sonda

L05 = importar_licao("05_block")
FORWARD = L05.Bloco.forward           # o da lição, guardado antes de um --com-o-seu trocá-lo
APOSTILA = "apostilas/05_block.md"


def forward(self, x):
    """O forward do Bloco da lição 05: o que um bloco faz com o fluxo residual.

    self é o Bloco, já montado: self.ln_1 e self.ln_2 (LayerNorm), self.attn (a atenção
    multicabeça causal da lição 04) e self.mlp (c_fc, GELU, c_proj); self.pre_ln diz qual
    bloco ele é. x: (B, T, d), o fluxo residual. Devolve o fluxo depois do bloco, (B, T, d).

    self.pre_ln True (o GPT-2, Pre-LN): cada peça lê uma cópia normalizada do fluxo e SOMA
    o que calcula nele; primeiro a atenção (com ln_1), depois o MLP (com ln_2), que lê o
    fluxo já somado com a atenção.
    self.pre_ln False (o Post-LN de 2017, o do experimento 2): cada peça lê o fluxo como
    ele está, a saída dela é somada ao fluxo e a SOMA é normalizada: a atenção com ln_1,
    depois o MLP com ln_2.
    """


def referencia(self, x):
    return FORWARD(self, x)


def versao(ajustes, self, x):
    """O forward com os defeitos do catálogo ligados (ajustes vazio: o certo). "pre": o
    ramo Pre-LN; "post": "sempre_pre" faz o Post-LN com a conta (certa) do Pre-LN."""
    if not self.pre_ln and ajustes.get("post") != "sempre_pre":
        x = self.ln_1(x + self.attn(x))                          # (B, T, C)
        return self.ln_2(x + self.mlp(x))                        # (B, T, C)
    erro = ajustes.get("pre") if self.pre_ln else None
    if erro == "post_ln":
        x = self.ln_1(x + self.attn(x))
        return self.ln_2(x + self.mlp(x))
    if erro == "soma_na_norma":
        n = self.ln_1(x)
        x = n + self.attn(n)
        n = self.ln_2(x)
        return n + self.mlp(n)
    a = self.attn(self.ln_1(x))                                  # (B, T, C)
    depois = a if erro == "sem_residuo_atencao" else x + a       # o fluxo com a atenção
    if erro == "mlp_le_a_atencao":
        m = self.mlp(self.ln_2(a))
    elif erro == "ln_1_duas_vezes":
        m = self.mlp(self.ln_1(depois))
    elif erro == "em_paralelo":
        m = self.mlp(self.ln_2(x))                               # o fluxo de antes
    else:
        m = self.mlp(self.ln_2(depois))
    return m if erro == "sem_residuo_mlp" else depois + m        # (B, T, C)


# ---------------------------------------------------------------- as sondas
def _bloco(g, d, h, pre_ln):
    """Um Bloco da lição em float64, com todo parâmetro sorteado de novo (nenhum ganho 1,
    nenhum viés 0; os dois LayerNorm diferentes)."""
    bloco = L05.Bloco(d, h, pre_ln).double().eval()
    with torch.no_grad():
        for nome, p in bloco.named_parameters():
            base = 1.0 if nome.startswith("ln_") and nome.endswith("weight") else 0.0
            p.copy_(base + 0.4 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return bloco


def sondas():
    g = torch.Generator().manual_seed(55)

    def sorteio(*forma, vezes=1.0):
        return torch.randn(*forma, generator=g, dtype=torch.float64) * vezes

    B, T, d, h = 2, 5, 12, 3              # todos diferentes; h divide d
    return [
        Sonda(1, "a forma: Bloco(d=12, h=3), x (2, 5, 12)",
              (_bloco(g, d, h, True), sorteio(B, T, d))),
        Sonda(2, "um token só (T = 1): a atenção só vê a si mesma",
              (_bloco(g, d, h, True), sorteio(B, 1, d))),
        Sonda(2, "entrada zero (x = 0): o que sobra são os vieses",
              (_bloco(g, d, h, True), torch.zeros(B, T, d, dtype=torch.float64))),
        Sonda(2, "fluxo grande (x vezes 20): a soma carrega x intacto, a norma não",
              (_bloco(g, d, h, True), sorteio(B, T, d, vezes=20))),
        Sonda(2, "o Post-LN de 2017 (pre_ln=False)",
              (_bloco(g, d, h, False), sorteio(B, T, d))),
        Sonda(3, "outro bloco: Bloco(d=16, h=4), x (3, 7, 16)",
              (_bloco(g, 16, 4, True), sorteio(3, 7, 16))),
        Sonda(3, "outro Post-LN: Bloco(d=16, h=4, pre_ln=False), x (1, 6, 16)",
              (_bloco(g, 16, 4, False), sorteio(1, 6, 16))),
    ]


# ---------------------------------------------------------------- outras versões certas
def por_partes(self, x):
    """Cada ramo numa variável; o fluxo só recebe somas."""
    if self.pre_ln:
        comunicacao = self.attn(self.ln_1(x))
        fluxo = x + comunicacao
        computacao = self.mlp(self.ln_2(fluxo))
        return fluxo + computacao
    fluxo = self.ln_1(x + self.attn(x))
    return self.ln_2(fluxo + self.mlp(fluxo))


def a_mao(self, x):
    """Sem chamar as peças: os LayerNorm, a atenção (SDPA causal) e o MLP (GELU com tanh)
    escritos com os pesos delas."""
    B, T, C = x.shape
    h = self.attn.h

    def ln(norma, t):
        return F.layer_norm(t, (C,), norma.weight, norma.bias, norma.eps)

    def atencao(t):
        q, k, v = F.linear(t, self.attn.c_attn.weight, self.attn.c_attn.bias).split(C, -1)
        q, k, v = (z.reshape(B, T, h, C // h).permute(0, 2, 1, 3)      # (B, h, T, C/h)
                   for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)      # (B, h, T, C/h)
        y = y.permute(0, 2, 1, 3).reshape(B, T, C)                       # (B, T, C)
        return F.linear(y, self.attn.c_proj.weight, self.attn.c_proj.bias)

    def mlp(t):
        u = F.linear(t, self.mlp.c_fc.weight, self.mlp.c_fc.bias)        # (B, T, 4C)
        u = 0.5 * u * (1 + torch.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))
        return F.linear(u, self.mlp.c_proj.weight, self.mlp.c_proj.bias)

    if self.pre_ln:
        x = x + atencao(ln(self.ln_1, x))
        return x + mlp(ln(self.ln_2, x))
    x = ln(self.ln_1, x + atencao(x))
    return ln(self.ln_2, x + mlp(x))


def em_float32(self, x):
    return por_partes(copy.deepcopy(self).float(), x.float()).double()


# ---------------------------------------------------------------- o catálogo
def secao(titulo):
    return f'{APOSTILA}, seção "{titulo}"'


DEFEITOS = [
    Defeito("post_ln", {"pre": "post_ln"},
            "o bloco do GPT-2 (pre_ln=True) fez a conta do Post-LN: normalizou DEPOIS da "
            "soma, x = ln_1(x + attn(x)). No Pre-LN a norma fica dentro do ramo, antes da "
            "peça, e o fluxo só recebe somas: x = x + attn(ln_1(x)).",
            secao("A mudança que define o GPT-2: Pre-LN")),
    Defeito("sem_residuo_atencao", {"pre": "sem_residuo_atencao"},
            "faltou a soma do residual na atenção: x = attn(ln_1(x)) joga fora o fluxo. "
            "Cada peça SOMA no quadro-negro: x = x + attn(ln_1(x)).",
            secao("4. Peça 2 — a conexão residual")),
    Defeito("sem_residuo_mlp", {"pre": "sem_residuo_mlp"},
            "faltou a soma do residual no MLP: x = mlp(ln_2(x)) joga fora o fluxo. Cada "
            "peça SOMA no quadro-negro: x = x + mlp(ln_2(x)).",
            secao("4. Peça 2 — a conexão residual")),
    Defeito("mlp_le_a_atencao", {"pre": "mlp_le_a_atencao"},
            "o MLP recebeu a saída da atenção, mlp(ln_2(attn(...))), e não o fluxo: ele lê "
            "o fluxo inteiro, já somado com a atenção, x = x + mlp(ln_2(x)).",
            secao("6. O bloco montado")),
    Defeito("ln_1_duas_vezes", {"pre": "ln_1_duas_vezes"},
            "o MLP usou o ln_1, a norma da atenção. Cada peça tem a sua, com ganho e viés "
            "próprios: x = x + mlp(ln_2(x)).",
            secao("6. O bloco montado")),
    Defeito("soma_na_norma", {"pre": "soma_na_norma"},
            "a soma partiu do fluxo normalizado: x = ln_1(x) + attn(ln_1(x)). O residual "
            "soma no x de antes da norma; a norma é só a cópia que a peça lê: "
            "x = x + attn(ln_1(x)).",
            secao("A mudança que define o GPT-2: Pre-LN")),
    Defeito("em_paralelo", {"pre": "em_paralelo"},
            "o MLP leu o fluxo de ANTES da atenção (as duas peças em paralelo, como no "
            "GPT-J): no GPT-2 elas vêm em série, e o MLP lê o x que já recebeu a atenção.",
            secao("6. O bloco montado")),
    Defeito("post_ln_feito_como_pre_ln", {"post": "sempre_pre"},
            "o bloco com pre_ln=False (o Post-LN do experimento 2) fez a conta do Pre-LN: o "
            "seu forward não olha self.pre_ln. No Post-LN a soma vem antes e é normalizada: "
            "x = ln_1(x + attn(x)); x = ln_2(x + mlp(x)).",
            secao("A mudança que define o GPT-2: Pre-LN")),
]

DESAFIO = Desafio(
    licao="05", nome="bloco", titulo="o forward do bloco (Pre-LN, as duas somas)",
    modelo=forward, referencia=referencia, versao=versao, sondas=sondas, defeitos=DEFEITOS,
    imports="import torch",
    secao=f'{APOSTILA}, seção "Desafio: escreva o forward do bloco"',
    dicas=[
        "O fluxo x nunca é trocado pela saída de uma peça no Pre-LN: cada linha é "
        "x = x + peca(norma(x)).",
        "Duas linhas no Pre-LN, nesta ordem: a atenção com self.ln_1, depois o MLP com "
        "self.ln_2; o MLP lê o x já somado com a atenção.",
        "if self.pre_ln: x = x + self.attn(self.ln_1(x)); x = x + self.mlp(self.ln_2(x)). "
        "Senão: x = self.ln_1(x + self.attn(x)); x = self.ln_2(x + self.mlp(x)).",
    ],
    proibidas=[(L05.Bloco, "forward")],
    alternativas={"por_partes": por_partes, "a_mao": a_mao, "float32": em_float32},
    substituir=lambda seu: {"05_block": {"Bloco.forward": seu}},
    com_o_seu=[("06_gpt2.py", "os logits do GPT-2 montado com o seu bloco contra os do "
                "transformers", "--so", "2")],
)
