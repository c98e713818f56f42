"""Lição 02 · Embeddings de token (wte) e de posição (wpe)
(leia junto: apostilas/02_embeddings.md)
1. Consultar a tabela = one-hot x matriz
2. Vizinhos mais próximos no wte do GPT-2
3. Posições aprendidas (wpe) contra a tabela senoidal de 2017
4. Normas: linhas do wte por id, linhas do wpe por posição
5. A entrada do bloco 1 e a cabeça de saída são a mesma tabela
6. Os parâmetros do wte e do wpe"""
from comum import Licao, inteiro_entre, opcao, texto_utf8
from comum.opcoes import no_maximo

PALAVRAS = [" Paris", " seven", " 7", " January", " dog", " informação"]
MAX_IDS = 64  # o one-hot de cada id tem 50.257 números: 20.000 ids passavam de 16 GB
LICAO = Licao.da_docstring(__doc__, usa_gpt2={2, 3, 4, 5}, opcoes=[
    opcao("--ids", inteiro_entre(0, 50256, "--ids 5 5 5 7"), None, "experimento 1: estes ids "
          f"em vez de 8 sorteados (ex.: --ids 5 5 5 7; até {MAX_IDS})", "ID", nargs="+",
          action=no_maximo(MAX_IDS, "--ids 5 5 5 7")),
    opcao("--palavras", texto_utf8('--palavras " king"'), PALAVRAS, "experimento 2: as "
          "palavras cujos vizinhos procurar, o espaço na frente conta (padrão: as da apostila)",
          '" palavra"', nargs="+"),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch
import torch.nn.functional as F


# ============================================================ a peça: as duas tabelas
def consulta_e_one_hot(tabela, ids):
    """As duas formas de pegar as linhas `ids` de `tabela` (V, d)."""
    por_indice = tabela[ids]                                   # (n, d)
    one_hot = F.one_hot(ids, tabela.shape[0]).to(tabela.dtype)  # (n, V)
    return por_indice, one_hot, one_hot @ tabela               # (n, V) @ (V, d) = (n, d)


def entrada(wte, wpe, ids):
    """X0 = wte[ids] + wpe[0..T-1]: o vetor de cada token que entra no bloco 1."""
    T = ids.shape[-1]
    return wte[ids] + wpe[torch.arange(T, device=ids.device)]  # (B, T, d) + (T, d)


def vizinhos(wte, ids, k=5):
    """Para cada id, os k tokens de maior similaridade de cosseno com ele (fora ele
    mesmo): [[(id, cosseno), ...], ...]."""
    normalizada = wte / wte.norm(dim=1, keepdim=True)          # (V, d): linhas de norma 1
    ids = torch.as_tensor(ids)                                  # (n,)
    cossenos = normalizada[ids] @ normalizada.T                 # (n, d) @ (d, V) = (n, V)
    cossenos[torch.arange(len(ids)), ids] = -2.0                # fora o próprio token
    valores, indices = cossenos.topk(k, dim=1)                  # (n, k)
    return [list(zip(i.tolist(), v.tolist())) for i, v in zip(indices, valores)]


def senoidal(P, d, dtype=torch.float64):
    """A tabela de posições de 2017 (P, d): PE(m, 2i) = sen(m w_i), PE(m, 2i+1) = cos(m w_i),
    com w_i = 10000^(-2i/d). Fixa: nada nela é aprendido."""
    m = torch.arange(P, dtype=torch.float64)[:, None]                       # (P, 1)
    w = 10_000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)     # (d/2,)
    pe = torch.zeros(P, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(m * w), torch.cos(m * w)          # (P, d/2) cada
    return pe.to(dtype)                                                     # (P, d)


def cossenos_entre_linhas(tabela):
    """Similaridade de cosseno de cada linha com cada outra: (P, d) -> (P, P)."""
    normalizada = tabela / tabela.norm(dim=1, keepdim=True)     # (P, d)
    return normalizada @ normalizada.T                          # (P, P)


def media_por_deslocamento(cos, k):
    """Média da similaridade entre as posições i e i + k, para todo i."""
    return float(torch.diagonal(cos, offset=k).mean())


def componentes_principais(tabela, k=3):
    """As k primeiras componentes principais (P, k) e a fração da variância de cada: os
    autovetores de maior autovalor da covariância (d, d), cada um com o sinal que deixa
    positivo o seu maior valor em módulo (o sinal de um autovetor é arbitrário)."""
    centrada = (tabela - tabela.mean(dim=0)).double()           # (P, d)
    autovalores, autovetores = torch.linalg.eigh(centrada.T @ centrada)  # (d,), (d, d)
    comps = centrada @ autovetores[:, -k:].flip(1)              # (P, d) @ (d, k) = (P, k)
    maiores = comps.gather(0, comps.abs().argmax(0, keepdim=True))  # (1, k)
    comps = comps * maiores.sign()
    return comps.float(), (autovalores[-k:].flip(0) / autovalores.sum()).tolist()


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["consulta_e_one_hot", "entrada", "vizinhos", "senoidal", "cossenos_entre_linhas",
           "media_por_deslocamento", "componentes_principais"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import sys

from comum import (ExperimentoPulado, cientifico, contar, cronometrar, curto, dizer, em_linhas,
                   figuras, importar_licao, inteiro, num, pct, plural, quebrar, tamanho, token)
# contar: a matriz amarrada do GPT-2 conta uma vez

L01 = importar_licao("01_tokens")  # codificar: '<|endoftext|>' digitado é texto, como na 01


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_one_hot(licao):
    V, d, n = 50257, 768, 8
    gerador = torch.Generator().manual_seed(licao.args.semente)
    tabela = torch.empty(V, d).normal_(0, 0.02, generator=gerador)  # (V, d), como o wte
    ids = torch.randint(0, V, (n,), generator=gerador)        # (n,)
    escolhidos = licao.args.ids is not None
    if escolhidos:  # os ids do aluno (a tabela é a mesma: sorteada antes)
        ids = torch.tensor(licao.args.ids)                    # (n,)
        n = len(ids)
    formas = ("id escolhido (--ids)", "ids escolhidos (--ids)") if escolhidos else (
        "id sorteado", "ids sorteados")
    dizer(f"Uma tabela aleatória do tamanho do wte do GPT-2 (V = {inteiro(V)}, d = {d})\n"
          f"e {plural(n, *formas)}. (A conta vale para qualquer tabela.)\n")
    linhas, one_hot, produto = consulta_e_one_hot(tabela, ids)
    dizer(f"  consulta:  tabela[ids]          {tuple(ids.shape)} -> {tuple(linhas.shape)}")
    dizer(f"  one-hot:   one_hot(ids) @ tabela  {tuple(one_hot.shape)} @ {tuple(tabela.shape)}"
          f" = {tuple(produto.shape)}")
    igual = licao.verificar(torch.equal(linhas, produto), "consulta = one-hot x tabela")
    dizer(f"\nAs duas dão exatamente os mesmos números? {'sim' if igual else 'NÃO'} "
          "(cada linha do one-hot\ntem um único 1: o produto só copia a linha escolhida).")
    uns = int((one_hot != 0).sum())
    dizer(f"\n  memória    ids: {inteiro(ids.numel() * ids.element_size())} bytes   "
          f"one-hot: {inteiro(one_hot.numel() * one_hot.element_size())} bytes "
          f"({plural(uns, 'um', 'uns')}, {inteiro(one_hot.numel() - uns)} zeros)")
    dizer(f"  contas     consulta: copia {inteiro(n * d)} números   one-hot: "
          f"{inteiro(2 * n * V * d)} operações")
    t_consulta = cronometrar(lambda: tabela[ids], 200)
    t_produto = cronometrar(lambda: F.one_hot(ids, V).to(tabela.dtype) @ tabela, 3)
    dizer(f"  tempo      o one-hot levou cerca de {inteiro(t_produto / t_consulta)} vezes o "
          "tempo da consulta\n             (o número exato varia de máquina para máquina)")
    tabela.requires_grad_(True)
    (F.one_hot(ids, V).to(tabela.dtype) @ tabela).sum().backward()
    com_gradiente = int(tabela.grad.any(dim=1).sum())         # linhas com algum != 0
    distintos = len(set(ids.tolist()))
    ok = licao.verificar(com_gradiente == distintos, "gradiente só nas linhas usadas")
    usados = plural(distintos, "id usado", "ids usados")
    dizer(f"\nNo treino, o gradiente do one-hot chega a {com_gradiente} das {inteiro(V)} "
          f"linhas: só {'à do' if distintos == 1 else 'às dos'}\n"
          f"{usados} ({'confere' if ok else 'NÃO confere'}). "
          "Por isso nn.Embedding faz a consulta,\ne não o produto: o resultado e o "
          "gradiente são os mesmos, sem as contas\ncom zeros.")
    if escolhidos:  # a soma: cada vez que um id aparece, a linha dele recebe mais 1
        partes = []
        for i in sorted(set(ids.tolist())):
            linha = tabela.grad[i]                                # (d,)
            iguais = bool((linha == linha[0]).all())
            partes.append(f"id {i}: {num(float(linha[0]), 0) if iguais else 'variado'}")
        dizer("\nGradiente de cada linha usada (o mesmo número nas "
              f"{d} coordenadas):\n" + em_linhas([p + "," for p in partes[:-1]] + partes[-1:]))


# ============================================================ experimento 2
COLUNA = 12  # um token por coluna de 12: 2 + 6 colunas = 74, cabe em 80


@LICAO.experimento(2)
def exp_vizinhos(licao):
    modelo, tok = licao.gpt2()
    wte = modelo.transformer.wte.weight.detach()                # (V, d)
    dizer(f"wte: {tuple(wte.shape)}. Para cada palavra, os 5 tokens cujas linhas têm a\n"
          "maior similaridade de cosseno com a dela (1 = mesma direção, 0 = ortogonais).\n")
    listas = [L01.codificar(tok, palavra) for palavra in licao.args.palavras]
    achados = iter(vizinhos(wte, [ids[0] for ids in listas if ids]))
    dizer(f"  {'palavra':<{COLUNA}}os 5 vizinhos e o cosseno de cada um")
    partidas = False
    for j, (palavra, ids) in enumerate(zip(licao.args.palavras, listas)):
        if j and j % 8 == 0:  # muitas palavras: em telas de 8 (--pausa)
            licao.pausa(f"as palavras {j + 1} em diante")
        if not ids:
            dizer(f"  {palavra!r}: texto vazio, nenhum token")
            continue
        perto = next(achados)
        dizer(f"  {token(tok, ids[0], COLUNA - 1):<{COLUNA}}"
              + "".join(f"{token(tok, i, COLUNA - 1):<{COLUNA}}" for i, _c in perto).rstrip())
        nota = "" if len(ids) == 1 else f"({plural(len(ids), 'token')})"
        partidas |= bool(nota)
        dizer(f"  {nota:<{COLUNA}}"
              + "".join(f"{num(c, 2):<{COLUNA}}" for _i, c in perto).rstrip())
    if partidas:
        dizer("\n(N tokens): a palavra é mais de um token; os vizinhos são os do primeiro.")


# ============================================================ experimento 3
DESLOCAMENTOS = [1, 2, 4, 8, 16, 64, 256, 1023]
RAMPA = " .,:-=+*#%@"  # 11 faixas iguais de -1 a 1: o 0 cai no meio da do '='


def mapa(cos, linhas=16, colunas=32):
    """(P, P) -> linhas x colunas (a média de cada bloco), em caracteres, escala -1 a 1."""
    reduzida = F.adaptive_avg_pool2d(cos[None, None].float(), (linhas, colunas))[0, 0]
    return figuras.niveis_ascii(reduzida, -1.0, 1.0, RAMPA)


def marcas_de_posicao(ax, P, eixo="x"):
    """Marcas em 0, P/4, P/2, 3P/4 e P - 1, e o eixo termina na última posição."""
    marcas = sorted({0, P // 4, P // 2, 3 * P // 4, P - 1})
    getattr(ax, f"set_{eixo}ticks")(marcas, [inteiro(m) for m in marcas])
    if not ax.images:
        getattr(ax, f"set_{eixo}lim")(0, P - 1)
    else:  # a imagem vai de -0,5 a P - 0,5, com a posição 0 em cima
        getattr(ax, f"set_{eixo}lim")(*((-0.5, P - 0.5) if eixo == "x" else (P - 0.5, -0.5)))


@LICAO.experimento(3)
def exp_posicoes(licao):
    seno = senoidal(1024, 768)                                  # (1024, 768)
    cos_seno = cossenos_entre_linhas(seno)
    dizer("A tabela senoidal de 2017, no tamanho do GPT-2 (1024 x 768): similaridade de\n"
          "cosseno média entre as posições i e i + k.\n")
    dizer("  " + "".join(f"{'k = ' + str(k):>9}" for k in DESLOCAMENTOS))
    dizer("  " + "".join(f"{num(media_por_deslocamento(cos_seno, k), 3):>9}"
                         for k in DESLOCAMENTOS))
    modelo, _tok = licao.gpt2()
    wpe = modelo.transformer.wpe.weight.detach()                # (P, d)
    P, d = wpe.shape
    cos_wpe = cossenos_entre_linhas(wpe)
    desl = [k for k in DESLOCAMENTOS if k < P]
    dizer(f"\nO wpe aprendido do modelo carregado ({P} x {d}), a mesma medida:\n")
    dizer("  " + "".join(f"{'k = ' + str(k):>9}" for k in desl))
    dizer("  " + "".join(f"{num(media_por_deslocamento(cos_wpe, k), 3):>9}" for k in desl))
    cos_seno_p = cos_seno if (P, d) == (1024, 768) else cossenos_entre_linhas(senoidal(P, d))
    licao.pausa("os mapas de similaridade do wpe e da senoidal")
    faixa = num(1 / len(RAMPA), 2)
    dizer(f"\nMapas de similaridade (posição x posição, {P} x {P} reduzido a 16 x 32;\n"
          f"' ' = -1, '=' = 0 (de -{faixa} a {faixa}), '@' = 1):\n")
    dizer(f"  {'wpe aprendido':<34}{'senoidal de 2017'}")
    for a, b in zip(mapa(cos_wpe), mapa(cos_seno_p)):
        dizer(f"  {a}  {b}")
    comps, fracoes = componentes_principais(wpe)
    licao.pausa("as 3 componentes principais do wpe")
    dizer(f"\nComponentes principais do wpe: as 3 primeiras explicam "
          f"{', '.join(pct(f) for f in fracoes)}\nda variância.")
    xs = list(range(P))
    dizer(figuras.grafico_ascii({f"CP{i + 1}": comps[:, i].tolist() for i in range(3)}, xs,
                                altura=10, rotulo_y="valor da componente",
                                rotulo_x="posição"))
    if licao.quer_figuras:
        licao.salvar_figura(figura_posicoes(cos_wpe, cos_seno_p, comps, fracoes,
                                            licao.modelo_curto), "02_posicoes.png")


def figura_posicoes(cos_wpe, cos_seno, comps, fracoes, nome):
    """Os dois mapas de cosseno, a barra de cor deles (num eixo fino, logo ao lado, para
    não abrir um vão antes do terceiro painel) e as 3 componentes principais."""
    P = cos_wpe.shape[0]
    fig, (mapa, vao1, seno, barra_ax, vao2, linhas) = figuras.figura(
        13, 4.2, ncols=6, margens=(0.7, 0.35, 0.6, 0.4), ajuste={"wspace": 0.05},
        gridspec_kw={"width_ratios": [1, 0.2, 1, 0.05, 0.5, 1.3]})
    for vao in (vao1, vao2):         # os vãos dos rótulos: do eixo y, da barra e das linhas
        fig.delaxes(vao)
    eixos = [mapa, seno, linhas]
    for ax, matriz, titulo in ((eixos[0], cos_wpe, f"wpe de {nome}"),
                               (eixos[1], cos_seno, "senoidal de 2017")):
        imagem = ax.imshow(matriz.float().numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set(title=titulo, xlabel="posição", ylabel="posição")
        marcas_de_posicao(ax, P, "x")
        marcas_de_posicao(ax, P, "y")
    barra = fig.colorbar(imagem, cax=barra_ax)
    barra.set_label("cosseno entre as duas posições")
    for i in range(comps.shape[1]):
        eixos[2].plot(range(P), comps[:, i], label=f"CP{i + 1} ({pct(fracoes[i])})")
    eixos[2].set(title="wpe: componentes principais", xlabel="posição",
                 ylabel="valor da componente")
    marcas_de_posicao(eixos[2], P)
    eixos[2].legend(loc="upper right", framealpha=0.9)   # o tamanho do resto do texto
    return fig


# ============================================================ experimento 4
@LICAO.experimento(4)
def exp_normas(licao):
    modelo, tok = licao.gpt2()
    wte = modelo.transformer.wte.weight.detach()
    wpe = modelo.transformer.wpe.weight.detach()
    normas = wte.norm(dim=1)                                    # (V,)
    V = len(normas)
    faixas = torch.linspace(0, V, 11).round().long().tolist()
    dizer("Norma das linhas do wte por faixa de id (ids pequenos = fusões aprendidas\n"
          "cedo, pares mais frequentes no texto de treino):\n")
    dizer(f"  {'ids':>15} {'média':>8} {'mínima':>8} {'máxima':>8}")
    medias = []
    for a, b in zip(faixas, faixas[1:]):
        trecho = normas[a:b]
        medias.append(float(trecho.mean()))
        dizer(f"  {inteiro(a):>6} a {inteiro(b - 1):>6} {num(medias[-1], 3):>8} "
              f"{num(float(trecho.min()), 3):>8} {num(float(trecho.max()), 3):>8}")
    ordem = normas.argsort()
    dizer(f"\n  {'menores normas':<25}{'maiores normas'}")
    for i, j in zip(ordem[:4].tolist(), ordem.flip(0)[:4].tolist()):
        dizer(f"  {token(tok, i, 16):<17} {num(float(normas[i]), 2):>5}  "
              f"{token(tok, j, 16):<17} {num(float(normas[j]), 2):>5}")
    npos = wpe.norm(dim=1)                                      # (P,)
    razao = float(npos[0] / npos[1:].mean())
    veredito = ("bem maior que" if razao > 1.5 else "bem menor que" if razao < 1 / 1.5
                else "parecida com")
    dizer(f"\nwpe: a linha da posição 0 tem norma {num(float(npos[0]), 3)}; a média das "
          f"outras {len(npos) - 1} é\n{num(float(npos[1:].mean()), 3)} "
          f"({num(razao, 2)}x): a posição 0 tem norma {veredito} a das outras.")
    if licao.quer_figuras:
        licao.salvar_figura(figura_normas(normas, npos, licao.modelo_curto), "02_normas.png")


def figura_normas(normas, npos, nome):
    """A norma de cada linha do wte (um ponto por id) e do wpe (uma linha por posição)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    V = len(normas)
    fig, (ax1, ax2) = figuras.figura(11, 4.2, ncols=2, margens=(0.8, 0.35, 0.6, 0.4),
                                     ajuste={"wspace": 0.28})
    ax1.plot(range(V), normas.numpy(), ".", markersize=2, alpha=0.3)   # visível no projetor
    ax1.set(title=f"wte de {nome}: norma de cada linha", xlabel="id do token",
            ylabel="norma", xlim=(0, V - 1))
    ax1.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    ax1.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: inteiro(x)))  # 15.000
    ax2.plot(range(len(npos)), npos.numpy(), lw=0.8)
    ax2.set(title=f"wpe de {nome}: norma de cada linha", xlabel="posição", ylabel="norma")
    marcas_de_posicao(ax2, len(npos))
    return fig


# ============================================================ experimento 5
FRASE = "The capital of France is"


@LICAO.experimento(5)
def exp_entrada_e_saida(licao):
    modelo, tok = licao.gpt2()
    t = modelo.transformer
    ids = torch.tensor([L01.codificar(tok, FRASE)])             # (1, n)
    n = ids.shape[1]
    with torch.no_grad():
        x = entrada(t.wte.weight, t.wpe.weight, ids)            # (1, n, d)
        saida = modelo(ids, output_hidden_states=True)
    h0 = saida.hidden_states[0]                                 # (1, n, d)
    igual = licao.verificar(torch.equal(x, h0), "wte + wpe = hidden_states[0]")
    dizer(f"\"{FRASE}\": {plural(n, 'token')}.  x = wte[ids] + wpe[0..{n - 1}]  "
          f"{tuple(x.shape)}")
    dizer(f"Igual a hidden_states[0] do transformers? "
          f"{'sim, número por número' if igual else 'NÃO'}.\n")
    mesma = licao.verificar(modelo.lm_head.weight is t.wte.weight, "lm_head é o wte")
    memoria = licao.verificar(modelo.lm_head.weight.data_ptr() == t.wte.weight.data_ptr(),
                              "lm_head na memória do wte")
    dizer(f"lm_head.weight é o wte.weight? {'sim' if mesma else 'NÃO'}; mesma memória? "
          f"{'sim' if memoria else 'NÃO'}.")
    with torch.no_grad():
        final = saida.hidden_states[-1][0, -1]                  # (d,), já depois do ln_f
        produtos = t.wte.weight @ final                         # (V,)
    # Kernels diferentes arredondam diferente: a diferença é medida relativa ao maior
    # logit e impressa como limite (o valor exato muda de processador para processador).
    relativa = float((produtos - saida.logits[0, -1]).abs().max()
                     / saida.logits[0, -1].abs().max().clamp_min(1e-12))
    ok = licao.verificar(relativa < 1e-5, "logits = produtos com o wte")
    dizer(f"Logits da última posição = wte @ (saída do ln_f)? {'sim' if ok else 'NÃO'} "
          f"(diferença relativa\n{'< 1e-5' if ok else cientifico(relativa)}).")
    melhor = int(produtos.argmax())
    dizer(f"O token de maior produto escalar com a saída: {token(tok, melhor, 20)} "
          f"(id {melhor}).")
    dizer("A mesma tabela lê os ids na entrada e escreve as pontuações na saída.")


# ============================================================ experimento 6
def parametros_pelas_pecas(config):
    """Parâmetros do GPT2LMHeadModel desta configuração, contados nas peças do transformers
    (em 'meta': só as formas, sem memória): o modelo sem blocos mais L vezes um bloco."""
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    with torch.device("meta"):
        sem_blocos = GPT2LMHeadModel(GPT2Config(**{**config.to_dict(), "n_layer": 0}))
        bloco = GPT2Block(config)
    return contar(sem_blocos) + config.n_layer * contar(bloco), contar(sem_blocos.transformer.wte)


@LICAO.experimento(6)
def exp_parametros(licao):
    from comum import TAMANHOS_GPT2
    from transformers import GPT2Config

    try:
        modelo, _ = licao.gpt2()
        origem = f"do modelo carregado ({curto(licao.args.modelo)})"
        config = modelo.config
        total = contar(modelo)
    except ExperimentoPulado as motivo:
        dizer(quebrar(f"Sem o modelo ({str(motivo).splitlines()[0]})"))
        origem = "da configuração do gpt2 (sem baixar pesos)"
        config = GPT2Config()
        total, _ = parametros_pelas_pecas(config)
    V, d, P = config.vocab_size, config.n_embd, config.n_positions
    dizer(quebrar(f"Contagem {origem}:") + "\n")   # uma pasta longa quebra a linha
    dizer(f"  wte  {V} x {d} {inteiro(V * d):>14}  {pct(V * d / total):>7} do modelo")
    dizer(f"  wpe  {P} x {d} {inteiro(P * d):>14}  {pct(P * d / total):>7}")
    dizer(f"  modelo inteiro {inteiro(total):>16}")
    dizer(f"\nO wte em memória: {tamanho(4 * V * d)} em fp32, {tamanho(2 * V * d)} em fp16.\n")
    dizer("Nos quatro tamanhos do GPT-2 (só as formas):")
    dizer(f"  {'modelo':<12} {'d':>5} {'wte':>14} {'total':>16} {'wte/total':>10}")
    for nome, (camadas, largura, cabecas) in TAMANHOS_GPT2.items():
        n_total, n_wte = parametros_pelas_pecas(
            GPT2Config(n_layer=camadas, n_embd=largura, n_head=cabecas))
        dizer(f"  {nome:<12} {largura:>5} {inteiro(n_wte):>14} {inteiro(n_total):>16} "
              f"{pct(n_wte / n_total):>10}")
    dizer("\nO wte cresce com d; os blocos, com d²: a fatia do wte cai nos modelos maiores.")


if __name__ == "__main__":
    sys.exit(LICAO.rodar())
