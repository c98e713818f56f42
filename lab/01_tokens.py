"""Lição 01 · Texto, tokens e ids: o BPE do GPT-2 (leia junto: apostilas/01_tokens.md)
1. Ida e volta: texto, tokens, ids e texto de novo
2. O BPE à mão: regex, tabela de bytes e fusões do GPT-2
3. Aprendendo fusões do zero em três parágrafos
4. O espaço inicial e as maiúsculas
5. Português custa mais tokens que inglês
6. O vocabulário: 256 bytes, fusões e um token especial"""
import collections
import json

import regex  # o 're' do Python não entende \p{L}, "qualquer letra"
from comum import Licao, inteiro_entre, opcao, texto_utf8
from comum.opcoes import arquivo_de_texto

IDA_E_VOLTA = "A ação do GPT-2 custou R$ 3,50 😀"
LICAO = Licao.da_docstring(__doc__, usa_gpt2={1, 2, 4, 5, 6}, opcoes=[
    opcao("--texto", texto_utf8('--texto "Maria da Silva"'), IDA_E_VOLTA,
          "a frase do experimento 1 (padrão: a da apostila)", '"FRASE"'),
    opcao("--ordem", ("aprendida", "inversa"), "aprendida", "experimento 2: as fusões na "
          "ordem em que foram aprendidas (o certo) ou na inversa, a mais recente primeiro"),
    opcao("--corpo", ("portugues", "ingles"), "portugues", "experimento 3: o corpo de treino"),
    opcao("--fusoes", inteiro_entre(0, 5000, "--fusoes 500"), 200,
          "experimento 3: quantas fusões aprender"),
    opcao("--pt", arquivo_de_texto(), None, "experimento 5: um texto seu em português "
          "(UTF-8; parágrafos separados por linha em branco)", "ARQUIVO"),
    opcao("--en", arquivo_de_texto(), None, "experimento 5: a tradução do --pt", "ARQUIVO"),
])


# ============================================================ a peça: o BPE do GPT-2
def bytes_para_unicode() -> dict:
    """Os 256 bytes como 256 caracteres visíveis: 188 ficam como estão e os 68
    invisíveis (espaço, controles...) vão para 256, 257...: o espaço vira 'Ġ'."""
    visiveis = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                *range(ord("®"), ord("ÿ") + 1)]
    tabela, extra = {}, 0
    for b in range(256):
        if b in visiveis:
            tabela[b] = chr(b)
        else:
            tabela[b] = chr(256 + extra)
            extra += 1
    return tabela


BYTE_PARA_CHAR = bytes_para_unicode()
CHAR_PARA_BYTE = {c: b for b, c in BYTE_PARA_CHAR.items()}

# A regex de pré-tokenização do GPT-2: contrações, letras, números e pontuação,
# cada grupo com no máximo UM espaço grudado na frente; espaços sobrando à parte.
PADRAO = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
                       r"""|\s+(?!\S)|\s+""")


def para_bytes(simbolo: str) -> bytes:
    """Um símbolo do vocabulário ('ĠPar') de volta aos seus bytes (b' Par')."""
    return bytes(CHAR_PARA_BYTE[c] for c in simbolo)


def fundir(simbolos, ranks, passos=None):
    """Aplica as fusões a uma palavra: sempre a de MENOR posto (a aprendida primeiro)."""
    while len(simbolos) > 1:
        posto, par = min((ranks.get(p, float("inf")), p) for p in zip(simbolos, simbolos[1:]))
        if posto == float("inf"):
            break                                    # nenhum par vizinho tem fusão
        novos, i = [], 0
        while i < len(simbolos):                     # junta o par em toda a palavra
            if i + 1 < len(simbolos) and (simbolos[i], simbolos[i + 1]) == par:
                novos.append(simbolos[i] + simbolos[i + 1])
                i += 2
            else:
                novos.append(simbolos[i])
                i += 1
        simbolos = novos
        if passos is not None:
            passos.append((posto, par, simbolos))
    return simbolos


