"""Lição 10 · Treine o seu GPT (leia junto: apostilas/10_treino.md)
1. Os dados: as apostilas, caractere por caractere
2. O modelo: o GPT2 da lição 06, pequeno
3. O laço de treino: a perda cai e as amostras viram palavras"""
import math
from pathlib import Path

from comum import (ExperimentoPulado, Licao, RAIZ, importar_licao, inteiro, inteiro_entre, opcao,
                   opcao_dispositivo, paginas, real_entre)

LICAO = Licao.da_docstring(__doc__, opcoes=[
    opcao("--passos", inteiro_entre(1, 10**6, "--passos 2000"), 1000, "passos de treino", "N"),
    opcao("--camadas", inteiro_entre(1, 48, "--camadas 6"), 4, "blocos do modelo", "L"),
    opcao("--largura", inteiro_entre(4, 2048, "--largura 192"), 128, "largura d do modelo", "D"),
    opcao("--cabecas", inteiro_entre(1, 64, "--cabecas 8"), 4, "cabeças, que dividem d", "H"),
    opcao("--lote", inteiro_entre(1, 1024, "--lote 32"), 12, "sequências por passo", "B"),
    opcao("--contexto", inteiro_entre(2, 1024, "--contexto 128"), 64, "caracteres vistos", "T"),
    opcao("--taxa", real_entre(0, 1, "--taxa 3e-3", False), 1e-3, "taxa de aprendizado máxima"),
    opcao("--checkpoint", None, None, "o modelo; cada treino grava por cima dele (padrão: "
          "checkpoints/10_gpt.pt)", "ARQUIVO"),
    opcao("--amostrar", "flag", None, "só gera texto com o --checkpoint e sai (não treina)"),
    opcao("--texto", None, "\n", "começo do texto do --amostrar (padrão: uma linha nova)"),
    opcao("--exportar", None, None, "grava o modelo numa pasta que 04, 05 e 07 leem com "
          "--modelo PASTA; com --amostrar, só exporta o --checkpoint, sem treinar", "PASTA"),
    opcao_dispositivo(),                     # onde treinar: o experimento 3 e o --amostrar
    *paginas.opcoes(do_treino=True),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch
GPT2 = importar_licao("06_gpt2").GPT2               # o modelo da lição 06, sem cópia
escolher = importar_licao("07_generation").escolher  # o sorteio da lição 07


# ============================================================ a peça
def treinar(modelo, otimizador, dados, passos, B, T, maxima, aquecimento, gerador, final=0.1,
            parte=slice(None)):
    """O laço de treino. A cada passo: a taxa do cronograma, um lote sorteado do texto, a
    perda, o gradiente (backward), o corte da norma do gradiente em 1 e um passo do AdamW.
    Devolve (passo, perda) depois de cada passo: quem chama mede, avalia e amostra.
    parte: as sequências do lote que este processo treina (com vários, cada um sorteia o
    mesmo lote global e fica com a sua fatia: a lição 12)."""
    for passo in range(passos):
        otimizador.lr = taxa(passo, passos, maxima, aquecimento, final)
        x, y = lote(dados, B, T, gerador)                        # (B, T), (B, T)
        yield passo + 1, passo_de_treino(modelo, otimizador, x[parte], y[parte]).item()


def passo_de_treino(modelo, otimizador, x, y, marcar=lambda: None):
    """A perda, o gradiente (backward), o corte da norma do gradiente em 1 e um passo do
    AdamW. marcar() entre as partes: a lição 12 cronometra cada uma."""
    p = perda(modelo, x, y)
    marcar()
    otimizador.zero_grad()
    p.backward()
    marcar()
    torch.nn.utils.clip_grad_norm_(modelo.parameters(), 1.0)     # norma total <= 1
    otimizador.step()
    return p


def taxa(passo, passos, maxima, aquecimento, final=0.1):
    """Aquecimento: sobe em linha reta até `maxima`; depois, meio cosseno até
    final x maxima no último passo (final=1: constante depois do aquecimento)."""
    if passo < aquecimento:
        return maxima * (passo + 1) / aquecimento
    andado = (passo - aquecimento) / max(1, passos - 1 - aquecimento)   # de 0 a 1
    return maxima * (final + (1 - final) * (1 + math.cos(math.pi * andado)) / 2)


AQUECIMENTO = 100        # passos de aquecimento da taxa (menos, se o treino for curto)


def passos_de_aquecimento(passos):
    return min(AQUECIMENTO, passos // 10)


def lote(dados, B, T, gerador):
    """B janelas de T + 1 caracteres em lugares sorteados: a entrada x e o alvo y, que é
    o mesmo texto um caractere à frente (cada posição aprende a prever a seguinte)."""
    inicios = torch.randint(len(dados) - T, (B,), generator=gerador).tolist()
    janelas = torch.stack([dados[i:i + T + 1] for i in inicios])  # (B, T + 1)
    return janelas[:, :-1], janelas[:, 1:]                        # (B, T), (B, T)


def perda(modelo, x, y):
    """Entropia cruzada média: -ln da probabilidade que o modelo dá ao caractere certo."""
    x, y = (t.to(next(modelo.parameters()).device) for t in (x, y))  # onde o modelo está
    logits = modelo(x)                                            # (B, T, V)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())  # (B*T,)


def adamw(modelo, maxima, decaimento=0.1):
    """O AdamW do lab (comum/otimizador.py): encolhe as matrizes (decaimento 0,1), não os
    vieses nem os ganhos dos LayerNorm, como no GPT-2 (a lição 14 escolhe o decaimento)."""
    from comum import Adam

    sem = [p for p in modelo.parameters() if p.dim() < 2]
    return Adam(modelo.parameters(), maxima, betas=(0.9, 0.99), decaimento=decaimento,
                sem_decaimento=sem)


ALFABETO = ("\n" + "".join(map(chr, range(32, 127)))     # a linha nova e o ASCII imprimível
            + "áàâãéêíóôõúüçÁÀÂÃÉÊÍÓÔÕÚÜÇ" + "·×—−≈"   # o português e as fórmulas
            + "\ufffd")                                   # qualquer outro caractere


class Caracteres:
    """O tokenizador da lição: um id por caractere do ALFABETO (128 símbolos); um
    caractere de fora vira o último, '\ufffd'. Sem fusões: o modelo aprende a soletrar."""

    def __init__(self, alfabeto=ALFABETO):
        self.alfabeto, self.ids = alfabeto, {c: i for i, c in enumerate(alfabeto)}

    def __len__(self):
        return len(self.alfabeto)

    def codificar(self, texto):
        return [self.ids.get(c, len(self.alfabeto) - 1) for c in texto]

    def decodificar(self, ids):
        return "".join(self.alfabeto[i] for i in ids)


def separar(ids, a_cada=10, pedaco=1000):
    """Treino e validação: um pedaço de `pedaco` caracteres a cada `a_cada` vai para a
    validação, que assim cobre todas as apostilas (só o fim seria outro assunto)."""
    pedacos = [ids[i:i + pedaco] for i in range(0, len(ids), pedaco)]
    treino = [p for k, p in enumerate(pedacos) if k % a_cada != a_cada - 1]
    validacao = [p for k, p in enumerate(pedacos) if k % a_cada == a_cada - 1]
    return (torch.tensor([i for p in treino for i in p]),
            torch.tensor([i for p in validacao for i in p]))


@torch.no_grad()
def avaliar(modelo, lotes):
    """A perda média em lotes fixos: os mesmos a cada avaliação, então a curva só mexe
    quando o modelo muda."""
    return sum(perda(modelo, x, y).item() for x, y in lotes) / len(lotes)


LOTES_DE_AVALIACAO = 8   # lotes fixos de treino e de validação em cada avaliação


def lotes_fixos(ids, B, T, semente, n=LOTES_DE_AVALIACAO):
    gerador = torch.Generator().manual_seed(semente)
    return [lote(ids, B, T, gerador) for _ in range(n)]


@torch.no_grad()
def amostrar(modelo, ids, novos, T, geradores, temperatura=0.8):
    """`novos` caracteres sorteados pelo `escolher` da lição 07, um por vez, vendo só os
    últimos T: o modelo só aprendeu T posições (ids (B, S) -> (B, S + novos)). O sorteio
    é na CPU, com os geradores dela: a mesma amostra em qualquer dispositivo."""
    ids = ids.to(next(modelo.parameters()).device)
    for _ in range(novos):
        logits = modelo(ids[:, -T:])[:, -1].cpu()                 # (B, V): a última posição
        proximo = escolher(logits, temperatura, geradores=geradores)   # (B, 1)
        ids = torch.cat([ids, proximo.to(ids.device)], dim=1)
    return ids


CHECKPOINT_PADRAO = RAIZ / "checkpoints" / "10_gpt.pt"   # onde o treino grava (a 11 o lê)


def salvar(arquivo, modelo, config, **extra):
    """Grava o checkpoint: a configuração, os pesos e o que mais vier (passo, perdas).
    Primeiro num arquivo temporário, depois troca o nome: um Ctrl+C no meio da gravação
    não estraga o checkpoint anterior."""
    import os

    arquivo.parent.mkdir(parents=True, exist_ok=True)
    temporario = arquivo.with_name(f"{arquivo.name}.{os.getpid()}.tmp")   # um por processo
    torch.save({"licao": "10", "config": config, "pesos": modelo.state_dict(), **extra},
               temporario)
    os.replace(temporario, arquivo)


def carregar(arquivo, dispositivo="cpu"):
    """(modelo, tokenizador, checkpoint) de um arquivo gravado por salvar(), no dispositivo
    pedido (um checkpoint gravado numa GPU abre na CPU). Só tensores e números
    (weights_only=True): um checkpoint não executa código ao ser lido."""
    checkpoint = torch.load(arquivo, map_location="cpu", weights_only=True)
    modelo = novo_modelo(checkpoint["config"])
    modelo.load_state_dict(checkpoint["pesos"])
    return modelo.to(dispositivo).eval(), Caracteres(checkpoint["config"]["alfabeto"]), checkpoint


def novo_modelo(config, semente=None):
    """O GPT2 da lição 06 numa configuração (a de um checkpoint: camadas, largura, cabeças,
    contexto e o alfabeto, que dá V), com os pesos iniciais sorteados com a semente."""
    if semente is not None:
        torch.manual_seed(semente)
    return GPT2(config["camadas"], config["largura"], config["cabecas"],
                len(config["alfabeto"]), config["contexto"])


# Os dados: a prosa das apostilas 01 a 09 (sem código, saídas, tabelas e fórmulas em
# destaque), congelada num arquivo por ferramentas/congelar_corpus.py: corrigir uma apostila
# não muda os números desta lição. Exercício 8: troque DADOS pelo caminho de um texto seu.
CORPUS_DO_CURSO = RAIZ / "lab" / "dados" / "apostilas.txt"
DADOS = CORPUS_DO_CURSO


def texto_de_treino():
    """(o texto de DADOS, o arquivo): o que o modelo lê."""
    arquivo = Path(DADOS)
    try:
        return arquivo.read_text(encoding="utf-8", errors="replace"), arquivo
    except FileNotFoundError:
        refazer = (" (a prosa das apostilas 01 a 09): refaça-o com ferramentas/"
                   "congelar_corpus.py" if arquivo == CORPUS_DO_CURSO else "")
        raise ExperimentoPulado(f"não achei {arquivo}, os dados do treino{refazer}.") from None


def dados():
    """(texto, [arquivo], tokenizador, treino, validação). Os experimentos leem uma vez por
    execução (licao.uma_vez("dados", dados))."""
    texto, arquivo = texto_de_treino()
    arquivos = [arquivo]
    if len(texto) < 10_000:
        raise ExperimentoPulado(f"{arquivo} tem {inteiro(len(texto))} caracteres: pouco para "
                                "separar a validação (um pedaço de 1.000 a cada 10 pede pelo "
                                "menos 10.000).")
    tok = Caracteres()
    treino, validacao = separar(tok.codificar(texto))
    return texto, arquivos, tok, treino, validacao


def configuracao(args):
    """A configuração do modelo pedida nas opções --camadas, --largura, --cabecas e
    --contexto (que h divide d, preparar_treino() conferiu): a entrada de novo_modelo."""
    return {"camadas": args.camadas, "largura": args.largura, "cabecas": args.cabecas,
            "contexto": args.contexto, "alfabeto": ALFABETO}


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["treinar", "passo_de_treino", "taxa", "passos_de_aquecimento", "lote", "perda",
           "adamw", "ALFABETO", "Caracteres", "separar", "avaliar", "lotes_fixos", "amostrar",
           "CHECKPOINT_PADRAO", "salvar", "carregar", "novo_modelo", "configuracao",
           "CORPUS_DO_CURSO",
           "texto_de_treino", "dados"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import re
import sys
import time

from comum import (Progresso, cientifico, comando, contar, curto, dizer, figuras, legivel,
                   limite, num, pct, plural, preparar_treino, quebrar, uma_thread)
from comum.pesos_gpt2 import exportar  # o inverso do carregar_gpt2
from comum.processo import ao_interromper_durante
from comum.ritmo import Ritmo

AVALIAR_A_CADA = 100     # passos entre duas avaliações (e dois checkpoints)
NOVOS = 240              # caracteres de cada amostra
AMOSTRAS = 4             # amostras sorteadas juntas em cada ponto (a estatística usa todas)
TEMPERATURA = 0.8
LIMIAR_VALIDACAO = 2.4   # a perda de validação do treino padrão termina abaixo disto
MELHORA = 0.1            # as amostras melhoraram: +10 pontos de palavras que existem
PALAVRA = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]{3,}")  # "palavra": 3 letras ou mais seguidas


def entropia_ngrama(treino, validacao, n, V, alfa=0.1):
    """Perda de validação de um modelo que só conta frequências no treino: n = 1, a de
    cada caractere; n = 2, a de cada caractere depois do anterior (suavizada com alfa)."""
    if n == 1:
        contas = torch.bincount(treino, minlength=V).double() + alfa
        return float(-(contas / contas.sum()).log()[validacao].mean())
    pares = torch.bincount(treino[:-1] * V + treino[1:], minlength=V * V).double()
    contas = pares.view(V, V) + alfa                              # (anterior, seguinte)
    logp = (contas / contas.sum(1, keepdim=True)).log()
    return float(-logp[validacao[:-1], validacao[1:]].mean())


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_dados(licao):
    texto, arquivos, tok, treino, validacao = licao.uma_vez("dados", dados)
    fora = sum(1 for c in texto if c not in tok.ids)
    if arquivos[0] == CORPUS_DO_CURSO:
        dizer(f"Os dados são o próprio curso: a prosa das apostilas 01 a 09 (sem código,\n"
              f"saídas, tabelas e fórmulas em destaque), congelada em lab/dados/apostilas.txt:"
              f"\n{inteiro(len(texto))} caracteres.")
    else:
        dizer(quebrar(f"Os dados: {curto(arquivos[0])}, {inteiro(len(texto))} caracteres."))
    dizer(f"\nO tokenizador: um id por caractere de um alfabeto fixo de {len(tok)} símbolos: "
          "a linha\nnova, o ASCII visível, as letras acentuadas do português, · × — − ≈ e um "
          f"para\n'qualquer outro'. Fora do alfabeto: {inteiro(fora)} caracteres "
          f"({pct(fora / len(texto), 2)}).")
    exemplo = "A atenção é uma média."
    ids = tok.codificar(exemplo)
    ok = licao.verificar(tok.decodificar(ids) == exemplo, "ida e volta")
    dizer(f"  \"{exemplo}\" -> {ids[:7]}... ({len(ids)} ids)")
    dizer(f"  e de volta: \"{tok.decodificar(ids)}\" ({'igual' if ok else 'DIFERENTE'})")
    dizer(f"\nTreino e validação: um pedaço de 1.000 caracteres a cada 10 fica para a\n"
          f"validação, que o modelo nunca vê no treino: treino {inteiro(len(treino))}, "
          f"validação {inteiro(len(validacao))}.")
    V = len(tok)
    uni, bi = (entropia_ngrama(treino, validacao, n, V) for n in (1, 2))
    dizer(f"\nTrês réguas para a perda (nats por caractere, na validação):\n"
          f"  chutar entre os {V} símbolos:              ln {V} = {num(math.log(V), 2)}\n"
          f"  só a frequência de cada caractere:          {num(uni, 2)}\n"
          f"  a frequência depois do caractere anterior:  {num(bi, 2)}\n"
          "Um modelo abaixo da última aprendeu mais que pares de letras.")


# ============================================================ experimento 2
@LICAO.experimento(2)
def exp_modelo(licao):
    L06 = importar_licao("06_gpt2")
    config = configuracao(licao.args)
    L, d, h, T = config["camadas"], config["largura"], config["cabecas"], config["contexto"]
    _, _, tok, _, validacao = licao.uma_vez("dados", dados)
    V = len(tok)
    modelo = novo_modelo(config, licao.args.semente)
    N = contar(modelo)
    ok = licao.verificar(N == L06.parametros_gpt2(L, d, V, T), "N = fórmula da lição 06")
    dizer(f"O GPT2 da lição 06 com {L} blocos, d = {d}, {h} cabeças, {T} posições e um\n"
          f"vocabulário de {V} caracteres: N = {inteiro(N)} parâmetros\n"
          f"(= 12Ld² + 13Ld + Vd + Td + 2d: {'confere' if ok else 'NÃO confere'} com a "
          "conta da lição 06).")
    blocos = contar(modelo.h)
    dizer(f"  blocos {inteiro(blocos)} ({pct(blocos / N)}), wte {inteiro(V * d)} (também a "
          f"cabeça de saída), wpe {inteiro(T * d)}")
    inicial = avaliar(modelo, lotes_fixos(validacao, licao.args.lote, T, 1))
    perto = licao.verificar(abs(inicial - math.log(V)) < 0.1, "modelo novo perto de ln V")
    dizer(f"\nUm modelo novo (a inicialização do GPT-2, iniciar_como_gpt2 da lição 06) perde\n"
          f"{num(inicial, 2)} na validação, "
          + (f"a menos de 0,1 de ln V = {num(math.log(V), 2)}: ainda chuta." if perto else
             f"longe de ln V = {num(math.log(V), 2)} (mais de 0,1)."))


# ============================================================ experimento 3
def caminho_checkpoint(args):
    return Path(args.checkpoint).resolve() if args.checkpoint else CHECKPOINT_PADRAO


def comando_amostrar(arquivo, *outros):
    """O comando que gera texto com este checkpoint (as duas formas: Windows e Linux)."""
    extra = () if arquivo == CHECKPOINT_PADRAO else ("--checkpoint", curto(arquivo))
    return comando("10_treino.py", "--amostrar", *extra, *outros)


@LICAO.experimento(3)
def exp_treino(licao):
    args = licao.args
    config = configuracao(args)
    _, _, tok, treino, validacao = licao.uma_vez("dados", dados)
    B, T, passos = args.lote, config["contexto"], args.passos
    modelo = novo_modelo(config, args.semente).to(getattr(args, "dispositivo", "cpu"))
    otimizador = adamw(modelo, args.taxa)
    arquivo = caminho_checkpoint(args)
    dizer_o_plano(args, T, len(treino), arquivo)
    fixos = {"treino": lotes_fixos(treino, B, T, args.semente + 1),
             "validação": lotes_fixos(validacao, B, T, args.semente + 2)}
    vocabulario = set(PALAVRA.findall(tok.decodificar(treino.tolist())))
    a_cada, marcos = pontos_de_avaliacao(passos)
    historico = {"passo": [], "treino": [], "validação": [], "lote": []}  # lote: cada passo
    amostras = {}                                   # passo -> (palavras, existem, 1ª amostra)
    guardado = {"passo": None}                      # o que o Ctrl+C diz que ficou no disco
    licao.pausa("o treino, uma linha a cada avaliação")
    dizer(f"\n  {'passo':>6} {'taxa':>7} {'treino':>7} {'validação':>10} {'tempo':>9}")
    with ao_interromper_durante(lambda: dizer_o_que_ficou(arquivo, guardado["passo"])):
        for passo, tempo in treino_com_barra(modelo, otimizador, treino, args, historico):
            if passo % a_cada and passo != passos:
                continue
            avaliar_e_guardar(modelo, fixos, historico, passo, arquivo, config)
            guardado["passo"] = passo
            dizer(f"  {inteiro(passo):>6} {cientifico(otimizador.lr, 1) if passo else '':>7} "
                  f"{num(historico['treino'][-1], 2):>7} "
                  f"{num(historico['validação'][-1], 2):>10} {num(tempo, 1):>7} s")
            if passo in marcos:
                amostras[passo] = amostrar_e_contar(modelo, tok, T, args.semente, vocabulario)
                mostrar_amostra(passo, *amostras[passo])
    reais = dizer_o_veredito(historico, amostras, passos, tok, validacao, vocabulario)
    mostrar_amadurecendo(amostras)
    dizer(f"\nCheckpoint: {curto(arquivo)} (passo {inteiro(passos)}). Gere mais texto com "
          f"ele:\n{comando_amostrar(arquivo)}")
    licao.verificar(exportar_e_dizer(args, modelo, tok, config), "a pasta do transformers")
    N, bigrama = contar(modelo), entropia_ngrama(treino, validacao, 2, len(tok))
    if licao.quer_figuras:
        figura_curvas(licao, historico, len(tok), N, bigrama)
    ok = gravar_pagina(licao, config, N, bigrama, historico, amostras, reais) == 0
    licao.verificar(ok, "a página")


def dizer_o_plano(args, T, caracteres_de_treino, arquivo):
    """O treino em uma frase (passos, lote, épocas, o AdamW e o cronograma) e, se o
    checkpoint já existe, o aviso de que este treino grava por cima."""
    B, passos, aquecimento = args.lote, args.passos, passos_de_aquecimento(args.passos)
    dizer(quebrar(f"{plural(passos, 'passo')} de {B} x {T} = {inteiro(B * T)} caracteres "
                  f"({inteiro(passos * B * T)} no total, "
                  f"{num(passos * B * T / caracteres_de_treino, 1)} épocas do texto de treino); "
                  f"AdamW com taxa máxima {cientifico(args.taxa, 0)}, "
                  + (f"aquecimento de {plural(aquecimento, 'passo')}" if aquecimento else
                     "sem aquecimento")
                  + f" e cosseno até {cientifico(args.taxa / 10, 0)}; corte da norma do "
                  "gradiente em 1; decaimento de peso 0,1."))
    if arquivo.exists():
        dizer("\n" + quebrar(f"Aviso: este treino grava por cima de {curto(arquivo)}, o "
                             "modelo de um treino anterior. Para guardar os dois, treine com "
                             "--checkpoint outro.pt."))


def pontos_de_avaliacao(passos):
    """(a cada quantos passos avaliar e gravar, os passos com amostra): uma avaliação a cada
    100 passos (a cada décimo do treino, se ele for curto); amostras no começo, perto de
    1/10 e de 1/3 do treino e no fim."""
    a_cada = min(AVALIAR_A_CADA, max(1, passos // 10))
    marcos = {0, round(passos / 10 / a_cada) * a_cada, round(passos / 3 / a_cada) * a_cada, passos}
    return a_cada, sorted(marcos)


def treino_com_barra(modelo, otimizador, treino, args, historico):
    """O laço da peça com a barra de progresso (os tokens/s das últimas 20 passadas), a
    perda do lote de cada passo no histórico e (passo, segundos desde o começo) a quem
    chama, também o passo 0."""
    B, T = args.lote, args.contexto
    ritmo = ritmo_do_treino(modelo, treino, args)
    ritmo.comecar()         # 1 thread ou todas: o que a máquina entrega agora (já no passo 0)
    inicio = time.perf_counter()
    yield 0, 0.0
    ultimo, janela = time.perf_counter(), []
    gerador = torch.Generator().manual_seed(args.semente)
    with Progresso(args.passos, "treinando") as barra:
        for passo, p in treinar(modelo, otimizador, treino, args.passos, B, T, args.taxa,
                                passos_de_aquecimento(args.passos), gerador):
            historico["lote"].append(p)
            agora = time.perf_counter()
            ritmo.depois_do_passo(agora - ultimo)
            janela = (janela + [agora - ultimo])[-20:]
            barra.avancar(descricao=f"passo {inteiro(passo)}, "
                          f"{inteiro(B * T * len(janela) / sum(janela))} tokens/s")
            yield passo, agora - inicio
            ultimo = time.perf_counter()                 # sem o tempo de avaliar e amostrar
    ritmo.terminar()
    if ritmo.resumo():
        dizer(quebrar(ritmo.resumo()))


def ritmo_do_treino(modelo, treino, args):
    """O Ritmo do treino (comum/ritmo.py): a sonda é a perda e o backward de um lote fixo,
    sorteado à parte (não gasta o gerador dos lotes), e os gradientes que ela deixa o passo
    seguinte zera. Só na CPU."""
    x, y = lote(treino, args.lote, args.contexto, torch.Generator().manual_seed(args.semente + 3))

    def sonda():
        perda(modelo, x, y).backward()
        for p in modelo.parameters():
            p.grad = None

    return Ritmo(torch, sonda, ativo=getattr(args, "dispositivo", "cpu") == "cpu")


def dizer_o_que_ficou(arquivo, passo):
    """O que o Ctrl+C diz: o último checkpoint gravado."""
    if passo is not None:
        dizer(f"\nO checkpoint do passo {inteiro(passo)} ficou em {curto(arquivo)}; gere "
              f"texto com ele:\n" + comando_amostrar(arquivo))


def avaliar_e_guardar(modelo, fixos, historico, passo, arquivo, config):
    """As perdas nos lotes fixos de treino e de validação, no histórico, e o checkpoint."""
    for nome, lotes in fixos.items():
        historico[nome].append(avaliar(modelo, lotes))
    historico["passo"].append(passo)
    salvar(arquivo, modelo, config, passo=passo, historico=historico)


def amostrar_e_contar(modelo, tok, T, semente, vocabulario):
    """(palavras de 3+ letras, quantas existem no texto de treino, a 1ª amostra) das
    AMOSTRAS amostras de um ponto: as mesmas sementes em todo ponto."""
    geradores = [torch.Generator().manual_seed(semente + 10 + k) for k in range(AMOSTRAS)]
    inicio = torch.full((AMOSTRAS, 1), tok.ids["\n"])
    saida = amostrar(modelo, inicio, NOVOS, T, geradores, TEMPERATURA)
    textos = [tok.decodificar(linha[1:].tolist()) for linha in saida]
    return (*palavras_conhecidas(textos, vocabulario), textos[0])


def palavras_conhecidas(amostras, vocabulario):
    """(palavras de 3+ letras nas amostras, quantas delas existem no texto de treino)."""
    achadas = [w for texto in amostras for w in PALAVRA.findall(texto)]
    return len(achadas), sum(w in vocabulario for w in achadas)


def mostrar_amostra(passo, total, conhecidas, texto, recuo="  | "):
    """A 1ª amostra de um ponto (até 3 linhas) e a contagem de palavras de todas."""
    dizer(f"\n  Amostra no passo {inteiro(passo)} (temperatura {num(TEMPERATURA, 1)}):")
    linha, largura = legivel(texto, espaco=" "), 76 - len(recuo)
    for i in range(0, min(len(linha), 3 * largura), largura):
        dizer(recuo + linha[i:i + largura])
    dizer(f"  palavras de 3+ letras que existem no texto de treino: {conhecidas} de "
          f"{total} ({pct(conhecidas / max(1, total), 0)})\n")


def dizer_o_veredito(historico, amostras, passos, tok, validacao, vocabulario):
    """A perda final contra o limiar e as palavras do começo contra as do fim (os dois
    vereditos do treino); devolve a régua das amostras: (palavras, quantas existem no
    treino) do texto de validação, escrito por gente."""
    final = historico["validação"][-1]
    abaixo = final < LIMIAR_VALIDACAO
    dizer(f"Perda de validação: {num(historico['validação'][0], 2)} -> {num(final, 2)} "
          + (f"(abaixo de {num(LIMIAR_VALIDACAO, 1)})." if abaixo else
             f"(não chegou abaixo de {num(LIMIAR_VALIDACAO, 1)}: treino curto?)."))
    (t0, c0, _), (t1, c1, _) = amostras[0], amostras[passos]
    melhorou = c1 / max(1, t1) > c0 / max(1, t0) + MELHORA
    reais = palavras_conhecidas([tok.decodificar(validacao.tolist())], vocabulario)
    dizer(quebrar(f"Palavras que existem no texto: {pct(c0 / max(1, t0), 0)} no passo 0, "
                  f"{pct(c1 / max(1, t1), 0)} no passo {inteiro(passos)}: "
                  + ("as amostras melhoraram" if melhorou else "as amostras quase não mudaram")
                  + f" (no texto de validação, escrito por gente, {pct(reais[1] / reais[0], 0)} "
                  "das palavras existem no de treino)."))
    return reais


def mostrar_amadurecendo(amostras):
    """O começo da primeira amostra de cada ponto, uma embaixo da outra: os mesmos números
    sorteados em todo ponto (as mesmas sementes), lidos por um modelo cada vez melhor."""
    dizer("\nA mesma amostra amadurecendo (as mesmas sementes em cada ponto; \\n: linha nova):")
    for passo, (total, conhecidas, texto) in amostras.items():
        dizer(f"  {inteiro(passo):>6} | {legivel(texto, espaco=' ')[:56]:<56} | "
              f"{pct(conhecidas / max(1, total), 0):>4}")


def figura_curvas(licao, historico, V, N, bigrama):
    fig, ax = figuras.figura(7, 4.2, margens=(0.8, 0.2, 0.6, 0.45))
    if historico["lote"]:                           # a perda de cada passo, no lote sorteado
        ax.plot(range(1, len(historico["lote"]) + 1), historico["lote"], color="C0", lw=0.6,
                alpha=0.35, label="treino, o lote de cada passo")
    ax.plot(historico["passo"], historico["treino"], "o-", color="C0", ms=3,
            label="treino (lotes fixos)")
    ax.plot(historico["passo"], historico["validação"], "s--", color="C1", ms=3,
            label="validação (lotes fixos)")
    ax.axhline(math.log(V), color="gray", ls=":", label=f"ln V = ln {V} (o chute)")
    ax.axhline(bigrama, color="gray", ls="--", label="bigrama (a régua do experimento 1)")
    ax.set(xlabel="passo", ylabel="perda (nats por caractere)", xlim=(0, historico["passo"][-1]),
           ylim=(math.floor(2 * min(historico["treino"] + historico["validação"] + [bigrama])) / 2,
                 math.log(V) + 0.2),             # uma marca abaixo do fim; o chute à vista
           title=f"Treino do GPT2 da lição 06 ({inteiro(N)} parâmetros)")
    figuras.eixos_inteiros(ax)
    ax.grid(alpha=0.3)
    ax.legend()
    licao.salvar_figura(fig, "10_curvas.png")


# ============================================================ a página do treino
# O treino do experimento 3 num arquivo que abre com um duplo clique (comum/paginas.py), gravado
# no fim de todo treino (em --html PASTA; sem ela, em paginas/): as duas curvas (a de cada
# avaliação e a perda do lote de cada passo) e a primeira amostra de cada ponto, a mesma
# semente lida por um modelo cada vez melhor. tests/test_10_paginas.py confere contra o que o
# experimento imprime; a do treino padrão também mora em apostilas/paginas/ (--html
# apostilas/paginas).
def gravar_pagina(licao, config, N, bigrama, historico, amostras, reais):
    """Grava a página do treino (saída 0 ou 1, como a de qualquer página). reais: (palavras,
    quantas existem no treino) do texto de validação, a régua das amostras."""
    return paginas.gravar(licao, lambda: pagina(licao.args, config, N, bigrama, historico,
                                                amostras, reais), "10_treino.html")


def pagina(args, config, N, bigrama, historico, amostras, reais) -> str:
    V = len(config["alfabeto"])
    finito = lambda xs: [x if math.isfinite(x) else None for x in xs]  # noqa: E731 (NaN: —)
    treino = {"N": N, "camadas": config["camadas"], "largura": config["largura"],
              "cabecas": config["cabecas"], "lote": args.lote, "contexto": config["contexto"],
              "passos": args.passos, "taxa": args.taxa,
              "aquecimento": passos_de_aquecimento(args.passos), "semente": args.semente,
              "V": V, "acaso": math.log(V), "bigrama": bigrama, "limiar": LIMIAR_VALIDACAO,
              "melhora": MELHORA, "temperatura": TEMPERATURA, "reais": list(reais),
              "historico": {nome: finito(v) if nome != "passo" else v
                            for nome, v in historico.items()},
              "amostras": [[passo, total, conhecidas, texto]
                           for passo, (total, conhecidas, texto) in amostras.items()]}
    corpo, script, estilo = (paginas.fonte(f"10_treino.{e}") for e in ("html", "js", "css"))
    return paginas.documento(f"Lição {LICAO.numero} · O seu treino", corpo, script, treino,
                             estilo, "As curvas de perda e as amostras de um GPT treinado aqui")


# ============================================================ --amostrar e --exportar
def so_amostrar(args):
    """--amostrar: gera texto com o checkpoint; com --exportar, só grava a pasta do
    transformers (sem treinar e sem sortear)."""
    arquivo = caminho_checkpoint(args)
    try:
        modelo, tok, checkpoint = carregar(arquivo, getattr(args, "dispositivo", "cpu"))
    except FileNotFoundError:
        dizer(quebrar(f"erro: não achei o checkpoint {arquivo}. Treine antes (rode a lição "
                      "sem --amostrar) ou diga onde ele está com --checkpoint ARQUIVO."))
        return 2
    except Exception as erro:  # noqa: BLE001 - um arquivo que não é checkpoint da lição
        dizer(quebrar(f"erro: {arquivo} não é um checkpoint desta lição "
                      f"({type(erro).__name__}); ele sai do experimento 3."))
        return 2
    config = checkpoint["config"]
    dizer(f"Checkpoint {curto(arquivo)}:\n  passo {inteiro(checkpoint['passo'])}, "
          f"{config['camadas']} blocos, d = {config['largura']}, perda de validação "
          f"{num(checkpoint['historico']['validação'][-1], 2)}")
    if args.exportar:
        return 0 if exportar_e_dizer(args, modelo, tok, config) else 1
    dizer(f"{NOVOS * 2} caracteres sorteados (temperatura {num(TEMPERATURA, 1)}, semente "
          f"{args.semente}):\n")
    geradores = [torch.Generator().manual_seed(args.semente)]
    inicio = torch.tensor([tok.codificar(args.texto) or [tok.ids["\n"]]])
    with uma_thread():   # um caractere por vez num modelo pequeno: repartir só faz esperar
        saida = amostrar(modelo, inicio, NOVOS * 2, config["contexto"], geradores, TEMPERATURA)
    for linha in tok.decodificar(saida[0].tolist()).split("\n"):
        dizer(quebrar(linha) if linha.strip() else "")
    return 0


def exportar_e_dizer(args, modelo, tok, config):
    """Com --exportar PASTA: grava a pasta do transformers e confere os logits."""
    if not args.exportar:
        return True
    diferenca = exportar(modelo, tok, config, args.exportar)
    iguais = diferenca < 1e-4
    dizer(f"\nPasta do transformers gravada em {args.exportar}: logits "
          + (f"iguais aos do nosso GPT2\n(max |diferença| {limite(diferenca, 1e-4)}). Use-a "
             f"com --modelo nas lições 04, 05 e 07:\n"
             + comando("07_generation.py", "--modelo", args.exportar) if iguais else
             f"DIFERENTES dos do nosso GPT2 (max |diferença| {cientifico(diferenca, 1)})."))
    return iguais


if __name__ == "__main__":
    preparar_treino(LICAO.args, "lab/10_treino.py")
    sys.exit(so_amostrar(LICAO.args) if LICAO.args.amostrar else LICAO.rodar())
