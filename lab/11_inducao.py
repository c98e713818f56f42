"""Lição 11 · Uma cabeça de indução nasce (leia junto: apostilas/11_inducao.md)
1. A tarefa: tokens ao acaso que se repetem
2. O treino ao vivo: a transição de fase
3. O que se formou: a atenção antes e depois, e a ablação
4. O controle: uma camada só, e a armadilha do período fixo
5. O seu GPT: a mesma busca no modelo da lição 10
6. O GPT-2: a mesma busca, e a lição 04 de volta"""
from comum import (Licao, importar_licao, inteiro_entre, opcao, opcao_dispositivo, paginas,
                   real_entre)
from comum.opcoes import lista_de_inteiros
LICAO = Licao.da_docstring(__doc__, usa_gpt2={6}, opcoes=[
    opcao("--passos", inteiro_entre(50, 10**5, "--passos 1500"), 600, "passos de treino", "N"),
    opcao("--camadas", inteiro_entre(1, 8, "--camadas 3"), 2, "blocos do modelo", "L"),
    opcao("--largura", inteiro_entre(8, 512, "--largura 32"), 64, "largura d do modelo", "D"),
    opcao("--cabecas", inteiro_entre(1, 16, "--cabecas 4"), 2, "cabeças (dividem d)", "H"),
    opcao("--lote", inteiro_entre(1, 512, "--lote 16"), 32, "sequências por passo", "B"),
    opcao("--taxa", real_entre(0, 1, "--taxa 3e-4", False), 1e-3, "taxa de aprendizado"),
    opcao("--periodos", lista_de_inteiros("--periodos 4-12"), None,
          "faixa dos períodos sorteados (padrão: 8-24)", "MIN-MAX"),
    opcao("--sem-posicao", "flag", None, "treina sem o embedding de posição (wpe zerado)"),
    opcao("--checkpoint", None, None, "o modelo da lição 10 (checkpoints/10_gpt.pt)", "ARQUIVO"),
    opcao_dispositivo("onde treinar (experimentos 2 a 4): auto escolhe CUDA, depois MPS, "
                      "depois a CPU"),
    *paginas.opcoes(do_treino=True),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import contextlib
import math
import torch
GPT2 = importar_licao("06_gpt2").GPT2                    # o modelo da lição 06, sem cópia
L10 = importar_licao("10_treino")                        # taxa, perda e adamw da lição 10
notas_de_padrao = importar_licao("03_attention").notas_de_padrao   # o token anterior: 03


# ============================================================ a peça
def sequencias(B, gerador, periodos=(8, 24), T=48, V=64):
    """B sequências de T tokens: um prefixo de p tokens sorteados entre V, repetido até
    encher T; cada sequência sorteia o seu período p. Devolve ids (B, T) e p (B,)."""
    p = torch.randint(periodos[0], periodos[1] + 1, (B,), generator=gerador)   # (B,)
    prefixos = torch.randint(0, V, (B, T), generator=gerador)                  # (B, T)
    return prefixos.gather(1, torch.arange(T)[None] % p[:, None]), p           # (B, T)


def repetidas(p, T):
    """(B, T - 1): True nas posições t >= p da entrada, onde o token de t já apareceu
    (em t - p) e o alvo, o token t + 1, também: ali o próximo dá para saber."""
    return torch.arange(T - 1, device=p.device)[None] >= p[:, None]           # (B, T - 1)


def perda_por_posicao(modelo, ids):
    """(B, T - 1): a entropia cruzada de cada posição, em nats (o alvo é o token seguinte)."""
    logits = modelo(ids[:, :-1])                                              # (B, T - 1, V)
    return torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:],
                                             reduction="none")


def perdas_por_parte(modelo, ids, p, cada=None):
    """(perda na parte ao acaso, perda na parte repetida): a entropia cruzada de cada
    posição (`cada`, se já calculada), separada pelas posições de `repetidas`."""
    cada = perda_por_posicao(modelo, ids) if cada is None else cada           # (B, T - 1)
    rep = repetidas(p, ids.shape[1])                                          # (B, T - 1)
    return float(cada[~rep].mean()), float(cada[rep].mean())


def piso_na_posicao(t, p, periodos, V):
    """A menor perda esperada na posição t da parte ao acaso (t < p; o alvo é o token
    t + 1) de uma sequência de período p, para quem sabe como a tarefa é feita mas não sabe
    p. Os períodos ainda possíveis ali são os de max(t + 1, a) a b, todos igualmente
    prováveis; se t + 1 >= a, um deles, p = t + 1, faz do alvo o token 0 (a primeira
    cópia). O melhor palpite dá w = 1/(b - t) ao token 0 e (1 - w)/V a cada um dos V."""
    a, b = periodos
    if t + 1 < a:
        return math.log(V)                           # alvo sorteado, e nada a copiar
    w = 1 / (b - t)
    acerta = -math.log(w + (1 - w) / V)              # o alvo é o token 0
    if t == p - 1:                                   # o alvo é o token p = token 0
        return acerta
    return acerta / V + (V - 1) / V * -math.log((1 - w) / V)   # alvo sorteado entre V


def piso_ao_acaso(p, periodos, V):
    """A menor perda possível na parte ao acaso, a média das posições 0 a p - 1 de cada
    sequência (os períodos p dela, um por sequência), como perdas_por_parte a calcula."""
    p = [int(x) for x in p]
    return sum(piso_na_posicao(t, q, periodos, V) for q in p for t in range(q)) / sum(p)


def treinar(modelo, otimizador, passos, B, maxima, aquecimento, gerador, periodos):
    """O laço da lição 10 (a taxa e o passo dela: a perda, o corte em 1, o AdamW) com um
    lote novo de sequências a cada passo; a taxa fica constante depois do aquecimento."""
    T = modelo.wpe.num_embeddings
    for passo in range(passos):
        otimizador.lr = L10.taxa(passo, passos, maxima, aquecimento, final=1.0)
        ids, _ = sequencias(B, gerador, periodos, T, modelo.wte.num_embeddings)  # (B, T)
        p = L10.passo_de_treino(modelo, otimizador, ids[:, :-1], ids[:, 1:])
        yield passo + 1, p.item()


@torch.no_grad()
def pesos_de_atencao(modelo, ids):
    """Os pesos de atenção de todas as cabeças do GPT2 num forward: (L, B, h, T, T). Cada
    bloco guarda a entrada da sua atenção (já com o ln_1) e pede a ela os pesos."""
    pesos = []
    ganchos = [b.attn.register_forward_pre_hook(
        lambda m, args: pesos.append(m.pesos(args[0]))) for b in modelo.h]  # (B, h, T, T)
    try:
        modelo(ids)
    finally:
        for g in ganchos:
            g.remove()
    return torch.stack(pesos)                                                 # (L, B, h, T, T)