def bpe(texto, ranks, vocab):
    """Texto -> ids, como o GPT-2: regex, bytes como caracteres, fusões, vocabulário."""
    ids = []
    for palavra in PADRAO.findall(texto):
        simbolos = [BYTE_PARA_CHAR[b] for b in palavra.encode("utf-8")]
        ids += [vocab[s] for s in fundir(simbolos, ranks)]
    return ids


def fusoes_do_tokenizador(tok):
    """Os pares fundidos, na ordem em que foram aprendidos: {(a, b): posto}."""
    modelo = json.loads(tok.backend_tokenizer.to_str())["model"]
    pares = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in modelo["merges"]]
    return {par: posto for posto, par in enumerate(pares)}


def codificar(tok, texto):
    """Texto -> ids com o tokenizador do transformers, como o bpe() acima e o codificador
    da OpenAI: um '<|endoftext|>' escrito no texto é texto (7 tokens comuns), não o token
    especial 50.256, que só o programa põe (entre um documento e outro)."""
    return tok(texto, split_special_tokens=True)["input_ids"]


def bytes_do_token(tok, i) -> bytes:
    """Os bytes do token de id i (um token pode ser meio caractere: b'\\xc3')."""
    return para_bytes(tok.convert_ids_to_tokens(int(i)))


def treinar_bpe(texto, n_fusoes):
    """BPE do zero: começa nos bytes e, a cada passo, funde o par vizinho mais
    frequente (empate: o que apareceu primeiro). Devolve [(par, contagem)]."""
    palavras = collections.Counter(
        tuple(BYTE_PARA_CHAR[b] for b in p.encode("utf-8")) for p in PADRAO.findall(texto))
    fusoes = []
    for _ in range(n_fusoes):
        pares = collections.Counter()
        for palavra, n in palavras.items():
            for par in zip(palavra, palavra[1:]):
                pares[par] += n
        if not pares:
            break
        par, contagem = max(pares.items(), key=lambda item: item[1])
        fusoes.append((par, contagem))
        ranks = {par: 0}
        palavras = collections.Counter({tuple(fundir(list(p), ranks)): n
                                        for p, n in palavras.items()})
    return fusoes


def contar_tokens(texto, fusoes):
    """Quantos tokens o texto dá com estas fusões (a lista de treinar_bpe, na ordem)."""
    ranks = {par: posto for posto, (par, _n) in enumerate(fusoes)}
    return sum(len(fundir([BYTE_PARA_CHAR[b] for b in p.encode("utf-8")], ranks))
               for p in PADRAO.findall(texto))


# Os mesmos três parágrafos nas duas línguas (escritos para esta lição; a
# lição 13 os passa pelo tokenizador de um modelo treinado em português).
PORTUGUES = [
    "Um modelo de linguagem lê texto como uma sequência de números. Antes de qualquer "
    "cálculo, um tokenizador corta a frase em pedaços e troca cada pedaço pelo seu "
    "número no vocabulário.",
    "O GPT-2 aprendeu o seu vocabulário em milhões de páginas da internet, quase todas "
    "em inglês. Por isso as palavras inglesas comuns viraram peças inteiras, enquanto "
    "muitas palavras portuguesas precisam de dois, três ou quatro pedaços.",
    "Isso tem consequências práticas. A janela de contexto do modelo é medida em "
    "tokens, e o preço de uma chamada a um modelo comercial também. Quem escreve em "
    "português paga mais e cabe menos.",
]
INGLES = [
    "A language model reads text as a sequence of numbers. Before any computation, a "
    "tokenizer cuts the sentence into pieces and replaces each piece with its number in "
    "the vocabulary.",
    "GPT-2 learned its vocabulary from millions of web pages, almost all of them in "
    "English. That is why common English words became whole pieces, while many "
    "Portuguese words need two, three or four pieces.",
    "This has practical consequences. The context window of the model is measured in "
    "tokens, and so is the price of a call to a commercial model. Whoever writes in "
    "Portuguese pays more and fits less.",
]

# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["bytes_para_unicode", "BYTE_PARA_CHAR", "PADRAO", "para_bytes", "fundir", "bpe",
           "fusoes_do_tokenizador", "codificar", "bytes_do_token", "treinar_bpe", "contar_tokens",
           "PORTUGUES", "INGLES"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import sys

from comum import (ExperimentoPulado, ModeloIndisponivel, dizer, em_linhas, figuras, inteiro,
                   largura, legivel, num, pct, plural, quebrar)
from comum.carregar_gpt2 import carregar_tokenizador
from comum.console import cortar

LINHAS_POR_TELA = 18  # linhas da tabela de tokens por tela do projetor (--pausa)
CASOS = ["R$ 1.234.567,89", "14/03/2026", "2026-03-14", "3,14159", "12345678",
         " anticonstitucionalissimamente", "for i in range(10): print(i)"]
DIFICEIS = ["    x  =  1\n\n\tfim", "Não!  É?   Sim...", "日本語 e ☕", "don't we'll I'M"]


def tokenizador(licao):
    """O tokenizador do modelo (só ele, sem os pesos), carregado uma vez."""
    def carregar():
        try:
            return carregar_tokenizador(licao.args.modelo)
        except ModeloIndisponivel as erro:
            raise ExperimentoPulado(str(erro)) from None
    return licao.uma_vez("tokenizador", carregar)


def pedaco(bruto: bytes, limite_=40) -> str:
    """Os bytes de um token legíveis: espaço '·', meio caractere \\xNN (console.legivel)."""
    return legivel(bruto, limite_, reticencias_=True)


def pedacos(tok, ids, limite_=40) -> list:
    return [pedaco(bytes_do_token(tok, t), limite_) for t in ids]


def com_barras(itens):
    """['a', 'b', 'c'] -> ['a |', 'b |', 'c']: para em_linhas quebrar entre os tokens."""
    return [p + " |" for p in itens[:-1]] + itens[-1:]


def uma_linha(prefixo, itens):
    """O prefixo e os itens separados por ' | ', quebrando na largura com o recuo dele."""
    linhas = em_linhas(com_barras(itens), recuo=len(prefixo))
    return prefixo + linhas[len(prefixo):]


