"""Lição 10 · Treine o seu GPT (leia junto: apostilas/10_treino.md)
1. Os dados: as apostilas, caractere por caractere
2. O modelo: o GPT2 da lição 06, pequeno, e os FLOPs de um passo
3. O laço de treino: a perda cai e as amostras viram palavras
4. Quanto a sua CPU rendeu: FLOP/s contra o matmul
5. A fronteira do compute: o melhor tamanho para cada orçamento
6. Dividir o treino: dois processos, o mesmo lote"""
import math
from comum import Licao, importar_licao, inteiro_entre, opcao, paginas, real_entre
from comum.dispositivo import opcao_dispositivo
from comum.distribuido import so_o_principal_escreve
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
    opcao("--escala", "flag", None, "treina os modelos do experimento 5 (uns minutos)"),
    opcao("--dividir", "flag", None, "o experimento 6 treina em 2 processos (10 a 40 s)"),
    opcao_dispositivo(),                     # onde treinar: o experimento 3 e o --amostrar
    *paginas.opcoes(do_treino=True),
])
so_o_principal_escreve()  # com torchrun, só o processo 0 escreve na tela
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
    mesmo lote global e fica com a sua fatia: o experimento 6)."""
    for passo in range(passos):
        otimizador.lr = taxa(passo, passos, maxima, aquecimento, final)
        x, y = lote(dados, B, T, gerador)                        # (B, T), (B, T)
        yield passo + 1, passo_de_treino(modelo, otimizador, x[parte], y[parte]).item()


def passo_de_treino(modelo, otimizador, x, y, marcar=lambda: None):
    """A perda, o gradiente (backward), o corte da norma do gradiente em 1 e um passo do
    AdamW. marcar() entre as partes: o experimento 4 cronometra cada uma."""
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


def media_dos_gradientes(gradientes):
    """O all-reduce do paralelismo de dados: cada processo tem o gradiente da perda média
    da sua parte do lote; somados em todos e divididos pelo número de processos, dão o
    gradiente do lote inteiro (a média das médias de partes iguais é a média do todo).
    gradientes: uma lista por processo, com um tensor por peso."""
    return [sum(g) / len(g) for g in zip(*gradientes)]


def adamw(modelo, maxima):
    """O AdamW do lab (comum/otimizador.py): encolhe as matrizes (decaimento 0,1), não os
    vieses nem os ganhos dos LayerNorm, como no GPT-2."""
    from comum import Adam

    sem = [p for p in modelo.parameters() if p.dim() < 2]
    return Adam(modelo.parameters(), maxima, betas=(0.9, 0.99), decaimento=0.1,
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


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["treinar", "passo_de_treino", "taxa", "lote", "perda", "media_dos_gradientes",
           "adamw", "ALFABETO", "Caracteres", "separar", "avaliar", "amostrar", "salvar",
           "carregar"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import functools
import re
import statistics
import sys
import time
from pathlib import Path

from comum import (ExperimentoPulado, Progresso, RAIZ, cientifico, contar, curto, distribuido,
                   dizer, figuras, inteiro, legivel, limite, num, pct, plural, quebrar)
from comum.console import comando, duracao
from comum.opcoes import uso_errado
from comum.pesos_gpt2 import exportar  # o inverso do carregar_gpt2
from comum.processo import ao_interromper_durante
from comum.ritmo import Ritmo

LICAO_PADRAO = {"camadas": 4, "largura": 128, "cabecas": 4, "lote": 12, "contexto": 64}
AQUECIMENTO = 100        # passos de aquecimento da taxa (menos, se o treino for curto)
AVALIAR_A_CADA = 100     # passos entre duas avaliações (e dois checkpoints)
LOTES_DE_AVALIACAO = 8   # lotes fixos de treino e de validação em cada avaliação
NOVOS = 240              # caracteres de cada amostra
AMOSTRAS = 4             # amostras sorteadas juntas em cada ponto (a estatística usa todas)
TEMPERATURA = 0.8
LIMIAR_VALIDACAO = 2.4   # a perda de validação do treino padrão termina abaixo disto
MELHORA = 0.1            # as amostras melhoraram: +10 pontos de palavras que existem
RODADAS = 5             # medições do experimento 4 (vale a menor; o tempo previsto, a mediana)
PALAVRA = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]{3,}")  # "palavra": 3 letras ou mais seguidas


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


@functools.lru_cache(maxsize=1)
def dados():
    """(texto, [arquivo], tokenizador, treino, validação): lidos uma vez por execução."""
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
    """A configuração do modelo pedida nas opções (que h divide d, preparar() conferiu)."""
    return {"camadas": args.camadas, "largura": args.largura, "cabecas": args.cabecas,
            "contexto": args.contexto, "alfabeto": ALFABETO}


def passos_de_aquecimento(passos):
    return min(AQUECIMENTO, passos // 10)


def lotes_fixos(ids, B, T, semente, n=LOTES_DE_AVALIACAO):
    gerador = torch.Generator().manual_seed(semente)
    return [lote(ids, B, T, gerador) for _ in range(n)]


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
    texto, arquivos, tok, treino, validacao = dados()
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
    _, _, tok, _, validacao = dados()
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
    licao.pausa("os FLOPs de um passo de treino")
    x, y = lote(validacao, licao.args.lote, T, torch.Generator().manual_seed(0))  # (B, T)
    flops_de_um_passo(licao, modelo, x, y, config, V)


def flops_de_um_passo(licao, modelo, x, y, config, V):
    """Os FLOPs de um passo de treino no lote (x, y), contados pelo contar_flops da lição
    09, contra 6NBT e contra a conta por extenso: 6 x pesos das matrizes + a atenção."""
    L09 = importar_licao("09_scaling")
    L, d, T, B = config["camadas"], config["largura"], config["contexto"], x.shape[0]
    N = contar(modelo)
    with torch.no_grad():
        ida = L09.contar_flops(lambda: modelo(x))
    total = L09.contar_flops(lambda: perda(modelo, x, y).backward())
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


# ============================================================ experimento 3
CHECKPOINT_PADRAO = RAIZ / "checkpoints" / "10_gpt.pt"


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
    _, _, tok, treino, validacao = dados()
    B, T, passos = args.lote, config["contexto"], args.passos
    modelo = novo_modelo(config, args.semente).to(getattr(args, "dispositivo", "cpu"))
    otimizador = adamw(modelo, args.taxa)
    arquivo, escreve = caminho_checkpoint(args), distribuido.principal()  # só o 0 avalia e grava
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
        for passo, tempo in treino_com_barra(distribuido.paralelo(modelo), otimizador, treino,
                                             args, historico, guardado, arquivo):
            if not escreve or (passo % a_cada and passo != passos):
                continue
            avaliar_e_guardar(modelo, fixos, historico, passo, arquivo, config)
            guardado["passo"] = passo
            dizer(f"  {inteiro(passo):>6} {cientifico(otimizador.lr, 1) if passo else '':>7} "
                  f"{num(historico['treino'][-1], 2):>7} "
                  f"{num(historico['validação'][-1], 2):>10} {num(tempo, 1):>7} s")
            if passo in marcos:
                amostras[passo] = amostrar_e_contar(modelo, tok, T, args.semente, vocabulario)
                mostrar_amostra(passo, *amostras[passo])
    if not escreve:
        return
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
    if arquivo.exists() and distribuido.principal():
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


def treino_com_barra(rede, otimizador, treino, args, historico, guardado, arquivo):
    """O laço da peça com a barra de progresso (os tokens/s das últimas 20 passadas), a
    perda do lote de cada passo no histórico e (passo, segundos desde o começo) a quem
    chama, também o passo 0. Um processo do torchrun que cai para o treino com saída 1."""
    B, T = args.lote, args.contexto
    ritmo = ritmo_do_treino(rede, treino, args)
    ritmo.comecar()         # 1 thread ou todas: o que a máquina entrega agora (já no passo 0)
    inicio = time.perf_counter()
    yield 0, 0.0
    ultimo, janela = time.perf_counter(), []
    gerador = torch.Generator().manual_seed(args.semente)
    with Progresso(args.passos, "treinando") as barra:
        try:
            for passo, p in treinar(rede, otimizador, treino, args.passos, B, T, args.taxa,
                                    passos_de_aquecimento(args.passos), gerador,
                                    parte=distribuido.fatia(B)):
                historico["lote"].append(distribuido.media(p))   # a perda do lote inteiro
                agora = time.perf_counter()
                ritmo.depois_do_passo(agora - ultimo)
                janela = (janela + [agora - ultimo])[-20:]
                barra.avancar(descricao=f"passo {inteiro(passo)}, "
                              f"{inteiro(B * T * len(janela) / sum(janela))} tokens/s")
                yield passo, agora - inicio
                ultimo = time.perf_counter()             # sem o tempo de avaliar e amostrar
        except RuntimeError as erro:           # um processo do grupo caiu (com torchrun)
            caiu = distribuido.queda(erro)
            if not isinstance(caiu, distribuido.ProcessoCaiu):
                raise
            barra.__exit__(None, None, None)
            dizer("\n" + quebrar(f"O treino parou: {caiu}"))
            dizer_o_que_ficou(arquivo, guardado["passo"])
            sys.exit(1)
    ritmo.terminar()
    if ritmo.resumo():
        dizer(quebrar(ritmo.resumo()))


def ritmo_do_treino(rede, treino, args):
    """O Ritmo do treino (comum/ritmo.py): a sonda é a perda e o backward de um lote fixo,
    sorteado à parte (não gasta o gerador dos lotes), e os gradientes que ela deixa o passo
    seguinte zera. Só na CPU e num processo só (o torchrun já fixa as threads)."""
    x, y = lote(treino, args.lote, args.contexto, torch.Generator().manual_seed(args.semente + 3))

    def sonda():
        perda(rede, x, y).backward()
        for p in rede.parameters():
            p.grad = None

    return Ritmo(torch, sonda, ativo=getattr(args, "dispositivo", "cpu") == "cpu"
                 and distribuido.mundo() == 1)


def dizer_o_que_ficou(arquivo, passo):
    """O que o Ctrl+C (ou a queda de um processo) diz: o último checkpoint gravado."""
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


# ============================================================ experimento 4
def produtos_do_passo(L, d, h, V, B, T):
    """Os produtos de matrizes de um passo de treino, (lote, m, k, n) cada um: os do forward
    e, para cada um, os dois do backward (o gradiente da entrada e o do peso)."""
    M, dk = B * T, d // h
    ida = [(1, M, d, V)]                                          # a cabeça de saída
    for _ in range(L):
        ida += [(1, M, d, 3 * d), (B * h, T, dk, T), (B * h, T, T, dk),   # c_attn, QK, pesos V
                (1, M, d, d), (1, M, d, 4 * d), (1, M, 4 * d, d)]          # c_proj, c_fc, c_proj
    return ida + [(b, m, n, k) for b, m, k, n in ida] + [(b, k, m, n) for b, m, k, n in ida]


def medir_passo(modelo, otimizador, x, y):
    """(forward, backward, corte + AdamW) de um passo de treino (o passo_de_treino da
    peça, o mesmo que o experimento 3 dá), em segundos."""
    marcas = [time.perf_counter()]
    passo_de_treino(modelo, otimizador, x, y, lambda: marcas.append(time.perf_counter()))
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


@LICAO.experimento(4)
def exp_cpu(licao):
    L09 = importar_licao("09_scaling")
    args = licao.args
    config = configuracao(args)
    L, d, h = config["camadas"], config["largura"], config["cabecas"]
    T, B = config["contexto"], args.lote
    _, _, tok, treino, _ = dados()
    modelo = novo_modelo(config, args.semente)
    otimizador = adamw(modelo, 1e-4)
    gerador = torch.Generator().manual_seed(args.semente)
    x, y = lote(treino, B, T, gerador)                            # (B, T), (B, T)
    contados = L09.contar_flops(lambda: perda(modelo, x, y).backward())
    produtos = produtos_do_passo(L, d, h, len(tok), B, T)
    soma = sum(2 * b * m * k * n for b, m, k, n in produtos)
    licao.verificar(soma == contados, "produtos do passo = FLOPs contados")
    matrizes = [(torch.randn(b, m, k, generator=gerador).squeeze(0),
                 torch.randn(b, k, n, generator=gerador).squeeze(0)) for b, m, k, n in produtos]
    (ida, volta, resto), replay, tipico = medir_contra_o_matmul(modelo, otimizador, x, y,
                                                                matrizes)
    segundos = ida + volta + resto
    rendeu, teto = contados / segundos, contados / replay
    dizer(f"Um passo de treino do modelo do experimento 2 ({L} blocos, d = {d}, lote {B} x "
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
    """O veredito do experimento 4: o treino contra a meta de 30 % do matmul (só no modelo
    padrão a meta vale: num modelo menor, o resto pesa mais)."""
    if fracao >= 0.3:
        dizer(f"O treino rendeu {pct(fracao, 0)} do que o matmul dá (a meta do lab é 30 %: "
              "passou).")
    elif padrao:
        dizer(quebrar(f"O treino rendeu {pct(fracao, 0)} do que o matmul dá: abaixo dos 30 % "
                      "que o lab espera (outro programa usando a CPU, ou um notebook em modo "
                      "de economia?)."))
    else:
        dizer(quebrar(f"O treino rendeu {pct(fracao, 0)} do que o matmul dá: abaixo dos 30 % "
                      "que o lab espera do modelo padrão. Com outro tamanho a meta não vale: "
                      "num modelo menor, o que não é produto de matrizes pesa mais (o "
                      "exercício 6)."))
    dizer(quebrar("O resto do tempo vai para o que não é produto de matrizes: LayerNorm, "
                  "GELU, softmax e máscara, a perda, o corte e o AdamW, e o Python entre uma "
                  "operação e outra. São contas pequenas que mais leem e escrevem memória do "
                  "que multiplicam; num modelo maior, os produtos crescem como d² e o resto "
                  "como d, e a fração sobe."))


def tokens_por_parametro(passos, B, T, N, caracteres_de_treino, segundos_por_passo):
    """Os tokens por parâmetro do treino do experimento 3 contra os ~20 do Chinchilla, e o
    que chegar a 20 custaria aqui (em passos, épocas e tempo)."""
    tokens = passos * B * T
    dizer(f"\nTokens por parâmetro: o treino do experimento 3 ({inteiro(passos)} passos) "
          f"vê\n{inteiro(tokens)} tokens com N = {inteiro(N)}: {num(tokens / N, 2)} por "
          "parâmetro. O Chinchilla\n(lição 09) treinou com cerca de 20.")
    vinte = 20 * N
    dizer(f"Chegar a 20 pediria {inteiro(vinte)} tokens: {inteiro(round(vinte / (B * T)))} "
          f"passos.")
    dizer(quebrar(f"São {num(vinte / caracteres_de_treino, 0)} épocas do texto de treino e "
                  f"{duracao(vinte / (B * T) * segundos_por_passo, 'uns ')} nesta máquina (a "
                  f"mediana das {RODADAS} medições): aqui os dados acabam antes do compute (o "
                  "experimento 5 mede que tamanho rende mais)."))


# ============================================================ experimento 5
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
                  "contexto": ESCALA["contexto"], "alfabeto": ALFABETO}
        modelo = novo_modelo(config, semente)
        flops = L09.contar_flops(lambda: perda(modelo, x, x).backward())
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


def treinar_na_escala(m, semente, barra):
    """Treina um modelo da fronteira até o maior orçamento, com a mesma taxa constante
    depois do aquecimento para todos (nenhum ponto é favorecido por estar no fim de um
    cosseno); devolve a perda de validação em cada orçamento."""
    _, _, _, treino, validacao = dados()
    B, T = ESCALA["lote"], ESCALA["contexto"]
    marcos = [max(1, round(C / m["flops"])) for C in orcamentos()]
    fixos = lotes_fixos(validacao, B, T, semente + 99)             # os mesmos para todos
    otimizador = adamw(m["modelo"], ESCALA["taxa"])
    gerador = torch.Generator().manual_seed(semente)
    perdas = []
    for passo, _ in treinar(m["modelo"], otimizador, treino, marcos[-1], B, T, ESCALA["taxa"],
                            max(1, marcos[-1] // 20), gerador, final=1.0):   # sem cosseno
        barra.avancar(descricao=f"d = {m['d']}: passo {inteiro(passo)} de "
                      f"{inteiro(marcos[-1])}")
        if passo in marcos:
            perdas.append(avaliar(m["modelo"], fixos))
    return perdas


def segundos_por_passo(m, semente):
    """O tempo de um passo de treino de uma cópia do modelo (a mediana de 3, medidos agora:
    o menor seria o caso otimista numa máquina ocupada)."""
    import copy

    copia = copy.deepcopy(m["modelo"])
    otimizador = adamw(copia, 1e-4)
    _, _, _, treino, _ = dados()
    x, y = lote(treino, ESCALA["lote"], ESCALA["contexto"],
                torch.Generator().manual_seed(semente))
    medir_passo(copia, otimizador, x, y)                          # o primeiro aquece
    return statistics.median(sum(medir_passo(copia, otimizador, x, y)) for _ in range(3))


@LICAO.experimento(5)
def exp_fronteira(licao):
    args = licao.args
    B, T = ESCALA["lote"], ESCALA["contexto"]
    modelos, Cs = modelos_da_escala(args.semente), orcamentos()
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
    total = sum(round(Cs[-1] / m["flops"]) * segundos_por_passo(m, args.semente)
                for m in modelos)
    dizer(f"Treinar os {len(modelos)} leva {duracao(total)} nesta máquina\n"
          "(a mediana de 3 passos de cada, medidos agora).")
    if not args.escala:
        dizer("\nPara treiná-los e ver quem ganha em cada orçamento:\n"
              + comando("10_treino.py", "--so", "5", "--escala"))
        return
    perdas = {}
    with Progresso(sum(round(Cs[-1] / m["flops"]) for m in modelos), "treinando") as barra:
        for m in modelos:
            perdas[m["N"]] = treinar_na_escala(m, args.semente, barra)
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
    licao.salvar_figura(fig, "10_fronteira.png")


# ============================================================ experimento 6
PROCESSOS = 2            # o experimento 6 divide o lote global entre 2 processos
PASSOS_DIVIDIDOS = 10    # passos de treino com --dividir
TETO_GRADIENTE = 1e-6    # |média das partes - lote inteiro|: abaixo disto, arredondamento
TETO_PESOS = 1e-4        # |pesos com 2 processos - com 1| depois dos passos: o AdamW amplia o
#                          arredondamento (medido: ~1e-6); sem a média, dá ~1e-2


def gradientes(modelo, x, y):
    """O gradiente da perda média do lote (x, y), um tensor por peso."""
    modelo.zero_grad(set_to_none=True)
    perda(modelo, x, y).backward()
    return [p.grad.clone() for p in modelo.parameters()]


def norma(tensores):
    return math.sqrt(sum(float((t.double() ** 2).sum()) for t in tensores))


def max_diferenca(a, b):
    """max |a - b|, peso a peso (listas de tensores, ou dois state_dict)."""
    if isinstance(a, dict):
        a, b = list(a.values()), [b[k] for k in a]
    return max(float((p.double() - q.double()).abs().max()) for p, q in zip(a, b))


def treino_dividido(entrada):
    """O treino curto do experimento 6, sozinho ou num dos processos que lancar() abre: o
    mesmo modelo e os mesmos lotes globais em todos; cada processo treina a sua fatia, e
    o DistributedDataParallel faz a média dos gradientes no backward. Devolve os pesos, o
    tempo de cada passo e o de um all-reduce de N números (com mais de um processo)."""
    _, _, _, treino, _ = dados()
    modelo = novo_modelo(entrada["config"], entrada["semente"])
    otimizador = adamw(modelo, entrada["taxa"])
    rede = distribuido.paralelo(modelo)             # vivo até o fim: o all-reduce medido
    gerador = torch.Generator().manual_seed(entrada["semente"])
    tempos, ultimo = [], time.perf_counter()
    parte = entrada.get("parte") or distribuido.fatia(entrada["B"])   # a fatia deste processo
    for _ in treinar(rede, otimizador, treino, entrada["passos"], entrada["B"], entrada["T"],
                     entrada["taxa"], max(1, entrada["passos"] // 10), gerador, parte=parte):
        agora = time.perf_counter()
        tempos.append(agora - ultimo)
        ultimo = agora
    return {"pesos": {k: v.detach().clone() for k, v in modelo.state_dict().items()},
            "segundos": statistics.median(tempos[1:]),
            "comunicacao": distribuido.tempo_da_media(contar(modelo)),
            "threads": torch.get_num_threads()}


@LICAO.experimento(6)
def exp_dividir(licao):
    args = licao.args
    config = configuracao(args)
    B, T, n = args.lote, config["contexto"], PROCESSOS
    if B % n:
        raise ExperimentoPulado(f"--lote {B} não se divide entre {n} processos: use um lote "
                                f"par (exemplo: --lote {n * max(1, B // n)}).")
    _, _, _, treino, _ = dados()
    modelo = novo_modelo(config, args.semente)
    x, y = lote(treino, B, T, torch.Generator().manual_seed(args.semente))   # (B, T), (B, T)
    a_media_e_o_lote_inteiro(licao, modelo, x, y, n)
    if distribuido.mundo() > 1:
        raise ExperimentoPulado("com o torchrun, o experimento 6 não abre os seus processos: "
                                "rode-o sem o torchrun (--so 6 --dividir).")
    if not args.dividir:
        dizer(f"\nPara ver {n} processos de verdade treinando juntos (cada um abre o PyTorch: "
              "uns\n10 a 40 s):\n" + comando("10_treino.py", "--so", "6", "--dividir"))
        return
    entrada = {"config": config, "semente": args.semente, "taxa": args.taxa, "B": B, "T": T,
               "passos": PASSOS_DIVIDIDOS}
    licao.pausa(f"{n} processos de verdade")
    dizer()
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
    dizer_os_tempos(um, dividido, n, contar(modelo))


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
    dizer(quebrar(f"O lote global do experimento 3: {B} sequências de {T} caracteres, no "
                  f"modelo do experimento 2. Dividido entre {n} processos, cada um fica com "
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


def tres_treinos(entrada, n):
    """(1 processo com o lote inteiro, 1 processo só com a 1ª fatia, n processos), cada um
    com uma thread de conta, como cada um dos n processos (1 thread, 1 núcleo)."""
    B, T, b = entrada["B"], entrada["T"], entrada["B"] // n
    dizer(quebrar(f"{n} processos de verdade (gloo, DistributedDataParallel), "
                  f"{PASSOS_DIVIDIDOS} passos: cada um sorteia o mesmo lote global de {B} e "
                  f"treina as suas {b} sequências. Contra 1 processo com o lote inteiro, e "
                  f"contra 1 processo só com as {b} primeiras (sem a média):"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with Progresso(3, "1 processo") as barra:
            um = treino_dividido(entrada)                       # 1 processo, o lote inteiro
            barra.avancar(descricao="sem a média")
            sem = treino_dividido({**entrada, "parte": slice(0, b)})
            barra.avancar(descricao=f"{n} processos")
            dividido = distribuido.lancar(n, __file__, "treino_dividido", entrada, prazo=120)
            barra.avancar()
    finally:
        torch.set_num_threads(threads)
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
    dizer()
    dizer(quebrar("O experimento 3 inteiro em vários processos, ou em duas máquinas, com o "
                  "torchrun: os comandos estão na apostila, seção \"Dividir o treino\"."))


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


def preparar(args):
    """Antes dos experimentos, o que as opções só dizem juntas (h divide d; com o torchrun,
    distribuido.conferir) e o dispositivo escolhido (dito na tela, se não for a CPU); com
    vários processos, o grupo (gloo ou nccl). Um pedido que não dá é uso errado: saída 2."""
    from comum.dispositivo import anuncio, ou_sair

    if args.largura % args.cabecas:
        uso_errado(f"--largura {args.largura} não se divide em --cabecas {args.cabecas}: "
                   "cada cabeça fica com d/h números (lição 04). Exemplo: --largura 128 "
                   "--cabecas 4")
    args.dispositivo, motivo = ou_sair(args.dispositivo, "lab/10_treino.py")
    distribuido.conferir(args.lote, args.dispositivo)
    if anuncio(args.dispositivo, motivo, torch):
        dizer(anuncio(args.dispositivo, motivo, torch))
    n = distribuido.mundo()
    if n > 1:
        distribuido.iniciar(args.dispositivo)
        import torch.distributed as dist

        dizer(quebrar(f"Treino em {n} processos (torchrun, {dist.get_backend()}): cada um "
                      f"treina {args.lote // n} das {args.lote} sequências de cada lote, e só "
                      "o processo 0 escreve na tela e nos arquivos. Com o torchrun, os "
                      "processos treinam juntos o experimento 3; os outros experimentos "
                      "rodam só no processo 0, e o 6 fica de fora."))


if __name__ == "__main__":
    preparar(LICAO.args)
    if LICAO.args.amostrar:
        sys.exit(so_amostrar(LICAO.args) if distribuido.principal() else 0)
    if not distribuido.principal():   # os outros processos do torchrun: só o treino
        if LICAO.args.so and 3 not in LICAO.args.so:
            sys.exit(0)
        LICAO.args.so = [3]
    codigo = LICAO.rodar()          # o próximo passo, a lição 11, sai no resumo
    distribuido.encerrar(codigo)    # com o torchrun, todos os postos saem aqui
    sys.exit(codigo)