def notas_de_inducao(pesos, p):
    """pesos (L, B, h, T, T), p (B,) -> (L, h): o peso médio que cada posição t >= p dá a
    t - p + 1, o token que veio DEPOIS da ocorrência anterior do token de t. É a nota da
    lição 04 com um período por sequência (lá, um só: t - n + 1)."""
    L, B, h, T, _ = pesos.shape
    t = torch.arange(T, device=pesos.device)
    alvo = (t[None] - p[:, None] + 1).clamp(min=0)                            # (B, T)
    valido = (t[None] >= p[:, None]).to(pesos.dtype)                          # (B, T)
    indice = alvo[None, :, None, :, None].expand(L, B, h, T, 1)
    peso = pesos.gather(-1, indice)[..., 0]                                   # (L, B, h, T)
    return (peso * valido[None, :, None]).sum((1, 3)) / valido.sum()          # (L, h)


def notas_de_inducao_todas(pesos, p):
    """(L, h): como notas_de_inducao, mas somando o peso em TODAS as posições logo depois de
    uma ocorrência anterior do token de t (t - p + 1, t - 2p + 1, ... >= 1), como o
    "prefix matching" de Olsson et al. (2022); a nota da lição conta só a mais recente."""
    L, B, h, T, _ = pesos.shape
    t = torch.arange(T, device=pesos.device)
    volta = t[None, :, None] + 1 - t[None, None, :]            # (1, T, T): t + 1 - s
    alvo = ((t[None, None, :] >= 1) & (volta >= p[:, None, None])
            & (volta % p[:, None, None] == 0))                     # (B, T, T): s = t - kp + 1
    valido = (t[None] >= p[:, None]).to(pesos.dtype)                          # (B, T)
    peso = (pesos * alvo[None, :, None].to(pesos.dtype)).sum(-1)              # (L, B, h, T)
    return (peso * valido[None, :, None]).sum((1, 3)) / valido.sum()          # (L, h)


def notas_de_token_anterior(pesos):
    """(L, h): o peso médio no token anterior (a nota da lição 03), nas B sequências."""
    return notas_de_padrao(pesos)["no token anterior"].mean(1)                # (L, h)


@contextlib.contextmanager
def sem_cabecas(modelo, cabecas):
    """Ablação: dentro do `with`, a saída de cada cabeça (camada, cabeça) da lista vira
    zero antes do c_proj do seu bloco (as outras seguem iguais)."""
    ganchos = []
    for camada, cabeca in cabecas:
        attn = modelo.h[camada].attn
        dh = attn.c_proj.in_features // attn.h

        def zerar(_m, args, fatia=slice(cabeca * dh, (cabeca + 1) * dh)):
            y = args[0].clone()                                               # (B, T, C)
            y[..., fatia] = 0
            return (y,)

        ganchos.append(attn.c_proj.register_forward_pre_hook(zerar))
    try:
        yield modelo
    finally:
        for g in ganchos:
            g.remove()


SUBIU = 0.3              # uma nota "subiu" quando passou disto (ao acaso: ~1/t)