def entre_aspas(rotulo, texto, medida):
    """'Texto: "..."  (medida)' numa linha; um texto longo (ou com quebras) é cortado."""
    linha = f'{rotulo}: "{texto}"  {medida}'.rstrip()
    if len(linha) < largura() and "\n" not in texto and "\t" not in texto:
        return linha
    curto = cortar(legivel(texto, espaco=" "), len(rotulo) + 4)
    return f'{rotulo}: "{curto}"' + (f"\n  {medida}" if medida else "")


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_ida_e_volta(licao):
    tok = tokenizador(licao)
    texto = licao.args.texto
    ids = codificar(tok, texto)
    dizer(entre_aspas("Texto", texto, f"({len(texto)} caracteres, "
                      f"{len(texto.encode('utf-8'))} bytes em UTF-8)") + "\n")
    dizer(f"  {'#':>3} {'id':>6}  {'token':<14} bytes")
    for i, t in enumerate(ids):
        if i and i % LINHAS_POR_TELA == 0:  # um texto com muitos tokens: a tabela em telas
            licao.pausa(f"os tokens {i} a {min(i + LINHAS_POR_TELA, len(ids)) - 1}")
        bruto = bytes_do_token(tok, t)
        dizer(cortar(f"  {i:>3} {t:>6}  {pedaco(bruto, 14):<14} {bruto.hex(' ')}"))
    licao.pausa("a volta ao texto, o emoji e os acentos")
    volta = tok.decode(ids)
    igual = licao.verificar(volta == texto, "decode(encode(texto)) == texto")
    dizer("\n" + entre_aspas(f"{plural(len(ids), 'token')}. De volta", volta, ""))
    dizer(f"Igual ao original, byte a byte? {'sim' if igual else 'NÃO'}.")
    dizer("Um '·' é o espaço que vem grudado NA FRENTE de uma palavra.")
    especiais = [e for e in tok.all_special_tokens if e in texto]
    if especiais:  # digitado, '<|endoftext|>' é texto: o mesmo que o bpe() à mão daria
        n = len(codificar(tok, especiais[0]))
        comuns = plural(n, "token comum", "tokens comuns")
        dizer(quebrar(f"'{especiais[0]}' no texto é texto: {comuns}, como no BPE à mão "
                      "(experimento 2) e no codificador da OpenAI. O token especial "
                      f"{inteiro(tok.convert_tokens_to_ids(especiais[0]))} não vem do "
                      "texto: o programa o põe entre um documento e outro (experimento 6)."))
    quebrados = [t for t in ids if "\ufffd" in tok.decode([t])]
    emoji = "😀".encode("utf-8")
    if texto != IDA_E_VOLTA:  # uma frase do aluno: quantos tokens são pedaços de caractere
        dizer(f"Tokens que, sozinhos, não são um caractere inteiro: {len(quebrados)}.\n")
    else:
        dizer(f"O emoji tem {len(emoji)} bytes ({emoji.hex(' ')}) e virou os tokens "
              f"{', '.join(map(str, quebrados))}: nenhum\né um caractere inteiro. "
              "Decodificado sozinho, cada um dá '\\ufffd' (o caractere\nde substituição); "
              "só juntos voltam a ser o emoji.\n")
    dizer("Letras acentuadas ocupam 2 bytes; às vezes o BPE as guarda inteiras, às vezes")
    dizer("não:")
    for palavra in (" ação", " corações", " última"):
        ids = codificar(tok, palavra)
        meios = sum("\ufffd" in tok.decode([t]) for t in ids)
        rotulo = f'"{palavra.strip()}"'
        dizer(f"  {rotulo:<10} -> {' | '.join(pedacos(tok, ids)):<30} "
              f"{plural(meios, 'meio caractere', 'meios caracteres')}")


# ============================================================ experimento 2
@LICAO.experimento(2)
def exp_bpe_a_mao(licao):
    tok = tokenizador(licao)
    ranks, vocab = fusoes_do_tokenizador(tok), tok.get_vocab()
    inversa = licao.args.ordem == "inversa"
    dizer(f"Do tokenizador carregado: {inteiro(len(ranks))} fusões (pares, em ordem de "
          f"aprendizado)\ne um vocabulário de {inteiro(len(vocab))} tokens.\n")
    exemplos = [b for b in range(256) if BYTE_PARA_CHAR[b] != chr(b)]
    dizer(f"Tabela byte -> caractere: {256 - len(exemplos)} bytes ficam como estão, "
          f"{len(exemplos)} mudam;")
    dizer(f"  espaço (20) -> '{BYTE_PARA_CHAR[32]}'   \\n (0a) -> '{BYTE_PARA_CHAR[10]}'   "
          f"'ç' (c3 a7) -> '{BYTE_PARA_CHAR[0xC3]}{BYTE_PARA_CHAR[0xA7]}'\n")
    frase = "O GPT-2 lê  2026 bytes:\n tokenização, ação e 😀!"
    dizer(f"A regex de pré-tokenização corta o texto\n  {frase!r}\nem palavras "
          "(o BPE nunca funde além da borda de uma palavra):")
    dizer(em_linhas([f"[{pedaco(p.encode('utf-8'))}]" for p in PADRAO.findall(frase)]) + "\n")
    palavra = " tokenização"
    simbolos = [BYTE_PARA_CHAR[b] for b in palavra.encode("utf-8")]
    if inversa:  # o posto com o sinal trocado: a fusão mais recente passa na frente
        ranks = {par: -posto for par, posto in ranks.items()}
        dizer("--ordem inversa: as fusões vão da MAIS RECENTE para a mais antiga.\n")
    passos = []
    fundir(simbolos, ranks, passos)
    licao.pausa(f"as fusões de \"{palavra.strip()}\", passo a passo")
    dizer(f"Fusões de \"{palavra}\", passo a passo (posto = ordem de aprendizado):")
    dizer(f"  {'início':>12} {'|'.join(pedaco(para_bytes(s)) for s in simbolos)}")
    for posto, _par, atual in passos:
        dizer(f"  {'posto ' + inteiro(abs(posto)):>12} "
              f"{'|'.join(pedaco(para_bytes(s)) for s in atual)}")
    dizer()
    textos = [IDA_E_VOLTA, frase, *PORTUGUES, *INGLES, *CASOS, *DIFICEIS]
    iguais = sum(bpe(t, ranks, vocab) == codificar(tok, t) for t in textos)
    if inversa:  # aqui a diferença é o que o experimento quer mostrar: não é uma falha
        ok = iguais == len(textos)
    else:
        ok = licao.verificar(iguais == len(textos), "BPE à mão = tokenizador")
    dizer(f"BPE à mão = tokenizador em {iguais} de {len(textos)} textos da lição: "
          f"{'idênticos' if ok else 'DIFERENTES'}.")
    if inversa:
        dizer("A ordem importa: " + ("com a ordem trocada os ids mudam." if not ok else
                                     "nestes textos, a ordem trocada deu os mesmos ids."))


