"""Lição 02 · Embeddings de token (wte) e de posição (wpe).

Cada id escolhe uma linha de uma tabela (wte), cada posição escolhe uma linha de
outra (wpe), e a soma das duas é o vetor que entra no primeiro bloco. Leia junto:
apostilas/02_embeddings.md.
"""
import argparse
import sys
import time

import common

PALAVRAS = [" Paris", " seven", " 7", " January", " dog", " informação"]


def _id(texto):
    try:
        i = int(texto)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{texto}' não é um id; exemplo: --ids 5 5 5 7") \
            from None
    if not 0 <= i < 50257:
        raise argparse.ArgumentTypeError(f"{texto}: um id do GPT-2 vai de 0 a 50.256")
    return i


def _argumentos(parser):
    parser.add_argument("--ids", type=_id, nargs="+", metavar="ID",
                        help="experimento 1: estes ids em vez de 8 sorteados (ex.: --ids 5 5 5 7)")
    parser.add_argument("--palavras", nargs="+", default=PALAVRAS, metavar='" palavra"',
                        help="experimento 2: as palavras cujos vizinhos procurar "
                        "(o espaço na frente conta; padrão: as da apostila)")

LICAO = common.Licao(
    "02", "Embeddings de token (wte) e de posição (wpe)",
    [
        (1, "Consultar a tabela = one-hot x matriz", False),
        (2, "Vizinhos mais próximos no wte do GPT-2", True),
        (3, "Posições aprendidas (wpe) contra a tabela senoidal de 2017", True),
        (4, "Normas: linhas do wte por id, linhas do wpe por posição", True),
        (5, "A entrada do bloco 1 e a cabeça de saída são a mesma tabela", True),
        (6, "Os parâmetros do wte e do wpe", False),
    ],
    proxima=("lab/03_attention.py", "apostilas/03_attention.md"),
    argumentos=_argumentos,
)
if __name__ == "__main__":
    LICAO.abrir()  # a primeira linha aparece antes do torch

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

L01 = common.importar_licao("01_tokens")        # para mostrar tokens como na lição 01
dizer, num, inteiro, pct = common.dizer, common.num, common.inteiro, common.pct


def token(tok, i, limite=12) -> str:
    simbolo = tok.convert_ids_to_tokens(int(i))
    if simbolo is None:  # id sem token: o tokenizador é menor que a tabela do modelo
        return f"<id {int(i)}>"
    return L01.ver(L01.para_bytes(simbolo), limite)


# ============================================================ experimento 1
def consulta_e_one_hot(tabela, ids):
    """As duas formas de pegar as linhas `ids` de `tabela` (V, d)."""
    por_indice = tabela[ids]                                   # (n, d)
    one_hot = F.one_hot(ids, tabela.shape[0]).to(tabela.dtype)  # (n, V)
    return por_indice, one_hot, one_hot @ tabela               # (n, V) @ (V, d) = (n, d)


def melhor_tempo(funcao, repeticoes):
    tempos = []
    for _ in range(repeticoes):
        inicio = time.perf_counter()
        funcao()
        tempos.append(time.perf_counter() - inicio)
    return min(tempos)