def quem_copia(notas, anteriores, aleatoria, repetida, top=5):
    """O que a busca conclui das notas (L, h) e das duas perdas: (as `top` maiores notas de
    indução, as `top` maiores de token anterior, quantas cabeças passam de SUBIU na de
    indução, se o modelo copia). Cada lista é [(camada, cabeça, nota)], da maior para a
    menor, contando do 0; copia: a perda na parte repetida abaixo da metade da outra."""
    def maiores(tabela):
        h, plano = tabela.shape[1], tabela.flatten()
        return [(i // h, i % h, float(plano[i]))
                for i in plano.argsort(descending=True)[:top].tolist()]

    return (maiores(notas), maiores(anteriores), int((notas > SUBIU).sum()),
            repetida < 0.5 * aleatoria)


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["sequencias", "repetidas", "perdas_por_parte", "piso_ao_acaso", "treinar",
           "pesos_de_atencao", "notas_de_inducao", "notas_de_inducao_todas",
           "notas_de_token_anterior", "sem_cabecas", "SUBIU", "quem_copia"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from comum import (ExperimentoPulado, Progresso, cientifico, comando, curto, dizer, figuras,
                   inteiro, num, plural, quebrar, uma_thread)
from comum.processo import adiantar

V, T = 64, 48            # o vocabulário e o tamanho das sequências da tarefa
PERIODOS = (8, 24)       # o período de cada sequência, sorteado nesta faixa
AQUECIMENTO = 50         # passos de aquecimento da taxa
A_CADA = 50              # passos entre duas linhas da tabela
AVALIACAO = 128          # sequências fixas em que as perdas e as notas são medidas
QUEDA = 0.5              # a maior queda entre duas linhas, em nats, para ser uma transição
ANTERIOR = 0.15          # cabeça de token anterior: o dobro do peso espalhado por igual (~0,07)
QUEBRA = 0.5             # a cópia quebrou: a perda repetida passa da metade de ln V
FIXO = 24                # o período da armadilha do experimento 4
PASSOS_FIXO = 300        # passos da armadilha


def paragrafo(texto):
    """Uma linha em branco e o texto quebrado na largura do terminal."""
    dizer()
    dizer(quebrar(texto))


def periodos(args):
    """(mínimo, máximo) do --periodos, conferido (o período cabe na sequência)."""
    if not args.periodos:
        return PERIODOS
    a, b = min(args.periodos), max(args.periodos)
    if a < 2 or b > T // 2:
        raise ExperimentoPulado(f"--periodos {a}-{b}: use períodos de 2 a {T // 2} (a "
                                f"sequência tem {T} tokens e precisa de duas cópias). "
                                "Exemplo: --periodos 4-12.")
    return a, b


def novo_modelo(camadas, d, h, semente, sem_posicao=False):
    torch.manual_seed(semente)
    modelo = GPT2(camadas, d, h, V, T)
    if sem_posicao:                          # o exercício 4: nenhuma pista de posição
        torch.nn.init.zeros_(modelo.wpe.weight)
        modelo.wpe.weight.requires_grad_(False)
    return modelo


def configuracao(args, camadas=None):
    if args.largura % args.cabecas:
        raise ExperimentoPulado(
            f"--largura {args.largura} não se divide em --cabecas {args.cabecas}: cada "
            "cabeça fica com d/h números (lição 04). Exemplo: --largura 64 --cabecas 4.")
    return {"camadas": camadas or args.camadas, "largura": args.largura,
            "cabecas": args.cabecas, "lote": args.lote, "taxa": args.taxa,
            "passos": args.passos, "periodos": periodos(args),
            "sem_posicao": bool(args.sem_posicao), "semente": args.semente,
            "dispositivo": getattr(args, "dispositivo", "cpu")}


def avaliacao(semente, periodos_=PERIODOS, n=AVALIACAO):
    """As sequências fixas da tabela: as mesmas em toda linha."""
    return sequencias(n, torch.Generator().manual_seed(semente + 1), periodos_, T, V)


@torch.no_grad()
def medir(modelo, ids, p):
    """Uma linha da tabela: as duas perdas e as notas de cada cabeça (L, h), na CPU (o
    modelo pode estar numa GPU: as sequências vão até ele)."""
    ids, p = (t.to(next(modelo.parameters()).device) for t in (ids, p))
    aleatoria, repetida = perdas_por_parte(modelo, ids, p)
    pesos = pesos_de_atencao(modelo, ids[:, :-1])                   # (L, B, h, T-1, T-1)
    return {"aleatória": aleatoria, "repetida": repetida,
            "indução": notas_de_inducao(pesos, p).cpu(),
            "indução, todas as cópias": notas_de_inducao_todas(pesos, p).cpu(),
            "anterior": notas_de_token_anterior(pesos).cpu()}


def rodar_treino(c, ao_medir=None, barra=None, modelo=None):
    """Treina o modelo da configuração c (ou `modelo`, já sorteado) e mede a cada A_CADA
    passos; devolve o histórico (passo, medidas e os pesos em cada linha) e o modelo."""
    modelo = (modelo or novo_modelo(c["camadas"], c["largura"], c["cabecas"], c["semente"],
                                    c["sem_posicao"])).to(c.get("dispositivo", "cpu"))
    otimizador = L10.adamw(modelo, c["taxa"])
    g = torch.Generator().manual_seed(c["semente"])
    ids, p = avaliacao(c["semente"], c["periodos"])
    historico = []

    def guardar(passo):
        historico.append({"passo": passo, **medir(modelo, ids, p),
                          "pesos": {k: v.cpu().clone() for k, v in modelo.state_dict().items()}})
        if ao_medir:
            ao_medir(historico[-1])

    guardar(0)
    aquecimento = min(AQUECIMENTO, c["passos"] // 10)
    for passo, _ in treinar(modelo, otimizador, c["passos"], c["lote"], c["taxa"],
                            aquecimento, g, c["periodos"]):
        if barra:
            barra.avancar(descricao=f"passo {inteiro(passo)}")
        if passo % A_CADA == 0 or passo == c["passos"]:
            guardar(passo)
    return historico, modelo.cpu().eval()              # a análise dos experimentos: na CPU


def treino_padrao(licao, ao_medir=None, barra=None):
    """O treino do experimento 2, feito uma vez por execução (o 3 usa o mesmo)."""
    c = configuracao(licao.args)

    def treinar_():
        with uma_thread():
            return rodar_treino(c, ao_medir, barra)
    return licao.uma_vez("treino", treinar_)


# Os dois treinos do experimento 4 não dependem do 2: quando os dois estão na mesma execução
# (numa CPU de 2 núcleos ou mais), eles começam junto com o 2, numa thread ao lado (adiantar),
# e o 4 só mostra o resultado. A conta é a mesma (uma thread de conta, os pesos sorteados antes).
def configuracoes_de_controle(args):
    """(c1, fixo): 1 bloco na mesma tarefa, e 1 bloco na armadilha do período fixo."""
    c1 = {**configuracao(args), "camadas": 1}
    return c1, {**c1, "periodos": (FIXO, FIXO), "passos": min(PASSOS_FIXO, c1["passos"])}


def controles(licao, threads):
    """Os dois treinos de 1 bloco do experimento 4, começados uma vez por execução numa
    thread ao lado (.resultados(barra): [h1, hf], os históricos). Do experimento 2,
    threads=1: os dois num núcleo, o 2 no outro; do 4, se não começaram antes, threads=2."""
    c1, fixo = configuracoes_de_controle(licao.args)

    def comecar():                        # os pesos sorteados aqui, na thread principal
        modelos = [novo_modelo(c["camadas"], c["largura"], c["cabecas"], c["semente"],
                               c["sem_posicao"]) for c in (c1, fixo)]
        return adiantar([lambda barra, c=c, m=m: rodar_treino(c, barra=barra, modelo=m)[0]
                         for c, m in zip((c1, fixo), modelos)], threads)
    return licao.uma_vez("controles", comecar)


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_tarefa(licao):
    a, b = periodos(licao.args)
    g = torch.Generator().manual_seed(licao.args.semente)
    ids, p = sequencias(3, g, (a, b), T, V)
    dizer(f"Vocabulário de V = {V} tokens sem significado (os números 0 a {V - 1}).\n"
          f"Cada sequência tem {T} tokens: um prefixo sorteado de p tokens, repetido até o\n"
          f"fim, e cada sequência sorteia o seu período p, de {a} a {b}. Três exemplos:\n")
    for linha, periodo in zip(ids.tolist(), p.tolist()):
        dizer(f"  p = {periodo}:")
        texto = " ".join(f"{v:>2}" for v in linha)
        corte = 3 * 16
        for i in range(0, len(texto), corte):
            dizer("    " + texto[i:i + corte].rstrip())
    dizer()
    dizer(quebrar(
        f"O modelo lê as posições 0 a {T - 2} e, em cada uma, prevê o token seguinte. Até a "
        "posição p - 2 o seguinte é sorteado: não há o que aprender, e o melhor palpite é "
        f"1/{V} para cada token. Da posição p - 1 em diante, o seguinte é uma cópia (o token "
        "p repete o 0, o p + 1 repete o 1...): dá para saber, SE o modelo achar a ocorrência "
        "anterior do token atual (e, na posição p - 1, só se soubesse p). O período muda de "
        "uma sequência para outra: olhar uma distância fixa para trás não resolve."))
    licao.pausa("a régua e as duas perdas")
    acaso = math.log(V)
    ids, p = avaliacao(licao.args.semente, (a, b))
    dizer(f"\nA régua: chutar entre os {V} tokens perde ln {V} = {num(acaso, 2)} nats por "
          "token.\nA lição acompanha duas perdas:\n"
          "  parte ao acaso: as posições 0 a p - 1 (os alvos: os tokens 1 a p);\n"
          f"  parte repetida: as posições p a {T - 2}; pode ir a zero.")
    paragrafo(
        "O piso da parte ao acaso não é ln V: o alvo da posição p - 1 é o token p, que já é "
        "a cópia do token 0. O melhor que um modelo faz sem saber p, na posição t: até "
        f"t = {a - 2}, ln {V} (nenhum período acaba ali); de t = {a - 1} em diante, os "
        f"períodos ainda possíveis são t + 1 a {b}, {b} - t deles, e um faz do alvo o token "
        f"0: o melhor palpite dá w = 1/({b} - t) ao token 0 e (1 - w)/{V} a cada um dos {V}. "
        f"A média nas posições da parte ao acaso das {AVALIACAO} sequências fixas: "
        f"{num(piso_ao_acaso(p, (a, b), V), 2)} nats, o piso.")
    rep = repetidas(p, T)
    fracao = float(rep.float().mean())
    dizer(f"\nNas {AVALIACAO} sequências fixas em que a lição mede as perdas, "
          f"{num(100 * fracao, 0)} % das\nposições são da parte repetida.")
    torch.manual_seed(licao.args.semente)
    modelo = GPT2(2, 64, 4, V, T).eval()
    with torch.no_grad():
        aleatoria, repetida = perdas_por_parte(modelo, ids, p)
    perto = licao.verificar(max(abs(aleatoria - acaso), abs(repetida - acaso)) < 0.1,
                            "modelo novo perto de ln V")
    dizer(f"Um modelo novo (o GPT2 da lição 06, 2 blocos, d = 64): {num(aleatoria, 2)} na "
          f"parte ao\nacaso e {num(repetida, 2)} na repetida: "
          + ("as duas no chute, ln V." if perto else "NÃO está no chute."))


# ============================================================ experimento 2
def transicao(historico, queda=QUEDA):
    """(X, Y, queda): as duas linhas seguidas da tabela entre as quais a perda da parte
    repetida mais caiu; None se a maior queda não chega a `queda` nats."""
    pares = list(zip(historico, historico[1:]))
    a, b = max(pares, key=lambda par: par[0]["repetida"] - par[1]["repetida"])
    caiu = a["repetida"] - b["repetida"]
    return (a["passo"], b["passo"], caiu) if caiu >= queda else (None, None, caiu)


def quando_subiu(historico, nota, camada, cabeca):
    """(X, Y): as duas linhas seguidas da tabela entre as quais a nota da cabeça mais
    subiu (a mesma regra da transição, do outro lado)."""
    pares = list(zip(historico, historico[1:]))
    a, b = max(pares, key=lambda par: float(par[1][nota][camada, cabeca]
                                            - par[0][nota][camada, cabeca]))
    return a["passo"], b["passo"]


def nomear(historico):
    """(cabeça de token anterior, cabeças de indução) no fim do treino. A de token
    anterior: (camada, cabeça, nota), a de maior nota na camada 0. As de indução: as
    cabeças das camadas >= 1 com nota acima de SUBIU, da maior para a menor (se nenhuma
    passar, a maior sozinha); com 1 bloco, nenhuma."""
    fim = historico[-1]
    anterior = fim["anterior"][0]
    j = int(anterior.argmax())
    prev = (0, j, float(anterior[j]))
    L, h = fim["indução"].shape
    todas = sorted(((i, k, float(fim["indução"][i, k])) for i in range(1, L)
                    for k in range(h)), key=lambda c: -c[2])
    return prev, [c for c in todas if c[2] > SUBIU] or todas[:1]


def veredito(historico):
    """O que o treino formou, pelas notas e pela perda no fim: "clássico" (a cabeça de
    token anterior da camada 0 acima de ANTERIOR e uma de indução acima de SUBIU),
    "outro jeito" (sem isso, mas a parte repetida abaixo de metade de ln V: copia assim
    mesmo) ou "sem cópia"."""
    prev, ind = nomear(historico)
    if ind and ind[0][2] > SUBIU and prev[2] > ANTERIOR:
        return "clássico"
    return "outro jeito" if historico[-1]["repetida"] < QUEBRA * math.log(V) else "sem cópia"


def cabecalho_da_tabela(L, h):
    mostra = h <= 4
    ant = " ".join(f"{f'0.{j}':>4}" for j in range(h)) if mostra else " 0.*"
    ultima = L - 1
    ind = " ".join(f"{f'{ultima}.{j}':>4}" for j in range(h)) if mostra else f" {ultima}.*"
    return (f"  {'':>6} {'perda':^15}  {'anterior':^{len(ant)}}  {'indução':^{len(ind)}}\n"
            f"  {'passo':>6} {'acaso':>7} {'repet.':>7}  {ant}  {ind}")


def linha_da_tabela(m, h):
    ant, ind = m["anterior"][0], m["indução"][-1]
    if h > 4:
        ant, ind = ant.max()[None], ind.max()[None]
    celulas = lambda v: " ".join(f"{num(float(x), 2):>4}" for x in v)  # noqa: E731
    return (f"  {inteiro(m['passo']):>6} {num(m['aleatória'], 2):>7} "
            f"{num(m['repetida'], 2):>7}  {celulas(ant)}  {celulas(ind)}")


@LICAO.experimento(2)
def exp_treino(licao):
    c = configuracao(licao.args)
    if ((not licao.args.so or 4 in licao.args.so) and c["dispositivo"] == "cpu"
            and (os.cpu_count() or 1) >= 2):
        controles(licao, threads=1)     # os treinos do experimento 4, no outro núcleo
    L, d, h = c["camadas"], c["largura"], c["cabecas"]
    dizer(quebrar(
        f"O GPT2 da lição 06 com {plural(L, 'bloco')}, d = {d}, {h} cabeças, V = {V}, "
        f"T = {T}; {plural(c['passos'], 'passo')} de {c['lote']} sequências novas, AdamW "
        f"com taxa {cientifico(c['taxa'], 0)} (constante depois de "
        f"{plural(min(AQUECIMENTO, c['passos'] // 10), 'passo')} de aquecimento), "
        "corte do gradiente em 1."
        + (" Sem o embedding de posição." if c["sem_posicao"] else "")))
    paragrafo(
        f"A cada {A_CADA} passos, nas sequências fixas: as duas perdas e duas notas por cabeça. "
        "Anterior: o peso médio no token anterior (a nota da lição 03), nas cabeças da "
        f"camada 0. Indução: o peso médio em t - p + 1, o token que veio depois da ocorrência "
        f"anterior do token atual (a nota da lição 04), nas cabeças da camada {L - 1}. "
        "Cabeça j da camada i = i.j.")
    licao.pausa("a tabela do treino")
    dizer("\n" + cabecalho_da_tabela(L, h))
    inicio = time.perf_counter()
    with Progresso(c["passos"], "treinando") as barra:
        historico, _ = treino_padrao(licao, lambda m: dizer(linha_da_tabela(m, h)), barra)
    segundos = time.perf_counter() - inicio
    dizer(f"  ({num(segundos, 0)} s de treino, {num(1000 * segundos / c['passos'], 0)} ms "
          "por passo)")
    licao.pausa("o resumo do treino")
    resumo_do_treino(licao, historico, L)
    if licao.quer_figuras:
        figura_transicao(licao, historico, L)
    licao.verificar(gravar_pagina(licao, historico) == 0, "a página do treino gravada")


def resumo_do_treino(licao, historico, L):
    x, y, caiu = transicao(historico)
    fim = historico[-1]
    acaso = math.log(V)
    c = configuracao(licao.args)
    piso = piso_ao_acaso(avaliacao(c["semente"], c["periodos"])[1], c["periodos"], V)
    dizer()
    dizer(quebrar(f"Parte ao acaso: de {num(historico[0]['aleatória'], 2)} a "
                  f"{num(fim['aleatória'], 2)}, "
                  + ("acima" if fim["aleatória"] > piso else "abaixo")
                  + f" do piso de {num(piso, 2)} (ln V = {num(acaso, 2)}): ali quase não há o "
                  "que aprender."))
    if x is None:
        dizer(quebrar(f"Parte repetida: de {num(historico[0]['repetida'], 2)} a "
                      f"{num(fim['repetida'], 2)}; a maior queda entre duas linhas da tabela "
                      f"foi de {num(caiu, 2)} nats (menos de {num(QUEDA, 1)}): sem transição "
                      "de fase neste treino."))
    else:
        antes = next(m for m in historico if m["passo"] == x)
        dizer(quebrar(f"Parte repetida: {num(historico[0]['repetida'], 2)} no começo, "
                      f"{num(antes['repetida'], 2)} no passo {inteiro(x)}, "
                      f"{num(fim['repetida'], 2)} no fim. A maior queda entre duas linhas "
                      f"da tabela, {num(caiu, 2)} nats, foi entre os passos {inteiro(x)} e "
                      f"{inteiro(y)}: transição de fase entre os passos {inteiro(x)} e "
                      f"{inteiro(y)}."))
    prev, ind = nomear(historico)
    dizer()
    subiu_prev = quando_subiu(historico, "anterior", 0, prev[1])
    dizer(quebrar(f"Cabeça de token anterior (camada 0, a maior nota): {prev[0]}.{prev[1]}, "
                  f"nota {num(prev[2], 2)} no fim; subiu mais entre os passos "
                  f"{inteiro(subiu_prev[0])} e {inteiro(subiu_prev[1])}."))
    if not ind:
        dizer("Cabeça de indução: nenhuma (com 1 bloco não há camada 1).")
        dizer()
        dizer(quebrar(frase_do_veredito(historico)))
        return
    fortes = [c for c in ind if c[2] > SUBIU]
    nomes = ", ".join(f"{i}.{k} ({num(n, 2)})" for i, k, n in ind)
    todas = fim["indução, todas as cópias"]
    subiu = quando_subiu(historico, "indução", ind[0][0], ind[0][1])
    dizer(quebrar((f"Cabeças de indução (camadas 1 em diante, nota acima de {num(SUBIU, 1)} "
                   f"no fim): {nomes}" if fortes else
                   f"Nenhuma cabeça passou de {num(SUBIU, 1)} na nota de indução; a maior: "
                   f"{nomes}")
                  + f"; a nota da {ind[0][0]}.{ind[0][1]} subiu mais entre os passos "
                  f"{inteiro(subiu[0])} e {inteiro(subiu[1])}."))
    dizer(quebrar("A nota conta só a cópia mais recente (t - p + 1); somando todas as "
                  "cópias anteriores (t - p + 1, t - 2p + 1...), como Olsson et al. (2022): "
                  + ", ".join(f"{i}.{k} {num(float(todas[i, k]), 2)}" for i, k, _ in ind)
                  + "."))
    v = veredito(historico)
    if x is not None and v == "clássico":
        junto = subiu == (x, y)
        dizer(quebrar("A nota de indução subiu mais no mesmo intervalo em que a perda "
                      "repetida caiu mais: a cabeça e a transição são a mesma coisa, vista "
                      "de dois lados." if junto else
                      "A nota de indução subiu mais em outro intervalo que o da queda da "
                      "perda (compare as colunas da tabela)."))
    dizer()
    dizer(quebrar(frase_do_veredito(historico)))


def frase_do_veredito(historico):
    """A frase final do experimento 2, escolhida por veredito() (as notas e a perda do fim)."""
    prev, ind = nomear(historico)
    repetida, metade = historico[-1]["repetida"], QUEBRA * math.log(V)
    v = veredito(historico)
    if v == "clássico":
        return (f"Veredito: o circuito clássico, de duas cabeças: a de token anterior "
                f"{prev[0]}.{prev[1]} (acima de {num(ANTERIOR, 2)}) e a de indução "
                f"{ind[0][0]}.{ind[0][1]} (acima de {num(SUBIU, 1)}).")
    if v == "outro jeito":
        return (f"Veredito: sem o circuito clássico (token anterior acima de "
                f"{num(ANTERIOR, 2)} na camada 0 e indução acima de {num(SUBIU, 1)}), mas a "
                f"parte repetida terminou em {num(repetida, 2)}, abaixo de {num(metade, 2)} "
                "(metade de ln V): o modelo aprendeu a copiar de outro jeito. O experimento 3 "
                "zera uma cabeça por vez e mostra de quais a cópia depende, e para onde elas "
                "olham (sozinho: --so 3, com as mesmas opções).")
    return (f"Veredito: sem o circuito clássico, e a parte repetida terminou em "
            f"{num(repetida, 2)}, acima de {num(metade, 2)} (metade de ln V): este treino "
            "ainda não copia (experimente mais passos, --passos 1500).")


def figura_transicao(licao, historico, L):
    passos = [m["passo"] for m in historico]
    prev, ind = nomear(historico)
    fig, (a1, a2) = figuras.figura(7, 5.4, nrows=2, sharex=True,
                                   margens=(0.8, 0.2, 0.6, 0.4), ajuste={"hspace": 0.15})
    a1.plot(passos, [m["aleatória"] for m in historico], "o-", ms=3, label="parte ao acaso")
    a1.plot(passos, [m["repetida"] for m in historico], "s-", ms=3, label="parte repetida")
    a1.axhline(math.log(V), color="gray", ls=":", label=f"ln V = ln {V} (o chute)")
    x, y, _ = transicao(historico)
    if x is not None:
        for ax in (a1, a2):
            ax.axvspan(x, y, color="orange", alpha=0.2)
    a1.set(ylabel="perda (nats)", title="A transição de fase: a perda repetida despenca")
    a1.legend(fontsize=8)
    a1.grid(alpha=0.3)
    for nome, nota, cab in (("token anterior", "anterior", prev),
                            *(("indução", "indução", c) for c in ind)):
        if cab is not None:
            a2.plot(passos, [float(m[nota][cab[0], cab[1]]) for m in historico], "o-", ms=3,
                    label=f"nota de {nome}, cabeça {cab[0]}.{cab[1]}")
    a2.set(xlabel="passo", ylabel="nota", ylim=(0, 1))
    figuras.eixos_inteiros(a2)
    a2.legend(fontsize=8)
    a2.grid(alpha=0.3)
    licao.salvar_figura(fig, "11_transicao.png")


# ============================================================ experimento 3
def modelo_no_passo(licao, historico, passo):
    c = configuracao(licao.args)
    modelo = novo_modelo(c["camadas"], c["largura"], c["cabecas"], c["semente"],
                         c["sem_posicao"])
    linha = next(m for m in historico if m["passo"] == passo)
    modelo.load_state_dict(linha["pesos"])
    return modelo.eval()


def mapas_lado_a_lado(antes, depois, titulos):
    """Dois mapas de calor (T, T) em caracteres, lado a lado (a rampa da lição 03)."""
    esquerda = figuras.niveis_ascii(antes, 0.0, 1.0)
    direita = figuras.niveis_ascii(depois, 0.0, 1.0)
    n = len(esquerda)
    regua = "".join(str(j % 10) for j in range(n))
    linhas = [f"     {titulos[0]:<{n}}   {titulos[1]}", f"     {regua}   {regua}"]
    for i, (a, b) in enumerate(zip(esquerda, direita)):
        linhas.append(f"  {i:>2} {a}   {b}")
    return linhas


@torch.no_grad()
def ablacao(modelo, ids, p):
    """{(camada, cabeça): perda repetida com aquela cabeça zerada}, e a intacta."""
    intacta = perdas_por_parte(modelo, ids, p)[1]
    L, h = len(modelo.h), modelo.h[0].attn.h
    zeradas = {}
    for camada in range(L):
        for j in range(h):
            with sem_cabecas(modelo, [(camada, j)]):
                zeradas[camada, j] = perdas_por_parte(modelo, ids, p)[1]
    return intacta, zeradas


@LICAO.experimento(3)
def exp_formou(licao):
    c = configuracao(licao.args)
    if not licao.ja_feito("treino"):
        dizer("(treinando o modelo do experimento 2 de novo: --so 3 sem o 2)")
    with Progresso(c["passos"], "treinando") as barra:
        historico, modelo = treino_padrao(licao, barra=barra)
    x, y, _ = transicao(historico)
    prev, ind = nomear(historico)
    classico = veredito(historico) == "clássico"
    aval, p = avaliacao(licao.args.semente, c["periodos"])
    intacta, zeradas = ablacao(modelo, aval, p)
    L, h = len(modelo.h), modelo.h[0].attn.h
    antes_passo = x if x is not None else historico[0]["passo"]
    fim = historico[-1]["passo"]
    antes = modelo_no_passo(licao, historico, antes_passo)
    n, periodo = MAPA
    g = torch.Generator().manual_seed(licao.args.semente + 3)
    ids, _ = sequencias(1, g, (periodo, periodo), n, V)                    # (1, 24)
    dizer(f"Uma sequência de {n} tokens com período {periodo}:")
    dizer(quebrar(" ".join(str(v) for v in ids[0].tolist()), recuo=2))
    dizer(quebrar(f"Linha = quem olha (a posição), coluna = para quem. Antes: o modelo no "
                  f"passo {inteiro(antes_passo)}" + (" (o começo da transição)"
                                                      if x is not None else "")
                  + f"; depois: no passo {inteiro(fim)}. Escala de 0 a 1: ' ' abaixo de 0,1, "
                  "'@' acima de 0,9 (a rampa da lição 03)."))
    pesos_a, pesos_d = pesos_de_atencao(antes, ids), pesos_de_atencao(modelo, ids)
    if classico:     # (rótulo, cabeça, o que ela procura)
        mapas = [("de token anterior", prev, "o alvo: t - 1, a diagonal logo abaixo"),
                 ("de indução", ind[0], f"o alvo: a coluna t - {periodo - 1}, a partir da "
                                        f"linha {periodo}")]
    else:            # sem as notas do circuito: as cabeças de que a cópia mais depende
        mapas = [(f"da camada {i}", (i, j, None), "a que mais pesa na ablação, abaixo")
                 for i, j in (max(((i, j) for j in range(h)), key=zeradas.get)
                              for i in sorted({0, L - 1}))]
    for rotulo, cab, olhar in mapas:
        camada, j, _ = cab
        licao.pausa(f"a cabeça {rotulo}, {camada}.{j}")
        dizer(f"\nCabeça {rotulo}, {camada}.{j} ({olhar}):")
        dizer("\n".join(mapas_lado_a_lado(pesos_a[camada, 0, j], pesos_d[camada, 0, j],
                                          (f"antes (passo {inteiro(antes_passo)})",
                                           f"depois (passo {inteiro(fim)})"))))
    if licao.quer_figuras:
        figura_atencao(licao, pesos_a, pesos_d, [(r.removeprefix("de "), cab)
                                                 for r, cab, _ in mapas],
                       (antes_passo, fim), periodo)
    licao.pausa("a ablação")
    acaso = math.log(V)
    dizer(f"\nAblação: zero a saída de uma cabeça (antes do c_proj) e meço de novo a perda "
          f"da\nparte repetida. Intacto: {num(intacta, 2)}; ln V = {num(acaso, 2)}.\n")
    dizer("  camada  " + "".join(f"{f'cabeça {j}':>10}" for j in range(h)))
    for camada in range(L):
        dizer(f"  {camada:>6}  " + "".join(f"{num(zeradas[camada, j], 2):>10}"
                                           for j in range(h)))
    dizer()
    limiar = QUEBRA * acaso

    def frase(perda):
        return (f"acima de {num(limiar, 2)} (metade de ln V): a cópia quebra" if perda > limiar
                else f"abaixo de {num(limiar, 2)}: a cópia segue")
    if not classico:
        ablacao_sem_circuito(intacta, zeradas, limiar, frase)
        return
    cab_prev = prev[:2]
    inducao = [c[:2] for c in ind]
    for i, j in inducao:
        dizer(quebrar(f"Sem a cabeça de indução {i}.{j}: {num(zeradas[i, j], 2)}, "
                      f"{frase(zeradas[i, j])}."))
    if len(inducao) > 1:
        with torch.no_grad(), sem_cabecas(modelo, inducao):
            todas = perdas_por_parte(modelo, aval, p)[1]
        nomes = " e ".join(f"{i}.{j}" for i, j in inducao)
        dizer(quebrar(f"Sem as cabeças de indução {nomes} juntas: {num(todas, 2)}, "
                      f"{frase(todas)}" + (": cada uma sozinha cobre a falta da outra."
                                           if todas > limiar and all(
                                               zeradas[c] <= limiar for c in inducao)
                                           else ".")))
    dizer(quebrar(f"Sem a cabeça de token anterior {cab_prev[0]}.{cab_prev[1]}: "
                  f"{num(zeradas[cab_prev], 2)}, {frase(zeradas[cab_prev])}"
                  + (": as de indução procuram pelo que ela escreveu (a composição K)."
                     if zeradas[cab_prev] > limiar else ".")))
    outras = {k: v for k, v in zeradas.items() if k not in inducao + [cab_prev]}
    if outras:
        outra = min(outras, key=outras.get)
        dizer(quebrar(f"Sem a {outra[0]}.{outra[1]} (a que menos pesa entre as outras): "
                      f"{num(outras[outra], 2)}, {frase(outras[outra])}."))


def ablacao_sem_circuito(intacta, zeradas, limiar, frase):
    """Os vereditos da ablação de um treino sem o circuito clássico (veredito()): cada
    cabeça pelo nome, sem chamar nenhuma de token anterior ou de indução."""
    if intacta > limiar:
        dizer(quebrar(f"Intacto, o modelo já fica acima de {num(limiar, 2)}: não há cópia "
                      "para quebrar."))
        return
    for i, j in sorted(zeradas):
        dizer(quebrar(f"Sem a {i}.{j}: {num(zeradas[i, j], 2)}, {frase(zeradas[i, j])}."))
    quebram = [f"{i}.{j}" for i, j in sorted(zeradas) if zeradas[i, j] > limiar]
    lista = " e ".join([", ".join(quebram[:-1]), quebram[-1]] if len(quebram) > 1 else quebram)
    dizer()
    dizer(quebrar("Nenhuma cabeça tem as notas do circuito clássico, mas a cópia depende "
                  f"de {lista}: é por elas que este modelo copia. Os mapas acima mostram "
                  "para onde olham as que mais pesam." if quebram else
                  "Nenhuma cabeça sozinha quebra a cópia: o trabalho está dividido entre "
                  "elas."))


def figura_atencao(licao, pesos_a, pesos_d, cabecas, passos, periodo):
    """cabecas: [(rótulo, (camada, cabeça, nota))], um par de mapas (antes, depois) por linha."""
    fig, eixos = figuras.figura(6.4, 3.1 * len(cabecas), nrows=len(cabecas), ncols=2,
                                squeeze=False, margens=(0.5, 0.9, 0.5, 0.5),
                                ajuste={"wspace": 0.25, "hspace": 0.35})
    for i, (rotulo, (camada, j, _)) in enumerate(cabecas):
        for k, (pesos, passo) in enumerate(zip((pesos_a, pesos_d), passos)):
            ax = eixos[i, k]
            imagem = ax.imshow(pesos[camada, 0, j].numpy(), cmap="viridis", vmin=0, vmax=1)
            ax.set_title(f"{camada}.{j} ({rotulo}), passo {inteiro(passo)}", fontsize=9)
            ax.set_xlabel("para quem (posição)", fontsize=8)
            ax.set_ylabel("quem olha", fontsize=8)
            figuras.eixos_inteiros(ax, eixo="x")
            figuras.eixos_inteiros(ax, eixo="y")
    barra = fig.add_axes([1 - 0.7 / 6.4, 0.2, 0.15 / 6.4, 0.6])
    fig.colorbar(imagem, cax=barra, label="peso de atenção")
    fig.suptitle(f"Uma sequência de período {periodo}: antes e depois", fontsize=10)
    licao.salvar_figura(fig, "11_atencao.png")


# ============================================================ experimento 4
@LICAO.experimento(4)
def exp_controle(licao):
    c1, fixo = configuracoes_de_controle(licao.args)
    dizer(quebrar(f"Dois treinos de 1 bloco, lado a lado: (a) a mesma tarefa, com "
                  f"{plural(c1['passos'], 'passo')}; (b) a armadilha, período FIXO de "
                  f"{FIXO} ({inteiro(fixo['passos'])} passos): {FIXO} tokens sorteados e "
                  "depois os mesmos de novo, em toda sequência."))
    with Progresso(c1["passos"] + fixo["passos"], "treinando") as barra:
        h1, hf = controles(licao, threads=2).resultados(barra)
    acaso = math.log(V)
    dizer(f"\n  {'':<34} {'acaso':>7} {'repetida':>9} {'indução':>8}")
    linhas = [("(a) 1 bloco, período de "
               f"{c1['periodos'][0]} a {c1['periodos'][1]}", h1),
              (f"(b) 1 bloco, período fixo {FIXO}", hf)]
    for nome, hist in linhas:
        fim = hist[-1]
        dizer(f"  {nome:<34} {num(fim['aleatória'], 2):>7} {num(fim['repetida'], 2):>9} "
              f"{num(float(fim['indução'].max()), 2):>8}")
    dizer("  (perdas no fim; indução: a maior nota entre as cabeças)")
    pisos = [piso_ao_acaso(avaliacao(c["semente"], c["periodos"])[1], c["periodos"], V)
             for c in (c1, fixo)]
    dizer(quebrar(f"O piso da parte ao acaso: {num(pisos[0], 2)} em (a); {num(pisos[1], 2)} em "
                  f"(b), onde todo período acaba na posição {FIXO - 1} e o alvo dela é sempre o "
                  "token 0.", recuo=2))
    r1, rf = h1[-1]["repetida"], hf[-1]["repetida"]
    x, _, caiu = transicao(h1)
    alta = r1 > QUEBRA * acaso
    paragrafo(
        f"(a) Com 1 bloco, a parte repetida termina em {num(r1, 2)}, "
        + ("acima da metade de ln V: nenhuma cabeça de indução se formou" if alta else
           "abaixo da metade de ln V: o modelo achou outro jeito")
        + (f" (e sem transição de fase: a maior queda entre duas linhas foi de "
           f"{num(caiu, 2)} nats)." if x is None else
           f" (houve uma queda de {num(caiu, 2)} nats entre duas linhas)."))
    dizer(quebrar(
        "Uma cabeça de indução precisa de duas etapas: uma cabeça escreve em cada posição "
        "qual token veio antes dela; outra, num bloco SEGUINTE, procura pela posição cujo "
        "token anterior é o token atual. Com um bloco só, nenhuma cabeça lê o que outra "
        "escreveu."))
    nota_fixo = float(hf[-1]["indução"].max())
    paragrafo(
        f"(b) Com o período fixo, 1 bloco chega a {num(rf, 2)} na parte repetida "
        + (f"em {inteiro(fixo['passos'])} passos: " if rf < 1 else ": ")
        + f"basta olhar sempre {FIXO - 1} posições para trás, e o embedding de posição diz "
        "onde é isso. Não precisa de indução: é a armadilha de testar cópia com um "
        "período só."
        + (f" Até a nota de indução cai nela ({num(nota_fixo, 2)}): com p fixo, t - p + 1 "
           "é sempre a mesma distância." if nota_fixo > SUBIU else ""))


# ============================================================ experimentos 5 e 6
@torch.no_grad()
def busca(modelo, sorteio, T_, semente, n=32, periodos_=PERIODOS):
    """A mesma busca em outro modelo: sequências da tarefa com tokens sorteados entre os
    `sorteio` primeiros do vocabulário dele; devolve (notas de indução, notas de token
    anterior, perda ao acaso, perda repetida, o piso da parte ao acaso)."""
    T_ = min(T_, T)
    periodos_ = tuple(min(x, T_ // 2) for x in periodos_)      # duas cópias cabem em T_
    ids, p = sequencias(n, torch.Generator().manual_seed(semente + 5), periodos_, T_, sorteio)
    pesos = pesos_de_atencao(modelo, ids[:, :-1])
    # de 8 em 8 sequências: com os 50.257 tokens do GPT-2, os logits de todas juntas
    # (n x T x V floats) passariam de 300 MB, e a entropia cruzada faz mais duas cópias
    cada = torch.cat([perda_por_posicao(modelo, pedaco) for pedaco in ids.split(8)])
    aleatoria, repetida = perdas_por_parte(modelo, ids, p, cada)
    return (notas_de_inducao(pesos, p), notas_de_token_anterior(pesos), aleatoria, repetida,
            piso_ao_acaso(p, periodos_, sorteio))


def mostrar_busca(notas, anteriores, aleatoria, repetida, piso, V_, top=5):
    L, h = notas.shape
    inducao, anterior, fortes, copia = quem_copia(notas, anteriores, aleatoria, repetida, top)
    dizer("Nota de indução, as maiores (camada.cabeça):")
    dizer("  " + "  ".join(f"{i}.{j} {num(n, 2)}" for i, j, n in inducao))
    dizer("Nota de token anterior, as maiores:")
    dizer("  " + "  ".join(f"{i}.{j} {num(n, 2)}" for i, j, n in anterior))
    dizer(f"Cabeças com nota de indução > {num(SUBIU, 1)}: {fortes} de {L * h}.")
    dizer(quebrar(f"Perda: parte ao acaso {num(aleatoria, 2)}, parte repetida "
                  f"{num(repetida, 2)} (o piso da parte ao acaso: {num(piso, 2)}; ln V = "
                  f"{num(math.log(V_), 2)})."))
    dizer(quebrar("Na parte repetida a perda cai a menos da metade: o modelo copia, "
                  "como as cabeças de indução fazem." if copia else
                  "A perda repetida não cai à metade da outra: este modelo não copia "
                  "sequências ao acaso."))
    return fortes, copia


def sem_o_modelo_da_10(arquivo, motivo):
    """O experimento 5 pulado: o comando que treina o modelo da lição 10 nesse arquivo (o
    experimento 3 dela grava o checkpoint), e o motivo."""
    extra = () if arquivo == L10.CHECKPOINT_PADRAO else ("--checkpoint", curto(arquivo))
    dizer(quebrar("O experimento lê o modelo que o treino da lição 10 grava (cerca de 1 "
                  "minuto):") + "\n" + comando("10_treino.py", *extra))
    return ExperimentoPulado(f"{motivo}\nTreine o modelo com o comando acima e rode esta "
                             "lição de novo.")


@LICAO.experimento(5)
def exp_seu_gpt(licao):
    arquivo = (Path(licao.args.checkpoint).resolve() if licao.args.checkpoint
               else L10.CHECKPOINT_PADRAO)
    try:
        modelo, tok, ck = L10.carregar(arquivo)
    except FileNotFoundError:
        raise sem_o_modelo_da_10(arquivo, f"não achei o modelo da lição 10 "
                                          f"({curto(arquivo)}).") from None
    except Exception as erro:  # noqa: BLE001 - um arquivo que não é checkpoint da 10
        raise sem_o_modelo_da_10(arquivo, f"{curto(arquivo)} não é um checkpoint da lição 10 "
                                          f"({type(erro).__name__}).") from None
    cfg = ck["config"]
    dizer(f"O seu GPT da lição 10 ({arquivo.name}, passo {inteiro(ck.get('passo', 0))}): "
          f"{cfg['camadas']} blocos,\nd = {cfg['largura']}, {cfg['cabecas']} cabeças, "
          f"contexto de {cfg['contexto']} caracteres, treinado nas apostilas.")
    dizer(quebrar(f"A mesma tarefa, com os {len(tok)} caracteres do alfabeto dele no lugar "
                  "dos tokens (caracteres ao acaso: nada que ele tenha lido), e a mesma "
                  "busca por cabeças.\n"))
    _, copia = mostrar_busca(*busca(modelo, len(tok), cfg["contexto"], licao.args.semente),
                             len(tok))
    dizer(quebrar("Ninguém ensinou o seu GPT a copiar: as apostilas repetem palavras e "
                  "frases, e copiar o que já apareceu baixa a perda." if copia else
                  "Copiar também baixaria a perda nas apostilas, que repetem palavras e "
                  "frases, mas este modelo ainda não aprendeu: nesta lição, a transição só "
                  "veio depois de centenas de passos de uma tarefa que é só cópia. Treine "
                  "mais (a opção --passos da lição 10) e rode este experimento de novo."))


@LICAO.experimento(6)
def exp_gpt2(licao):
    hf, _ = licao.gpt2()
    modelo = importar_licao("06_gpt2").nosso_gpt2(hf)       # os mesmos pesos, sem cópia
    cfg = hf.config
    dizer(f"{licao.modelo_curto}: {cfg.n_layer} camadas x {cfg.n_head} cabeças. A mesma "
          f"tarefa, com tokens\nsorteados entre os do vocabulário dele (sem o <|endoftext|>).\n")
    fortes, _ = mostrar_busca(*busca(modelo, cfg.vocab_size - 1, cfg.n_positions,
                                     licao.args.semente), cfg.vocab_size)
    dizer(quebrar("A lição 04 (experimento 5) achou as mesmas cabeças com um período só, de "
                  "50 tokens: a nota aqui é a mesma, com o período sorteado por sequência."
                  if fortes else
                  "Nenhuma cabeça passou de 0,3 nestes pesos. No GPT-2 de verdade, a lição 04 "
                  "(experimento 5) achou cabeças de indução com um período só, de 50 tokens: "
                  "rode as duas com ele e compare."))


# ============================================================ a página do treino
# O treino do experimento 2 num arquivo que abre com um duplo clique (comum/paginas.py), gravado
# no fim do experimento (em --html PASTA; sem ela, em paginas/): a tabela inteira (as duas
# perdas e as notas de cada cabeça a cada A_CADA passos) e, em cada linha, a atenção das
# cabeças de token anterior e de indução (as de nomear(), como no experimento 3) na sequência
# dos mapas do experimento 3, com os pesos guardados naquele passo. Um controle desliza pelos
# passos. tests/test_11_paginas.py confere contra a tabela e os mapas que a lição imprime; o
# treino padrão também mora em apostilas/paginas/ (--html apostilas/paginas).
MAPA = (24, 7)    # a sequência dos mapas (experimento 3 e página): o tamanho e o período


def gravar_pagina(licao, historico):
    """Grava a página do treino (saída 0 ou 1, como a de qualquer página)."""
    return paginas.gravar(licao, lambda: pagina(licao, historico), "11_inducao.html")


def pagina(licao, historico) -> str:
    """O HTML da página: os números de cada linha da tabela e os pesos de atenção das
    cabeças nomeadas em cada passo guardado (float32, o triângulo de baixo)."""
    import base64

    prev, ind = nomear(historico)
    cabecas = [prev[:2], *(c[:2] for c in ind[:1])]          # (camada, cabeça) de cada mapa
    n, periodo = MAPA
    ids, _ = sequencias(1, torch.Generator().manual_seed(licao.args.semente + 3),
                        (periodo, periodo), n, V)                            # (1, n)
    baixo = torch.tril_indices(n, n)                               # (2, n(n+1)/2)
    mapas = []
    with uma_thread():                       # tensores minúsculos, como no treino
        for m in historico:
            pesos = pesos_de_atencao(modelo_no_passo(licao, historico, m["passo"]), ids)
            mapas.append(torch.stack([pesos[c, 0, j][baixo[0], baixo[1]] for c, j in cabecas]))
    mapas = torch.stack(mapas).float().contiguous()                # (linhas, cabeças, n(n+1)/2)
    x, y, caiu = transicao(historico)
    dados = {"V": V, "acaso": math.log(V), "a_cada": A_CADA,
             "passos": [m["passo"] for m in historico],
             "aleatoria": [m["aleatória"] for m in historico],
             "repetida": [m["repetida"] for m in historico],
             "anterior": [m["anterior"].tolist() for m in historico],     # (L, h) por linha
             "inducao": [m["indução"].tolist() for m in historico],
             "cabecas": cabecas, "sequencia": ids[0].tolist(), "periodo": periodo,
             "transicao": [x, y, caiu],
             "mapas": base64.b64encode(mapas.numpy().astype("<f4").tobytes()).decode("ascii")}
    corpo, script, estilo = (paginas.fonte(f"11_inducao.{e}") for e in ("html", "js", "css"))
    return paginas.documento(f"Lição {LICAO.numero} · A transição de fase", corpo, script, dados,
                             estilo, "Uma cabeça de indução nascendo, passo a passo")


if __name__ == "__main__":
    from comum import preparar_treino

    preparar_treino(LICAO.args, "lab/11_inducao.py", "--largura 64 --cabecas 4")
    sys.exit(LICAO.rodar())
