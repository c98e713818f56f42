"""Lição 09 · Leis de escala (leia junto: apostilas/09_scaling.md)
1. De onde vem o 6 de C = 6ND, contando FLOPs
2. Uma régua só: GPT-3, Gopher, Chinchilla, Llama 3 8B
3. Kaplan contra Chinchilla: como repartir o orçamento
4. A perda ajustada L(N, D) e as curvas de iso-FLOP
5. Precificar a inferência também
6. Dados finitos e compute na inferência"""
import math

from comum import Licao, importar_licao, opcao, paginas, real_entre

LICAO = Licao.da_docstring(__doc__, opcoes=[
    opcao("--tokens-inferencia", real_entre(0, 1e30, "--tokens-inferencia 1e13", sufixos=True),
          1e13, "tokens servidos na vida útil, no experimento 5 (padrão: 1e13)", "TOKENS"),
    opcao("--seu-modelo", real_entre(0, 1e30, "--seu-modelo 1B 100B", False, sufixos=True),
          None, "no experimento 2, põe na régua um modelo seu: N parâmetros e D tokens de "
          "treino (ex.: --seu-modelo 1e9 100e9 ou 1B 100B)", ("N", "D"), nargs=2),
    opcao("--interativo", "flag", None, "no experimento 5, pergunta outros volumes de "
          "inferência (Enter vazio encerra)"),
    *paginas.opcoes(),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch


# ============================================================ a peça: contar FLOPs (exp. 1)
def contar_flops(funcao) -> int:
    """FLOPs que o PyTorch executa dentro de funcao(), contados pelo FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as contador:
        funcao()
    return contador.get_total_flops()


def flops_ida_e_volta(modelo, T: int) -> tuple[int, int]:
    """(FLOPs do forward, FLOPs do backward) de um passo de treino numa sequência de T
    tokens, contados em separado. Nenhum .grad do modelo muda (autograd.grad, não backward)."""
    from torch.utils.flop_counter import FlopCounterMode

    ids = torch.zeros(1, T, dtype=torch.long, device=next(modelo.parameters()).device)  # (B, T)
    pesos = [p for p in modelo.parameters() if p.requires_grad]
    with FlopCounterMode(display=False) as ida:
        logits = modelo(ids)                                            # (B, T, V)
        perda = torch.nn.functional.cross_entropy(logits.flatten(0, 1),   # (B*T, V)
                                                  ids.flatten())          # (B*T,)
    with FlopCounterMode(display=False) as volta:
        torch.autograd.grad(perda, pesos, allow_unused=True)
    return ida.get_total_flops(), volta.get_total_flops()


def flops_por_token(modelo, T: int, treino: bool) -> float:
    """FLOPs por token numa sequência de T tokens: só o forward (servir) ou, com
    treino=True, forward + backward (treinar)."""
    if treino:
        return sum(flops_ida_e_volta(modelo, T)) / T
    ids = torch.zeros(1, T, dtype=torch.long, device=next(modelo.parameters()).device)  # (B, T)
    with torch.no_grad():
        return contar_flops(lambda: modelo(ids)) / T


def flops_bloco(d: int, T: int) -> int:
    """FLOPs do forward de um Bloco (da lição 05, tirado do GPT2 da 06) sobre T tokens."""
    with torch.device("meta"):                      # só as formas: nem memória nem tempo
        bloco = importar_licao("06_gpt2").GPT2(1, d, max(1, d // 64), vocab=1, posicoes=1).h[0]
        x = torch.zeros(1, T, d)                                        # (B, T, C)
    with torch.no_grad():
        return contar_flops(lambda: bloco(x))


# ------------------------------------------------ a régua (experimento 2)
def custo_treino(N: float, D: float) -> float:
    """FLOPs de treinar N parâmetros em D tokens: 6 por parâmetro e token (ida 2, volta 4)."""
    return 6 * N * D


def custo_inferencia(N: float, tokens: float = 1.0) -> float:
    """FLOPs de servir `tokens` tokens com N parâmetros: só a ida, 2 por parâmetro por token."""
    return 2 * N * tokens


def tokens_de_empate(N1: float, D1: float, N2: float, D2: float) -> float:
    """Tokens servidos a partir dos quais o modelo menor (N2, treinado mais: D2) custa, no
    total (treino + inferência), o mesmo que o maior (N1, D1)."""
    return (custo_treino(N2, D2) - custo_treino(N1, D1)) / (custo_inferencia(N1) -
                                                            custo_inferencia(N2))


# ------------------------------------------------ Kaplan e Chinchilla (experimentos 3 e 4)
class Ajuste:
    """L(N, D) = E + A / N^alfa + B / D^beta (a forma da abordagem 3 do Chinchilla)."""

    def __init__(self, nome, E, A, B, alfa, beta):
        self.nome, self.E, self.A, self.B, self.alfa, self.beta = nome, E, A, B, alfa, beta

    def perda(self, N, D):
        return self.E + self.A / N ** self.alfa + self.B / D ** self.beta

    def otimo(self, C):
        """(N, D) que minimizam L com 6ND = C: fórmula fechada (multiplicador de Lagrange)."""
        a = self.beta / (self.alfa + self.beta)
        G = (self.alfa * self.A / (self.beta * self.B)) ** (1 / (self.alfa + self.beta))
        N = G * (C / 6) ** a
        return N, C / (6 * N)


# Besiroglu, Erdil, Barnett e You (2024), "Chinchilla Scaling: A replication attempt".
REAJUSTE = Ajuste("reajuste de Besiroglu et al. 2024", 1.8172, 482.01, 2085.43, 0.3478, 0.3658)
# Hoffmann et al. (2022), equação 10: as constantes publicadas (não use; veja o exp. 4).
EQ10 = Ajuste("eq. 10 do artigo do Chinchilla", 1.69, 406.4, 410.7, 0.34, 0.28)

# Kaplan et al. (2020), tabela 6: N_opt = 1,3e9 x C_min^0,73 com C_min em PF-dias. C_min é o
# compute de um treino no lote crítico; um treino de verdade gasta C = 2 C_min (é assim que o
# apêndice do Chinchilla lê Kaplan: 4,68B em 1e21 FLOPs).
KAPLAN_NE, KAPLAN_EXPOENTE, PF_DIA = 1.3e9, 0.73, 1e15 * 86400


def otimo_kaplan(C):
    """N de Kaplan para o orçamento C (C_min = C/2); D = C / 6N, na mesma régua."""
    N = KAPLAN_NE * (C / 2 / PF_DIA) ** KAPLAN_EXPOENTE
    return N, C / (6 * N)


def secao_aurea(f, a, b, tol=1e-9):
    """Mínimo de uma f unimodal em [a, b], sem derivadas (busca pela seção áurea)."""
    r = (math.sqrt(5) - 1) / 2
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol * max(1.0, abs(a)):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - r * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + r * (b - a)
            fd = f(d)
    return (a + b) / 2


def otimo_por_busca(C, ajuste=REAJUSTE):
    """O mesmo ótimo do ajuste, achado numericamente ao longo da curva de iso-FLOP."""
    x = secao_aurea(lambda x: ajuste.perda(math.exp(x), C / (6 * math.exp(x))),
                    math.log(1e3), math.log(C / 6e3))
    return math.exp(x), C / (6 * math.exp(x))


# ------------------------------------------------ com a inferência na conta (experimento 5)
LLAMA3_8B = (8_030_261_248, 15e12)      # parâmetros exatos (lição 08) e tokens de treino


def perda_alvo(ajuste=REAJUSTE):
    """A qualidade fixa do experimento 5: a perda que o ajuste prevê para o Llama 3 8B."""
    return ajuste.perda(*LLAMA3_8B)


def n_minimo(alvo, ajuste=REAJUSTE):
    """Abaixo deste N, nem infinitos tokens levam a perda até o alvo."""
    return (ajuste.A / (alvo - ajuste.E)) ** (1 / ajuste.alfa)


def tokens_para_alvo(N, alvo, ajuste=REAJUSTE):
    """D de treino que leva um modelo de N parâmetros até a perda alvo (inf se não dá)."""
    resto = alvo - ajuste.E - ajuste.A / N ** ajuste.alfa
    return (ajuste.B / resto) ** (1 / ajuste.beta) if resto > 0 else math.inf


def custo_total(N, alvo, tokens_inferencia, ajuste=REAJUSTE):
    """6 N D_treino + 2 N D_inferência, com D_treino o que atinge o alvo."""
    return (custo_treino(N, tokens_para_alvo(N, alvo, ajuste))
            + custo_inferencia(N, tokens_inferencia))


def otimo_com_inferencia(alvo, tokens_inferencia, ajuste=REAJUSTE):
    """(N, D_treino) de menor custo total: sem fórmula fechada, seção áurea em log N."""
    a = math.log(n_minimo(alvo, ajuste)) + 1e-12
    x = secao_aurea(lambda x: math.log(custo_total(math.exp(x), alvo, tokens_inferencia,
                                                   ajuste)), a, math.log(1e15), tol=1e-12)
    return math.exp(x), tokens_para_alvo(math.exp(x), alvo, ajuste)


def demanda_que_torna_otimo(N, alvo, ajuste=REAJUSTE):
    """O volume de inferência em que N é o ótimo (derivada do custo total igual a zero)."""
    s = ajuste.A / N ** ajuste.alfa
    resto = alvo - ajuste.E - s
    return 3 * tokens_para_alvo(N, alvo, ajuste) * (ajuste.alfa * s / (ajuste.beta * resto) - 1)


# ------------------------------------------------ dados finitos (experimento 6)
R_ESTRELA = 15.0    # Muennighoff et al. 2023: R_D* ~ 15 repetições (16 épocas)


def dados_efetivos(unicos, epocas, r_estrela=R_ESTRELA):
    """Muennighoff et al. 2023: U tokens únicos vistos por E épocas valem
    D' = U + U R* (1 - e^(-R/R*)) tokens novos, com R = E - 1 repetições."""
    repeticoes = epocas - 1
    return unicos + unicos * r_estrela * (1 - math.exp(-repeticoes / r_estrela))


def cobertura_independente(p, k):
    """Chance de ao menos uma de k amostras acertar, se cada uma acertasse com p, sozinha."""
    return 1 - (1 - p) ** k


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["contar_flops", "flops_ida_e_volta", "flops_por_token", "flops_bloco", "custo_treino",
           "custo_inferencia", "tokens_de_empate", "Ajuste", "REAJUSTE", "EQ10", "otimo_kaplan",
           "custo_total", "otimo_com_inferencia", "dados_efetivos"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import argparse
import sys

from comum import Progresso, cientifico, contar, dizer, figuras, inteiro, limite, num, pct, quebrar
from comum.console import perguntar

L06 = importar_licao("06_gpt2")  # o GPT2 e a conta fechada dos parâmetros (12d² + 13d...)

MODELOS = [  # nome, ano, N (parâmetros), D (tokens de treino): os artigos de cada um
    ("GPT-3", 2020, 175e9, 300e9),
    ("Gopher", 2021, 280e9, 300e9),
    ("Chinchilla", 2022, 70e9, 1.4e12),
    ("Llama 3 8B", 2024, 8e9, 15e12),
]
# Chinchilla, tabela 3 (abordagem 1): parâmetros, FLOPs, tokens.
TABELA3 = [(400e6, 1.92e19, 8.0e9), (1e9, 1.21e20, 20.2e9), (10e9, 1.23e22, 205.1e9),
           (67e9, 5.76e23, 1.5e12), (175e9, 3.85e24, 3.7e12), (280e9, 9.90e24, 5.9e12),
           (1e12, 1.27e26, 21.2e12)]
ESTOQUE = 300e12    # Villalobos et al. 2024: texto humano público, estimativa central
MAXIMO_TOKENS = 1e30   # acima disto as contas de custo estouram o float (e nada serve tanto)


def razao(x: float) -> str:
    """Tokens por parâmetro com três algarismos: 0,014; 7,97; 22,9; 1.875."""
    if x >= 1e6:
        return cientifico(x)
    if x >= 100:
        return inteiro(round(x))
    return num(x, 1 if x >= 10 else 2 if x >= 1 else 3)


def grande(x: float) -> str:
    """175e9 -> '175B'; 1.4e12 -> '1,40T'; 4e8 -> '400M' (três algarismos)."""
    if x >= 1e15:
        return cientifico(x)
    for teto, sufixo in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if x >= teto:
            v = x / teto
            return f"{num(v, 2 if v < 10 else 1 if v < 100 else 0)}{sufixo}"
    return inteiro(x)


def _figura_dupla():
    """Dois painéis lado a lado, com margens fixas (o layout automático custa ~1 s aqui)."""
    return figuras.figura(11, 4.2, margens=(0.85, 0.2, 0.6, 0.35), ajuste={"wspace": 0.26},
                          ncols=2)


def _log(*eixos, eixo="x", menores=False):
    """Escala log com rótulos 10¹⁹ em texto simples (sem o mathtext, que custa caro). Num
    eixo de muitas décadas, sem as marcas menores: a grade de cada década basta, e cada
    marca custa tempo ao desenhar."""
    from matplotlib.ticker import NullLocator

    figuras.escala_log(*eixos, eixo=eixo)
    for ax in eixos if not menores else ():
        getattr(ax, f"{eixo}axis").set_minor_locator(NullLocator())


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_flops(licao):
    L, d, h, V, P = 12, 768, 12, 50257, 1024
    with torch.device("meta"):                      # só formas: nem memória nem tempo
        modelo = L06.GPT2(L, d, h, V, P)
    N = contar(modelo)  # o wte amarrado à cabeça conta uma vez
    fechada = licao.verificar(N == L06.parametros_gpt2(L, d, V, P),
                              "N = 12d² + 13d por bloco + embeddings")
    dizer(f"GPT-2 pequeno ({L} blocos, d = {d}, {h} cabeças, vocabulário {inteiro(V)}):\n"
          "o GPT2 da lição 06 em tensores \"meta\" (só as formas, sem pesos).\n"
          f"N = {inteiro(N)} parâmetros ({'confere' if fechada else 'NÃO confere'}"
          " com 12d² + 13d por bloco + embeddings).\n")
    dizer("FLOPs por token contados pelo torch.utils.flop_counter.FlopCounterMode:")
    dizer(f"  {'T':>6} {'forward':>14} {'/ N':>6}   {'forward+backward':>17} {'/ N':>6}")
    medidas = {}
    with Progresso(3, "contando FLOPs") as barra:
        for T in (1, 128, P):
            ida, volta = flops_ida_e_volta(modelo, T)     # um passo: ida e volta em separado
            medidas[T] = (ida / T, (ida + volta) / T)
            barra.avancar()
            dizer(f"  {inteiro(T):>6} {inteiro(ida / T):>14} {num(ida / T / N, 2):>6}   "
                  f"{inteiro((ida + volta) / T):>17} {num((ida + volta) / T / N, 2):>6}")
    ida, total = medidas[P]                         # contexto cheio: T = 1.024
    dizer(f"\nbackward / forward = {num((total - ida) / ida, 2)}: a volta calcula dois produtos "
          "por matriz\n(o gradiente da entrada e o do peso), a ida calcula um.\n")
    matrizes = L * 12 * d * d + V * d               # pesos que multiplicam (blocos + cabeça)
    atencao = 4 * L * P * d                         # QK e AV, matriz T x T inteira
    dizer(f"De onde vêm os FLOPs do forward com T = {inteiro(P)}, por token:")
    dizer(f"  2 x pesos das matrizes (blocos + cabeça)  {inteiro(2 * matrizes):>13}")
    dizer(f"  atenção QK e AV: 4 x L x T x d            {inteiro(atencao):>13}")
    soma = 2 * matrizes + atencao
    bate = licao.verificar(soma == ida, "2 x pesos + atenção = FLOPs medidos")
    dizer(f"  soma                                      {inteiro(soma):>13}  "
          f"{'= medido' if bate else '!= medido'}")
    dizer(f"Sem FLOPs de matriz, mas contados em N: wpe ({inteiro(P * d)}), vieses e "
          f"LayerNorms\n({inteiro(N - matrizes - P * d)}). Por isso, com T = 1, "
          f"o forward dá {num(medidas[1][0] / N, 2)} N e não 2 N.\n")

    licao.pausa("a fração da atenção, por T e por d")
    dizer("O termo que 6N deixa de fora: a parte da atenção (QK e AV) no forward de um")
    dizer("bloco, 4Td de 24d² + 4Td, ou seja T / (6d + T):")
    larguras = (768, 2048, 4096)
    dizer(f"  {'contexto T':>10}" + "".join(f"{'d = ' + inteiro(x):>13}" for x in larguras))
    confere = 0
    contextos = (512, 2048, 8192, 32768, 131072)
    with Progresso(len(contextos) * len(larguras), "contando FLOPs") as barra:
        for T in contextos:
            partes = []
            for dd in larguras:
                medido = flops_bloco(dd, T)
                confere += medido == 24 * T * dd * dd + 4 * T * T * dd
                partes.append(4 * T * T * dd / medido)
                barra.avancar()
            dizer(f"  {inteiro(T):>10}" + "".join(f"{pct(p):>13}" for p in partes))
    casos = len(contextos) * len(larguras)
    licao.verificar(confere == casos, "FLOPs de um bloco = 24Td² + 4T²d")
    dizer(f"Contagem = 24Td² + 4T²d em {confere} de {casos} casos.")
    dizer("A atenção empata com o resto quando T = 6d: " +
          ", ".join(f"{inteiro(6 * x)} (d = {inteiro(x)})" for x in larguras[:-1]) +
          f"\ne {inteiro(6 * larguras[-1])} (d = {inteiro(larguras[-1])}).")
    dizer("Um kernel que pula a metade mascarada (atenção causal) gasta cerca da metade:\n"
          "o empate vai para T = 12d, o critério de Kaplan et al. (d > T/12).")


# ============================================================ experimento 2
@LICAO.experimento(2)
def exp_regua(licao):
    dizer("Treino: C = 6 x N x D FLOPs. Servir: cerca de 2 x N FLOPs por token gerado.\n")
    dizer(f"  {'modelo':<11} {'ano':>4} {'N':>7} {'D':>7} {'D/N':>6} {'C = 6ND':>9} "
          f"{'2N/token':>9}")
    linhas = [(nome, str(ano), N, D) for nome, ano, N, D in MODELOS]
    if licao.args.seu_modelo:                       # --seu-modelo N D (exercício 1)
        linhas.append(("seu modelo", "-", *licao.args.seu_modelo))
    for nome, ano, N, D in linhas:
        dizer(f"  {nome:<11} {ano:>4} {grande(N):>7} {grande(D):>7} {razao(D / N):>6} "
              f"{cientifico(custo_treino(N, D)):>9} {cientifico(custo_inferencia(N)):>9}")
    regua = {nome: (N, D, custo_treino(N, D)) for nome, _, N, D in MODELOS}
    (Ng, Dg, Cg), (Nc, Dc, Cc), (Nl, Dl, Cl) = (regua["Gopher"], regua["Chinchilla"],
                                                regua["Llama 3 8B"])
    dizer(f"\nChinchilla contra Gopher: {num(Ng / Nc, 1)}x menos parâmetros, "
          f"{num(Dc / Dg, 1)}x mais tokens.\nPela régua 6ND o Chinchilla custou "
          f"{num(Cc / Cg, 2)}x o Gopher. Os artigos contam de\noutro jeito: 5,76e23 FLOPs "
          "para o Gopher (Rae et al.) e 6,3e23 para o\nChinchilla (apêndice F de Hoffmann "
          f"et al.), {num(6.3e23 / 5.76e23, 2)}x. 6ND é uma aproximação.")
    dizer(f"\nLlama 3 8B contra Chinchilla: treino {num(Cl / Cc, 2)}x mais caro; cada token "
          f"gerado\n{num(Nc / Nl, 2)}x mais barato ({cientifico(custo_inferencia(Nl))} contra "
          f"{cientifico(custo_inferencia(Nc))} FLOPs).\nTokens por parâmetro: "
          f"{inteiro(round(Dl / Nl))}, {num(Dl / Nl / 20, 0)}x os 20 do Chinchilla.")
    dizer(f"Só em custo: depois de {cientifico(tokens_de_empate(Nc, Dc, Nl, Dl))} tokens "
          "servidos, o Llama 3 8B já saiu\nmais barato no total (treino + inferência) que o "
          "Chinchilla.")


# ============================================================ experimentos 3 e 4
@LICAO.experimento(3)
def exp_kaplan_chinchilla(licao):
    dizer("Kaplan et al. 2020: N = 1,3e9 x (C_min em PF-dias)^0,73, com C_min = C/2\n"
          "(o compute no lote crítico; um treino real gasta o dobro) e D = C/6N.\n"
          "Chinchilla: o ótimo da perda ajustada (reajuste de Besiroglu et al. 2024).\n")
    dizer(f"  {'C (FLOPs)':>9}   {'Kaplan: N':>9} {'D':>7} {'D/N':>6}   "
          f"{'Chinchilla: N':>13} {'D':>7} {'D/N':>5}")
    for C in [10.0 ** e for e in range(20, 27)]:
        nk, dk = otimo_kaplan(C)
        nc, dc = REAJUSTE.otimo(C)
        dizer(f"  {cientifico(C, 0):>9}   {grande(nk):>9} {grande(dk):>7} "
              f"{razao(dk / nk):>6}   {grande(nc):>13} {grande(dc):>7} {razao(dc / nc):>5}")
    a = REAJUSTE.beta / (REAJUSTE.alfa + REAJUSTE.beta)
    dizer(f"\nCom 10x mais compute: Kaplan põe {num(10 ** KAPLAN_EXPOENTE, 2)}x em N e "
          f"{num(10 ** (1 - KAPLAN_EXPOENTE), 2)}x em D;\no reajuste põe "
          f"{num(10 ** a, 2)}x em N e {num(10 ** (1 - a), 2)}x em D "
          f"(expoentes {num(a, 3)} e {num(1 - a, 3)}).\n")
    licao.pausa("a tabela 3 do Chinchilla e o reajuste")
    dizer("Tabela 3 do Chinchilla (abordagem 1) ao lado do reajuste no mesmo C:")
    dizer(f"  {'N da tabela':>11} {'FLOPs':>9} {'tokens':>7} {'D/N':>5} {'6ND/FLOPs':>10}   "
          f"{'N reajuste':>10}")
    for N, C, D in TABELA3:
        nc, _ = REAJUSTE.otimo(C)
        dizer(f"  {grande(N):>11} {cientifico(C):>9} {grande(D):>7} {num(D / N, 1):>5} "
              f"{num(custo_treino(N, D) / C, 3):>10}   {grande(nc):>10}")
    xs = [19 + i / 10 for i in range(71)]
    dizer()
    licao.pausa("o N ótimo das duas leis, em ASCII")
    dizer(figuras.grafico_ascii(
        {"Kaplan": [otimo_kaplan(10 ** x)[0] for x in xs],
         "Chinchilla (reajuste)": [REAJUSTE.otimo(10 ** x)[0] for x in xs]},
        xs, log_y=True, altura=12, rotulo_y="N ótimo (escala log)",
        rotulo_x="log10 do orçamento C em FLOPs"))
    if licao.quer_figuras:                          # poupa o import do matplotlib
        _figura_kaplan_chinchilla(licao, [10 ** x for x in xs])


def _figura_kaplan_chinchilla(licao, Cs):
    fig, (ax1, ax2) = _figura_dupla()
    _log(ax1, ax2, eixo="x")
    _log(ax1, ax2, eixo="y")
    ax1.plot(Cs, [otimo_kaplan(C)[0] for C in Cs], label="Kaplan et al. 2020")
    ax1.plot(Cs, [REAJUSTE.otimo(C)[0] for C in Cs], label="Chinchilla (reajuste)")
    ax1.plot([c for _, c, _ in TABELA3], [n for n, _, _ in TABELA3], "ks",
             label="Chinchilla, tabela 3")
    deslocamentos = {"GPT-3": (-42, 2), "Gopher": (6, 2), "Chinchilla": (6, -10),
                     "Llama 3 8B": (6, -10)}
    for nome, _, N, D in MODELOS:
        ax1.plot(custo_treino(N, D), N, "o")
        ax1.annotate(nome, (custo_treino(N, D), N), textcoords="offset points",
                     xytext=deslocamentos[nome], fontsize=9)
    ax1.set(xlabel="orçamento C (FLOPs)", ylabel="parâmetros N", title="Tamanho ótimo")
    ax2.plot(Cs, [otimo_kaplan(C)[1] / otimo_kaplan(C)[0] for C in Cs], label="Kaplan")
    ax2.plot(Cs, [REAJUSTE.otimo(C)[1] / REAJUSTE.otimo(C)[0] for C in Cs],
             label="Chinchilla (reajuste)")
    ax2.set(xlabel="orçamento C (FLOPs)", ylabel="tokens por parâmetro",
            title="Tokens por parâmetro no ótimo")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=9)
    licao.salvar_figura(fig, "09_kaplan_chinchilla.png")


@LICAO.experimento(4)
def exp_perda_ajustada(licao):
    r = REAJUSTE
    dizer("L(N, D) = E + A / N^alfa + B / D^beta, com as constantes do reajuste de\n"
          f"Besiroglu et al. 2024: E = {num(r.E, 4)}, A = {num(r.A, 2)}, B = {num(r.B, 2)}, "
          f"alfa = {num(r.alfa, 4)},\nbeta = {num(r.beta, 4)}.\n")
    n10, d10 = EQ10.otimo(5.76e23)
    nr, dr = r.otimo(5.76e23)
    dizer(f"Por que não as da eq. 10 do artigo? No orçamento do Gopher (5,76e23) elas dão\n"
          f"{grande(n10)} com {num(d10 / n10, 1)} tokens por parâmetro, longe dos ~20 "
          "das abordagens 1 e 2\ndo próprio artigo; Besiroglu et al. reconstruíram os dados "
          "e mostraram que\naquele ajuste não os descreve. O reajuste dá "
          f"{grande(nr)} com {num(dr / nr, 1)} tokens\npor parâmetro.\n")
    licao.pausa("o ótimo em cada orçamento")
    dizer("Ótimo em cada orçamento (seção áurea ao longo da curva de iso-FLOP):")
    dizer(f"  {'C (FLOPs)':>9} {'N ótimo':>9} {'D ótimo':>9} {'D/N':>6} {'perda':>7}")
    desvio = 0.0
    for C in [10.0 ** e for e in range(19, 26)]:
        N, D = otimo_por_busca(C)
        desvio = max(desvio, abs(N / r.otimo(C)[0] - 1))
        dizer(f"  {cientifico(C, 0):>9} {grande(N):>9} {grande(D):>9} {num(D / N, 1):>6} "
              f"{num(r.perda(N, D), 3):>7}")
    # O ótimo de uma curva achatada só se acha até ~1e-7 (varia com o processador): limite.
    licao.verificar(desvio < 1e-6, "busca numérica = fórmula fechada")
    dizer(f"Busca numérica contra a fórmula fechada: diferença relativa em N "
          f"{limite(desvio, 1e-6)}.")
    dizer("Cerca de 20 tokens por parâmetro, caindo devagar com o orçamento\n"
          f"(D/N ~ C^{num(r.alfa / (r.alfa + r.beta) - r.beta / (r.alfa + r.beta), 3)}).\n")
    for nome, _, N, D in MODELOS[1:3]:
        dizer(f"Perda prevista para o {nome} ({grande(N)}, {grande(D)} tokens): "
              f"{num(r.perda(N, D), 3)}")
    xs = [7 + i / 20 for i in range(101)]           # log10 N de 7 a 12
    curvas = {}
    for C in (1e20, 1e22, 1e24):
        ys = [r.perda(10 ** x, C / (6 * 10 ** x)) for x in xs]
        curvas[f"C = {cientifico(C, 0)}"] = [y if y < 3.2 else None for y in ys]
    dizer()
    licao.pausa("três curvas de iso-FLOP em ASCII")
    dizer(figuras.grafico_ascii(curvas, xs, altura=14, rotulo_y="perda L(N, C/6N)",
                                rotulo_x="log10 N (parâmetros)"))
    if licao.quer_figuras:
        _figura_iso_flop(licao, xs)


def _figura_iso_flop(licao, xs):
    r = REAJUSTE
    fig, (ax1, ax2) = _figura_dupla()
    _log(ax1, ax2, eixo="x")
    for C in [10.0 ** e for e in range(19, 26)]:
        Ns = [10 ** x for x in xs if C / (6 * 10 ** x) > 1e6]
        ax1.plot(Ns, [r.perda(N, C / (6 * N)) for N in Ns], label=f"C = {cientifico(C, 0)}")
        N, D = r.otimo(C)
        ax1.plot(N, r.perda(N, D), "k.", markersize=9)
    ax1.set(ylim=(1.8, 3.6), xlabel="parâmetros N", ylabel="perda prevista",
            title="Curvas de iso-FLOP (ponto = ótimo)")
    Cs = [10 ** (17 + i / 10) for i in range(91)]
    ax2.plot(Cs, [r.otimo(C)[1] / r.otimo(C)[0] for C in Cs], label="reajuste")
    ax2.plot(Cs, [EQ10.otimo(C)[1] / EQ10.otimo(C)[0] for C in Cs], "--",
             label="eq. 10 publicada")
    ax2.axhline(20, color="gray", lw=0.8)
    ax2.set(xlabel="orçamento C (FLOPs)", ylabel="tokens por parâmetro no ótimo",
            title="D/N no ótimo")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=9)
    licao.salvar_figura(fig, "09_iso_flop.png")


# ============================================================ experimento 5
def resumo_inferencia(alvo, tokens_inferencia):
    N, D = otimo_com_inferencia(alvo, tokens_inferencia)
    nc, _ = otimo_com_inferencia(alvo, 0.0)
    total = custo_total(N, alvo, tokens_inferencia)
    chin = custo_total(nc, alvo, tokens_inferencia)
    dizer(f"Com {cientifico(tokens_inferencia)} tokens de inferência: N ótimo {grande(N)}, "
          f"treinado em {grande(D)}\ntokens ({razao(D / N)} por parâmetro); "
          f"custo total {cientifico(total)} FLOPs. O ótimo do\nChinchilla ({grande(nc)}) "
          f"custaria {cientifico(chin)}: {pct(chin / total - 1)} a mais.")


@LICAO.experimento(5)
def exp_inferencia(licao):
    alvo = perda_alvo()
    Dinf = licao.args.tokens_inferencia
    dizer("Qualidade fixa: a perda que o reajuste prevê para o Llama 3 8B "
          f"({grande(LLAMA3_8B[0])},\n{grande(LLAMA3_8B[1])} tokens): L = {num(alvo, 3)}. "
          "Custo de vida útil = 6 N D_treino + 2 N D_inferência.\n"
          f"Nenhum N abaixo de {grande(n_minimo(alvo))} chega a essa perda, nem com infinitos "
          "tokens.\n")
    dizer(f"  {'inferência':>10} {'N ótimo':>8} {'D treino':>9} {'D/N':>8} {'treino':>9} "
          f"{'total':>9}")
    demandas = sorted({0.0, 1e12, 1e13, 1e14, 1e15, Dinf})
    otimos = {Di: otimo_com_inferencia(alvo, Di) for Di in demandas}
    for Di, (N, D) in otimos.items():
        dizer(f"  {cientifico(Di) if Di else '0':>10} {grande(N):>8} {grande(D):>9} "
              f"{razao(D / N):>8} {cientifico(custo_treino(N, D)):>9} "
              f"{cientifico(custo_total(N, alvo, Di)):>9}")
    dizer(f"\nO Llama 3 8B seria o ótimo com "
          f"{cientifico(demanda_que_torna_otimo(LLAMA3_8B[0], alvo))} tokens de inferência.\n")
    N0, nc = otimos[Dinf][0], otimos[0.0][0]
    licao.pausa("a varredura em N: o custo de errar")
    dizer(f"Varredura em N com {cientifico(Dinf)} tokens de inferência "
          "(--tokens-inferencia):")
    dizer(f"  {'N':>7} {'D treino':>9} {'D/N':>8} {'treino':>9} {'inferência':>10} "
          f"{'total':>9} {'/ mínimo':>8}")
    minimo = custo_total(N0, alvo, Dinf)
    for N in sorted({N0 * f for f in (0.5, 0.7, 1.0, 1.5)} | {nc, float(LLAMA3_8B[0])}):
        D = tokens_para_alvo(N, alvo)
        if math.isinf(D):
            dizer(f"  {grande(N):>7}  não chega à perda alvo")
            continue
        total = custo_total(N, alvo, Dinf)
        dizer(f"  {grande(N):>7} {grande(D):>9} {razao(D / N):>8} "
              f"{cientifico(custo_treino(N, D)):>9} {cientifico(custo_inferencia(N, Dinf)):>10} "
              f"{cientifico(total):>9} {num(total / minimo, 2):>8}")
    dizer()
    resumo_inferencia(alvo, Dinf)
    xs = [math.log10(n_minimo(alvo)) + 0.02 + i * 0.01 for i in range(120)]
    curvas = {}
    for Di in (0.0, Dinf):
        base = custo_total(otimos[Di][0], alvo, Di)
        ys = [custo_total(10 ** x, alvo, Di) / base for x in xs]
        rotulo = "sem inferência" if Di == 0 else f"{cientifico(Di)} de inferência"
        curvas[rotulo] = [y if y < 2.5 else None for y in ys]
    dizer()
    licao.pausa("o custo total em função de N, em ASCII")
    dizer(figuras.grafico_ascii(curvas, xs, altura=12, rotulo_y="custo / custo mínimo",
                                rotulo_x="log10 N (parâmetros)"))
    if licao.quer_figuras:                          # poupa o import do matplotlib
        _figura_inferencia(licao, alvo, otimos, [10 ** x for x in xs])
    if licao.args.interativo:
        perguntar_demandas(alvo)


def _figura_inferencia(licao, alvo, otimos, Ns):
    from matplotlib.ticker import NullFormatter

    fig, (ax1, ax2) = _figura_dupla()
    _log(ax1, eixo="x", menores=True)                  # de 5B a 80B: pouco mais de uma década
    _log(ax2, eixo="x")
    _log(ax2, eixo="y", menores=True)
    for Di, (Nopt, _) in otimos.items():
        base = custo_total(Nopt, alvo, Di)
        ax1.plot(Ns, [custo_total(N, alvo, Di) / base for N in Ns],
                 label=f"{cientifico(Di)} tokens" if Di else "sem inferência")
        ax1.plot(Nopt, 1.0, "k.", markersize=9)
    ax1.set(ylim=(0.95, 2.0), xlabel="parâmetros N", ylabel="custo total / mínimo",
            title=f"Mesma perda ({num(alvo, 3)}): custo de vida útil")
    demandas = [10 ** (10 + i / 10) for i in range(61)]
    ax2.plot(demandas, [otimo_com_inferencia(alvo, Di)[0] for Di in demandas])
    ax2.axhline(LLAMA3_8B[0], color="gray", lw=0.8, ls="--")
    ax2.annotate("Llama 3 8B", (demandas[0], LLAMA3_8B[0]), xytext=(3, 3),
                 textcoords="offset points")
    ax2.set(xlabel="tokens de inferência na vida útil", ylabel="N ótimo",
            title="O ótimo encolhe quando a demanda cresce")
    for ax, eixo, marcas in ((ax1, ax1.xaxis, [5e9, 1e10, 2e10, 3e10, 5e10]),
                             (ax2, ax2.yaxis, [5e9, 6e9, 8e9, 1e10, 1.5e10, 2e10, 3e10])):
        eixo.set_minor_formatter(NullFormatter())
        eixo.set_ticks(marcas, [f"{x / 1e9:g}B".replace(".", ",") for x in marcas])
        ax.grid(alpha=0.3, which="both")
    ax1.legend(fontsize=9)
    licao.salvar_figura(fig, "09_inferencia.png")


LER_VOLUME = real_entre(0, MAXIMO_TOKENS, "1e13 ou 10T", sufixos=True)


def perguntar_demandas(alvo):
    """Modo de aula: pede volumes de inferência até Enter vazio (ou fim da entrada)."""
    dizer("\nModo interativo: digite um volume de inferência (ex.: 1e13, 2,5e12 ou 10T);"
          "\nEnter vazio encerra.")
    if sys.stdin is None or sys.stdin.closed:
        dizer("(sem entrada no terminal: nada a perguntar)")
        return
    while True:
        texto = (perguntar("tokens de inferência> ") or "").strip()
        if not texto:                               # Enter vazio ou fim da entrada
            return
        try:
            valor = LER_VOLUME(texto)
        except argparse.ArgumentTypeError as erro:
            dizer(quebrar(f"{erro}."))
            continue
        resumo_inferencia(alvo, valor)


# ============================================================ experimento 6
@LICAO.experimento(6)
def exp_dados_e_inferencia(licao):
    _, _, N, D = MODELOS[-1]                        # Llama 3 8B na régua do experimento 2
    dizer("Estoque de texto humano público: cerca de 300T tokens (Villalobos et al. 2024,\n"
          "com larga incerteza).")
    dizer(f"  Conta: os {grande(D)} tokens do Llama 3 8B são {pct(D / ESTOQUE)} desse "
          f"estoque; no mesmo\n  ritmo ({inteiro(round(D / N))} tokens por parâmetro), "
          f"{grande(ESTOQUE)} tokens treinariam um modelo de só\n  "
          f"{grande(ESTOQUE / (D / N))}. Sobretreinar gasta dados depressa.\n")

    dizer("Repetir dados vale menos que dados novos. Muennighoff et al. (2023): U tokens\n"
          "únicos vistos por E épocas (R = E - 1 repetições) valem D' tokens novos,\n"
          f"  D' = U + U R* (1 - e^(-R/R*)),  com R* = {num(R_ESTRELA, 0)} no ajuste do artigo.")
    dizer(f"  {'épocas':>9} {'D efetivo':>10} {'valor por token treinado':>25}")
    for epocas in (1, 2, 4, 8, 16, 32, 64):
        efetivo = dados_efetivos(1.0, epocas)
        dizer(f"  {epocas:>9} {num(efetivo, 2) + ' U':>10} {pct(efetivo / epocas, 0):>25}")
    teto = 1 + R_ESTRELA                            # o limite de D'/U com infinitas épocas
    dizer(f"  {'infinitas':>9} {num(teto, 2) + ' U':>10} {'0 %':>25}")

    def tera(x):
        return f"{inteiro(round(x / 1e12))}T"

    quatro = dados_efetivos(ESTOQUE, 4)
    dizer(f"Os {tera(ESTOQUE)} do estoque, 4 épocas: {tera(4 * ESTOQUE)} tokens treinados "
          f"valem {tera(quatro)} novos\n({pct(quatro / (4 * ESTOQUE), 0)}); nenhum número de "
          f"épocas passa de {num(teto, 0)} x {tera(ESTOQUE)} = {tera(teto * ESTOQUE)}.\n")

    p, k, medido = 0.159, 250, 0.56                 # Brown et al. 2024, SWE-bench Lite
    licao.pausa("compute na inferência: k amostras")
    dizer("Compute na inferência: amostrar k respostas e verificar. Brown et al. (2024),\n"
          f"SWE-bench Lite: {pct(p)} com uma amostra, {pct(medido, 0)} com {k}, quando testes "
          "automáticos\napontam a certa. Se as amostras fossem independentes:")
    dizer(f"  {'k':>5} {'1 - (1 - p)^k':>14}")
    for kk in (1, 10, 100, k):
        dizer(f"  {kk:>5} {pct(cobertura_independente(p, kk)):>14}")
    dizer(f"Medido com {k}: {pct(medido, 0)}, longe dos "
          f"{pct(cobertura_independente(p, k), 0)}. As tentativas não são independentes:\n"
          "os problemas difíceis continuam difíceis na amostra 250. E cada amostra custa\n"
          "mais 2N FLOPs por token gerado: é D_inferência crescendo, o que o experimento 5\n"
          "precifica. (Snell et al. 2024 e o resto da história estão na apostila.)")


# ============================================================ a página (--html)
# O painel da lição num arquivo que abre com um duplo clique (comum/paginas.py). As entradas
# são contínuas (qualquer orçamento, qualquer volume), então a página refaz as contas da
# peça em JavaScript, com as constantes daqui (DADOS); tests/test_09_paginas.py compara
# as duas numa grade de orçamentos e volumes e, num navegador de verdade, o que a tela
# mostra com o que o Python dá. O HTML, o CSS e o JavaScript moram em lab/html/09_scaling.*.


def pagina() -> str:
    """A página da lição (--html): o orçamento, Kaplan contra Chinchilla, a inferência
    na conta, a régua e as curvas de iso-FLOP, com as constantes desta lição."""
    r = REAJUSTE
    dados = {"reajuste": {"E": r.E, "A": r.A, "B": r.B, "alfa": r.alfa, "beta": r.beta},
             "kaplan": {"NE": KAPLAN_NE, "EXPOENTE": KAPLAN_EXPOENTE, "PF_DIA": PF_DIA},
             "modelos": [list(m) for m in MODELOS]}
    corpo, script, estilo = (paginas.fonte(f"09_scaling.{ext}") for ext in ("html", "js", "css"))
    return paginas.documento(f"Lição {LICAO.numero} · {LICAO.titulo}", corpo, script, dados, estilo,
                             "Leis de escala: orçamento, Kaplan contra Chinchilla, inferência")


if __name__ == "__main__":
    if paginas.pedida(LICAO.args):                  # --html [PASTA] / --abrir: só a página
        sys.exit(paginas.gravar(LICAO, pagina, "09_scaling.html"))
    sys.exit(LICAO.rodar())
