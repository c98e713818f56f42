"""Lição 05 · O bloco Transformer completo (leia junto: apostilas/05_block.md)
1. Monte o bloco e veja as formas
2. Pre-LN contra Post-LN em 40 camadas: o gradiente da camada 1
3. A norma do fluxo residual, camada a camada, no GPT-2
4. Logit lens: lendo o quadro-negro no meio do caminho
5. Os parâmetros de um bloco real, peça por peça
6. GELU contra ReLU em ASCII"""
from comum import Licao, importar_licao, inteiro_entre, opcao, paginas, real_entre

PASSOS, TAXA = 20, 3e-3  # os padrões de --passos e --taxa (o exercício 2 os muda)
LICAO = Licao.da_docstring(__doc__, usa_gpt2={3, 4}, opcoes=[
    opcao("--passos", inteiro_entre(1, exemplo="--passos 40"), PASSOS,
          "passos de treino do experimento 2"),
    opcao("--taxa", real_entre(0, 1, "--taxa 1e-3", inclui_minimo=False), TAXA,
          "taxa de aprendizado do experimento 2 (padrão: 3e-3)"),
    opcao("--aquecimento", inteiro_entre(0, exemplo="--aquecimento 10"), 0, "passos de aquecimento"
          " da taxa no experimento 2 (padrão: 0, sem aquecimento; veja o exercício 2)"),
    opcao("--inicializacao", ("pytorch", "gpt2"), "pytorch", "pesos iniciais das pilhas do "
          "experimento 2 (padrão: pytorch; gpt2 é a do exercício 3)"), *paginas.opcoes(),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import math
import torch
from torch import nn

AtencaoMultiCabeca = importar_licao("04_multihead").AtencaoMultiCabeca  # da lição 04


# ============================================================ a peça
class MLP(nn.Module):
    """Expande 4x, passa pela GELU, contrai: c_fc -> GELU -> c_proj."""

    def __init__(self, d=768):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)                   # 768 -> 3072
        self.gelu = nn.GELU(approximate="tanh")           # a GELU do GPT-2
        self.c_proj = nn.Linear(4 * d, d)                 # 3072 -> 768

    def forward(self, x):                                 # x (B, T, C)
        return self.c_proj(self.gelu(self.c_fc(x)))       # (B, T, C)


class Bloco(nn.Module):
    """Um bloco do GPT-2. pre_ln=False dá o Post-LN do artigo de 2017."""

    def __init__(self, d=768, h=12, pre_ln=True):
        super().__init__()
        self.pre_ln = pre_ln
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = AtencaoMultiCabeca(d, h, causal=True)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = MLP(d)

    def forward(self, x):                                 # x (B, T, C)
        if self.pre_ln:
            x = x + self.attn(self.ln_1(x))   # comunicação: tokens conversam
            x = x + self.mlp(self.ln_2(x))    # computação: cada token sozinho
        else:
            x = self.ln_1(x + self.attn(x))   # Post-LN: normaliza após a soma
            x = self.ln_2(x + self.mlp(x))
        return x                              # (B, T, C): a forma não muda


class Pilha(nn.Module):
    """Embeddings + L blocos + cabeça de saída: o mínimo para uma perda honesta."""

    def __init__(self, camadas, d, h, vocab, posicoes, pre_ln, inicializacao="pytorch"):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(posicoes, d)
        self.h = nn.ModuleList(Bloco(d, h, pre_ln) for _ in range(camadas))
        self.ln_f = nn.LayerNorm(d) if pre_ln else nn.Identity()
        self.cabeca = nn.Linear(d, vocab, bias=False)
        # Pesos com a inicialização padrão do PyTorch, como num Transformer de 2017
        # (o GPT-2 usa outra, N(0; 0,02): veja o exercício 3 da apostila).
        if inicializacao == "gpt2":  # --inicializacao gpt2: o código do exercício 3
            for nome, p in self.named_parameters():
                if p.dim() == 2:                       # pesos das lineares e dos embeddings
                    std = 0.02 / math.sqrt(2 * camadas) if nome.endswith("c_proj.weight") \
                        else 0.02
                    nn.init.normal_(p, 0.0, std)
                elif nome.endswith("bias"):            # vieses (os dos LayerNorm já são 0)
                    nn.init.zeros_(p)

    def forward(self, ids):                                 # ids (B, T)
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(T))      # (B, T, C)
        for bloco in self.h:
            x = bloco(x)
        return self.cabeca(self.ln_f(x))                    # (B, T, V)


def lote_token_anterior(gerador, lote=16, T=12, vocab=16):
    """Tarefa: na posição t, prever o token da posição t - 1."""
    ids = torch.randint(0, vocab, (lote, T), generator=gerador)   # (B, T)
    alvo = torch.full_like(ids, -100)                       # -100: sem alvo
    alvo[:, 1:] = ids[:, :-1]
    return ids, alvo


