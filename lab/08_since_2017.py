"""Lição 08 · O que mudou desde 2017 (leia junto: apostilas/08_since_2017.md)
1. Os seis controles: de 2017 a 2026
2. O bloco Pre-LN de hoje em numpy, e a conta em d = 4.096
3. O bloco moderno em PyTorch = LlamaDecoderLayer
4. RMSNorm contra LayerNorm
5. SwiGLU: a porta, a largura 8d/3 e o arredondamento
6. RoPE: a posição mora na rotação
7. GQA: menos cabeças de K/V, cache menor
8. Post-LN precisa de aquecimento: um treino de verdade
9. Codificador, decodificador ou os dois"""
import math
from comum import Licao, inteiro_entre, opcao, paginas
LICAO = Licao.da_docstring(__doc__, opcoes=[  # de --norma a --vieses: 1º valor = 2017
    opcao("--ano", ("2017", "2019", "2026"), "2026", "ponto de partida: o artigo, o GPT-2, hoje"),
    opcao("--norma", ("post", "pre"), None, "post: norma depois da soma residual; pre: no ramo"),
    opcao("--normalizador", ("layernorm", "rmsnorm"), None, "rmsnorm: só reescala, sem viés"),
    opcao("--mlp", ("relu", "gelu", "swiglu"), None, "relu, gelu: 2 matrizes 4d; swiglu: 3"),
    opcao("--posicoes", ("senoidal", "aprendida", "rope"), None, "rope: gira Q e K na atenção"),
    opcao("--atencao", ("mha", "gqa", "mqa"), None, "K/V: um por cabeça, um a cada 4, um só"),
    opcao("--vieses", ("sim", "nao"), None, "vieses nas camadas lineares e na LayerNorm"),
    opcao("--tamanho", ("base", "big"), "base", "os dois tamanhos do artigo, no experimento 1"),
    opcao("--interativo", "flag", None, "no experimento 1, troca os controles um a um"),
    opcao("--d", inteiro_entre(1, 100_000, "--d 2048"), 4096, "d na conta do experimento 5", "D"),
    opcao("--tokens", inteiro_entre(1, 10**8, "--tokens 128000"), 8192, "contexto do exp. 7", "N"),
    opcao("--completo", "flag", None, "exp. 8 longo (200 passos, não 80)"), *paginas.opcoes()])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch
from torch import nn
# ==================================================== a peça: o bloco e seus seis controles
def tabela_rope(posicoes, dh, base=10_000.0, dtype=torch.float32):
    """cos e sin do ângulo m * theta_i, theta_i = base^(-2i/dh); pares (i, i + dh/2).
    O ângulo é calculado na precisão dtype, como fazem os modelos de verdade."""
    theta = (base ** (-torch.arange(0, dh, 2, dtype=torch.float64) / dh)).to(dtype)  # (dh/2,)
    angulo = torch.outer(torch.as_tensor(posicoes, dtype=dtype), theta)          # (T, dh/2)
    angulo = torch.cat([angulo, angulo], dim=-1)                              # (T, dh)
    return angulo.cos(), angulo.sin()


def aplicar_rope(x, cos, sin):
    """Gira cada par (x_i, x_{i+dh/2}) pelo ângulo da sua posição. x: (B, h, T, dh)."""
    x1, x2 = x.chunk(2, dim=-1)                     # 2 x (B, h, T, dh/2)
    girado = torch.cat([-x2, x1], dim=-1)           # (B, h, T, dh)
    return x * cos + girado * sin


def sinusoidal(T, d, dtype=torch.float32):
    """Posições de 2017: PE(m, 2i) = sen(m / 10000^(2i/d)), PE(m, 2i+1) = cos(...)."""
    m = torch.arange(T, dtype=torch.float64)[:, None]                       # (T, 1)
    freq = 10_000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(m * freq), torch.cos(m * freq)
    return pe.to(dtype)                                                     # (T, d)


class Atencao(nn.Module):
    """h cabeças de consulta, kv cabeças de chave/valor: kv = h é MHA, 1 < kv < h é
    GQA, kv = 1 é MQA. Com memoria, é a atenção cruzada do decodificador."""

    def __init__(self, d, h, kv, vieses=False):
        super().__init__()
        assert d % h == 0 and h % kv == 0
        self.h, self.kv, self.dh = h, kv, d // h
        self.wq = nn.Linear(d, d, bias=vieses)
        self.wk = nn.Linear(d, kv * self.dh, bias=vieses)   # GQA: menos cabeças de K/V
        self.wv = nn.Linear(d, kv * self.dh, bias=vieses)
        self.wo = nn.Linear(d, d, bias=vieses)

    def forward(self, x, rot=None, memoria=None, causal=True):
        B, T, C = x.shape                                            # (B, T, C)
        fonte = x if memoria is None else memoria
        S = fonte.shape[1]
        q = self.wq(x).view(B, T, self.h, self.dh).transpose(1, 2)       # (B, h, T, dh)
        k = self.wk(fonte).view(B, S, self.kv, self.dh).transpose(1, 2)  # (B, kv, S, dh)
        v = self.wv(fonte).view(B, S, self.kv, self.dh).transpose(1, 2)  # (B, kv, S, dh)
        if rot is not None:                       # RoPE: a posição mora aqui, não na entrada
            q, k = aplicar_rope(q, *rot), aplicar_rope(k, *rot)
        y = nn.functional.scaled_dot_product_attention(  # h/kv consultas por K/V
            q, k, v, is_causal=causal and memoria is None, enable_gqa=True)  # (B, h, T, dh)
        return self.wo(y.transpose(1, 2).reshape(B, T, C))          # (B, T, C)


class SwiGLU(nn.Module):
    """w2( SiLU(x w1) * (x w3) ): w3 propõe o conteúdo, SiLU(x w1) abre ou fecha."""

    def __init__(self, d, largura, vieses=False):
        super().__init__()
        self.w1 = nn.Linear(d, largura, bias=vieses)   # a porta
        self.w3 = nn.Linear(d, largura, bias=vieses)   # o conteúdo
        self.w2 = nn.Linear(largura, d, bias=vieses)

    def forward(self, x):
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class MLPClassico(nn.Module):
    """O MLP de 2017 (ReLU) e do GPT-2 (GELU): c_fc -> ativação -> c_proj."""

    def __init__(self, d, largura, ativacao="relu", vieses=True):
        super().__init__()
        self.c_fc = nn.Linear(d, largura, bias=vieses)
        self.ativacao = nn.ReLU() if ativacao == "relu" else nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(largura, d, bias=vieses)

    def forward(self, x):
        return self.c_proj(self.ativacao(self.c_fc(x)))


def normalizador(tipo, d, vieses):
    if tipo == "rmsnorm":
        return nn.RMSNorm(d, eps=1e-5)              # só o ganho: nunca teve viés
    return nn.LayerNorm(d, eps=1e-5, bias=vieses)


def largura_swiglu(d, multiplicador=1.0, multiplo=1):
    """A regra do código da Meta: int(2 * 4d / 3), vezes um multiplicador opcional,
    arredondada para cima até um múltiplo (256 no Llama 2, 1024 no Llama 3)."""
    largura = int(multiplicador * int(2 * 4 * d / 3))
    return multiplo * ((largura + multiplo - 1) // multiplo)


class BlocoConfiguravel(nn.Module):
    """Um bloco com os seis controles. Com cruzada=True, é um bloco do decodificador
    de 2017 (autoatenção causal, atenção cruzada ao codificador, MLP)."""

    def __init__(self, d, h, kv, largura, norma="pre", tipo_norma="rmsnorm",
                 mlp="swiglu", vieses=False, cruzada=False):
        super().__init__()
        self.pre = norma == "pre"
        self.ln_1 = normalizador(tipo_norma, d, vieses)
        self.attn = Atencao(d, h, kv, vieses)
        self.cruzada = Atencao(d, h, kv, vieses) if cruzada else None
        self.ln_x = normalizador(tipo_norma, d, vieses) if cruzada else None
        self.ln_2 = normalizador(tipo_norma, d, vieses)
        self.mlp = (SwiGLU(d, largura, vieses) if mlp == "swiglu"
                    else MLPClassico(d, largura, mlp, vieses))

    def forward(self, x, rot=None, memoria=None, causal=True):
        if self.pre:                                # Pre-LN: o fluxo residual fica limpo
            x = x + self.attn(self.ln_1(x), rot, causal=causal)
            if self.cruzada is not None:
                x = x + self.cruzada(self.ln_x(x), memoria=memoria)
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.attn(x, rot, causal=causal))   # Post-LN: norma depois da soma
        if self.cruzada is not None:
            x = self.ln_x(x + self.cruzada(x, memoria=memoria))
        return self.ln_2(x + self.mlp(x))


