"""Lição 12 · Escala: custo, máquina, orçamento, vários processos (leia junto: apostilas/12_escala.md)
1. O custo de um passo: 6·N·tokens mais a atenção
2. O que a sua máquina entregou: FLOP/s contra o matmul
3. A fronteira do compute: o melhor tamanho para cada orçamento
4. Dividir o lote: a média dos gradientes é o lote inteiro
5. Dois processos de verdade, e o treino da lição 10 no torchrun"""
from comum import Licao, importar_licao, inteiro_entre, opcao, opcao_dispositivo, real_entre
from comum.distribuido import so_o_principal_escreve

LICAO = Licao.da_docstring(__doc__, opcoes=[
    opcao("--passos", inteiro_entre(1, 10**6, "--passos 2000"), 1000,
          "passos do treino da lição 10 (experimentos 2 e 5)", "N"),
    opcao("--camadas", inteiro_entre(1, 48, "--camadas 6"), 4, "blocos do modelo", "L"),
    opcao("--largura", inteiro_entre(4, 2048, "--largura 192"), 128, "largura d do modelo", "D"),
    opcao("--cabecas", inteiro_entre(1, 64, "--cabecas 8"), 4, "cabeças, que dividem d", "H"),
    opcao("--lote", inteiro_entre(1, 1024, "--lote 32"), 12, "sequências por passo", "B"),
    opcao("--contexto", inteiro_entre(2, 1024, "--contexto 128"), 64, "caracteres vistos", "T"),
    opcao("--taxa", real_entre(0, 1, "--taxa 3e-3", False), 1e-3, "taxa de aprendizado máxima"),
    opcao("--escala", "flag", None, "treina os modelos do experimento 3 (uns minutos)"),
    opcao("--dividir", "flag", None, "o experimento 5 treina em 2 processos (10 a 40 s)"),
    opcao("--checkpoint", None, None, "o modelo do treino no torchrun (padrão: "
          "checkpoints/12_torchrun.pt)", "ARQUIVO"),
    opcao_dispositivo("onde o treino no torchrun roda (experimento 5): auto escolhe a CUDA "
                      "se há uma GPU para cada processo, senão a CPU"),
])
# com torchrun, só o processo 0 escreve na tela; na tela de outra máquina, uma linha (e uma no fim)
OUTRA_MAQUINA = ("Lição 12 (torchrun): este processo treina a sua parte de cada lote; a tela e "
                 "o checkpoint ficam na máquina do processo 0.")
so_o_principal_escreve(OUTRA_MAQUINA)
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import math
import torch

L10 = importar_licao("10_treino")   # os dados, o modelo e o laço de treino da lição 10


# ============================================================ a peça
def media_dos_gradientes(gradientes):
    """O all-reduce do paralelismo de dados: cada processo tem o gradiente da perda média
    da sua parte do lote; somados em todos e divididos pelo número de processos, dão o
    gradiente do lote inteiro (a média das médias de partes iguais é a média do todo).
    gradientes: uma lista por processo, com um tensor por peso."""
    return [sum(g) / len(g) for g in zip(*gradientes)]