def copiar_pesos_gpt2(bloco: Bloco, estado: dict) -> Bloco:
    """Carrega o state_dict de um bloco do GPT-2 (transformers) no nosso Bloco.

    O GPT-2 guarda c_attn, c_fc e os c_proj como Conv1D, com o peso em (entrada,
    saída); nn.Linear guarda (saída, entrada). Por isso esses quatro são transpostos
    (pesos_gpt2.para_o_nosso, a mesma conta das lições 06 e 10).
    """
    from comum.pesos_gpt2 import para_o_nosso

    novo = {nome: tensor for nome, tensor in estado.items()    # os pesos, sem o attn.bias
            if nome.endswith((".bias", ".weight")) and not nome.startswith("attn.bias")}
    bloco.load_state_dict(para_o_nosso(novo), strict=True)
    return bloco


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["MLP", "Bloco", "Pilha", "lote_token_anterior", "copiar_pesos_gpt2"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import sys

import torch.nn.functional as F

from comum import (Adam, ExperimentoPulado, Progresso, REGRA_DE_CARACTERES, TAMANHOS_GPT2,
                   cientifico, contar, de_caracteres, dizer, figuras, inteiro, largura, num, pct,
                   quebrar, token, uma_thread)
from comum.console import caixa_tabela, console


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_formas(licao):
    d, h, n = 768, 12, 5
    bloco = Bloco(d, h).eval()
    x = torch.randn(1, n, d)                               # (B, T, C)
    dizer(f"Bloco(d={d}, h={h}); {n} tokens entram. Formas sem o lote B = 1:\n")
    with torch.no_grad():
        etapas = []
        a = bloco.ln_1(x)
        etapas.append(("x", x, "guarda a cópia"))
        etapas.append(("  ln_1", a, ""))
        a = bloco.attn(a)
        etapas.append(("  attn", a, "os tokens conversam"))
        x1 = x + a
        etapas.append(("x = x + attn(ln_1(x))", x1, "<- soma"))
        m = bloco.ln_2(x1)
        etapas.append(("  ln_2", m, ""))
        m = bloco.mlp.c_fc(m)
        etapas.append(("  c_fc", m, "<- expande 4x"))
        m = bloco.mlp.gelu(m)
        etapas.append(("  GELU", m, "<- não linearidade"))
        m = bloco.mlp.c_proj(m)
        etapas.append(("  c_proj", m, "<- contrai"))
        x2 = x1 + m
        etapas.append(("x = x + mlp(ln_2(x))", x2, "<- soma"))
        for nome, t, nota in etapas:
            forma = f"({', '.join(str(s) for s in t.shape[1:])})"
            dizer(f"  {nome:<24}{forma:<12}{nota}")
        igual = licao.verificar(torch.allclose(bloco(x), x2), "passo a passo = bloco(x)")
    dizer(f"\nForma de entrada {tuple(x.shape)} = forma de saída {tuple(x2.shape)}.")
    dizer(f"Passo a passo = bloco(x)? {'sim' if igual else 'NÃO'}.")
    dizer("Como a forma não muda, dá para empilhar 12, 24, 36 ou 48 blocos.")


# ============================================================ experimento 2
def norma_grad(modulo) -> float:
    return math.sqrt(sum(float(p.grad.pow(2).sum()) for p in modulo.parameters()
                         if p.grad is not None))


def nova_pilha(pre_ln, semente, camadas=40, d=32, h=4, inicializacao="pytorch"):
    torch.manual_seed(semente)
    return Pilha(camadas, d, h, vocab=16, posicoes=12, pre_ln=pre_ln,
                 inicializacao=inicializacao)


# Os limiares dos veredictos: as frases do resumo se escolhem por eles.
COLAPSO = 100    # queda do gradiente da camada 1 (início ÷ fim) que chamamos de colapso
MARGEM = 0.1     # perda a menos disto de ln 16 conta como "no acaso"
ACASO = math.log(16)  # perda de chutar ao acaso entre 16 tokens


def treinar_pilha(pre_ln, semente, passos=PASSOS, camadas=40, d=32, h=4, lr=TAXA, barra=None,
                  modelo=None, aquecimento=0, inicializacao="pytorch"):
    """Treina (sem aquecimento, se aquecimento=0); devolve (perfil no início, grad. da
    camada 1, perdas). Com aquecimento=N, a taxa sobe de lr/N a lr nos N primeiros passos."""
    if modelo is None:
        modelo = nova_pilha(pre_ln, semente, camadas, d, h, inicializacao)
    otimizador = Adam(modelo.parameters(), lr=lr)
    gerador = torch.Generator().manual_seed(semente + 1000)
    perfil, grad1, perdas = [], [], []
    for passo in range(passos + 1):
        ids, alvo = lote_token_anterior(gerador)
        perda = F.cross_entropy(modelo(ids).flatten(0, 1), alvo.flatten())
        otimizador.zero_grad()
        perda.backward()
        if passo == 0:
            perfil = [norma_grad(b) for b in modelo.h]
        grad1.append(norma_grad(modelo.h[0]))
        perdas.append(perda.item())
        if passo < passos:
            if aquecimento:  # o que o exercício 2 escreve, com 10 no lugar de aquecimento
                otimizador.lr = lr * min(1, (passo + 1) / aquecimento)
            otimizador.step()
        if barra:
            barra.avancar()
    return perfil, grad1, perdas


def treinar_juntas(tarefas):
    """treinar_pilha(**kw) para cada kw de `tarefas`, dois treinos ao mesmo tempo
    (comum.em_paralelo); os resultados, na ordem das tarefas. Os pesos são sorteados
    aqui, antes, na thread principal (nova_pilha semeia o sorteio): cada thread só
    treina, com seus pesos e seu gerador de lotes, e dá bit a bit o que daria sozinha."""
    from comum import em_paralelo

    for kw in tarefas:
        kw.setdefault("modelo", nova_pilha(kw["pre_ln"], kw["semente"], kw.get("camadas", 40),
                                           inicializacao=kw.get("inicializacao", "pytorch")))
    return em_paralelo([lambda kw=kw: treinar_pilha(**kw) for kw in tarefas])


def treinar_as_duas(semente, barra, passos=PASSOS, lr=TAXA, aquecimento=0,
                    inicializacao="pytorch"):
    """Pre-LN e Post-LN, cada uma com seus pesos e seu gerador de lotes, ao mesmo tempo."""
    return tuple(treinar_juntas([dict(pre_ln=pre_ln, semente=semente, passos=passos, lr=lr,
                                      barra=barra, aquecimento=aquecimento,
                                      inicializacao=inicializacao)
                                 for pre_ln in (True, False)]))


def quedas(grad1):
    """Quanto o gradiente da camada 1 caiu: (início ÷ último passo, início ÷ menor valor)."""
    return grad1[0] / grad1[-1], grad1[0] / min(grad1)


def taxa_legivel(x):
    """3e-3, 1e-3, 1,5e-3: os algarismos que a taxa tem, nem mais nem menos."""
    casas = next((c for c in range(6) if float(f"{x:.{c}e}") == x), 6)
    return cientifico(x, casas)


def vezes(x):
    """Fator legível: 3,1x, 15,2x, 5,7e6x."""
    return f"{cientifico(x, 1)}x" if x >= 1000 else f"{num(x, 1)}x"


def frase_gradiente(nome, grad1):
    """O veredicto sobre o gradiente da camada 1, escolhido pelo limiar COLAPSO."""
    if not all(math.isfinite(g) and g > 0 for g in grad1):
        return f"{nome}: o gradiente da camada 1 virou zero, NaN ou infinito: o treino divergiu."
    fim, pior = quedas(grad1)
    passos = len(grad1) - 1
    if fim >= COLAPSO:
        return (f"{nome}: em {passos} passos, o gradiente da camada 1 caiu {vezes(fim)} "
                f"(limiar: {COLAPSO}x):\ncolapsou; a primeira camada parou de aprender.")
    if pior >= COLAPSO:
        no_fim = (f"{vezes(fim)} abaixo do início" if fim >= 1 else
                  f"{vezes(1 / fim)} acima do início")
        return (f"{nome}: o gradiente da camada 1 chegou a cair {vezes(pior)}, mas voltou\n"
                f"(no passo {passos}, {no_fim}): não ficou colapsado.")
    if pior >= 2:
        return (f"{nome}: o gradiente da camada 1 caiu no máximo {vezes(pior)} "
                f"(limiar: {COLAPSO}x):\nencolheu, mas não colapsou.")
    return (f"{nome}: o gradiente da camada 1 não encolheu (caiu no máximo {vezes(pior)}):\n"
            "nada de colapso.")


def frase_perda(perdas):
    """O veredicto sobre a perda, comparada com o acaso (ln 16) e a margem MARGEM."""
    fim = perdas[-1]
    acaso = f"ln 16 = {num(ACASO, 2)}"
    if not math.isfinite(fim):
        return "A perda virou NaN ou infinito: o treino divergiu."
    if fim <= ACASO - MARGEM:
        return (f"A perda foi de {num(perdas[0], 2)} a {num(fim, 2)}, {num(ACASO - fim, 2)} "
                f"abaixo do acaso ({acaso}):\na rede está aprendendo.")
    if fim < ACASO + MARGEM:
        return (f"A perda terminou em {num(fim, 2)}, no acaso ({acaso}, margem de "
                f"{num(MARGEM, 2)}):\nainda não dá para dizer que a rede aprende.")
    return (f"A perda terminou em {num(fim, 2)}, acima do acaso ({acaso}): pior que "
            "chutar.")


def frase_inicio(razao):
    """Na camada 1, no início: Post/Pre da mesma ordem (entre 1/3 e 3) é "nada sumiu"."""
    texto = f"No início, na camada 1, Post/Pre = {num(razao, 2)}"
    if 1 / 3 < razao < 3:
        return texto + ": mesma ordem, nada sumiu."
    return texto + (": o Post-LN já começa com muito menos." if razao <= 1 / 3 else
                    ": o Post-LN já começa com muito mais.")


def frase_profundidade(razao, L1, L2):
    """Como o gradiente do último bloco muda de L1 para L2 blocos, contra 1/raiz(L)."""
    teoria = math.sqrt(L1 / L2)
    if razao >= 1:
        return "não encolhe."
    if razao > 1.25 * teoria:
        return "encolhe, mais devagar que 1/raiz(L)."
    if razao >= 0.8 * teoria:
        return "encolhe como 1/raiz(L)."
    return "encolhe mais depressa que 1/raiz(L)."


@LICAO.experimento(2)
def exp_pre_post(licao):
    semente, passos, taxa = licao.args.semente, licao.args.passos, licao.args.taxa
    aquecimento, inicio = licao.args.aquecimento, licao.args.inicializacao
    com_aquecimento = (f"aquecimento de {aquecimento} passo{'s' if aquecimento > 1 else ''}"
                       if aquecimento else "SEM aquecimento")
    dizer("40 blocos, d = 32, 4 cabeças, FFN 128, GELU, causal; tarefa: prever o\n"
          "token anterior (vocabulário 16, 12 posições, lote 16). Perda: entropia\n"
          f"cruzada pela cabeça de saída. Adam, taxa {taxa_legivel(taxa)}, {com_aquecimento};\n"
          f"{passos} passos de treino"
          + ("; pesos iniciais do GPT-2 (exercício 3)" if inicio == "gpt2" else "") + ".\n")
    # tensores minúsculos: mais threads de conta só atrapalham
    with uma_thread(), Progresso(2 * (passos + 1) + 2, "treinando Pre-LN e Post-LN") as barra:
        comum = dict(semente=semente, inicializacao=inicio, barra=barra)
        pre, pos, raso_pre, raso_pos = treinar_juntas([
            dict(pre_ln=True, passos=passos, lr=taxa, aquecimento=aquecimento, **comum),
            dict(pre_ln=False, passos=passos, lr=taxa, aquecimento=aquecimento, **comum),
            # a mesma inicialização com 10 blocos: o gradiente do último bloco muda com L?
            dict(pre_ln=True, passos=0, camadas=10, **comum),
            dict(pre_ln=False, passos=0, camadas=10, **comum)])
        raso = {True: raso_pre[0][-1], False: raso_pos[0][-1]}
    camadas = len(pre[0])
    dizer("No início (passo 0), norma do gradiente de cada bloco:")
    dizer(f"  {'bloco':>6} {'Pre-LN':>10} {'Post-LN':>10} {'Post/Pre':>9}")
    for i in (0, 1, 9, 19, 29, camadas - 1):
        dizer(f"  {i + 1:>6} {num(pre[0][i], 4):>10} {num(pos[0][i], 4):>10} "
              f"{num(pos[0][i] / pre[0][i], 2):>9}")
    dizer("\n" + frase_inicio(pos[0][0] / pre[0][0]))
    dizer(f"Na camada {camadas}, o Post-LN recebe {num(pos[0][-1] / pre[0][-1], 1)}x "
          "o gradiente do Pre-LN.")
    dizer(f"\nMais blocos, no início: gradiente do último bloco com L = 10 e L = {camadas}\n"
          f"(se encolhesse como 1/raiz(L), ficaria x{num(math.sqrt(10 / camadas), 2)}):")
    for nome, pre_ln, perfil in (("Pre-LN", True, pre[0]), ("Post-LN", False, pos[0])):
        razao = perfil[-1] / raso[pre_ln]
        dizer(f"  {nome:<8} {num(raso[pre_ln], 4)} -> {num(perfil[-1], 4)}  (x{num(razao, 2)}): "
              + frase_profundidade(razao, 10, camadas))
    dizer()
    licao.pausa("o treino, passo a passo: gradiente da camada 1 e perda")
    dizer("Treinando: norma do gradiente que chega à camada 1, e a perda:")
    dizer(f"  {'passo':>6} {'Pre-LN':>10} {'perda':>7}   {'Post-LN':>10} {'perda':>7}")
    for p in range(0, passos + 1, max(1, passos // 10)):
        dizer(f"  {p:>6} {cientifico(pre[1][p]):>10} {num(pre[2][p], 2):>7}   "
              f"{cientifico(pos[1][p]):>10} {num(pos[2][p], 2):>7}")
    for nome, (_, g, perdas) in (("Post-LN", pos), ("Pre-LN", pre)):
        dizer()
        dizer(frase_gradiente(nome, g))
        dizer(frase_perda(perdas))
    dizer()
    licao.pausa("o gráfico do gradiente da camada 1, passo a passo")
    xs = list(range(passos + 1))
    dizer(figuras.grafico_ascii({"Pre-LN": pre[1], "Post-LN": pos[1]}, xs, log_y=True,
                               altura=12, rotulo_y="gradiente da camada 1 (escala log)",
                               rotulo_x="passo de treino"))
    if not licao.quer_figuras:
        return
    fig, (ax1, ax2) = figuras.figura(10, 4, ncols=2, margens=(0.8, 0.15, 0.55, 0.35),
                                    ajuste={"wspace": 0.25})
    ax1.plot(range(1, camadas + 1), pre[0], label="Pre-LN")
    ax1.plot(range(1, camadas + 1), pos[0], label="Post-LN")
    ax1.set(title="No início: gradiente por bloco", xlabel="bloco", ylabel="norma do gradiente")
    ax2.plot(xs, pre[1], label="Pre-LN")
    ax2.plot(xs, pos[1], label="Post-LN")
    ax2.set(title=f"Treinando {'com' if aquecimento else 'sem'} aquecimento: bloco 1",
            xlabel="passo", ylabel="norma do gradiente")
    figuras.escala_log(ax1, ax2)
    figuras.eixos_inteiros(ax1, ax2)
    for ax in (ax1, ax2):
        ax.legend()
        ax.grid(alpha=0.3)
    licao.salvar_figura(fig, "05_pre_post_ln.png")


# ============================================================ experimento 3
TEXTOS = [
    "A capital da França é Paris, e a do Brasil é Brasília.",
    "The Eiffel Tower is in the city of Paris, in France.",
    "O gato subiu no telhado porque a chuva estava chegando.",
]
# Num modelo de caracteres (o da lição 10, treinado nas apostilas): só português, e cada
# texto cabe nas 64 posições dele (um token por caractere).
TEXTOS_CARACTERES = [TEXTOS[0], "A atenção move informação entre posições; o MLP pensa.",
                     TEXTOS[2]]


def textos(tokenizador, gpt2, caracteres):
    """Os textos de um experimento: os do GPT-2, ou os de um modelo de caracteres."""
    return caracteres if de_caracteres(tokenizador) else gpt2


def normas_residuais(modelo, tokenizador, texto):
    """Norma do fluxo residual por posição: embedding e saída de cada bloco (L+1, T)."""
    saidas = []
    guardar = lambda _m, _e, s: saidas.append(s[0] if isinstance(s, tuple) else s)  # noqa: E731
    ganchos = [b.register_forward_hook(guardar) for b in modelo.transformer.h]
    try:
        ids = tokenizador(texto, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            estados = modelo(ids, output_hidden_states=True).hidden_states
    finally:
        for g in ganchos:
            g.remove()
    # estados[0] = wte + wpe; o último estado do transformers já passou por ln_f,
    # por isso a saída de cada bloco vem dos ganchos, antes de ln_f.
    camadas = [estados[0]] + saidas                       # L+1 x (1, T, C)
    return torch.stack([c[0].norm(dim=-1) for c in camadas])  # (L+1, T)




@LICAO.experimento(3)
def exp_norma_residual(licao):
    modelo, tokenizador = licao.gpt2()
    lista = textos(tokenizador, TEXTOS, TEXTOS_CARACTERES)
    normas = [normas_residuais(modelo, tokenizador, t) for t in lista]
    demais = torch.stack([n[:, 1:].mean(dim=1) for n in normas]).mean(0)  # (L+1,)
    pos0 = torch.stack([n[:, 0] for n in normas]).mean(0)                 # (L+1,)
    L = len(demais) - 1
    if lista is TEXTOS_CARACTERES:
        dizer(quebrar(f"Um modelo de caracteres ({REGRA_DE_CARACTERES}): os textos são "
                      "em português, um token por caractere."))
    dizer(f"{len(lista)} textos; média da norma ||x|| nas posições 1 em diante, e a\n"
          "posição 0 à parte (ela carrega uma norma enorme no GPT-2).\n")
    dizer(f"  {'camada':<10} {'posições >= 1':>14} {'fator':>7} {'posição 0':>11}")
    for i in range(L + 1):
        rotulo = "embedding" if i == 0 else f"bloco {i}"
        fator = "" if i == 0 else num(float(demais[i] / demais[i - 1]), 3)
        dizer(f"  {rotulo:<10} {num(float(demais[i]), 1):>14} {fator:>7} "
              f"{num(float(pos0[i]), 1):>11}")
    medio = float(demais[-1] / demais[0]) ** (1 / L)
    dizer(f"\nCrescimento médio por bloco (posições >= 1): {num(medio, 3)}x;\n"
          f"do embedding ao bloco {L}: {num(float(demais[-1] / demais[0]), 1)}x.")
    licao.pausa("o gráfico da norma, camada a camada")
    xs = list(range(L + 1))
    dizer(figuras.grafico_ascii({"posições >= 1": demais.tolist(), "posição 0": pos0.tolist()},
                               xs, log_y=True, altura=10, rotulo_y="norma (escala log)",
                               rotulo_x="camada (0 = embedding)"))
    if not licao.quer_figuras:
        return
    fig, ax = figuras.figura(margens=(0.75, 0.15, 0.55, 0.35))
    ax.plot(xs, demais, "o-", label="posições >= 1 (média)")
    ax.plot(xs, pos0, "s--", label="posição 0")
    figuras.escala_log(ax)
    ax.set(xlabel="camada (0 = embedding)", ylabel="norma do fluxo residual",
           title=f"Fluxo residual no {licao.modelo_curto}")
    figuras.eixos_inteiros(ax)
    ax.legend()
    ax.grid(alpha=0.3)
    licao.salvar_figura(fig, "05_norma_residual.png")



# ============================================================ experimento 4
LENTE = ["A capital da França é", "The Eiffel Tower is in the city of"]
LENTE_CARACTERES = ["A capital da França é", "A atenção é uma média"]   # em português


def lente(modelo, ids):
    """A probabilidade de cada próximo token, lida em cada camada e posição: (L+1, T, V)."""
    with torch.no_grad():
        saida = modelo(ids, output_hidden_states=True)
        # hidden_states: L+1 x (1, T, C). O último já passou por ln_f: não repetir.
        estados = torch.cat(saida.hidden_states[:-1])      # (L, T, C)
        lidos = modelo.lm_head(modelo.transformer.ln_f(estados))  # (L, T, V)
        logits = torch.cat([lidos, saida.logits])          # (L+1, T, V): a última é o modelo
        return logits.softmax(-1)                          # (L+1, T, V)


def ln_f_duas_vezes(modelo, ids):
    """Em quantas das T posições o token mais provável muda se o último estado, que já
    passou pelo ln_f, passar por ele de novo: (mudaram, T). Por isso a lente usa, na última
    linha, os logits do próprio modelo."""
    with torch.no_grad():
        saida = modelo(ids, output_hidden_states=True)
        de_novo = modelo.lm_head(modelo.transformer.ln_f(saida.hidden_states[-1]))  # (1, T, V)
        mudaram = (de_novo.argmax(-1) != saida.logits.argmax(-1)).sum()
        return int(mudaram), ids.shape[1]


def frase_ln_f_duas_vezes(mudaram, total):
    """O veredito do ln_f aplicado duas vezes, pela contagem de ln_f_duas_vezes."""
    inicio = "Com o ln_f aplicado duas vezes no último estado, "
    if mudaram:
        return (inicio + f"o token mais provável mudaria em {mudaram} de {total} posições "
                f"({pct(mudaram / total, 0)}) nestas frases: por isso a última linha é a "
                "saída do modelo.")
    return (inicio + f"nenhuma das {total} posições destas frases mudaria de token mais "
            "provável (as probabilidades, sim): a última linha é a saída do modelo.")


def logit_lens(modelo, ids):
    """Token mais provável (e sua probabilidade) em cada camada e posição: (L+1, T)."""
    p, i = lente(modelo, ids).max(-1)
    return p, i


def tabelas_lente(titulo, entrada, linhas, largura):
    """A tabela da lente em partes de colunas consecutivas, tantas quantas forem
    precisas para cada uma caber em `largura` colunas sem cortar nenhum token.

    entrada: o token de cada posição (cabeçalhos); linhas: [(rótulo, [token por posição])].
    """
    from rich.measure import Measurement
    from rich.table import Table

    terminal = console()
    sem_limite = terminal.options.update_width(10_000)  # a largura que a tabela pede
    T = len(entrada)
    for partes in range(1, T + 1):
        tamanho = math.ceil(T / partes)
        tabelas = []
        for inicio in range(0, T, tamanho):
            fim = min(inicio + tamanho, T)
            nome = titulo if tamanho >= T else f"{titulo} (posições {inicio + 1} a {fim} de {T})"
            tabela = Table(box=caixa_tabela(), pad_edge=False)
            tabela.nome = nome  # impresso à parte, quebrado na largura do terminal
            tabela.parte = f"posições {inicio + 1} a {fim} de {T}"  # o aviso da pausa
            tabela.add_column("#", no_wrap=True, min_width=3)
            for t in entrada[inicio:fim]:
                tabela.add_column(t, no_wrap=True)
            for rotulo, tokens in linhas:
                tabela.add_row(rotulo, *tokens[inicio:fim])
            tabelas.append(tabela)
        if all(Measurement.get(terminal, sem_limite, t).maximum <= largura for t in tabelas):
            return tabelas
    return tabelas  # nem uma coluna por parte cabe: o terminal é estreito demais


def frase_da_aposta(texto, final, p):
    """'Depois de "..." o modelo aposta em "..." (12,3 %).' na largura do terminal, sem
    separar o número do '%' (o espaço entre eles não quebra a linha)."""
    frase = f"Depois de \"{texto}\" o modelo aposta em \"{final}\" ({pct(p)})."
    return quebrar(frase.replace(" %", "\u00a0%")).replace("\u00a0", " ")


@LICAO.experimento(4)
def exp_logit_lens(licao):
    modelo, tokenizador = licao.gpt2()
    frases = textos(tokenizador, LENTE, LENTE_CARACTERES)
    dizer("Cada linha lê o fluxo residual depois daquela camada com ln_f + desembedding;\n"
          "a última é a saída do próprio modelo. Célula: o próximo token mais provável\n"
          "segundo aquela camada, naquela posição.\n")
    if frases is LENTE_CARACTERES:
        dizer(quebrar(f"Um modelo de caracteres ({REGRA_DE_CARACTERES}): frases em "
                      "português, e cada célula é o próximo caractere (· = espaço).") + "\n")
    lidos = []
    for texto in frases:
        if lidos:  # cada frase numa tela limpa
            licao.pausa(f"\"{texto}\"")
        ids = tokenizador(texto, return_tensors="pt")["input_ids"]
        p, i = logit_lens(modelo, ids)
        lidos.append((texto, ids, p, i))
        entrada = [token(tokenizador, t, 7, marca=True) for t in ids[0]]   # 'capit…'
        L = p.shape[0] - 1
        linhas = [("emb" if c == 0 else str(c),
                   [token(tokenizador, x, 7, marca=True) for x in i[c]]) for c in range(L + 1)]
        for j, tabela in enumerate(tabelas_lente(f"\"{texto}\"", entrada, linhas,
                                                 largura())):
            if j:  # a parte seguinte da mesma frase, numa tela limpa (aviso curto, inteiro)
                licao.pausa(f"a mesma frase, {tabela.parte}")
            dizer(quebrar(tabela.nome + ":"))
            console().print(tabela)
        final = token(tokenizador, i[L, -1], 20, None if frases is LENTE_CARACTERES else " ")
        dizer(frase_da_aposta(texto, final, float(p[L, -1])) + "\n")
    duas = [ln_f_duas_vezes(modelo, ids) for _, ids, _, _ in lidos]
    mudaram, total = sum(m for m, _ in duas), sum(t for _, t in duas)
    dizer(quebrar(frase_ln_f_duas_vezes(mudaram, total)) + "\n")
    if not licao.quer_figuras:
        return
    # Sem layout automático: com centenas de textos ele custaria meio segundo a mais.
    espaco = None if frases is LENTE_CARACTERES else " "      # um espaço sozinho: ·
    fig, eixos = figuras.figura(11, 4.5 * len(frases), nrows=len(frases), layout=None)
    fig.subplots_adjust(left=0.06, right=0.99, top=0.96, bottom=0.05, hspace=0.25)
    for (texto, ids, p, i), ax in zip(lidos, eixos):
        L = p.shape[0] - 1
        imagem = ax.imshow(p.numpy(), aspect="auto", cmap="viridis", vmin=0, vmax=1,
                           origin="lower")
        fig.colorbar(imagem, ax=ax, label="probabilidade do token")
        for c in range(L + 1):
            for t in range(p.shape[1]):
                ax.text(t, c, token(tokenizador, i[c, t], 7, espaco, marca="…"), ha="center",
                        va="center", fontsize=10, color="white" if p[c, t] < 0.5 else "black")
        ax.set_xticks(range(ids.shape[1]), [token(tokenizador, t, 12, espaco) for t in ids[0]])
        ax.set_yticks(range(L + 1), ["emb"] + [str(c) for c in range(1, L + 1)])
        ax.set(ylabel="camada", title=f"logit lens no {licao.modelo_curto}: \"{texto}\"")
    licao.salvar_figura(fig, "05_logit_lens.png")


# ============================================================ experimento 5
@LICAO.experimento(5)
def exp_parametros(licao):
    try:
        modelo, _ = licao.gpt2()
        origem = f"do modelo carregado ({licao.args.modelo})"
    except ExperimentoPulado as motivo:
        from transformers import GPT2Config, GPT2LMHeadModel

        nome = licao.args.modelo if licao.args.modelo in TAMANHOS_GPT2 else "gpt2"
        camadas, d, h = TAMANHOS_GPT2[nome]
        with torch.device("meta"):                       # só as formas, sem memória
            modelo = GPT2LMHeadModel(GPT2Config(n_layer=camadas, n_embd=d, n_head=h))
        origem = f"da configuração do {nome} (sem baixar pesos)"
        dizer(quebrar(f"Sem o modelo ({str(motivo).splitlines()[0]})"))
    cfg = modelo.config
    d, L = cfg.n_embd, cfg.n_layer
    bloco = modelo.transformer.h[0]
    dizer(quebrar(f"Contagem {origem}: d = {d}, {L} blocos.") + "\n")
    pecas = [("attn.c_attn", bloco.attn.c_attn, "atenção"),
             ("attn.c_proj", bloco.attn.c_proj, "atenção"),
             ("mlp.c_fc", bloco.mlp.c_fc, "MLP"),
             ("mlp.c_proj", bloco.mlp.c_proj, "MLP"),
             ("ln_1", bloco.ln_1, "normas"), ("ln_2", bloco.ln_2, "normas")]
    dizer(f"  {'peça':<12} {'forma do peso':<14} {'pesos':>11} {'vieses':>7} {'total':>11}")
    grupos = {}
    for nome, m, grupo in pecas:
        w, b = m.weight.numel(), m.bias.numel()
        forma = " x ".join(str(s) for s in m.weight.shape)
        dizer(f"  {nome:<12} {forma:<14} {inteiro(w):>11} {inteiro(b):>7} {inteiro(w + b):>11}")
        grupos[grupo] = grupos.get(grupo, 0) + w + b
    total = contar(bloco)
    dizer(f"  {'bloco':<12} {'':<14} {'':>11} {'':>7} {inteiro(total):>11}\n")
    for grupo, n in grupos.items():
        dizer(f"  {grupo:<8} {inteiro(n):>11}  {pct(n / total):>7}")
    formula = 12 * d * d + 13 * d
    confere = licao.verificar(formula == total, "12d² + 13d = a contagem do bloco")
    dizer(f"\nFórmula fechada 12d² + 13d com d = {d}: {inteiro(formula)} "
          f"({'confere' if confere else 'NÃO confere'} com a contagem).")
    dizer(f"O MLP leva {pct(grupos['MLP'] / total)} do bloco: cerca de dois terços.\n")
    licao.pausa("o modelo inteiro: embeddings, blocos e ln_f")
    t = modelo.transformer
    unicos = contar(modelo)
    dobrado = sum(v.numel() for v in modelo.state_dict().values())
    dizer(f"  wte (vocabulário x d)  {inteiro(contar(t.wte)):>13}")
    dizer(f"  wpe (posições x d)     {inteiro(contar(t.wpe)):>13}")
    dizer(f"  {L} blocos              {inteiro(L * total):>13}")
    dizer(f"  ln_f                   {inteiro(contar(t.ln_f)):>13}")
    dizer(f"  modelo inteiro         {inteiro(unicos):>13}")
    amarrada = licao.verificar(modelo.lm_head.weight is t.wte.weight, "lm_head amarrada ao wte")
    dizer(f"\nA cabeça de saída (lm_head) é o próprio wte (pesos amarrados): "
          f"{'sim' if amarrada else 'NÃO'}.\n"
          f"Somar o state_dict() conta esse peso duas vezes: {inteiro(dobrado)}.")


# ============================================================ experimento 6
def gelu_exata(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


@LICAO.experimento(6)
def exp_gelu(licao):
    x = torch.linspace(-3, 3, 241, dtype=torch.float64)
    dizer(figuras.grafico_ascii({"GELU": gelu_exata(x).tolist(), "ReLU": F.relu(x).tolist()},
                               x.tolist(), altura=14, rotulo_y="f(x)", rotulo_x="x"))
    licao.pausa("a tabela perto de zero e a GELU com tanh do GPT-2")
    dizer("\nPerto de zero (onde as duas diferem):")
    dizer(f"  {'x':>6} {'ReLU':>8} {'GELU':>8}")
    for v in (-2.0, -1.0, -0.75, -0.5, 0.0, 0.5, 1.0, 2.0):
        t = torch.tensor(v, dtype=torch.float64)
        dizer(f"  {num(v, 2):>6} {num(max(v, 0.0), 4):>8} {num(float(gelu_exata(t)), 4):>8}")
    largo = torch.linspace(-6, 6, 1_200_001, dtype=torch.float64)
    dif = (gelu_exata(largo) - gelu_tanh(largo)).abs()
    onde = float(largo[dif.argmax()])
    dizer(f"\nGELU exata x forma com tanh (a do GPT-2) em [-6, 6]: maior diferença\n"
          f"{cientifico(float(dif.max()))} em x = {num(onde, 2)} "
          f"(e em x = {num(-onde, 2)}, por simetria da diferença).")
    # o mínimo está em [-1; -0,5] (a tabela acima): a mesma grade de passo 1e-6, só ali
    minimo = torch.linspace(-1, -0.5, 500_001, dtype=torch.float64)
    g = gelu_exata(minimo)
    dizer(f"Mínimo da GELU: {num(float(g.min()), 5)} em x = {num(float(minimo[g.argmin()]), 4)}."
          f"  GELU(1) = {num(float(gelu_exata(torch.tensor(1.0, dtype=torch.float64))), 4)}.")
    zero = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    gelu_exata(zero).backward()
    dizer(f"Inclinação em 0: GELU {num(float(zero.grad), 2)}; a ReLU tem um bico ali\n"
          "(0 à esquerda, 1 à direita).")
    dizer("Para x < 0 a ReLU tem gradiente 0 em toda parte (neurônio morto); a GELU só\n"
          "tem derivada zero num ponto, o seu mínimo.")
    if not licao.quer_figuras:
        return
    fig, (ax1, ax2) = figuras.figura(10, 4, ncols=2, margens=(0.8, 0.15, 0.55, 0.35),
                                    ajuste={"wspace": 0.3})
    ax1.plot(x, gelu_exata(x), label="GELU")
    ax1.plot(x, F.relu(x), "--", label="ReLU")
    ax1.set(title="GELU contra ReLU", xlabel="x", ylabel="f(x)")
    ax2.plot(largo[::1000], dif[::1000])
    ax2.set(title="|GELU exata - GELU tanh|", xlabel="x", ylabel="diferença")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    ax1.legend()
    licao.salvar_figura(fig, "05_gelu_relu.png")


# ============================================================ a página (--html)
# A logit lens do experimento 4 num arquivo que abre com um duplo clique (comum/paginas.py): para
# cada frase, a leitura de cada camada em cada posição (lente(), a mesma conta da tabela), com
# os 5 tokens mais prováveis de cada célula e as probabilidades deles; a página só os mostra.
# tests/test_05_paginas.py confere contra os hidden_states do transformers e contra o que o
# experimento 4 imprime. O HTML, o CSS e o JavaScript moram em lab/html/05_block.*.
TOP = 5   # os tokens de cada célula que a página mostra


def pagina() -> str:
    """A página da lição (--html): a grade camadas x posições de cada frase do experimento 4
    e, para a célula apontada (ou alcançada com Tab), os 5 tokens mais prováveis."""
    modelo, tokenizador = LICAO.gpt2()
    caracteres = de_caracteres(tokenizador)
    nomes, frases = {}, []
    for texto in textos(tokenizador, LENTE, LENTE_CARACTERES):
        ids = tokenizador(texto, return_tensors="pt")["input_ids"]    # (1, T)
        p, i = lente(modelo, ids).topk(TOP, dim=-1)                   # (L+1, T, TOP) cada
        for t in [*ids[0].tolist(), *i.flatten().tolist()]:
            nomes.setdefault(str(t), token(tokenizador, t, 12, "·"))
        final = token(tokenizador, i[-1, -1, 0], 20, "·" if caracteres else " ")
        # top[camada][posição]: [[id, probabilidade], ...], do mais provável ao quinto
        top = [[list(map(list, zip(ia, pa))) for ia, pa in zip(ic, pc)]
               for ic, pc in zip(i.tolist(), p.tolist())]
        frases.append({"texto": texto, "entrada": ids[0].tolist(), "final": final, "top": top})
    dados = {"modelo": LICAO.modelo_curto, "caracteres": caracteres, "tokens": nomes,
             "frases": frases}
    corpo, script, estilo = (paginas.fonte(f"05_block.{e}") for e in ("html", "js", "css"))
    return paginas.documento(f"Lição {LICAO.numero} · A logit lens", corpo, script, dados,
                             estilo, "O palpite de cada camada do GPT-2, posição a posição")


if __name__ == "__main__":
    if paginas.pedida(LICAO.args):                  # --html [PASTA] / --abrir: só a página
        sys.exit(paginas.gravar(LICAO, pagina, "05_block.html"))
    sys.exit(LICAO.rodar())