def exp_one_hot(licao):
    V, d, n = 50257, 768, 8
    gerador = torch.Generator().manual_seed(licao.args.semente)
    tabela = torch.randn(V, d, generator=gerador) * 0.02      # (V, d), como o wte
    ids = torch.randint(0, V, (n,), generator=gerador)        # (n,)
    escolhidos = licao.args.ids is not None
    if escolhidos:  # os ids do aluno (a tabela é a mesma: sorteada antes)
        ids = torch.tensor(licao.args.ids)                    # (n,)
        n = len(ids)
    dizer(f"Uma tabela aleatória do tamanho do wte do GPT-2 (V = {inteiro(V)}, d = {d})\n"
          f"e {n} ids {'escolhidos (--ids)' if escolhidos else 'sorteados'}. "
          "(A conta vale para qualquer tabela.)\n")
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
          f"({uns} uns, {inteiro(one_hot.numel() - uns)} zeros)")
    dizer(f"  contas     consulta: copia {inteiro(n * d)} números   one-hot: "
          f"{inteiro(2 * n * V * d)} operações")
    t_consulta = melhor_tempo(lambda: tabela[ids], 200)
    t_produto = melhor_tempo(lambda: F.one_hot(ids, V).to(tabela.dtype) @ tabela, 3)
    dizer(f"  tempo      o one-hot levou cerca de {inteiro(t_produto / t_consulta)} vezes o "
          "tempo da consulta\n             (o número exato varia de máquina para máquina)")
    tabela.requires_grad_(True)
    (F.one_hot(ids, V).to(tabela.dtype) @ tabela).sum().backward()
    com_gradiente = int((tabela.grad.abs().sum(dim=1) > 0).sum())
    distintos = len(set(ids.tolist()))
    ok = licao.verificar(com_gradiente == distintos, "gradiente só nas linhas usadas")
    dizer(f"\nNo treino, o gradiente do one-hot chega a {com_gradiente} das {inteiro(V)} "
          f"linhas: só às dos\n{distintos} ids usados ({'confere' if ok else 'NÃO confere'}). "
          "Por isso nn.Embedding faz a consulta,\ne não o produto: o resultado e o "
          "gradiente são os mesmos, sem as contas\ncom zeros.")
    if escolhidos:  # a soma: cada vez que um id aparece, a linha dele recebe mais 1
        partes = []
        for i in sorted(set(ids.tolist())):
            linha = tabela.grad[i]                                # (d,)
            iguais = bool((linha == linha[0]).all())
            partes.append(f"id {i}: {num(float(linha[0]), 0) if iguais else 'variado'}")
        dizer("\nGradiente de cada linha usada (o mesmo número nas "
              f"{d} coordenadas):\n  " + ",  ".join(partes))


# ============================================================ experimento 2
def vizinhos(wte, i, k=5):
    """Os k tokens de maior similaridade de cosseno com o token i (fora ele mesmo)."""
    normalizada = wte / wte.norm(dim=1, keepdim=True)          # (V, d)
    cossenos = normalizada @ normalizada[i]                     # (V,)
    cossenos[i] = -2.0                                          # fora o próprio token
    valores, indices = cossenos.topk(k)
    return list(zip(indices.tolist(), valores.tolist()))


def exp_vizinhos(licao):
    modelo, tok = licao.gpt2()
    wte = modelo.transformer.wte.weight.detach()                # (V, d)
    dizer(f"wte: {tuple(wte.shape)}. Para cada palavra, os 5 tokens cujas linhas têm a\n"
          "maior similaridade de cosseno com a dela (1 = mesma direção, 0 = ortogonais).\n")
    for j, palavra in enumerate(licao.args.palavras):
        if j and j % 10 == 0:  # muitas palavras: em telas de 10 (--pausa)
            licao.pausa(f"as palavras {j + 1} em diante")
        ids = tok.encode(palavra)
        if not ids:
            dizer(f"  {palavra!r}: texto vazio, nenhum token")
            continue
        nota = "" if len(ids) == 1 else f"  ({len(ids)} tokens; vizinhos do primeiro)"
        dizer(f"  {token(tok, ids[0])}{nota}")
        dizer("     " + "   ".join(f"{token(tok, j, 10)} {num(c, 2)}"
                                   for j, c in vizinhos(wte, ids[0])))


# ============================================================ experimento 3
DESLOCAMENTOS = [1, 2, 4, 8, 16, 64, 256, 1023]


def cossenos_entre_linhas(tabela):
    normalizada = tabela / tabela.norm(dim=1, keepdim=True)     # (P, d)
    return normalizada @ normalizada.T                          # (P, P)


def media_por_deslocamento(cos, k):
    """Média da similaridade entre as posições i e i + k, para todo i."""
    return float(torch.diagonal(cos, offset=k).mean())


def mapa_ascii(matriz, linhas=16, colunas=32):
    """Mapa de calor em caracteres: média de cada bloco, escala fixa de -1 a 1."""
    rampa = " .:-=+*#%@"
    reduzida = F.adaptive_avg_pool2d(matriz[None, None].float(), (linhas, colunas))[0, 0]
    nivel = ((reduzida + 1) / 2 * (len(rampa) - 1)).round().clamp(0, len(rampa) - 1)
    return ["".join(rampa[int(v)] for v in linha) for linha in nivel]