def produtos_do_passo(L, d, h, V, B, T):
    """Os produtos de matrizes de um passo de treino, (lote, m, k, n) cada um: os do forward
    e, para cada um, os dois do backward (o gradiente da entrada e o do peso)."""
    M, dk = B * T, d // h
    ida = [(1, M, d, V)]                                          # a cabeça de saída
    for _ in range(L):
        ida += [(1, M, d, 3 * d), (B * h, T, dk, T), (B * h, T, T, dk),   # c_attn, QK, pesos V
                (1, M, d, d), (1, M, d, 4 * d), (1, M, 4 * d, d)]          # c_proj, c_fc, c_proj
    return ida + [(b, m, n, k) for b, m, k, n in ida] + [(b, k, m, n) for b, m, k, n in ida]


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["media_dos_gradientes", "produtos_do_passo"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import statistics
import sys
import time
from pathlib import Path

from comum import (ExperimentoPulado, Progresso, RAIZ, cientifico, comando, contar, curto,
                   distribuido, dizer, figuras, inteiro, limite, num, pct, plural, preparar_treino,
                   quebrar, uma_thread)
from comum.console import duracao

# o modelo padrão da lição 10: a régua de 30 % do experimento 2 vale para ele
LICAO_PADRAO = {"camadas": 4, "largura": 128, "cabecas": 4, "lote": 12, "contexto": 64}
RODADAS = 5             # medições do experimento 2 (vale a menor; o tempo previsto, a mediana)


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_custo(licao):
    config = L10.configuracao(licao.args)
    _, _, tok, _, validacao = licao.uma_vez("dados", L10.dados)
    modelo = L10.novo_modelo(config, licao.args.semente)
    x, y = L10.lote(validacao, licao.args.lote, config["contexto"],
                    torch.Generator().manual_seed(0))                   # (B, T), (B, T)
    dizer(quebrar(f"Lição 09: treinar N parâmetros com D tokens custa C ≈ 6ND FLOPs. Aqui, "
                  f"contados de verdade num passo do GPT2 da lição 10 ({config['camadas']} "
                  f"blocos, d = {config['largura']}, N = {inteiro(contar(modelo))})."))
    flops_de_um_passo(licao, modelo, x, y, config, len(tok))


def flops_de_um_passo(licao, modelo, x, y, config, V):
    """Os FLOPs de um passo de treino no lote (x, y), contados pelo contar_flops da lição
    09, contra 6NBT e contra a conta por extenso: 6 x pesos das matrizes + a atenção."""
    L09 = importar_licao("09_scaling")
    L, d, T, B = config["camadas"], config["largura"], config["contexto"], x.shape[0]
    N = contar(modelo)
    with torch.no_grad():
        ida = L09.contar_flops(lambda: modelo(x))
    total = L09.contar_flops(lambda: L10.perda(modelo, x, y).backward())
    tokens = B * T
    dizer(f"\nFLOPs de um passo de treino (lote de {B} x {T} = {inteiro(tokens)} tokens), "
          "contados pelo\ncontar_flops da lição 09:")
    linhas = [("forward", ida), (f"backward ({num((total - ida) / ida, 2)}x o forward)",
                                  total - ida),
              ("passo inteiro", total), ("6 x N x tokens", 6 * N * tokens)]
    for nome, valor in linhas:
        dizer(f"  {nome:<38}{inteiro(valor):>15}")
    dizer(f"  (contado / 6NBT = {num(total / (6 * N * tokens), 3)})")
    matrizes = 12 * L * d * d + V * d                             # pesos que multiplicam
    atencao = 3 * 4 * L * T * d                                   # QK e pesos x V, ida e volta
    soma = (6 * matrizes + atencao) * tokens
    bate = licao.verificar(soma == total, "FLOPs = 6 x matrizes + atenção")
    dizer(f"De onde vem a diferença (por token, vezes {inteiro(tokens)}):")
    dizer(f"  {'6 x pesos das matrizes (blocos e wte)':<38}{inteiro(6 * matrizes * tokens):>15}")
    dizer(f"  {'atenção QK e pesos x V: 3 x 4LTd':<38}{inteiro(atencao * tokens):>15}")
    dizer(f"  {'soma':<38}{inteiro(soma):>15}  "
          + ("= contado" if bate else "NÃO confere com o contado"))
    dizer(f"O wpe, os vieses e os ganhos ({inteiro(N - matrizes)} parâmetros) estão em N mas "
          "não\nmultiplicam matriz nenhuma; a atenção multiplica, mas não tem parâmetros.")
    cabeca = 6 * 50257 * d * tokens                               # a cabeça do GPT-2: 6Vd
    dizer(f"\nCom o BPE do GPT-2 (V = 50.257), só a cabeça de saída custaria "
          f"{inteiro(cabeca)}\nFLOPs por passo: {num(cabeca / total, 1)}x o passo inteiro "
          "deste modelo.")


# ============================================================ experimento 2
def medir_passo(modelo, otimizador, x, y):
    """(forward, backward, corte + AdamW) de um passo de treino (o passo_de_treino da
    peça da lição 10, o mesmo que o treino dela dá), em segundos."""
    marcas = [time.perf_counter()]
    L10.passo_de_treino(modelo, otimizador, x, y, lambda: marcas.append(time.perf_counter()))
    marcas.append(time.perf_counter())
    return tuple(b - a for a, b in zip(marcas, marcas[1:]))


def so_os_produtos(matrizes):
    for a, b in matrizes:
        torch.matmul(a, b)


def medir_contra_o_matmul(modelo, otimizador, x, y, matrizes):
    """RODADAS rodadas alternadas: 3 passos de treino e 3 vezes só os produtos de matrizes.
    Devolve (forward, backward, resto) da rodada mais rápida, o menor tempo dos produtos e a
    mediana dos passos (o menor é o caso otimista; para prever, a mediana)."""
    for _ in range(2):                                            # aquece caches e kernels
        medir_passo(modelo, otimizador, x, y)
        so_os_produtos(matrizes)
    rodadas, replays = [], []
    with Progresso(RODADAS, "medindo") as barra:
        for _ in range(RODADAS):                                  # passo e matmul alternados
            rodadas.append([sum(t) / 3 for t in zip(*(medir_passo(modelo, otimizador, x, y)
                                                      for _ in range(3)))])
            inicio = time.perf_counter()
            for _ in range(3):
                so_os_produtos(matrizes)
            replays.append((time.perf_counter() - inicio) / 3)
            barra.avancar()
    return min(rodadas, key=sum), min(replays), statistics.median(sum(r) for r in rodadas)


@LICAO.experimento(2)
def exp_cpu(licao):
    L09 = importar_licao("09_scaling")
    args = licao.args
    config = L10.configuracao(args)
    L, d, h = config["camadas"], config["largura"], config["cabecas"]
    T, B = config["contexto"], args.lote
    _, _, tok, treino, _ = licao.uma_vez("dados", L10.dados)
    modelo = L10.novo_modelo(config, args.semente)
    otimizador = L10.adamw(modelo, 1e-4)
    gerador = torch.Generator().manual_seed(args.semente)
    x, y = L10.lote(treino, B, T, gerador)                            # (B, T), (B, T)
    contados = L09.contar_flops(lambda: L10.perda(modelo, x, y).backward())
    produtos = produtos_do_passo(L, d, h, len(tok), B, T)
    soma = sum(2 * b * m * k * n for b, m, k, n in produtos)
    licao.verificar(soma == contados, "produtos do passo = FLOPs contados")
    matrizes = [(torch.randn(b, m, k, generator=gerador).squeeze(0),
                 torch.randn(b, k, n, generator=gerador).squeeze(0)) for b, m, k, n in produtos]
    (ida, volta, resto), replay, tipico = medir_contra_o_matmul(modelo, otimizador, x, y,
                                                                matrizes)
    segundos = ida + volta + resto
    rendeu, teto = contados / segundos, contados / replay
    dizer(f"Um passo de treino do modelo do experimento 1 ({L} blocos, d = {d}, lote {B} x "
          f"{T}),\nmedido agora nesta máquina com {plural(torch.get_num_threads(), 'thread')} "
          f"(o menor de {RODADAS} medições):")
    for nome, t in (("forward", ida), ("backward", volta), ("corte + AdamW", resto)):
        dizer(f"  {nome:<16} {num(1000 * t, 1):>8} ms  {pct(t / segundos, 0):>6}")
    dizer(f"  {'passo inteiro':<16} {num(1000 * segundos, 1):>8} ms  -> "
          f"{num(rendeu / 1e9, 1)} GFLOP/s ({cientifico(contados, 2)} FLOPs contados)")
    dizer(f"\nSó os {len(produtos)} produtos de matrizes do passo (as mesmas formas, "
          f"torch.matmul\npuro, sem mais nada): {num(1000 * replay, 1)} ms -> "
          f"{num(teto / 1e9, 1)} GFLOP/s, o limite desta máquina\nnessas formas.")
    dizer_a_fracao(rendeu / teto, all(getattr(args, k) == v for k, v in LICAO_PADRAO.items()))
    licao.pausa("tokens por parâmetro contra o Chinchilla")
    tokens_por_parametro(args.passos, B, T, contar(modelo), len(treino), tipico)


def dizer_a_fracao(fracao, padrao):
    """O veredito do experimento 2: 30 % do matmul ou mais é um bom sinal (uma boa parte do
    passo vai para os produtos de matrizes); abaixo disso, no modelo padrão, a máquina está
    ocupada; noutro tamanho, o resto pesa outro tanto e os 30 % não servem de régua."""
    if fracao >= 0.3:
        dizer(quebrar(f"O treino rendeu {pct(fracao, 0)} do que o matmul dá: um bom sinal. Com "
                      "30 % ou mais, uma boa parte do passo vai para os produtos de matrizes, "
                      "o que a máquina faz mais depressa."))
    elif padrao:
        dizer(quebrar(f"O treino rendeu {pct(fracao, 0)} do que o matmul dá: abaixo dos 30 % "
                      "que se espera deste modelo numa CPU livre (outro programa usando a "
                      "CPU, ou um notebook em modo de economia?)."))
    else:
        dizer(quebrar(f"O treino rendeu {pct(fracao, 0)} do que o matmul dá, abaixo dos 30 % "
                      "que se espera do modelo padrão numa CPU livre. Com outro tamanho, "
                      "os 30 % não servem de régua: num modelo menor, o que não é produto de "
                      "matrizes pesa mais (o exercício 2)."))
    dizer(quebrar("O resto do tempo vai para o que não é produto de matrizes: LayerNorm, "
                  "GELU, softmax e máscara, a perda, o corte e o AdamW, e o Python entre uma "
                  "operação e outra. São contas pequenas que mais leem e escrevem memória do "
                  "que multiplicam; num modelo maior, os produtos crescem como d² e o resto "
                  "como d, e a fração sobe."))


def tokens_por_parametro(passos, B, T, N, caracteres_de_treino, segundos_por_passo):
    """Os tokens por parâmetro do treino da lição 10 contra os ~20 do Chinchilla, e o
    que chegar a 20 custaria aqui (em passos, épocas e tempo)."""
    tokens = passos * B * T
    dizer(f"\nTokens por parâmetro: o treino da lição 10 ({inteiro(passos)} passos) "
          f"vê\n{inteiro(tokens)} tokens com N = {inteiro(N)}: {num(tokens / N, 2)} por "
          "parâmetro. O Chinchilla\n(lição 09) treinou com cerca de 20.")
    vinte = 20 * N
    dizer(f"Chegar a 20 pediria {inteiro(vinte)} tokens: {inteiro(round(vinte / (B * T)))} "
          f"passos.")
    dizer(quebrar(f"São {num(vinte / caracteres_de_treino, 0)} épocas do texto de treino e "
                  f"{duracao(vinte / (B * T) * segundos_por_passo, 'uns ')} nesta máquina (a "
                  f"mediana das {RODADAS} medições): aqui os dados acabam antes do compute (o "
                  "experimento 3 mede que tamanho rende mais)."))


# ============================================================ experimento 3
ESCALA = {"camadas": 2, "larguras": (16, 24, 32, 48), "lote": 16, "contexto": 64,
          "taxa": 5e-3, "maior": 4e11, "orcamentos": 5}   # orçamentos: maior/16 ... maior


def modelos_da_escala(semente):
    """Os modelos da fronteira, do menor ao maior: {d, modelo, N, flops (contados, por
    passo)}, todos com L = 2 e cabeças de 16 números."""
    L09 = importar_licao("09_scaling")
    x = torch.zeros(ESCALA["lote"], ESCALA["contexto"], dtype=torch.long)  # (B, T)
    saida = []
    for d in ESCALA["larguras"]:
        config = {"camadas": ESCALA["camadas"], "largura": d, "cabecas": max(1, d // 16),
                  "contexto": ESCALA["contexto"], "alfabeto": L10.ALFABETO}
        modelo = L10.novo_modelo(config, semente)
        flops = L09.contar_flops(lambda: L10.perda(modelo, x, x).backward())
        modelo.zero_grad(set_to_none=True)
        saida.append({"d": d, "modelo": modelo, "flops": flops, "N": contar(modelo)})
    return saida


def orcamentos():
    """Os orçamentos da fronteira, em FLOPs: cada um o dobro do anterior, até o maior."""
    k = ESCALA["orcamentos"]
    return [ESCALA["maior"] / 2 ** (k - 1 - i) for i in range(k)]


def melhores(perdas):
    """{N: [perda em cada orçamento]} -> o N de menor perda em cada orçamento."""
    return [min(perdas, key=lambda n: perdas[n][i]) for i in range(len(min(perdas.values())))]


def tendencia(melhor):
    """O que a sequência dos melhores N diz: 'cresce', 'encolhe' ou 'parado' (o melhor do
    menor orçamento contra o do maior; a sequência inteira sai impressa acima)."""
    if melhor[-1] > melhor[0]:
        return "cresce"
    return "encolhe" if melhor[-1] < melhor[0] else "parado"


def treinar_na_escala(m, semente, barra, treino, validacao):
    """Treina um modelo da fronteira até o maior orçamento, com a mesma taxa constante
    depois do aquecimento para todos (nenhum ponto é favorecido por estar no fim de um
    cosseno); devolve a perda de validação em cada orçamento."""
    B, T = ESCALA["lote"], ESCALA["contexto"]
    marcos = [max(1, round(C / m["flops"])) for C in orcamentos()]
    fixos = L10.lotes_fixos(validacao, B, T, semente + 99)             # os mesmos para todos
    otimizador = L10.adamw(m["modelo"], ESCALA["taxa"])
    gerador = torch.Generator().manual_seed(semente)
    perdas = []
    for passo, _ in L10.treinar(m["modelo"], otimizador, treino, marcos[-1], B, T, ESCALA["taxa"],
                            max(1, marcos[-1] // 20), gerador, final=1.0):   # sem cosseno
        barra.avancar(descricao=f"d = {m['d']}: passo {inteiro(passo)} de "
                      f"{inteiro(marcos[-1])}")
        if passo in marcos:
            perdas.append(L10.avaliar(m["modelo"], fixos))
    return perdas


def segundos_por_passo(m, semente, treino):
    """O tempo de um passo de treino de uma cópia do modelo (a mediana de 3, medidos agora:
    o menor seria o caso otimista numa máquina ocupada)."""
    import copy

    copia = copy.deepcopy(m["modelo"])
    otimizador = L10.adamw(copia, 1e-4)
    x, y = L10.lote(treino, ESCALA["lote"], ESCALA["contexto"],
                torch.Generator().manual_seed(semente))
    medir_passo(copia, otimizador, x, y)                          # o primeiro aquece
    return statistics.median(sum(medir_passo(copia, otimizador, x, y)) for _ in range(3))


@LICAO.experimento(3)
def exp_fronteira(licao):
    args = licao.args
    B, T = ESCALA["lote"], ESCALA["contexto"]
    modelos, Cs = modelos_da_escala(args.semente), orcamentos()
    _, _, _, treino, validacao = licao.uma_vez("dados", L10.dados)
    dizer(f"{len(modelos)} modelos de {ESCALA['camadas']} blocos (cabeças de 16 números), lote "
          f"{B} x {T}, taxa {cientifico(ESCALA['taxa'], 0)}\nconstante depois do "
          f"aquecimento. Cada um treina até {cientifico(Cs[-1], 1)} FLOPs e é medido na\n"
          f"validação em cada orçamento: {', '.join(cientifico(C, 1) for C in Cs)}.\n")
    dizer(f"  {'d':>4} {'N':>8} {'FLOPs por passo':>16} {'passos':>7} {'tokens por N':>13}")
    for m in modelos:
        passos = round(Cs[-1] / m["flops"])
        dizer(f"  {m['d']:>4} {inteiro(m['N']):>8} {inteiro(m['flops']):>16} "
              f"{inteiro(passos):>7} {num(passos * B * T / m['N'], 0):>13}")
    dizer("Com o mesmo compute, o menor dá mais passos e vê mais tokens por parâmetro.")
    with uma_thread():             # modelos minúsculos: a previsão e o treino, com 1 thread
        total = sum(round(Cs[-1] / m["flops"]) * segundos_por_passo(m, args.semente, treino)
                    for m in modelos)
    dizer(f"Treinar os {len(modelos)} leva {duracao(total)} nesta máquina\n"
          "(a mediana de 3 passos de cada, medidos agora com 1 thread, como o treino).")
    if not args.escala:
        dizer("\nPara treiná-los e ver quem ganha em cada orçamento:\n"
              + comando("12_escala.py", "--so", "3", "--escala"))
        return
    perdas = {}
    with uma_thread(), Progresso(sum(round(Cs[-1] / m["flops"]) for m in modelos),
                                 "treinando") as barra:
        for m in modelos:
            perdas[m["N"]] = treinar_na_escala(m, args.semente, barra, treino, validacao)
    melhor = melhores(perdas)
    licao.pausa("a perda de cada modelo em cada orçamento")
    tabela_da_fronteira(modelos, perdas, Cs, melhor)
    if licao.quer_figuras:
        figura_fronteira(licao, modelos, perdas, Cs, melhor)


def tabela_da_fronteira(modelos, perdas, Cs, melhor):
    """A perda de cada modelo em cada orçamento, o melhor de cada um e o veredito: o melhor
    tamanho cresce com o compute (como no Chinchilla), encolhe ou fica parado."""
    B, T = ESCALA["lote"], ESCALA["contexto"]
    dizer("\nPerda de validação em cada orçamento (FLOPs); * = a menor do orçamento:\n")
    dizer(f"  {'N':>8}" + "".join(f"{cientifico(C, 1):>10}" for C in Cs))
    for N, linha in perdas.items():
        dizer((f"  {inteiro(N):>8}" + "".join(
            f"{num(p, 3) + ('*' if melhor[i] == N else ' '):>10}"
            for i, p in enumerate(linha))).rstrip())
    flops = {m["N"]: m["flops"] for m in modelos}
    dizer(f"  {'melhor':>8}" + "".join(f"{inteiro(n):>9} " for n in melhor).rstrip())
    dizer(f"  {'tokens/N':>8}" + "".join(
        f"{num(C / flops[n] * B * T / n, 0):>9} " for C, n in zip(Cs, melhor)).rstrip())
    frase = {"cresce": f"O melhor tamanho cresce com o compute: de {inteiro(melhor[0])} "
                       f"parâmetros em {cientifico(Cs[0], 1)} FLOPs a {inteiro(melhor[-1])} "
                       f"em {cientifico(Cs[-1], 1)}, como no Chinchilla.",
             "encolhe": f"O melhor tamanho ENCOLHEU com o compute: de {inteiro(melhor[0])} "
                        f"a {inteiro(melhor[-1])} parâmetros, o contrário do Chinchilla.",
             "parado": f"O melhor tamanho não mudou nesta faixa: {inteiro(melhor[0])} "
                       "parâmetros em todo orçamento."}[tendencia(melhor)]
    dizer("\n" + quebrar(frase))
    dizer(quebrar("É a abordagem 1 do Chinchilla (lição 09) em miniatura: em cada orçamento, "
                  "o modelo que chegou mais baixo. Os tokens por parâmetro do melhor não são "
                  "os ~20 do Chinchilla: caracteres não são tokens BPE, os modelos são "
                  "minúsculos e o texto se repete."))


def figura_fronteira(licao, modelos, perdas, Cs, melhor):
    fig, ax = figuras.figura(7, 4.4, margens=(0.8, 0.2, 0.6, 0.45))
    for m in modelos:
        ax.plot(Cs, perdas[m["N"]], "o-", ms=4, label=f"d = {m['d']} ({inteiro(m['N'])} "
                "parâmetros)")
    ax.plot(Cs, [perdas[n][i] for i, n in enumerate(melhor)], "k--", lw=1.5, alpha=0.5,
            marker="D", ms=7, mfc="none", label="a fronteira: o melhor em cada orçamento")
    figuras.escala_log(ax, eixo="x")
    ax.set_xticks(Cs, [cientifico(C, 1) for C in Cs])            # os orçamentos da tabela
    ax.minorticks_off()
    ax.set(xlabel="compute (FLOPs contados)", ylabel="perda de validação (nats)",
           title="Mesmo orçamento, tamanhos diferentes: quem chega mais baixo")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    licao.salvar_figura(fig, "12_fronteira.png")


# ============================================================ experimento 4
PROCESSOS = 2            # os experimentos 4 e 5 dividem o lote global em 2
PASSOS_DIVIDIDOS = 10    # passos de treino com --dividir
TETO_GRADIENTE = 1e-6    # |média das partes - lote inteiro|: abaixo disto, arredondamento
TETO_PESOS = 1e-4        # |pesos com 2 processos - com 1| depois dos passos: o AdamW amplia o
#                          arredondamento (medido: ~1e-6); sem a média, dá ~1e-2


def gradientes(modelo, x, y):
    """O gradiente da perda média do lote (x, y), um tensor por peso."""
    modelo.zero_grad(set_to_none=True)
    L10.perda(modelo, x, y).backward()
    return [p.grad.clone() for p in modelo.parameters()]


def norma(tensores):
    return math.sqrt(sum(float((t.double() ** 2).sum()) for t in tensores))


def max_diferenca(a, b):
    """max |a - b|, peso a peso (listas de tensores, ou dois state_dict)."""
    if isinstance(a, dict):
        a, b = list(a.values()), [b[k] for k in a]
    return max(float((p.double() - q.double()).abs().max()) for p, q in zip(a, b))


@LICAO.experimento(4)
def exp_dividir(licao):
    args = licao.args
    config = L10.configuracao(args)
    B, T = lote_divisivel(args.lote), config["contexto"]
    _, _, _, treino, _ = licao.uma_vez("dados", L10.dados)
    modelo = L10.novo_modelo(config, args.semente)
    x, y = L10.lote(treino, B, T, torch.Generator().manual_seed(args.semente))   # (B, T), (B, T)
    a_media_e_o_lote_inteiro(licao, modelo, x, y, PROCESSOS)


def lote_divisivel(B, n=PROCESSOS):
    """O lote, se ele se divide entre os n processos; senão, o experimento fica de fora."""
    if B % n:
        raise ExperimentoPulado(f"--lote {B} não se divide entre {n} processos: use um lote "
                                f"par (exemplo: --lote {n * max(1, B // n)}).")
    return B


def a_media_e_o_lote_inteiro(licao, modelo, x, y, n):
    """O gradiente do lote inteiro contra a média dos gradientes das n fatias (o que o
    all-reduce entrega a cada processo): as normas e a maior diferença, peso a peso."""
    B, T = x.shape
    b = B // n
    todo = gradientes(modelo, x, y)                     # um processo, com o lote inteiro
    partes = [gradientes(modelo, x[distribuido.fatia(B, k, n)], y[distribuido.fatia(B, k, n)])
              for k in range(n)]                        # cada processo, com a sua fatia
    media = media_dos_gradientes(partes)                # o que o all-reduce entrega a todos
    diferenca = max_diferenca(media, todo)
    iguais = licao.verificar(diferenca < TETO_GRADIENTE, "média dos gradientes = lote inteiro")
    dizer(quebrar(f"O lote global do treino da lição 10: {B} sequências de {T} caracteres, "
                  f"no modelo do experimento 1. Dividido entre {n} processos, cada um fica com "
                  f"{b} e calcula o gradiente da perda média das suas:") + "\n")
    for k in range(n):
        fim = f"sequências {k * b} a {(k + 1) * b - 1}"
        dizer(f"  {f'norma do gradiente, processo {k} ({fim})':<54}{num(norma(partes[k]), 2):>8}")
    dizer(f"  {f'a média dos {n} (o all-reduce: soma e divide por {n})':<54}"
          f"{num(norma(media), 2):>8}")
    dizer(f"  {'o lote inteiro, num processo só':<54}{num(norma(todo), 2):>8}")
    dizer(f"  max |média - lote inteiro|, peso a peso: {limite(diferenca, TETO_GRADIENTE)}: "
          + ("iguais." if iguais else "DIFERENTES."))
    dizer(quebrar("A perda é uma média: a média das médias de partes iguais é a média do "
                  "todo, e o gradiente de uma média é a média dos gradientes. Com o mesmo "
                  "gradiente, cada processo dá o mesmo passo do AdamW, e os pesos seguem "
                  "iguais em todos: é o paralelismo de dados (data parallelism)."))


# ============================================================ experimento 5
@LICAO.experimento(5)
def exp_processos(licao):
    args = licao.args
    if distribuido.mundo() > 1:                 # com o torchrun: o treino da lição 10
        return treino_no_torchrun(licao)
    config = L10.configuracao(args)
    B, T, n = lote_divisivel(args.lote), config["contexto"], PROCESSOS
    if not args.dividir:
        dizer(f"Para ver {n} processos de verdade treinando juntos (cada um abre o PyTorch: "
              "uns\n10 a 40 s):\n" + comando("12_escala.py", "--so", "5", "--dividir"))
        dizer_o_torchrun()
        return
    entrada = {"config": config, "semente": args.semente, "taxa": args.taxa, "B": B, "T": T,
               "passos": PASSOS_DIVIDIDOS}
    licao.pausa(f"{n} processos de verdade")
    um, sem, dividido = tres_treinos(entrada, n)
    diferenca, sem_media = (max_diferenca(dividido["pesos"], um["pesos"]),
                            max_diferenca(sem["pesos"], um["pesos"]))
    iguais = licao.verificar(diferenca < TETO_PESOS < sem_media, "2 processos = 1 processo")
    dizer(f"  {f'max |pesos com {n} processos - com 1|':<44}{limite(diferenca, TETO_PESOS):>8}")
    dizer(f"  {'max |pesos sem a média - com 1|':<44}{limite(sem_media, TETO_PESOS):>8}")
    dizer(quebrar("Iguais: dividir o lote entre processos é o mesmo treino (o que sobra é "
                  "arredondamento, que o AdamW amplia um pouco a cada passo); sem a média, "
                  "é outro treino." if iguais else
                  f"DIFERENTES: os {n} processos não deram o treino de 1 processo."))
    dizer_os_tempos(um, dividido, n, contar(L10.novo_modelo(config)))
    dizer_o_torchrun()


def treino_dividido(entrada):
    """O treino curto do experimento 5, sozinho ou num dos processos que lancar() abre: o
    mesmo modelo e os mesmos lotes globais em todos; cada processo treina a sua fatia, e
    o DistributedDataParallel faz a média dos gradientes no backward. Devolve os pesos, o
    tempo de cada passo e o de um all-reduce de N números (com mais de um processo)."""
    _, _, _, treino, _ = L10.dados()
    modelo = L10.novo_modelo(entrada["config"], entrada["semente"])
    otimizador = L10.adamw(modelo, entrada["taxa"])
    rede = distribuido.paralelo(modelo)             # vivo até o fim: o all-reduce medido
    gerador = torch.Generator().manual_seed(entrada["semente"])
    tempos, ultimo = [], time.perf_counter()
    parte = entrada.get("parte") or distribuido.fatia(entrada["B"])   # a fatia deste processo
    for _ in L10.treinar(rede, otimizador, treino, entrada["passos"], entrada["B"], entrada["T"],
                     entrada["taxa"], max(1, entrada["passos"] // 10), gerador, parte=parte):
        agora = time.perf_counter()
        tempos.append(agora - ultimo)
        ultimo = agora
    return {"pesos": {k: v.detach().clone() for k, v in modelo.state_dict().items()},
            "segundos": statistics.median(tempos[1:]),
            "comunicacao": distribuido.tempo_da_media(contar(modelo)),
            "threads": torch.get_num_threads()}


def tres_treinos(entrada, n):
    """(1 processo com o lote inteiro, 1 processo só com a 1ª fatia, n processos), cada um
    com uma thread de conta, como cada um dos n processos (1 thread, 1 núcleo)."""
    B, T, b = entrada["B"], entrada["T"], entrada["B"] // n
    dizer(quebrar(f"{n} processos de verdade (gloo, DistributedDataParallel), "
                  f"{PASSOS_DIVIDIDOS} passos: cada um sorteia o mesmo lote global de {B} e "
                  f"treina as suas {b} sequências. Contra 1 processo com o lote inteiro, e "
                  f"contra 1 processo só com as {b} primeiras (sem a média):"))
    with uma_thread(), Progresso(3, "1 processo") as barra:
        um = treino_dividido(entrada)                           # 1 processo, o lote inteiro
        barra.avancar(descricao="sem a média")
        sem = treino_dividido({**entrada, "parte": slice(0, b)})
        barra.avancar(descricao=f"{n} processos")
        dividido = distribuido.lancar(n, __file__, "treino_dividido", entrada, prazo=120)
        barra.avancar()
    return um, sem, dividido


def dizer_os_tempos(um, dividido, n, N):
    """O tempo de um passo com 1 e com n processos, e o da média sozinha: quando dividir
    rende."""
    t1, t2, com = um["segundos"], dividido["segundos"], dividido["comunicacao"]
    dizer("\nTempo por passo nesta máquina (a mediana, sem o primeiro passo):")
    for nome, t in ((f"1 processo, {plural(um['threads'], 'thread')}", t1),
                    (f"{n} processos, {plural(dividido['threads'], 'thread')} cada", t2),
                    (f"  só a média: um all-reduce de {inteiro(N)} números", com)):
        dizer(f"  {nome:<52}{num(1000 * t, 0):>6} ms")
    if t2 < 0.9 * t1:
        frase = (f"Com {n} processos o passo ficou mais curto: cada um faz metade da conta, "
                 "e a média custa menos do que isso poupa.")
    else:
        frase = (f"Com {n} processos o passo não ficou mais curto: a conta de cada um caiu "
                 "à metade, mas aqui eles disputam os mesmos núcleos e a mesma memória (entre "
                 "si e com os outros programas), e a média ainda soma o seu tempo.")
    dizer(quebrar(frase + " O paralelismo de dados rende quando cada processo tem o seu "
                  "acelerador (ou a sua máquina) e o lote é grande: a conta de cada um "
                  "encolhe com o número de processos, e a média não (ela depende só de N, "
                  "não do lote)."))


def dizer_o_torchrun():
    dizer()
    dizer(quebrar("O treino da lição 10 em vários processos, ou em duas máquinas: este "
                  "experimento rodado pelo torchrun. Os comandos estão na apostila, seção "
                  "\"Dividir o treino\"."))


def treino_no_torchrun(licao):
    """Com o torchrun: o laço de treino da lição 10 (treinar, da peça dela) em todos os
    processos, cada um com a sua fatia de cada lote e o DistributedDataParallel fazendo a
    média dos gradientes; o processo 0 avalia, escreve e grava o checkpoint, que a lição 10
    lê com --amostrar."""
    args = licao.args
    config, n = L10.configuracao(args), distribuido.mundo()
    B, T, passos = args.lote, config["contexto"], args.passos
    _, _, _, treino, validacao = licao.uma_vez("dados", L10.dados)
    modelo = L10.novo_modelo(config, args.semente).to(args.aparelho)
    otimizador = L10.adamw(modelo, args.taxa)
    fixos = L10.lotes_fixos(validacao, B, T, args.semente + 2)   # os da validação da 10
    arquivo = Path(args.checkpoint).resolve() if args.checkpoint else CHECKPOINT_PADRAO
    a_cada, historico = max(1, passos // 10), {"passo": [], "validação": []}
    dizer(quebrar(f"O laço de treino da lição 10: {plural(passos, 'passo')} de {B} x {T}, "
                  f"{B // n} sequências em cada um dos {n} processos.") + "\n")
    dizer(f"  {'passo':>6} {'o lote (a média dos processos)':>31} {'validação':>10}")
    gerador = torch.Generator().manual_seed(args.semente)
    try:
        for passo, p in L10.treinar(distribuido.paralelo(modelo), otimizador, treino, passos, B,
                                    T, args.taxa, L10.passos_de_aquecimento(passos), gerador,
                                    parte=distribuido.fatia(B)):
            p = distribuido.media(p)                     # a perda do lote inteiro
            if distribuido.principal() and (passo % a_cada == 0 or passo == passos):
                historico["passo"].append(passo)
                historico["validação"].append(L10.avaliar(modelo, fixos))
                dizer(f"  {inteiro(passo):>6} {num(p, 2):>31} "
                      f"{num(historico['validação'][-1], 2):>10}")
    except RuntimeError as erro:                         # um processo do grupo caiu
        caiu = distribuido.queda(erro)
        if not isinstance(caiu, distribuido.ProcessoCaiu):
            raise
        dizer("\n" + quebrar(f"O treino parou: {caiu}"))
        sys.exit(1)
    if distribuido.principal():
        L10.salvar(arquivo, modelo, config, passo=passos, historico=historico)
        dizer("\n" + quebrar(f"Checkpoint: {curto(arquivo)}. A lição 10 gera texto com ele "
                             "(cada comando ocupa duas linhas; copie as duas):"))
        dizer(amostrar_com(curto(arquivo)))


CHECKPOINT_PADRAO = RAIZ / "checkpoints" / "12_torchrun.pt"


def amostrar_com(caminho):
    """O --amostrar da lição 10 com este checkpoint, no Windows (com \\) e no Linux/macOS
    (com /), cada um em duas linhas: numa só, passaria de 80 colunas."""
    def arg(texto):
        return f'"{texto}"' if " " in texto else texto

    windows, linux = arg(caminho.replace("/", "\\")), arg(caminho.replace("\\", "/"))
    return (f"  .venv\\Scripts\\python.exe lab\\10_treino.py --amostrar `\n"
            f"      --checkpoint {windows}\n"
            f"  .venv/bin/python lab/10_treino.py --amostrar \\\n"
            f"      --checkpoint {linux}")


def preparar(args):
    """Antes dos experimentos: o que as opções só dizem juntas e o dispositivo (a preparação
    das lições que treinam: no torchrun, a CUDA só com uma GPU para cada processo, e nunca
    o MPS); com o torchrun, o lote dividido entre os processos, o grupo (gloo ou nccl) e só
    o experimento 5. O dispositivo só serve ao treino do torchrun: a linha que diz qual é,
    só com ele. Um pedido que não dá é uso errado: saída 2."""
    n = distribuido.mundo()
    preparar_treino(args, "lab/12_escala.py", processos=n,
                    nesta_maquina=distribuido.nesta_maquina(), anunciar=n > 1)
    distribuido.conferir(args.lote)
    args.aparelho = args.dispositivo
    if n > 1:
        import torch.distributed as dist

        args.aparelho, args.so = distribuido.iniciar(args.dispositivo), [5]
        dizer(quebrar(f"Treino em {n} processos (torchrun, {dist.get_backend()}): cada um "
                      f"treina {args.lote // n} das {args.lote} sequências de cada lote, e só "
                      "o processo 0 escreve na tela e no checkpoint. Com o torchrun, a lição "
                      "roda só o experimento 5."))


if __name__ == "__main__":
    preparar(LICAO.args)
    codigo = LICAO.rodar()          # o próximo passo, a lição 13, sai no resumo
    distribuido.encerrar(codigo)    # com o torchrun, todos os postos saem aqui
    sys.exit(codigo)