# ============================================================ experimento 3
CONHECIDA = "O tokenizador troca cada pedaço pelo seu número."
NOVA = "A girafa bebeu água fresca no zoológico."


@LICAO.experimento(3)
def exp_aprender_fusoes(licao):
    ingles = licao.args.corpo == "ingles"
    paragrafos = INGLES if ingles else PORTUGUES
    corpo = "\n".join(paragrafos)
    fusoes = treinar_bpe(corpo, licao.args.fusoes)
    dizer(f"Corpo de treino: os {len(paragrafos)} parágrafos em "
          f"{'inglês' if ingles else 'português'} da lição "
          f"({len(corpo)} caracteres,\n{len(corpo.encode('utf-8'))} bytes). "
          f"Aprendendo {plural(len(fusoes), 'fusão', 'fusões')} do zero.\n")
    if len(fusoes) < licao.args.fusoes:  # o corpo acabou: toda palavra já é um token
        dizer(f"(Pedidas: {inteiro(licao.args.fusoes)}. Depois de {len(fusoes)}, cada palavra "
              "do corpo já é um token só:\nnão sobra par vizinho para fundir.)\n")
    if not fusoes:
        dizer("Sem fusões (--fusoes 0), cada byte é um token: as frases abaixo têm um token\n"
              "por byte.")
    else:
        mostradas = ("As 12 primeiras fusões" if len(fusoes) > 12 else
                     "A única fusão" if len(fusoes) == 1 else f"As {len(fusoes)} fusões")
        dizer(f"{mostradas} (o par vizinho mais frequente em cada passo; num\n"
              "empate, o que aparece primeiro no texto):")
    for i, ((a, b), n) in enumerate(fusoes[:12]):
        dizer(f"  {i + 1:>3}. {pedaco(para_bytes(a)):>6} + {pedaco(para_bytes(b)):<6} "
              f"-> {pedaco(para_bytes(a + b)):<9} ({plural(n, 'vez', 'vezes')})")
    xs = [k for k in (0, 10, 25, 50, 100, 150, 200, 300, 500, 1000, 2000) if k < len(fusoes)]
    xs.append(len(fusoes))                           # 200 fusões: 0, 10, ..., 150 e 200
    contagens = {f: [contar_tokens(f, fusoes[:k]) for k in xs] for f in (CONHECIDA, NOVA)}
    licao.pausa("os tokens de duas frases, fusão a fusão")
    if ingles:
        dizer("\nTokens de duas frases em português conforme as fusões entram. O corpo é\n"
              "inglês: nem a \"conhecida\" (palavras dos parágrafos em português) está nele.")
    else:
        dizer("\nTokens de duas frases conforme as fusões entram: uma com palavras do corpo,")
        dizer("outra com palavras que o corpo não tem.")
    dizer(f"  {'fusões':>7} {'conhecida':>10} {'nova':>6}")
    for i, k in enumerate(xs):
        dizer(f"  {k:>7} {contagens[CONHECIDA][i]:>10} {contagens[NOVA][i]:>6}")
    ranks = {par: posto for posto, (par, _n) in enumerate(fusoes)}
    for frase, nome in ((CONHECIDA, "Frase conhecida"), (NOVA, "Frase nova")):
        simbolos = [s for p in PADRAO.findall(frase)
                    for s in fundir([BYTE_PARA_CHAR[b] for b in p.encode("utf-8")], ranks)]
        dizer(f"\n{nome}, com {plural(len(fusoes), 'fusão', 'fusões')}:")
        dizer(em_linhas(com_barras([pedaco(para_bytes(s)) for s in simbolos])))
    queda = licao.verificar(all(a >= b for c in contagens.values() for a, b in zip(c, c[1:])),
                            "a contagem de tokens não sobe com mais fusões")
    c, n = contagens[CONHECIDA], contagens[NOVA]
    dizer(f"\nConhecida: de {c[0]} para {c[-1]} tokens ({pct(1 - c[-1] / c[0], 0)} a menos); "
          f"nova: de {n[0]} para {n[-1]}\n({pct(1 - n[-1] / n[0], 0)} a menos). "
          f"{'A contagem nunca sobe.' if queda else 'A contagem SUBIU em algum ponto!'} "
          "O BPE comprime o que viu no\ntreino. O GPT-2 aprendeu 50.000 fusões em cerca de "
          "40 GB de texto da internet.")
    if not licao.quer_figuras:
        return
    todas = list(range(len(fusoes) + 1))
    fig, ax = figuras.figura(7, 4, margens=(0.75, 0.2, 0.55, 0.35))
    for frase, rotulo in ((CONHECIDA, "frase com palavras do corpo"), (NOVA, "frase nova")):
        ax.plot(todas, [contar_tokens(frase, fusoes[:k]) for k in todas], label=rotulo)
    ax.legend()
    ax.set(xlabel="fusões aprendidas", ylabel="tokens na frase",
           title="Quanto mais fusões, menos tokens"
           f" (corpo em {'inglês' if ingles else 'português'})")
    figuras.eixos_inteiros(ax, eixo="x")
    figuras.eixos_inteiros(ax, eixo="y")
    ax.grid(alpha=0.3)
    licao.salvar_figura(fig, "01_fusoes.png")