def componentes_principais(tabela, k=3):
    """As k primeiras componentes principais (P, k) e a fração da variância de cada."""
    centrada = tabela - tabela.mean(dim=0)                      # (P, d)
    U, S, _ = torch.linalg.svd(centrada.double(), full_matrices=False)
    return (U[:, :k] * S[:k]).float(), (S[:k] ** 2 / (S ** 2).sum()).tolist()


def exp_posicoes(licao):
    L08 = common.importar_licao("08_since_2017")                # a tabela de 2017 mora lá
    seno = L08.sinusoidal(1024, 768, torch.float64)             # (1024, 768)
    cos_seno = cossenos_entre_linhas(seno)
    dizer("A tabela senoidal de 2017 (lição 08), no tamanho do GPT-2 (1024 x 768):\n"
          "similaridade de cosseno média entre as posições i e i + k.\n")
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
    seno_p = L08.sinusoidal(P, d, torch.float64)
    licao.pausa("os mapas de similaridade do wpe e da senoidal")
    dizer(f"\nMapas de similaridade (posição x posição, {P} x {P} reduzido a 16 x 32;\n"
          "' ' = -1, '=' = 0, '@' = 1):\n")
    dizer(f"  {'wpe aprendido':<34}{'senoidal de 2017'}")
    for a, b in zip(mapa_ascii(cos_wpe), mapa_ascii(cossenos_entre_linhas(seno_p))):
        dizer(f"  {a}  {b}")
    comps, fracoes = componentes_principais(wpe)
    licao.pausa("as 3 componentes principais do wpe")
    dizer(f"\nComponentes principais do wpe: as 3 primeiras explicam "
          f"{', '.join(pct(f) for f in fracoes)}\nda variância.")
    xs = list(range(P))
    dizer(common.grafico_ascii({f"CP{i + 1}": comps[:, i].tolist() for i in range(3)}, xs,
                               altura=10, rotulo_y="valor da componente",
                               rotulo_x="posição"))
    if not licao.quer_figuras:
        return
    fig, eixos = common.figura(12, 4, ncols=3, margens=(0.6, 0.2, 0.55, 0.35),
                               ajuste={"wspace": 0.3})
    for ax, matriz, titulo in ((eixos[0], cos_wpe, "wpe aprendido"),
                               (eixos[1], cossenos_entre_linhas(seno_p), "senoidal de 2017")):
        imagem = ax.imshow(matriz.float().numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set(title=f"{titulo}: cosseno", xlabel="posição", ylabel="posição")
        common.eixos_inteiros(ax, eixo="x")
        common.eixos_inteiros(ax, eixo="y")
    fig.colorbar(imagem, ax=eixos[:2].tolist(), shrink=0.8)
    for i in range(3):
        eixos[2].plot(xs, comps[:, i], label=f"CP{i + 1} ({pct(fracoes[i])})")
    eixos[2].set(title="wpe: componentes principais", xlabel="posição")
    common.eixos_inteiros(eixos[2])
    eixos[2].legend()
    licao.salvar_figura(fig, "02_posicoes.png")


# ============================================================ experimento 4
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
    dizer("\n  menores normas: " + "  ".join(f"{token(tok, i, 10)} {num(float(normas[i]), 2)}"
                                           for i in ordem[:4]))
    dizer("  maiores normas: " + "  ".join(f"{token(tok, i, 10)} {num(float(normas[i]), 2)}"
                                           for i in ordem.flip(0)[:4]))
    npos = wpe.norm(dim=1)                                      # (P,)
    razao = float(npos[0] / npos[1:].mean())
    veredito = ("bem maior que" if razao > 1.5 else "bem menor que" if razao < 1 / 1.5
                else "parecida com")
    dizer(f"\nwpe: a linha da posição 0 tem norma {num(float(npos[0]), 3)}; a média das "
          f"outras {len(npos) - 1} é\n{num(float(npos[1:].mean()), 3)} "
          f"({num(razao, 2)}x): a posição 0 tem norma {veredito} a das outras.")
    if not licao.quer_figuras:
        return
    fig, (ax1, ax2) = common.figura(10, 4, ncols=2, margens=(0.7, 0.2, 0.55, 0.35),
                                    ajuste={"wspace": 0.25})
    ax1.plot(range(V), normas.numpy(), ",", alpha=0.4)
    ax1.set(title="wte: norma de cada linha", xlabel="id do token", ylabel="norma")
    ax2.plot(range(len(npos)), npos.numpy())
    ax2.set(title="wpe: norma de cada linha", xlabel="posição", ylabel="norma")
    common.eixos_inteiros(ax1, ax2)
    licao.salvar_figura(fig, "02_normas.png")


# ============================================================ experimento 5
FRASE = "The capital of France is"


def exp_entrada_e_saida(licao):
    modelo, tok = licao.gpt2()
    t = modelo.transformer
    ids = torch.tensor([tok.encode(FRASE)])                     # (1, n)
    n = ids.shape[1]
    with torch.no_grad():
        x = t.wte(ids) + t.wpe(torch.arange(n))[None]           # (1, n, d)
        saida = modelo(ids, output_hidden_states=True)
    h0 = saida.hidden_states[0]                                 # (1, n, d)
    igual = licao.verificar(torch.equal(x, h0), "wte + wpe = hidden_states[0]")
    dizer(f"\"{FRASE}\": {n} tokens.  x = wte[ids] + wpe[0..{n - 1}]  {tuple(x.shape)}")
    dizer(f"Igual a hidden_states[0] do transformers? "
          f"{'sim, número por número' if igual else 'NÃO'}.\n")
    mesma = modelo.lm_head.weight is t.wte.weight
    memoria = modelo.lm_head.weight.data_ptr() == t.wte.weight.data_ptr()
    licao.verificar(mesma and memoria, "lm_head é o wte")
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
          f"(diferença relativa\n{'< 1e-5' if ok else common.cientifico(relativa)}).")
    melhor = int(produtos.argmax())
    dizer(f"O token de maior produto escalar com a saída: {token(tok, melhor, 20)} "
          f"(id {melhor}).")
    dizer("A mesma tabela lê os ids na entrada e escreve as pontuações na saída.")