def cabecas_kv(cfg, h):
    return {"mha": h, "gqa": max(1, h // 4), "mqa": 1}[cfg["atencao"]]


def bloco_de(cfg, tam, cruzada=False):
    d, h = tam["d"], tam["h"]
    largura = largura_swiglu(d) if cfg["mlp"] == "swiglu" else tam["ffn"]
    return BlocoConfiguravel(d, h, cabecas_kv(cfg, h), largura, cfg["norma"],
                             cfg["normalizador"], cfg["mlp"], cfg["vieses"] == "sim", cruzada)


VOCAB_2017 = 37_000       # "um vocabulário compartilhado de cerca de 37.000 tokens"
POSICOES_APRENDIDAS = 1024


def tabela(linhas, d):
    """Embedding com desvio 1/raiz(d): vezes raiz(d) na entrada, dá vetores de desvio 1.
    (Sorteio uniforme: normal_ no dispositivo 'meta' custa 2 s de importações.)"""
    limite = math.sqrt(3 / d)
    return nn.Embedding(linhas, d, _weight=torch.empty(linhas, d).uniform_(-limite, limite))


class Transformer2017(nn.Module):
    """O desenho do artigo: codificador e decodificador, um só embedding para a fonte,
    o alvo e a camada de saída (multiplicado por raiz(d)); os blocos seguem cfg."""

    def __init__(self, cfg, tam, vocab=VOCAB_2017, camadas=None):
        super().__init__()
        self.cfg, self.d, self.h = cfg, tam["d"], tam["h"]
        L = camadas or tam["camadas"]
        self.emb = tabela(vocab, self.d)
        if cfg["posicoes"] == "aprendida":
            self.pos_cod = tabela(POSICOES_APRENDIDAS, self.d)
            self.pos_dec = tabela(POSICOES_APRENDIDAS, self.d)
        self.codificador = nn.ModuleList(bloco_de(cfg, tam) for _ in range(L))
        self.decodificador = nn.ModuleList(bloco_de(cfg, tam, cruzada=True) for _ in range(L))
        pre = cfg["norma"] == "pre"        # Pre-LN precisa de uma norma no fim de cada pilha
        tipo, vieses = cfg["normalizador"], cfg["vieses"] == "sim"
        self.norma_cod = normalizador(tipo, self.d, vieses) if pre else nn.Identity()
        self.norma_dec = normalizador(tipo, self.d, vieses) if pre else nn.Identity()

    def entrar(self, ids, tabela_pos):
        """A entrada (B, T, d) e a rotação do RoPE (cos, sin), ou None."""
        T = ids.shape[1]
        x = self.emb(ids) * math.sqrt(self.d)                    # (B, T, d)
        if self.cfg["posicoes"] == "senoidal":
            x = x + sinusoidal(T, self.d)
        elif self.cfg["posicoes"] == "aprendida":
            x = x + tabela_pos(torch.arange(T))
        elif self.cfg["posicoes"] == "rope":                    # RoPE: nada na entrada
            return x, tabela_rope(range(T), self.d // self.h)
        return x, None

    def forward(self, fonte, alvo):
        memoria, rot = self.entrar(fonte, getattr(self, "pos_cod", None))
        for bloco in self.codificador:                   # bidirecional: vê a fonte inteira
            memoria = bloco(memoria, rot, causal=False)
        memoria = self.norma_cod(memoria)
        y, rot = self.entrar(alvo, getattr(self, "pos_dec", None))
        for bloco in self.decodificador:                 # causal + atenção cruzada
            y = bloco(y, rot, memoria=memoria)
        return self.norma_dec(y) @ self.emb.weight.T    # (B, T, vocab)


# Parâmetros por componente: o que cada controle muda na conta (experimento 1).
GRUPOS = ["embeddings", "posições", "atenção", "MLP", "normas"]


def grupo_do_parametro(nome):
    if nome.startswith("emb."):
        return "embeddings"
    if nome.startswith("pos_"):
        return "posições"
    if ".attn." in nome or ".cruzada." in nome:
        return "atenção"
    if ".mlp." in nome:
        return "MLP"
    return "normas"


def contar_componentes(cfg, tam, vocab=VOCAB_2017):
    """Parâmetros por componente do modelo inteiro, montado sem memória (meta)."""
    with torch.device("meta"):
        modelo = Transformer2017(cfg, tam, vocab)
    grupos = dict.fromkeys(GRUPOS, 0)
    for nome, p in modelo.named_parameters():
        grupos[grupo_do_parametro(nome)] += p.numel()
    grupos["total"] = sum(grupos.values())
    return grupos


# Os três pontos de partida de --ano (o GPT-2 fica no meio) e os dois tamanhos do artigo.
ANOS = {
    "2017": dict(norma="post", normalizador="layernorm", mlp="relu", posicoes="senoidal",
                 atencao="mha", vieses="sim"),
    "2019": dict(norma="pre", normalizador="layernorm", mlp="gelu", posicoes="aprendida",
                 atencao="mha", vieses="sim"),            # o GPT-2
    "2026": dict(norma="pre", normalizador="rmsnorm", mlp="swiglu", posicoes="rope",
                 atencao="gqa", vieses="nao"),
}
TAMANHOS = {"base": dict(d=512, h=8, ffn=2048, camadas=6),    # Vaswani et al., tabela 3
            "big": dict(d=1024, h=16, ffn=4096, camadas=6)}

# Os nomes dos pesos de um bloco: o nosso -> o do LlamaDecoderLayer do transformers
# (carregar os pesos de um Llama de verdade é esta tabela; lição 13).
NOMES_LLAMA = {
    "ln_1.weight": "input_layernorm.weight",
    "attn.wq.weight": "self_attn.q_proj.weight",
    "attn.wk.weight": "self_attn.k_proj.weight",
    "attn.wv.weight": "self_attn.v_proj.weight",
    "attn.wo.weight": "self_attn.o_proj.weight",
    "ln_2.weight": "post_attention_layernorm.weight",
    "mlp.w1.weight": "mlp.gate_proj.weight",       # a porta
    "mlp.w3.weight": "mlp.up_proj.weight",         # o conteúdo
    "mlp.w2.weight": "mlp.down_proj.weight",
}

def parametros_bloco(d, h, kv, largura):
    """(atenção, MLP, normas) de um bloco moderno sem vieses, com kv cabeças de K/V."""
    dh = d // h
    return 2 * d * d + 2 * d * kv * dh, 3 * d * largura, 2 * d


def parametros_llama(camadas, d, h, kv, largura, vocab, amarrada=False):
    """Total de um Llama: blocos + embedding de entrada + saída (nenhuma se amarrada ao
    embedding) + norma final."""
    saida = 0 if amarrada else vocab * d
    return camadas * sum(parametros_bloco(d, h, kv, largura)) + vocab * d + saida + d


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["tabela_rope", "aplicar_rope", "sinusoidal", "Atencao", "SwiGLU", "MLPClassico",
           "normalizador", "largura_swiglu", "BlocoConfiguravel", "cabecas_kv", "bloco_de",
           "Transformer2017", "GRUPOS", "contar_componentes", "ANOS", "TAMANHOS", "VOCAB_2017",
           "NOMES_LLAMA", "parametros_bloco", "parametros_llama"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import itertools
import sys

import numpy as np
import torch.nn.functional as F

from comum import (Adam, ExperimentoPulado, Progresso, cientifico, dizer, em_paralelo, figuras,
                   importar_licao, inteiro, limite, num, pct, tamanho, uma_thread)
from comum.console import perguntar

L05 = importar_licao("05_block")   # a Pilha e a tarefa do token anterior (experimento 8)

# Os seis controles, na ordem do painel: chave da opção, nome, [(valor, rótulo)].
CONTROLES = [
    ("norma", "posição da norma", [("post", "Post-LN"), ("pre", "Pre-LN")]),
    ("normalizador", "normalizador", [("layernorm", "LayerNorm"), ("rmsnorm", "RMSNorm")]),
    ("mlp", "MLP", [("relu", "ReLU, 4d"), ("gelu", "GELU, 4d"), ("swiglu", "SwiGLU, 8d/3")]),
    ("posicoes", "posições", [("senoidal", "senoidais"), ("aprendida", "aprendidas"),
                              ("rope", "RoPE")]),
    ("atencao", "atenção", [("mha", "MHA"), ("gqa", "GQA"), ("mqa", "MQA")]),
    ("vieses", "vieses", [("sim", "sim"), ("nao", "não")]),
]


# ============================================================ experimento 1
def rotulo(chave, valor):
    return dict(next(o for c, _, o in CONTROLES if c == chave))[valor]   # 'mqa' -> 'MQA'


def configuracao(args):
    pedidos = {c: getattr(args, c) for c, _, _ in CONTROLES if getattr(args, c, None)}
    return dict(ANOS[args.ano], **pedidos)           # o ano, com os controles pedidos por cima


def nome_da_configuracao(cfg):
    anos = [a for a, c in ANOS.items() if c == cfg]
    return f"a de {anos[0]}" if anos else "personalizada"


def mostrar_painel(cfg, tam):
    """Os seis controles, 2017 contra o escolhido, e os parâmetros por componente."""
    h = tam["h"]
    dizer(f"Configuração: {nome_da_configuracao(cfg)}.")
    dizer(f"  {'#':<2} {'controle':<17} {'2017':<14} escolhido")
    for i, (chave, nome, _) in enumerate(CONTROLES, 1):
        antes, agora = rotulo(chave, ANOS["2017"][chave]), rotulo(chave, cfg[chave])
        if chave == "atencao":
            antes += f", {h} K/V"
            agora += f", {cabecas_kv(cfg, h)} K/V"
        marca = "" if cfg[chave] == ANOS["2017"][chave] else "  (mudou)"
        dizer(f"  {i:<2} {nome:<17} {antes:<14} {agora:<14}{marca}".rstrip())
    de_2017, escolhido = contar_componentes(ANOS["2017"], tam), contar_componentes(cfg, tam)
    dizer(f"\nParâmetros do modelo inteiro no tamanho '{tam['nome']}' do artigo (d = {tam['d']},\n"
          f"{h} cabeças, FFN {inteiro(tam['ffn'])}, {tam['camadas']} + {tam['camadas']} blocos, "
          f"vocabulário de {inteiro(VOCAB_2017)} compartilhado):")
    dizer(f"  {'componente':<12} {'2017':>12} {'escolhido':>12} {'diferença':>12}")
    for g in GRUPOS + ["total"]:
        dif = escolhido[g] - de_2017[g]
        texto = ("+" if dif > 0 else "-" if dif < 0 else "") + inteiro(abs(dif))
        dizer(f"  {g:<12} {inteiro(de_2017[g]):>12} {inteiro(escolhido[g]):>12} {texto:>12}")


def por_que_65m():
    """Que vocabulário daria os números impressos no artigo (65M e 213M)?"""
    faixas = {}
    for nome, impresso in (("base", 65e6), ("big", 213e6)):
        tam = dict(TAMANHOS[nome], nome=nome)
        sem_emb = contar_componentes(ANOS["2017"], tam, vocab=0)["total"]
        com = contar_componentes(ANOS["2017"], tam)["total"]
        # vocabulários v com sem_emb + v * d entre impresso - 0,5M e impresso + 0,5M
        lo = math.ceil((impresso - 0.5e6 - sem_emb) / tam["d"])
        hi = math.ceil((impresso + 0.5e6 - sem_emb) / tam["d"]) - 1
        faixas[nome] = (com, impresso, lo, hi)
    (b, _, blo, bhi), (g, _, glo, ghi) = faixas["base"], faixas["big"]
    dizer(f"Com {inteiro(VOCAB_2017)} tokens: base {inteiro(b)} = {num(b / 1e6, 1)}M "
          f"(o artigo diz 65M);\nbig {inteiro(g)} = {num(g / 1e6, 1)}M (o artigo diz 213M).")
    dizer(f"Para o base arredondar para 65M, o vocabulário teria de ter de "
          f"{inteiro(blo)}\na {inteiro(bhi)} tokens; para o big dar 213M, de "
          f"{inteiro(glo)} a {inteiro(ghi)}.")
    sobra = max(blo, glo) <= min(bhi, ghi)
    dizer("Há um vocabulário que serve aos dois." if sobra else
          "Nenhum vocabulário dá os dois números: os 65M e os 213M do artigo não saem\n"
          f"da mesma conta. Os {num(b / 1e6, 1)}M e {num(g / 1e6, 1)}M acima são os que esta "
          "arquitetura tem.")
    return faixas


def entender(resposta):
    """Uma resposta do modo interativo -> (controle, valor), cada um ou None. Aceita o
    número do controle ('5'), o nome dele ('atencao', '--atencao') e os valores das
    opções da linha de comando ('mqa', 'atencao mqa', '--atencao=mqa')."""
    chave = valor = None
    for pedaco in resposta.lower().replace("=", " ").replace("não", "nao").split():
        pedaco = pedaco.removeprefix("--")
        if pedaco in [str(i) for i in range(1, len(CONTROLES) + 1)] and chave is None:
            chave = CONTROLES[int(pedaco) - 1][0]
        elif pedaco in [c for c, _, _ in CONTROLES]:
            chave = pedaco
        elif pedaco in DONO_DO_VALOR or pedaco in ANOS:
            valor = pedaco
        else:
            return None, None
    if valor in DONO_DO_VALOR and chave not in (None, DONO_DO_VALOR[valor]):
        return None, None                     # 'norma mqa': o valor é de outro controle
    if valor in DONO_DO_VALOR:
        chave = DONO_DO_VALOR[valor]
    return chave, valor


DONO_DO_VALOR = {v: c for c, _, opcoes in CONTROLES for v, _ in opcoes}  # 'mqa' -> 'atencao'


def modo_interativo(cfg, tam):
    dizer("\nModo interativo: escolha um controle pelo número (ou pelo nome), depois a\n"
          "opção; ou digite direto um valor da linha de comando (mqa, rope, 2017...).\n"
          "Enter vazio termina.")
    while True:
        resposta = perguntar("Controle (1-6) ou valor: ")   # None: a entrada acabou
        if resposta is None:
            break
        if not resposta.strip():
            return cfg
        chave, valor = entender(resposta)
        if chave is None and valor is None:
            dizer("Responda com um número de 1 a 6, um valor como mqa ou rope (ou Enter\n"
                  "para terminar).")
            continue
        if valor is None:
            nome, opcoes = next((n, o) for c, n, o in CONTROLES if c == chave)
            menu = "; ".join(f"{i} = {v}" for i, (v, _) in enumerate(opcoes, 1))
            escolha = perguntar(f"{nome} ({menu}): ")
            if escolha is None:
                break
            escolha = escolha.strip().lower().removeprefix("--").replace("não", "nao")
            numeros = [str(i) for i in range(1, len(opcoes) + 1)]
            valor = opcoes[int(escolha) - 1][0] if escolha in numeros else escolha
            if DONO_DO_VALOR.get(valor) != chave:
                dizer(f"Opção inválida: use um número de 1 a {len(opcoes)} ou um de "
                      f"{', '.join(v for v, _ in opcoes)}.")
                continue
        cfg = dict(ANOS[valor]) if chave is None else dict(cfg, **{chave: valor})
        dizer()
        mostrar_painel(cfg, tam)
    dizer("(sem entrada no terminal: sigo com a configuração atual)")
    return cfg


@LICAO.experimento(1)
def exp_controles(licao):
    args = licao.args
    tam = dict(TAMANHOS[args.tamanho], nome=args.tamanho)
    cfg = configuracao(args)
    mostrar_painel(cfg, tam)
    if args.interativo:
        cfg = modo_interativo(cfg, tam)
    modelo = Transformer2017(cfg, tam, camadas=1).eval()
    fonte, alvo = torch.randint(0, VOCAB_2017, (2, 10)), torch.randint(0, VOCAB_2017, (2, 7))
    with torch.no_grad():
        logits = modelo(fonte, alvo)
    finitos = licao.verificar(torch.isfinite(logits).all(), "logits finitos")
    dizer(f"\nUm lote atravessou o modelo com 1 bloco de cada lado: fonte {tuple(fonte.shape)} "
          f"e\nalvo {tuple(alvo.shape)} -> logits {tuple(logits.shape)}; "
          f"todos finitos: {'sim' if finitos else 'NÃO'}.")
    if cfg == ANOS["2017"]:
        dizer()
        licao.pausa("por que o artigo diz 65M e 213M")
        por_que_65m()


# ============================================================ experimento 2
def bloco_numpy(x, pesos, h, h_kv, eps=1e-5):
    """Um bloco Pre-LN de hoje, pequeno o bastante para ler: RMSNorm (sem ganho), GQA
    causal, SwiGLU. Devolve a saída e as formas de cada etapa."""
    n, d = x.shape
    dh = d // h
    Wq, Wk, Wv, Wo, W1, W3, W2 = pesos
    formas = [("x (fluxo residual, entrada)", x.shape)]

    def rms(u):
        return u / np.sqrt((u ** 2).mean(-1, keepdims=True) + eps)

    u = rms(x)
    q = (u @ Wq).reshape(n, h, dh).transpose(1, 0, 2)                 # (h, n, dh)
    k = (u @ Wk).reshape(n, h_kv, dh).transpose(1, 0, 2)              # (h_kv, n, dh)
    v = (u @ Wv).reshape(n, h_kv, dh).transpose(1, 0, 2)              # (h_kv, n, dh)
    k, v = k.repeat(h // h_kv, axis=0), v.repeat(h // h_kv, axis=0)   # (h, n, dh)
    formas += [("Q, por cabeça", q.shape), (f"K, V ({h_kv} cabeça, repetida)", k.shape)]
    notas = q @ k.transpose(0, 2, 1) / np.sqrt(dh)                    # (h, n, n)
    notas = notas + np.triu(np.full((n, n), -np.inf), 1)              # máscara causal
    A = np.exp(notas - notas.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    formas.append(("A = softmax(QK^T/raiz(d_h) + M)", A.shape))
    o = (A @ v).transpose(1, 0, 2).reshape(n, d)                       # (n, d)
    x = x + o @ Wo
    formas.append(("x + atenção", x.shape))
    u = rms(x)
    a = u @ W1
    g = a / (1 + np.exp(-a)) * (u @ W3)                                # SiLU(u W1) * (u W3)
    formas.append(("SwiGLU, camada oculta", g.shape))
    x = x + g @ W2
    formas.append(("x + MLP (saída do bloco)", x.shape))
    return x, formas


@LICAO.experimento(2)
def exp_numpy(licao):
    rng = np.random.default_rng(licao.args.semente)
    n, d, h, h_kv = 5, 8, 2, 1
    f = 8 * d // 3                                   # 21: sem arredondar, d é minúsculo
    dh = d // h
    formas_w = [(d, d), (d, h_kv * dh), (d, h_kv * dh), (d, d), (d, f), (d, f), (f, d)]
    pesos = [rng.normal(size=s) / np.sqrt(s[0]) for s in formas_w]
    x = rng.normal(size=(n, d))
    dizer(f"n = {n} tokens, d = {d}, {h} cabeças de consulta, {h_kv} cabeça de K/V")
    y, formas = bloco_numpy(x, pesos, h, h_kv)
    for nome, forma in formas:
        dizer(f"  {nome:<34}{str(forma):>10}")
    # O mesmo bloco, com os mesmos pesos, na classe em PyTorch deste script:
    bloco = BlocoConfiguravel(d, h, h_kv, f).double()
    lineares = [bloco.attn.wq, bloco.attn.wk, bloco.attn.wv, bloco.attn.wo,  # Wq Wk Wv Wo
                bloco.mlp.w1, bloco.mlp.w3, bloco.mlp.w2]                    # W1 W3 W2
    with torch.no_grad():
        for linear, w in zip(lineares, pesos):
            linear.weight.copy_(torch.from_numpy(w).T)                      # (saída, entrada)
        dif = float((bloco(torch.from_numpy(x)[None])[0] - torch.from_numpy(y)).abs().max())
    licao.verificar(dif < 1e-12, "bloco em numpy = BlocoConfiguravel")
    dizer(f"O mesmo bloco na classe BlocoConfiguravel (PyTorch): diferença máxima "
          f"{limite(dif, 1e-12)}.")

    dizer("\nd = 4.096, 32 cabeças de consulta, 8 de K/V, SwiGLU de largura "
          f"{inteiro(largura_swiglu(4096, multiplo=256))}:")
    attn, mlp, norma = parametros_bloco(4096, 32, 8, largura_swiglu(4096, multiplo=256))
    total = attn + mlp + norma
    for nome, p in [("atenção", attn), ("MLP (SwiGLU)", mlp), ("normalização", norma)]:
        dizer(f"  {nome:<14}{num(p / 1e6, 1):>8} M  {pct(p / total, 0):>5}")
    dizer(f"  {'bloco':<14}{num(total / 1e6, 1):>8} M")
    dizer(f"  {'× 32 blocos':<14}{num(32 * total / 1e9, 2):>8} B")
    emb = 2 * 128_256 * 4096
    dizer(f"\nCom o embedding de entrada e a camada de saída, 2 × 128.256 × 4.096 = "
          f"{num(emb / 1e9, 2)} B,\no total vai a {num((32 * total + emb) / 1e9, 2)} B: "
          "perto de 7 B.")
    llama3 = parametros_llama(32, 4096, 32, 8, 14_336, 128_256)
    bloco3 = sum(parametros_bloco(4096, 32, 8, 14_336))
    dizer(f"O Llama 3 8B usa FFN de 14.336: {inteiro(bloco3)} por bloco, × 32 = "
          f"{inteiro(32 * bloco3)};\n+ embeddings {inteiro(emb)} + norma final {inteiro(4096)} = "
          f"{inteiro(llama3)} parâmetros.")
    llama2 = parametros_llama(32, 4096, 32, 32, 11_008, 32_000)
    dizer(f"O Llama 2 7B (MHA, FFN 11.008, vocabulário 32.000): {inteiro(llama2)}.")


# ============================================================ experimento 3


def bloco_moderno(d, h, kv, largura):
    """O bloco de 2026: Pre-LN, RMSNorm, GQA, SwiGLU, sem vieses."""
    return BlocoConfiguravel(d, h, kv, largura, norma="pre", tipo_norma="rmsnorm",
                             mlp="swiglu", vieses=False)


def comparar_com_llama(bloco, x, base):
    """Carrega nossos pesos num LlamaDecoderLayer e devolve (saída dele, a nossa)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    attn = bloco.attn
    config = LlamaConfig(hidden_size=attn.h * attn.dh, num_attention_heads=attn.h,
                         num_key_value_heads=attn.kv, intermediate_size=bloco.mlp.w1.out_features,
                         num_hidden_layers=1, rms_norm_eps=1e-5, max_position_embeddings=256,
                         rope_parameters={"rope_type": "default", "rope_theta": base},
                         attn_implementation="eager")
    camada = LlamaDecoderLayer(config, layer_idx=0).to(x.dtype).eval()
    camada.load_state_dict({NOMES_LLAMA[k]: v for k, v in bloco.state_dict().items()}, strict=True)
    T = x.shape[1]
    cos_sin = LlamaRotaryEmbedding(config)(x, torch.arange(T)[None])  # (1, T) -> 2 x (1, T, dh)
    mascara = torch.full((T, T), float("-inf"), dtype=x.dtype).triu(1)[None, None]  # (1,1,T,T)
    with torch.no_grad():
        deles = camada(x, attention_mask=mascara, position_embeddings=cos_sin)
        nosso = bloco(x, tabela_rope(range(T), attn.dh, base, x.dtype))
    return deles, nosso


@LICAO.experimento(3)
def exp_llama(licao):
    d, h, kv, largura, base = 64, 8, 2, 172, 500_000.0
    bloco = bloco_moderno(d, h, kv, largura).eval()
    with torch.no_grad():                     # ganhos diferentes de 1, para a norma contar
        bloco.ln_1.weight.uniform_(0.5, 1.5)
        bloco.ln_2.weight.uniform_(0.5, 1.5)
    dizer(f"Bloco pequeno: d = {d}, {h} cabeças de consulta, {kv} de K/V (d_h = {d // h}),"
          f" SwiGLU\nde largura {largura}, RMSNorm com eps 1e-5, RoPE com base "
          f"{inteiro(base)} (a do Llama 3).\n")
    dizer(f"  {'nosso nome':<16} {'nome no LlamaDecoderLayer':<34} forma")
    for nosso, deles in NOMES_LLAMA.items():
        dizer(f"  {nosso:<16} {deles:<34} {tuple(bloco.state_dict()[nosso].shape)}")
    x = torch.randn(2, 10, d)                                          # (B, T, C)
    dizer(f"\nUm lote {tuple(x.shape)} atravessa os dois, com os mesmos pesos.")
    try:
        deles, nosso = comparar_com_llama(bloco, x, base)
    except ImportError as erro:
        raise ExperimentoPulado(
            f"sem o pacote transformers não dá para comparar ({erro}). Rode de novo o "
            "script de instalação (.venv-setup.ps1 ou .venv-setup.sh).") from None
    dif = float((deles - nosso).abs().max())
    igual = licao.verificar(dif < 1e-5, "bloco moderno = LlamaDecoderLayer")
    dizer(f"Diferença máxima para o LlamaDecoderLayer do transformers: {limite(dif, 1e-5)}.")
    dizer("É o mesmo bloco: o que sobra é o arredondamento do float32." if igual else
          "NÃO é o mesmo bloco: a diferença passa de 1e-5.")
    dizer("\nNenhum viés, nenhuma posição somada na entrada: a posição entra pela\n"
          "rotação de Q e K dentro da atenção (experimento 6).")


# ============================================================ experimento 4
def rmsnorm(x, eps=1e-5):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def layernorm(x, eps=1e-5):
    return rmsnorm(x - x.mean(-1, keepdim=True), eps)     # centrar, depois a RMSNorm


@LICAO.experimento(4)
def exp_rmsnorm(licao):
    x = torch.tensor([3.0, 4.0], dtype=torch.float64)

    def vetor(t):
        return "[" + "; ".join(num(float(v), 2) for v in t) + "]"

    dizer(f"x = {vetor(x)}")
    media, desvio = float(x.mean()), float(x.std(unbiased=False))
    rms = math.sqrt(float(x.pow(2).mean()))
    dizer(f"  LayerNorm: média {num(media, 1)}, desvio {num(desvio, 1)}: "
          f"(x - média)/desvio = {vetor(layernorm(x))}")
    dizer(f"  RMSNorm:   RMS = raiz((9 + 16)/2) = {num(rms, 2)}: x/RMS = {vetor(rmsnorm(x))}")
    ln, rn = nn.LayerNorm(2, eps=1e-5).double(), nn.RMSNorm(2, eps=1e-5).double()
    with torch.no_grad():
        dizer(f"  nn.LayerNorm e nn.RMSNorm do PyTorch: {vetor(ln(x))} e {vetor(rn(x))}")

    d, n = 512, 1000
    dizer(f"\n{inteiro(n)} vetores aleatórios de d = {d}:")
    dizer(f"  {'vetores':<26} {'média LN':>9} {'média RMS':>10} {'max |LN-RMS|':>13}")
    for nome, desloc in (("centrados (média 0)", 0.0), ("deslocados (média 2)", 2.0)):
        v = torch.randn(n, d, dtype=torch.float64) + desloc
        a, b = layernorm(v), rmsnorm(v)
        dizer(f"  {nome:<26} {num(float(a.mean()), 3):>9} {num(float(b.mean()), 3):>10} "
              f"{num(float((a - b).abs().max()), 3):>13}")
    v = torch.randn(n, d, dtype=torch.float64) * 3 + 1
    ln, rn = nn.LayerNorm(d, eps=1e-5).double(), nn.RMSNorm(d, eps=1e-5).double()
    with torch.no_grad():
        dif = float((ln(v) - rn(v - v.mean(-1, keepdim=True))).abs().max())
    licao.verificar(dif < 1e-12, "LayerNorm(x) = RMSNorm(x - média)")
    dizer(f"\nnn.LayerNorm(x) = nn.RMSNorm(x - média(x)): diferença {limite(dif, 1e-12)}."
          "\nA LayerNorm é uma RMSNorm precedida de uma centragem.")
    dizer("Tirar a centragem tira uma redução (a média) e o viés: a LayerNorm aprende\n"
          f"2d números (ganho e viés), a RMSNorm d. Em d = 4.096: "
          f"{inteiro(sum(p.numel() for p in nn.LayerNorm(4096).parameters()))} contra "
          f"{inteiro(sum(p.numel() for p in nn.RMSNorm(4096).parameters()))}.")


# ============================================================ experimento 5
@LICAO.experimento(5)
def exp_swiglu(licao):
    d = 512
    largura = largura_swiglu(d)
    mlp = SwiGLU(d, largura)
    with torch.no_grad():
        for w in (mlp.w1, mlp.w3, mlp.w2):
            nn.init.normal_(w.weight, std=1 / math.sqrt(w.in_features))
        x = rmsnorm(torch.randn(64, d))                  # 64 tokens já normalizados
        a = mlp.w1(x)
        porta, conteudo = F.silu(a), mlp.w3(x)
    dizer(f"SwiGLU com d = {d}, largura {inteiro(largura)}; 64 tokens normalizados entram.")
    dizer("Oito dimensões do primeiro token: a porta SiLU(x w1) decide quanto do\n"
          "conteúdo x w3 passa.\n")
    dizer(f"  {'x w1':>7} {'porta':>7} {'conteúdo':>9} {'passa':>7}")
    for i in range(8):
        a_i, p_i, c_i = float(a[0, i]), float(porta[0, i]), float(conteudo[0, i])
        dizer(f"  {num(a_i, 2):>7} {num(p_i, 2):>7} {num(c_i, 2):>9} {num(p_i * c_i, 2):>7}")
    g = porta.flatten()
    minimo = float(F.silu(torch.linspace(-5, 0, 500_001, dtype=torch.float64)).min())
    faixas = [("fecha (|porta| < 0,1)", g.abs() < 0.1),
              ("abre em parte (0,1 a 1)", (g >= 0.1) & (g <= 1)),
              ("amplifica (> 1)", g > 1),
              (f"negativa ({num(minimo, 2)} a -0,1)", g <= -0.1)]
    dizer(f"\nPorta, em todas as {inteiro(g.numel())} dimensões x tokens:")
    for nome, mascara in faixas:
        dizer(f"  {nome:<26} {pct(float(mascara.double().mean())):>8}")
    dizer(f"A SiLU nunca desce abaixo de {num(minimo, 3)}: uma porta negativa inverte o sinal\n"
          f"do conteúdo, mas sempre o encolhe (no máximo a {pct(-minimo, 0)}).")

    D = licao.args.d
    classico, exato = 2 * D * 4 * D, 3 * D * (8 * D / 3)
    dizer()
    licao.pausa(f"os parâmetros em d = {inteiro(D)} e a largura dos Llama")
    dizer(f"Parâmetros em d = {inteiro(D)}:")
    dizer(f"  ReLU/GELU: 2 matrizes d × 4d        = 8d² = {inteiro(classico)}")
    dizer(f"  SwiGLU:    3 matrizes d × (8/3)d    = 8d² = {inteiro(round(exato))}")
    arred = 3 * D * largura_swiglu(D, multiplo=256)
    dizer(f"  SwiGLU com largura {inteiro(largura_swiglu(D, multiplo=256))} (múltiplo de "
          f"256): {inteiro(arred)} ({'+' if arred > classico else ''}"
          f"{pct(arred / classico - 1, 2)})")
    dizer("\nA regra do código da Meta: int(8d/3), vezes um multiplicador, para cima até\num "
          "múltiplo:")
    dizer(f"  {'modelo':<12} {'d':>6} {'int(8d/3)':>10} {'mult.':>6} {'múltiplo':>9} "
          f"{'largura':>8}")
    llamas = [("Llama 2 7B", 4096, 1.0, 256), ("Llama 2 13B", 5120, 1.0, 256),
              ("Llama 3 8B", 4096, 1.3, 1024), ("Llama 2 70B", 8192, 1.3, 4096)]
    for modelo, dd, mult, multiplo in llamas:
        dizer(f"  {modelo:<12} {inteiro(dd):>6} {inteiro(int(8 * dd / 3)):>10} {num(mult, 1):>6} "
              f"{inteiro(multiplo):>9} {inteiro(largura_swiglu(dd, mult, multiplo)):>8}")
    meta, perto = largura_swiglu(D, multiplo=256), round(8 * D / 3 / 256) * 256
    dizer(f"Arredondando ao múltiplo de 256 mais próximo, round(8d/3/256)·256, "
          + (f"também dá\n{inteiro(perto)} em d = {inteiro(D)}." if perto == meta else
             f"dá\n{inteiro(perto)} em d = {inteiro(D)}; a regra da Meta, que arredonda para "
             f"cima, dá {inteiro(meta)}."))


# ============================================================ experimento 6
def produto_rope(q, k, m, n, base, dtype):
    """q girado para a posição m, k para a posição n; devolve q·k."""
    dh = q.shape[-1]
    q_m = aplicar_rope(q.to(dtype), *tabela_rope([m], dh, base, dtype))
    k_n = aplicar_rope(k.to(dtype), *tabela_rope([n], dh, base, dtype))
    return float((q_m * k_n).sum())


CASAS_64, CASAS_32 = 9, 4   # casas impressas de q·k: longe do ruído de arredondamento


@LICAO.experimento(6)
def exp_rope(licao):
    dh, base = 128, 500_000.0
    q, k = torch.randn(dh, dtype=torch.float64), torch.randn(dh, dtype=torch.float64)
    dizer(f"Uma consulta q e uma chave k (d_h = {dh}, base {inteiro(base)}); só as "
          "posições\nmudam. q é girado para a posição m, k para a posição n.\n")
    pares = [(5, 2), (103, 100), (4099, 4096), (6, 2), (104, 100), (4100, 4096)]
    # Com 12 casas em float64 (ou 5 em float32) o último dígito muda de um processador
    # para outro; com CASAS_64 e CASAS_32, os testes conferem que não.
    dizer(f"  {'(m, n)':<14} {'m - n':>6} {'q·k em float64':>15} {'em float32':>11}")
    valores = {(m, n): (produto_rope(q, k, m, n, base, torch.float64),
                        produto_rope(q, k, m, n, base, torch.float32)) for m, n in pares}
    for (m, n), (v64, v32) in valores.items():
        dizer(f"  {str((m, n)):<14} {m - n:>6} {num(v64, CASAS_64):>15} {num(v32, CASAS_32):>11}")
    tres = [valores[p][0] for p in pares[:3]]
    dif3 = max(tres) - min(tres)
    licao.verificar(dif3 < 1e-10, "q·k igual nas três posições com distância 3")
    dizer(f"\nDistância 3 nas três posições: maior diferença {limite(dif3, 1e-10)} (float64).")
    dizer(f"Distância 4: outro valor ({num(valores[(6, 2)][0], 4)} contra "
          f"{num(tres[0], 4)}). Só a distância importa.")
    dif32 = abs(valores[(4099, 4096)][1] - valores[(5, 2)][1])
    dizer(f"Em float32, longe do início, os ângulos perdem precisão: (4099, 4096) difere\nde "
          f"(5, 2) em cerca de {cientifico(dif32, 0)}.")
    norma = aplicar_rope(q[None], *tabela_rope([4099], dh, base, torch.float64)).norm()
    dizer(f"Girar não muda o tamanho: |q| = {num(float(q.norm()), 6)}, girado "
          f"{num(float(norma), 6)}.")

    # Nenhum vetor de posição na entrada: deslocar a frase inteira não muda nada.
    d, h, kv = 64, 8, 2
    bloco = bloco_moderno(d, h, kv, largura_swiglu(d)).double().eval()
    x = torch.randn(1, 10, d, dtype=torch.float64)                     # (B, T, C)
    with torch.no_grad():
        y0 = bloco(x, tabela_rope(range(10), d // h, base, torch.float64))
        y1 = bloco(x, tabela_rope(range(1000, 1010), d // h, base, torch.float64))
        pe = sinusoidal(1010, d, torch.float64)
        s0, s1 = bloco(x + pe[:10]), bloco(x + pe[1000:])
    dif_rope, dif_seno = float((y0 - y1).abs().max()), float((s0 - s1).abs().max())
    licao.verificar(dif_rope < 1e-12, "RoPE: deslocar a frase não muda a saída")
    dizer("\nA mesma frase nas posições 0-9 e 1000-1009, pelo bloco moderno:\n"
          f"  com RoPE:                       maior mudança na saída {limite(dif_rope, 1e-12)}\n"
          f"  com posições senoidais somadas: maior mudança na saída {num(dif_seno, 2)}")


# ============================================================ experimento 7
def bytes_cache_kv(camadas, kv, dh, tokens, bytes_por_valor=2):
    """K e V de cada camada: 2 x camadas x cabeças K/V x d_h x tokens x bytes."""
    return 2 * camadas * kv * dh * tokens * bytes_por_valor


@LICAO.experimento(7)
def exp_gqa(licao):
    h, kv, T, dh = 8, 2, 10, 16
    q = torch.randn(1, h, T, dh)                                        # (B, h, T, dh)
    k, v = torch.randn(1, kv, T, dh), torch.randn(1, kv, T, dh)       # (B, kv, T, dh)
    gqa = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    repetido = F.scaled_dot_product_attention(              # MHA com K/V copiados
        q, k.repeat_interleave(h // kv, dim=1), v.repeat_interleave(h // kv, dim=1),
        is_causal=True)
    grupos = ", ".join(f"{g * h // kv}-{(g + 1) * h // kv - 1} -> K/V {g}" for g in range(kv))
    dizer(f"{h} cabeças de consulta, {kv} de K/V: consultas {grupos}.")
    dif = float((gqa - repetido).abs().max())
    licao.verificar(dif < 1e-6, "GQA = MHA com K/V repetidos")
    dizer(f"enable_gqa=True = MHA com cada K/V repetido {h // kv} vezes: diferença "
          f"{limite(dif, 1e-6)}.\n")

    camadas, H, DH, tokens = 32, 32, 128, licao.args.tokens
    dizer(f"Llama 3 8B: {camadas} camadas, {H} cabeças de consulta, d_h = {DH}; cache "
          f"em fp16\n(2 bytes) para {inteiro(tokens)} tokens:")
    coluna = f"{inteiro(tokens)} tokens"
    largura = max(13, len(coluna) + 1)
    dizer(f"  {'atenção':<8} {'K/V':>4} {'W_K+W_V, camada':>17} {'por token':>10} "
          f"{coluna:>{largura}}")
    for nome, n_kv in (("MHA", 32), ("GQA", 8), ("MQA", 1)):
        with torch.device("meta"):                 # as formas, sem gastar memória
            cache_k = torch.empty(camadas, 1, n_kv, tokens, DH, dtype=torch.float16)
        medido = 2 * cache_k.numel() * cache_k.element_size()       # K e V
        por_token = bytes_cache_kv(camadas, n_kv, DH, 1)
        dizer(f"  {nome:<8} {n_kv:>4} {inteiro(2 * 4096 * n_kv * DH):>17} "
              f"{inteiro(por_token // 1024) + ' KiB':>10} {tamanho(medido):>{largura}}")
    dizer(f"\nCada conversa ativa guarda esse cache. Com GQA, {H // 8} vezes mais conversas\n"
          f"(ou contextos {H // 8} vezes mais longos) cabem na mesma memória que com MHA.")


# ============================================================ experimento 8
def nova_pilha(pre_ln, semente, camadas=8):
    """A pilha da lição 05 (d = 32, 4 cabeças, GELU, causal), com os pesos da semente."""
    torch.manual_seed(semente)
    return L05.Pilha(camadas, 32, 4, vocab=16, posicoes=12, pre_ln=pre_ln)


def treinar(pre_ln, aquecimento, semente, passos, lr=1e-2, camadas=8, avancar=None, modelo=None):
    """A pilha (nova_pilha, ou `modelo`) na tarefa 'prever o token anterior';
    Adam(0,9; 0,98; 1e-9). Aquecimento linear até lr, depois constante."""
    if modelo is None:
        modelo = nova_pilha(pre_ln, semente, camadas)
    otimizador = Adam(modelo.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    gerador = torch.Generator().manual_seed(semente + 1000)
    perdas = []
    for passo in range(passos):
        otimizador.lr = lr * min(1.0, (passo + 1) / aquecimento) if aquecimento else lr
        ids, alvo = L05.lote_token_anterior(gerador)
        perda = F.cross_entropy(modelo(ids).flatten(0, 1), alvo.flatten())   # (B*T, V)
        otimizador.zero_grad()
        perda.backward()
        otimizador.step()
        perdas.append(perda.item())
        if avancar:
            avancar()
    return perdas


def final(perdas, n=10):
    return sum(perdas[-n:]) / n


ACASO = math.log(16)            # perda de quem chuta entre 16 tokens
PERTO_DO_ACASO = ACASO - 0.2    # acima disto, parado no acaso
APRENDEU = 0.5                  # abaixo disto, aprendeu a tarefa
CORRIDAS = ["Post-LN sem aquec.", "Post-LN com aquec.", "Pre-LN sem aquec.", "Pre-LN com aquec."]
VEREDITOS = {"parado": "no acaso: não aprendeu", "em parte": "saiu do acaso: aprendeu em parte",
             "aprendeu": "aprendeu"}


def estado(fim):
    """'parado' perto do acaso, 'aprendeu' abaixo de 0,5, 'em parte' entre os dois."""
    if fim > PERTO_DO_ACASO:
        return "parado"
    return "aprendeu" if fim < APRENDEU else "em parte"


def conclusao(finais, semente):
    """A frase que resume as quatro corridas e o título da figura, pelos números."""
    estados = [estado(finais[nome]) for nome in CORRIDAS]
    if estados == ["parado", "aprendeu", "aprendeu", "aprendeu"]:
        return ("Mesma semente, mesmos dados, mesma taxa final: só o Post-LN sem aquecimento\n"
                "fica parado. O Pre-LN aprende com ou sem aquecimento.",
                "Só o Post-LN sem aquecimento fica parado")
    linhas = [f"Nesta semente ({semente}) o contraste não saiu limpo:"]
    for chave, verbo in (("parado", "ficou no acaso"), ("em parte", "aprendeu em parte"),
                         ("aprendeu", "aprendeu")):
        nomes = [n for n, e in zip(CORRIDAS, estados) if e == chave]
        if nomes:
            linhas.append(f"  {verbo}: {', '.join(nomes)}")
    if estados[0] != "parado":
        linhas.append("O Post-LN sem aquecimento saiu do acaso: isso acontece em algumas "
                      "sementes\n(a apostila mostra em quantas).")
    if "parado" in estados[2:]:
        linhas.append("Um Pre-LN ficou no acaso: é o contrário do esperado; confira a tabela.")
    return "\n".join(linhas), f"Post-LN e Pre-LN, com e sem aquecimento (semente {semente})"


@LICAO.experimento(8)
def exp_aquecimento(licao):
    passos, aquec = (200, 100) if licao.args.completo else (80, 40)
    semente = licao.args.semente
    dizer(f"8 blocos, d = 32, 4 cabeças, FFN 128; tarefa: prever o token anterior\n"
          f"(vocabulário 16, 12 posições, lote 16). Adam(0,9; 0,98; 1e-9), taxa 1e-2,\n"
          f"{passos} passos. Aquecimento: a taxa sobe de 0 a 1e-2 em {aquec} passos.")
    if not licao.args.completo:
        dizer("(forma rápida; com --completo são 200 passos, com aquecimento de 100)")
    corridas = [(False, 0), (False, aquec), (True, 0), (True, aquec)]  # (Pre-LN?, aquec.)
    # tensores minúsculos: mais threads de conta só atrapalham
    with uma_thread(), Progresso(len(corridas) * passos, "treinando") as barra:
        # os pesos sorteados aqui, um modelo por vez; os treinos, dois ao mesmo tempo
        modelos = [nova_pilha(pre, semente) for pre, _ in corridas]
        perdas = em_paralelo([
            lambda pre=pre, a=a, m=m: treinar(pre, a, semente, passos,
                                              avancar=barra.avancar, modelo=m)
            for (pre, a), m in zip(corridas, modelos)])
    curvas = dict(zip(CORRIDAS, perdas))          # na ordem de CORRIDAS
    dizer()
    licao.pausa("a perda das quatro corridas e o veredito")
    dizer(f"Perda (média de 10 passos; o acaso é ln 16 = {num(ACASO, 2)}):")
    dizer(f"  {'':>5} " + " ".join(f"{n.split(' ', 1)[0]:>10}" for n in CORRIDAS))
    dizer(f"  {'passo':>5} " + " ".join(f"{n.split(' ', 1)[1]:>10}" for n in CORRIDAS))
    for p in range(passos // 8, passos + 1, passos // 8):   # a média dos 10 passos até p
        dizer(f"  {p:>5} " + " ".join(f"{num(final(curvas[n][:p]), 3):>10}" for n in CORRIDAS))
    finais = {nome: final(curvas[nome]) for nome in CORRIDAS}
    dizer(f"\nVeredito pela perda final (a última linha): no acaso acima de "
          f"{num(PERTO_DO_ACASO, 2)}\n(ln 16 - 0,2), aprendeu abaixo de {num(APRENDEU, 1)}, "
          "aprendeu em parte entre os dois.")
    for nome in CORRIDAS:
        dizer(f"  {nome:<20} {VEREDITOS[estado(finais[nome])]}")
    frase, titulo = conclusao(finais, semente)
    dizer(f"\n{frase}\n")
    licao.pausa("as quatro curvas de perda num gráfico")
    xs = list(range(1, passos + 1))
    suaves = {n.replace("-LN", "").removesuffix(" aquec."):          # 'Post sem', 'Pre com'...
              [sum(c[max(0, i - 4):i + 1]) / len(c[max(0, i - 4):i + 1]) for i in range(len(c))]
              for n, c in curvas.items()}
    dizer(figuras.grafico_ascii(suaves, xs, altura=12, rotulo_x="passo de treino",
                                rotulo_y="perda (média de 5 passos); sem/com = aquecimento"))
    if not licao.quer_figuras:
        return
    fig, ax = figuras.figura(8, 4.5, margens=(0.85, 0.2, 0.6, 0.4))  # layout fixo: mais rápido
    for nome, c in curvas.items():
        ax.plot(xs, c, label=nome, lw=1.5, ls="-" if "Post" in nome else "--")
    ax.axhline(ACASO, color="gray", lw=0.8, ls=":", label="acaso (ln 16)")
    ax.axvline(aquec, color="gray", lw=0.8, ls="-.", label="fim do aquecimento")
    ax.set(xlabel="passo de treino", ylabel="perda (entropia cruzada)", title=titulo)
    figuras.escala_log(ax)                  # 10⁻¹ em texto simples, sem o mathtext
    figuras.eixos_inteiros(ax)
    ax.legend()
    ax.grid(alpha=0.3)
    licao.salvar_figura(fig, "08_aquecimento.png")


# ============================================================ experimento 9
FAMILIAS = [  # família, exemplos, atenção, onde está hoje
    ("codificador-decodificador", "Transformer 2017, T5, BART", "bidirecional + causal",
     "nichos: tradução, fala (Whisper)"),
    ("só codificador", "BERT, RoBERTa", "bidirecional",
     "embeddings, busca e reordenação, classificação"),
    ("só decodificador", "GPT-2, GPT-3, Llama", "causal", "venceu: quase todo LLM"),
]


@LICAO.experimento(9)
def exp_familias(licao):
    dizer(f"  {'família':<26} {'exemplos':<27} atenção")
    for familia, exemplos, atencao, _ in FAMILIAS:
        dizer(f"  {familia:<26} {exemplos:<27} {atencao}")
    dizer("Quem sobreviveu:")
    for familia, _, _, hoje in FAMILIAS:
        dizer(f"  {familia:<26} {hoje}")

    lote, n = 64, 512
    gerador = torch.Generator().manual_seed(licao.args.semente)
    fluxo = torch.randint(0, 32_000, (lote, n + 1), generator=gerador)
    alvo_causal = fluxo[:, 1:]                # a posição t prevê o token t + 1
    mascara = torch.rand(lote, n, generator=gerador) < 0.15   # BERT: 15 % dos tokens
    sorteio = torch.rand(lote, n, generator=gerador)
    com_mask = mascara & (sorteio < 0.8)
    trocado = mascara & (sorteio >= 0.8) & (sorteio < 0.9)
    sinais_causal, sinais_bert = alvo_causal.numel(), int(mascara.sum())
    dizer(f"\nSinal de treino num lote de {lote} sequências de {n} tokens "
          f"({inteiro(lote * n)} tokens):")
    dizer(f"  causal: {inteiro(sinais_causal)} previsões, uma por token")
    dizer(f"  BERT:   {inteiro(sinais_bert)} previsões ({pct(sinais_bert / (lote * n), 2)}):"
          f" uma a cada {num(lote * n / sinais_bert, 2)} tokens")
    dizer(f"          dos mascarados: {pct(float(com_mask.sum()) / sinais_bert)} viram "
          f"[MASK], {pct(float(trocado.sum()) / sinais_bert)} um token\n"
          f"          aleatório, o resto fica como está")
    dizer(f"Na conta exata, 1/0,15 = {num(1 / 0.15, 2)}: um sinal a cada {num(1 / 0.15, 1)} "
          f"tokens (nem 'um sexto',\nnem 'um sétimo'). Aqui o causal tirou "
          f"{num(sinais_causal / sinais_bert, 1)} vezes mais sinal do mesmo texto.")

    dizer("\nUm objetivo para toda tarefa: tudo vira 'continue o texto'.")
    for tarefa, texto in [("classificação", "Resenha: 'adorei o filme'. Sentimento:"),
                          ("extração", "Texto: 'Ana nasceu em Recife.' Cidade:"),
                          ("tradução", "Inglês: 'the cat'. Português:"),
                          ("diálogo", "Usuário: oi, tudo bem? Assistente:")]:
        dizer(f"  {tarefa:<14} \"{texto}\" ...")

    dizer("\nPor que o cache KV só funciona com causalidade: a lição 07 (experimento 7)\n"
          "mede, camada a camada, as chaves guardadas ficando velhas sem a máscara.")


# ============================================================ a página (--html)
# O painel do experimento 1 num arquivo que abre com um duplo clique (comum/paginas.py). As
# entradas são discretas (216 jeitos de montar o bloco x 2 tamanhos) e a contagem é a do PyTorch
# (contar_componentes, em tensores meta): a página leva os números já contados por esta lição
# (DADOS) e só os soma e formata. Cada componente depende só de alguns controles (DEPENDE), então
# bastam umas poucas contagens por tamanho; tests/test_08_paginas.py confere a página contra
# contar_componentes nas 216 configurações x 2 tamanhos, e o código do bloco que ela mostra contra
# o BlocoConfiguravel. O HTML, o CSS e o JavaScript moram em lab/html/08_since_2017.*.
DEPENDE = {"embeddings": [], "posições": ["posicoes"], "atenção": ["atencao", "vieses"],
           "MLP": ["mlp", "vieses"], "normas": ["norma", "normalizador", "vieses"]}


def contagens_da_pagina(tam):
    """{componente: {"valor|valor": parâmetros}}: contar_componentes só nas configurações
    que trazem uma combinação nova dos controles de que algum componente depende."""
    tabela = {g: {} for g in GRUPOS}
    chaves = [c for c, _, _ in CONTROLES]
    for valores in itertools.product(*[[v for v, _ in o] for _, _, o in CONTROLES]):
        cfg = dict(zip(chaves, valores))
        combinacao = {g: "|".join(cfg[c] for c in DEPENDE[g]) for g in GRUPOS}
        if any(combinacao[g] not in tabela[g] for g in GRUPOS):
            contagem = contar_componentes(cfg, tam)
            for g in GRUPOS:
                tabela[g][combinacao[g]] = contagem[g]
    return tabela


def pagina() -> str:
    """A página da lição (--html): os seis controles, as predefinições de 2017, 2019 e
    2026, os parâmetros por componente nos dois tamanhos do artigo e o código do bloco."""
    tamanhos = {}
    for nome, tam in TAMANHOS.items():
        kv = {v: cabecas_kv({"atencao": v}, tam["h"]) for v in ("mha", "gqa", "mqa")}
        tamanhos[nome] = dict(tam, vocab=VOCAB_2017, kv=kv, contagens=contagens_da_pagina(tam))
    dados = {"controles": [[c, n, [list(o) for o in op]] for c, n, op in CONTROLES],
             "anos": ANOS, "grupos": GRUPOS, "depende": DEPENDE, "tamanhos": tamanhos}
    corpo, script, estilo = (paginas.fonte(f"08_since_2017.{e}") for e in ("html", "js", "css"))
    return paginas.documento(f"Lição {LICAO.numero} · {LICAO.titulo}", corpo, script, dados,
                             estilo, "O bloco de 2017 e o de hoje: seis controles")


if __name__ == "__main__":
    if paginas.pedida(LICAO.args):                  # --html [PASTA] / --abrir: só a página
        sys.exit(paginas.gravar(LICAO, pagina, "08_since_2017.html"))
    sys.exit(LICAO.rodar())