# ============================================================ experimento 4
@LICAO.experimento(4)
def exp_espaco(licao):
    tok = tokenizador(licao)
    grafias = ("Paris", " Paris", " paris", " PARIS", "paris")
    listas = [tuple(codificar(tok, texto)) for texto in grafias]
    largura_ids = max(18, *(len(str(list(ids))) + 1 for ids in listas))
    dizer(f"  {'texto':<10} {'ids':<{largura_ids}} tokens")
    for texto, ids in zip(grafias, listas):
        dizer(f"  {repr(texto):<10} {str(list(ids)):<{largura_ids}} "
              f"{' | '.join(pedacos(tok, ids))}")
    um = len(listas[1]) == 1
    dizer(f"\n{len(set(listas))} sequências de ids diferentes para 5 grafias. "
          f"\" Paris\" é {'UM token' if um else 'mais de um token'}.")
    prompt, resposta = "A capital da França é", " Paris"
    junto = codificar(tok, prompt + resposta)
    com_espaco = codificar(tok, prompt + " ")
    emendado = com_espaco + codificar(tok, resposta.strip())
    dizer(f"\n  {repr(prompt + resposta):<31} fim: {' | '.join(pedacos(tok, junto[-2:]))}")
    dizer(f"  {repr(prompt + ' '):<31} fim: {' | '.join(pedacos(tok, com_espaco[-2:]))}")
    espaco = com_espaco[-1]
    sozinho = codificar(tok, " ") == [espaco]
    dizer(f"\nO prompt com espaço no fim termina no token {espaco}"
          + (", o espaço sozinho." if sozinho else "."))
    mesmos = emendado == junto
    dizer("Prompt + \"Paris\" e o texto inteiro: "
          f"{'os mesmos ids' if mesmos else 'ids diferentes'}.")
    fim = " | ".join(pedacos(tok, codificar(tok, " é Paris")))
    soltos = sum(codificar(tok, t).count(espaco) for t in PORTUGUES + INGLES)
    dizer(f"No texto, \"é Paris\" vira {fim}: o espaço vai grudado na palavra\n"
          f"(nos {len(PORTUGUES + INGLES)} parágrafos da lição, o espaço sozinho aparece "
          f"{plural(soltos, 'vez', 'vezes')}).")
    if not mesmos:
        dizer("Depois de um espaço solto, o modelo teria de continuar com \"Paris\" sem "
              "espaço:\numa sequência que o tokenizador não produz para esse texto.")