# ============================================================ experimento 6
def exp_parametros(licao):
    from transformers import GPT2Config, GPT2LMHeadModel

    try:
        modelo, _ = licao.gpt2()
        origem = f"do modelo carregado ({licao.args.modelo})"
    except common.ExperimentoPulado as motivo:
        dizer(common.quebrar(f"Sem o modelo ({str(motivo).splitlines()[0]})"))
        with torch.device("meta"):                             # só as formas, sem memória
            modelo = GPT2LMHeadModel(GPT2Config())
        origem = "da configuração do gpt2 (sem baixar pesos)"
    t = modelo.transformer
    V, d = t.wte.weight.shape
    P = t.wpe.weight.shape[0]
    total = common.contar_parametros(modelo)
    dizer(f"Contagem {origem}:\n")
    dizer(f"  wte  {V} x {d} {inteiro(V * d):>14}  {pct(V * d / total):>7} do modelo")
    dizer(f"  wpe  {P} x {d} {inteiro(P * d):>14}  {pct(P * d / total):>7}")
    dizer(f"  modelo inteiro {inteiro(total):>16}")
    dizer(f"\nO wte em memória: {common.tamanho(4 * V * d)} em fp32, "
          f"{common.tamanho(2 * V * d)} em fp16.\n")
    dizer("Nos quatro tamanhos do GPT-2 (só as formas):")
    dizer(f"  {'modelo':<12} {'d':>5} {'wte':>14} {'total':>16} {'wte/total':>10}")
    for nome, (camadas, largura, cabecas) in common.TAMANHOS_GPT2.items():
        with torch.device("meta"):
            m = GPT2LMHeadModel(GPT2Config(n_layer=camadas, n_embd=largura, n_head=cabecas))
        n_wte, n_total = m.transformer.wte.weight.numel(), common.contar_parametros(m)
        dizer(f"  {nome:<12} {largura:>5} {inteiro(n_wte):>14} {inteiro(n_total):>16} "
              f"{pct(n_wte / n_total):>10}")
    dizer("\nO wte cresce com d; os blocos, com d²: a fatia do wte cai nos modelos maiores.")


EXPERIMENTOS = {1: exp_one_hot, 2: exp_vizinhos, 3: exp_posicoes, 4: exp_normas,
                5: exp_entrada_e_saida, 6: exp_parametros}

if __name__ == "__main__":
    sys.exit(LICAO.rodar(EXPERIMENTOS))