# ============================================================ experimento 5
def paragrafos(texto):
    """Os parágrafos de um arquivo (--pt, --en): separados por uma linha em branco."""
    return [p.strip() for p in texto.split("\n\n") if p.strip()]


def medir(tok, textos):
    texto = "\n".join(textos)
    return len(texto), len(texto.split()), len(codificar(tok, texto))


@LICAO.experimento(5)
def exp_portugues(licao):
    tok = tokenizador(licao)
    portugues = paragrafos(licao.args.pt) if licao.args.pt else PORTUGUES
    ingles = paragrafos(licao.args.en) if licao.args.en else INGLES
    if licao.args.pt or licao.args.en:
        dizer("Os textos de --pt e --en (sem um deles, o da lição):\n")
    else:
        dizer("Os mesmos três parágrafos, em português e em inglês:\n")
    dizer(f"  {'língua':<10} {'caracteres':>10} {'palavras':>9} {'tokens':>7} "
          f"{'tokens/palavra':>15} {'caract./token':>14}")
    medidas = {}
    for nome, textos in (("português", portugues), ("inglês", ingles)):
        c, p, t = medidas[nome] = medir(tok, textos)
        dizer(f"  {nome:<10} {inteiro(c):>10} {inteiro(p):>9} {inteiro(t):>7} "
              f"{num(t / p, 2):>15} {num(c / t, 2):>14}")
    razao = medidas["português"][2] / medidas["inglês"][2]
    por_palavra = {n: m[2] / m[1] for n, m in medidas.items()}
    dizer(f"\nRazão de tokens português/inglês: {num(razao, 2)} "
          f"(o mesmo conteúdo custa {pct(abs(razao - 1), 0)} "
          f"{'a mais' if razao >= 1 else 'a menos'}).")
    if len(portugues) == len(ingles) > 1:  # parágrafo a parágrafo, se os dois batem
        por_paragrafo = {"português": [], "inglês": []}
        for i, (pt, en) in enumerate(zip(portugues, ingles)):
            a, b = len(codificar(tok, pt)), len(codificar(tok, en))
            por_paragrafo["português"].append(a)
            por_paragrafo["inglês"].append(b)
            dizer(f"  parágrafo {i + 1}: {a} contra {plural(b, 'token')} "
                  f"(razão {num(a / b, 2)})")
        n, quebra = len(portugues) - 1, len(codificar(tok, "\n"))
        somas = [sum(contas) for contas in por_paragrafo.values()]
        extras = [medidas[nome][2] - soma for nome, soma in zip(por_paragrafo, somas)]
        quebras = "a quebra de linha" if n == 1 else f"as {n} quebras de linha"
        cada = (", um token cada" if extras == [n * quebra] * 2 and quebra == 1 else
                f" (mais {extras[0]} e {extras[1]} tokens)")
        dizer(f"  (Somados, os parágrafos dão {somas[0]} e {somas[1]} tokens; o texto inteiro "
              f"tem\n  também {quebras} entre eles{cada}.)")
    janela = 1024
    dizer(f"\nNa janela de {inteiro(janela)} tokens do GPT-2 cabem cerca de "
          f"{inteiro(janela / por_palavra['inglês'])} palavras em inglês\n"
          f"e {inteiro(janela / por_palavra['português'])} em português. "
          "Numa API cobrada por token, a mesma resposta em\n"
          f"português custa {num(razao, 2)}x o preço em inglês.\n")
    licao.pausa("números, datas, uma palavra longa e código")
    dizer("Números, datas, uma palavra longa e código:")
    for caso in CASOS:
        ids = codificar(tok, caso)
        dizer(uma_linha(f"  {plural(len(ids), 'token'):>9}  ", pedacos(tok, ids, 12)))
    if not licao.quer_figuras:
        return
    fig, ax = figuras.figura(7, 4, margens=(0.75, 0.2, 0.55, 0.35))
    posicoes = range(min(len(portugues), len(ingles)))
    for nome, textos, lado in (("português", portugues, -0.2), ("inglês", ingles, 0.2)):
        contas = [len(codificar(tok, t)) for t in textos[:len(posicoes)]]
        ax.bar([x + lado for x in posicoes], contas, 0.4, label=nome)
    ax.set_xticks(list(posicoes), [f"parágrafo {i + 1}" for i in posicoes])
    ax.set(ylabel="tokens", title=f"O mesmo texto, duas línguas (tokenizador "
           f"{licao.modelo_curto})")
    ax.legend()
    licao.salvar_figura(fig, "01_portugues_ingles.png")


# ============================================================ experimento 6
def _utf8(bruto: bytes) -> bool:
    try:
        bruto.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


@LICAO.experimento(6)
def exp_vocabulario(licao):
    tok = tokenizador(licao)
    vocab = tok.get_vocab()
    ranks = fusoes_do_tokenizador(tok)
    especiais = [t for t in tok.all_special_tokens if t in vocab]
    brutos = {i: para_bytes(t) for t, i in vocab.items() if t not in especiais}
    de_um_byte = sum(len(p) == 1 for p in brutos.values())
    dizer(f"  tokens de um byte          {inteiro(de_um_byte):>7}")
    dizer(f"  fusões                     {inteiro(len(ranks)):>7}")
    rotulo = f"  especiais ({', '.join(especiais)})"           # o número na coluna 36
    dizer(f"{rotulo} {inteiro(len(especiais)):>{max(1, 35 - len(rotulo))}}")
    total = de_um_byte + len(ranks) + len(especiais)
    ok = licao.verificar(total == len(tok), "bytes + fusões + especiais = vocabulário")
    dizer(f"  soma                       {inteiro(total):>7}   len(tokenizador) = "
          f"{inteiro(len(tok))} ({'confere' if ok else 'NÃO confere'})\n")
    com_espaco = sum(p[:1] == b" " for p in brutos.values())
    invalidos = sum(1 for p in brutos.values() if not _utf8(p))
    dizer(f"Começam com espaço: {inteiro(com_espaco)} ({pct(com_espaco / len(tok))}).")
    dizer(f"Sozinhos, não são UTF-8 válido (pedaços de caractere): {inteiro(invalidos)}.")
    dizer("\nOs 8 tokens mais longos (em bytes):")
    longos = sorted(brutos.items(), key=lambda item: (-len(item[1]), item[0]))[:8]
    for i, p in longos:
        dizer(f"  {i:>6}  {plural(len(p), 'byte'):>9}  {pedaco(p, 50)}")


if __name__ == "__main__":
    LICAO.abrir()  # a primeira linha (e as opções erradas) antes do transformers e do torch
    sys.exit(LICAO.rodar())
