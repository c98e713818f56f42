"""Lição 01 · Texto, tokens e ids: o BPE do GPT-2.

O modelo não lê letras: lê números. O tokenizador corta o texto em pedaços
(tokens) e troca cada um pelo seu número (id). Leia junto: apostilas/01_tokens.md.
"""
import argparse
import collections
import json
import sys
from pathlib import Path

import common

IDA_E_VOLTA = "A ação do GPT-2 custou R$ 3,50 😀"
FUSOES = 200


def _fusoes(texto):
    try:
        n = int(texto)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{texto}' não é um inteiro; exemplo: --fusoes 500") \
            from None
    if not 0 <= n <= 5000:
        raise argparse.ArgumentTypeError(f"{texto}: use de 0 a 5.000 fusões")
    return n


def _arquivo(texto):
    caminho = Path(texto)
    if not caminho.is_file():
        raise argparse.ArgumentTypeError(f"o arquivo '{texto}' não existe (confira o caminho)")
    try:
        conteudo = caminho.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(
            f"'{texto}' não está em UTF-8; salve-o como UTF-8 e tente de novo") from None
    if not conteudo:
        raise argparse.ArgumentTypeError(f"o arquivo '{texto}' está vazio")
    return [p.strip() for p in conteudo.split("\n\n") if p.strip()]


def _argumentos(parser):
    parser.add_argument("--texto", default=IDA_E_VOLTA, metavar='"FRASE"',
                        help="a frase do experimento 1 (padrão: a da apostila)")
    parser.add_argument("--ordem", choices=("aprendida", "inversa"), default="aprendida",
                        help="experimento 2: aplicar as fusões na ordem em que foram "
                        "aprendidas (o certo) ou na inversa, a mais recente primeiro")
    parser.add_argument("--corpo", choices=("portugues", "ingles"), default="portugues",
                        help="experimento 3: em que parágrafos da lição treinar o BPE")
    parser.add_argument("--fusoes", type=_fusoes, default=FUSOES, metavar="N",
                        help=f"experimento 3: quantas fusões aprender (padrão: {FUSOES})")
    parser.add_argument("--pt", type=_arquivo, metavar="ARQUIVO",
                        help="experimento 5: um texto seu em português (UTF-8; parágrafos "
                        "separados por linha em branco)")
    parser.add_argument("--en", type=_arquivo, metavar="ARQUIVO",
                        help="experimento 5: a tradução dele para o inglês")


LICAO = common.Licao(
    "01", "Texto, tokens e ids: o BPE do GPT-2",
    [
        (1, "Ida e volta: texto, tokens, ids e texto de novo", True),
        (2, "O BPE à mão: regex, tabela de bytes e fusões do GPT-2", True),
        (3, "Aprendendo fusões num parágrafo em português", False),
        (4, "O espaço inicial e as maiúsculas", True),
        (5, "Português custa mais tokens que inglês", True),
        (6, "O vocabulário: 256 bytes, fusões e um token especial", True),
    ],
    proxima=("lab/02_embeddings.py", "apostilas/02_embeddings.md"),
    argumentos=_argumentos,
)
if __name__ == "__main__":
    LICAO.abrir()  # a primeira linha aparece antes do torch (o transformers o importa)

import regex  # noqa: E402  (o 're' do Python não entende \p{L}, "qualquer letra")

dizer, num, inteiro, pct = common.dizer, common.num, common.inteiro, common.pct

# Os mesmos três parágrafos nas duas línguas (escritos para esta lição).
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
LINHAS_POR_TELA = 18  # linhas da tabela de tokens por tela do projetor (--pausa)
CASOS = ["R$ 1.234.567,89", "14/03/2026", "2026-03-14", "3,14159", "12345678",
         " anticonstitucionalissimamente", "for i in range(10): print(i)"]
DIFICEIS = ["    x  =  1\n\n\tfim", "Não!  É?   Sim...", "日本語 e ☕", "don't we'll I'M"]


# ============================================================ o tokenizador
def tokenizador(licao):
    """O tokenizador do modelo (só ele, sem os pesos), carregado uma vez."""
    if not hasattr(licao, "_tok"):
        try:
            licao._tok = common.carregar_tokenizador(licao.args.modelo)
        except common.ModeloIndisponivel as erro:
            licao._tok = erro
    if isinstance(licao._tok, Exception):
        raise common.ExperimentoPulado(str(licao._tok))
    return licao._tok


def ver(pedaco: bytes, limite: int = 40) -> str:
    """Bytes de um token em texto legível: espaço vira '·'; um pedaço que não é
    UTF-8 válido (meio caractere) aparece como \\xNN."""
    texto = pedaco.decode("utf-8", errors="backslashreplace")
    texto = texto.replace(" ", "·").replace("\n", "\\n").replace("\t", "\\t")
    texto = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in texto)
    return texto if len(texto) <= limite else texto[:limite - 3] + "..."


# ============================================================ o BPE à mão
# A regex de pré-tokenização do GPT-2: contrações, letras, números e pontuação,
# cada grupo com no máximo UM espaço grudado na frente; espaços sobrando à parte.
PADRAO = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
                       r"""|\s+(?!\S)|\s+""")


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


def para_bytes(simbolo: str) -> bytes:
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


def em_linhas(itens, recuo=2, largura=76):
    """Junta itens separados por espaço em linhas de no máximo `largura` colunas."""
    linhas, atual = [], ""
    for item in itens:
        if atual and len(atual) + 1 + len(item) > largura - recuo:
            linhas.append(atual)
            atual = item
        else:
            atual = f"{atual} {item}" if atual else item
    return "\n".join(" " * recuo + linha for linha in linhas + [atual])


def fusoes_do_tokenizador(tok):
    """Os pares fundidos, na ordem em que foram aprendidos: {(a, b): posto}."""
    modelo = json.loads(tok.backend_tokenizer.to_str())["model"]
    pares = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in modelo["merges"]]
    return {par: posto for posto, par in enumerate(pares)}


# ============================================================ experimento 1
def exp_ida_e_volta(licao):
    tok = tokenizador(licao)
    texto = licao.args.texto
    ids = tok.encode(texto)
    dizer(f'Texto: "{texto}"  ({len(texto)} caracteres, '
          f'{len(texto.encode("utf-8"))} bytes em UTF-8)\n')
    dizer(f"  {'#':>3} {'id':>6}  {'token':<14} bytes")
    for i, t in enumerate(ids):
        if i and i % LINHAS_POR_TELA == 0:  # um texto com muitos tokens: a tabela em telas
            licao.pausa(f"os tokens {i} a {min(i + LINHAS_POR_TELA, len(ids)) - 1}")
        pedaco = para_bytes(tok.convert_ids_to_tokens(t))
        dizer(f"  {i:>3} {t:>6}  {ver(pedaco):<14} {pedaco.hex(' ')}")
    licao.pausa("a volta ao texto, o emoji e os acentos")
    volta = tok.decode(ids)
    igual = licao.verificar(volta == texto, "decode(encode(texto)) == texto")
    dizer(f"\n{len(ids)} tokens. De volta: \"{volta}\"")
    dizer(f"Igual ao original, byte a byte? {'sim' if igual else 'NÃO'}.")
    dizer("Um '·' é o espaço que vem grudado NA FRENTE de uma palavra.")
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
        ids = tok.encode(palavra)
        partes = " | ".join(ver(para_bytes(tok.convert_ids_to_tokens(t))) for t in ids)
        meios = sum("\ufffd" in tok.decode([t]) for t in ids)
        rotulo = f'"{palavra.strip()}"'
        dizer(f"  {rotulo:<10} -> {partes:<30} {meios} meio(s) caractere(s)")


# ============================================================ experimento 2
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
    dizer(em_linhas([f"[{ver(p.encode('utf-8'))}]" for p in PADRAO.findall(frase)]) + "\n")
    palavra = " tokenização"
    simbolos = [BYTE_PARA_CHAR[b] for b in palavra.encode("utf-8")]
    if inversa:  # o posto com o sinal trocado: a fusão mais recente passa na frente
        ranks = {par: -posto for par, posto in ranks.items()}
        dizer("--ordem inversa: as fusões vão da MAIS RECENTE para a mais antiga.\n")
    passos = []
    fundir(simbolos, ranks, passos)
    licao.pausa(f"as fusões de \"{palavra.strip()}\", passo a passo")
    dizer(f"Fusões de \"{palavra}\", passo a passo (posto = ordem de aprendizado):")
    dizer(f"  {'início':>12} {'|'.join(ver(para_bytes(s)) for s in simbolos)}")
    for posto, _par, atual in passos:
        dizer(f"  {'posto ' + inteiro(abs(posto)):>12} {'|'.join(ver(para_bytes(s)) for s in atual)}")
    dizer()
    textos = [IDA_E_VOLTA, frase, *PORTUGUES, *INGLES, *CASOS, *DIFICEIS]
    iguais = sum(bpe(t, ranks, vocab) == tok.encode(t) for t in textos)
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


def pedacos_com_barras(pedacos):
    return [p + " |" for p in pedacos[:-1]] + pedacos[-1:]


def contar_tokens(texto, fusoes):
    ranks = {par: posto for posto, (par, _n) in enumerate(fusoes)}
    return sum(len(fundir([BYTE_PARA_CHAR[b] for b in p.encode("utf-8")], ranks))
               for p in PADRAO.findall(texto))


def exp_aprender_fusoes(licao):
    ingles = licao.args.corpo == "ingles"
    paragrafos = INGLES if ingles else PORTUGUES
    corpo = "\n".join(paragrafos)
    fusoes = treinar_bpe(corpo, licao.args.fusoes)
    dizer(f"Corpo de treino: os {len(paragrafos)} parágrafos em "
          f"{'inglês' if ingles else 'português'} da lição "
          f"({len(corpo)} caracteres,\n{len(corpo.encode('utf-8'))} bytes). "
          f"Aprendendo {len(fusoes)} fusões do zero.\n")
    if len(fusoes) < licao.args.fusoes:  # o corpo acabou: toda palavra já é um token
        dizer(f"(Pedidas: {inteiro(licao.args.fusoes)}. Depois de {len(fusoes)}, cada palavra "
              "do corpo já é um token só:\nnão sobra par vizinho para fundir.)\n")
    dizer("As 12 primeiras fusões (o par vizinho mais frequente em cada passo; num\n"
          "empate, o que aparece primeiro no texto):")
    for i, ((a, b), n) in enumerate(fusoes[:12]):
        dizer(f"  {i + 1:>3}. {ver(para_bytes(a)):>6} + {ver(para_bytes(b)):<6} "
              f"-> {ver(para_bytes(a + b)):<9} ({n} vezes)")
    conhecida = "O tokenizador troca cada pedaço pelo seu número."
    nova = "A girafa bebeu água fresca no zoológico."
    xs = [k for k in (0, 10, 25, 50, 100, 150, 200, 300, 500, 1000, 2000) if k < len(fusoes)]
    xs.append(len(fusoes))                           # 200 fusões: 0, 10, ..., 150 e 200
    contagens = {f: [contar_tokens(f, fusoes[:k]) for k in xs] for f in (conhecida, nova)}
    licao.pausa("os tokens de duas frases, fusão a fusão")
    if ingles:
        dizer("\nTokens de duas frases em português conforme as fusões entram. O corpo é\n"
              "inglês: nem a \"conhecida\" (palavras dos parágrafos em português) está nele.")
    else:
        dizer("\nTokens de duas frases conforme as fusões entram: uma com palavras do corpo,")
        dizer("outra com palavras que o corpo não tem.")
    dizer(f"  {'fusões':>7} {'conhecida':>10} {'nova':>6}")
    for i, k in enumerate(xs):
        dizer(f"  {k:>7} {contagens[conhecida][i]:>10} {contagens[nova][i]:>6}")
    ranks = {par: posto for posto, (par, _n) in enumerate(fusoes)}
    for frase, nome in ((conhecida, "Frase conhecida"), (nova, "Frase nova")):
        pedacos = [ver(para_bytes(s)) for p in PADRAO.findall(frase)
                   for s in fundir([BYTE_PARA_CHAR[b] for b in p.encode("utf-8")], ranks)]
        dizer(f"\n{nome}, com {len(fusoes)} fusões:")
        dizer(em_linhas(pedacos_com_barras(pedacos)))
    queda = licao.verificar(all(a >= b for c in contagens.values() for a, b in zip(c, c[1:])),
                            "a contagem de tokens não sobe com mais fusões")
    c, n = contagens[conhecida], contagens[nova]
    dizer(f"\nConhecida: de {c[0]} para {c[-1]} tokens ({pct(1 - c[-1] / c[0], 0)} a menos); "
          f"nova: de {n[0]} para {n[-1]}\n({pct(1 - n[-1] / n[0], 0)} a menos). "
          f"{'A contagem nunca sobe.' if queda else 'A contagem SUBIU em algum ponto!'} "
          "O BPE comprime o que viu no\ntreino. O GPT-2 aprendeu 50.000 fusões em cerca de "
          "40 GB de texto da internet.")
    if not licao.quer_figuras:
        return
    todas = list(range(len(fusoes) + 1))
    fig, ax = common.figura(7, 4, margens=(0.75, 0.2, 0.55, 0.35))
    for frase, rotulo in ((conhecida, "frase com palavras do corpo"), (nova, "frase nova")):
        ax.plot(todas, [contar_tokens(frase, fusoes[:k]) for k in todas], label=rotulo)
    ax.legend()
    ax.set(xlabel="fusões aprendidas", ylabel="tokens na frase",
           title="Quanto mais fusões, menos tokens")
    common.eixos_inteiros(ax, eixo="x")
    common.eixos_inteiros(ax, eixo="y")
    ax.grid(alpha=0.3)
    licao.salvar_figura(fig, "01_fusoes.png")


# ============================================================ experimento 4
def exp_espaco(licao):
    tok = tokenizador(licao)
    dizer(f"  {'texto':<10} {'ids':<18} tokens")
    listas = []
    for texto in ("Paris", " Paris", " paris", " PARIS", "paris"):
        ids = tok.encode(texto)
        listas.append(tuple(ids))
        pedacos = " | ".join(ver(para_bytes(tok.convert_ids_to_tokens(t))) for t in ids)
        dizer(f"  {repr(texto):<10} {str(ids):<18} {pedacos}")
    um = len(tok.encode(" Paris")) == 1
    dizer(f"\n{len(set(listas))} sequências de ids diferentes para 5 grafias. "
          f"\" Paris\" é {'UM token' if um else 'mais de um token'}.")
    prompt, resposta = "A capital da França é", " Paris"
    junto = tok.encode(prompt + resposta)
    com_espaco = tok.encode(prompt + " ")
    emendado = com_espaco + tok.encode(resposta.strip())
    dizer(f"\n  {repr(prompt + resposta):<31} fim: "
          f"{' | '.join(ver(para_bytes(tok.convert_ids_to_tokens(t))) for t in junto[-2:])}")
    dizer(f"  {repr(prompt + ' '):<31} fim: "
          f"{' | '.join(ver(para_bytes(tok.convert_ids_to_tokens(t))) for t in com_espaco[-2:])}")
    dizer(f"\nO prompt com espaço no fim termina no token {com_espaco[-1]}, o espaço sozinho.")
    dizer(f"Prompt + \"Paris\" dá os mesmos ids que o texto inteiro? "
          f"{'sim' if emendado == junto else 'não'}.")
    soltos = sum(tok.encode(t).count(com_espaco[-1]) for t in PORTUGUES + INGLES)
    dizer(f"No texto, \"é Paris\" vira ·é | ·Paris: o espaço vai grudado na palavra\n"
          f"(nos {len(PORTUGUES + INGLES)} parágrafos da lição, o espaço sozinho aparece "
          f"{soltos} vez(es)). Depois de um\nespaço solto, o modelo teria de continuar com "
          "\"Paris\" sem espaço: uma sequência\nque o tokenizador não produz para esse texto.")


# ============================================================ experimento 5
def medir(tok, textos):
    texto = "\n".join(textos)
    return len(texto), len(texto.split()), len(tok.encode(texto))


def exp_portugues(licao):
    tok = tokenizador(licao)
    portugues, ingles = licao.args.pt or PORTUGUES, licao.args.en or INGLES
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
    pares = zip(portugues, ingles) if len(portugues) == len(ingles) else []
    for i, (pt, en) in enumerate(pares):  # parágrafo a parágrafo, se os dois batem
        dizer(f"  parágrafo {i + 1}: {len(tok.encode(pt))} contra {len(tok.encode(en))} "
              f"tokens (razão {num(len(tok.encode(pt)) / len(tok.encode(en)), 2)})")
    janela = 1024
    dizer(f"\nNa janela de {inteiro(janela)} tokens do GPT-2 cabem cerca de "
          f"{inteiro(janela / por_palavra['inglês'])} palavras em inglês\n"
          f"e {inteiro(janela / por_palavra['português'])} em português. "
          "Numa API cobrada por token, a mesma resposta em\n"
          f"português custa {num(razao, 2)}x o preço em inglês.\n")
    licao.pausa("números, datas, uma palavra longa e código")
    dizer("Números, datas, uma palavra longa e código:")
    for caso in CASOS:
        ids = tok.encode(caso)
        pedacos = " | ".join(ver(para_bytes(tok.convert_ids_to_tokens(t)), 12) for t in ids)
        dizer(f"  {len(ids):>2} tokens  {pedacos}")
    if not licao.quer_figuras:
        return
    fig, ax = common.figura(7, 4, margens=(0.75, 0.2, 0.55, 0.35))
    posicoes = range(min(len(portugues), len(ingles)))
    ax.bar([x - 0.2 for x in posicoes], [len(tok.encode(t)) for t in portugues], 0.4,
           label="português")
    ax.bar([x + 0.2 for x in posicoes], [len(tok.encode(t)) for t in ingles], 0.4,
           label="inglês")
    ax.set_xticks(list(posicoes), [f"parágrafo {i + 1}" for i in posicoes])
    ax.set(ylabel="tokens do GPT-2", title="O mesmo texto, duas línguas")
    ax.legend()
    licao.salvar_figura(fig, "01_portugues_ingles.png")


# ============================================================ experimento 6
def exp_vocabulario(licao):
    tok = tokenizador(licao)
    vocab = tok.get_vocab()
    ranks = fusoes_do_tokenizador(tok)
    especiais = [t for t in tok.all_special_tokens if t in vocab]
    pedacos = {i: para_bytes(t) for t, i in vocab.items() if t not in especiais}
    de_um_byte = sum(len(p) == 1 for p in pedacos.values())
    dizer(f"  tokens de um byte          {inteiro(de_um_byte):>7}")
    dizer(f"  fusões                     {inteiro(len(ranks)):>7}")
    dizer(f"  especiais ({', '.join(especiais)}) {inteiro(len(especiais)):>5}")
    total = de_um_byte + len(ranks) + len(especiais)
    ok = licao.verificar(total == len(tok), "bytes + fusões + especiais = vocabulário")
    dizer(f"  soma                       {inteiro(total):>7}   len(tokenizador) = "
          f"{inteiro(len(tok))} ({'confere' if ok else 'NÃO confere'})\n")
    com_espaco = sum(p[:1] == b" " for p in pedacos.values())
    invalidos = sum(1 for p in pedacos.values() if not _utf8(p))
    dizer(f"Começam com espaço: {inteiro(com_espaco)} ({pct(com_espaco / len(tok))}).")
    dizer(f"Sozinhos, não são UTF-8 válido (pedaços de caractere): {inteiro(invalidos)}.")
    dizer("\nOs 8 tokens mais longos (em bytes):")
    longos = sorted(pedacos.items(), key=lambda item: (-len(item[1]), item[0]))[:8]
    for i, p in longos:
        dizer(f"  {i:>6}  {len(p):>3} bytes  {ver(p, 50)}")


def _utf8(pedaco: bytes) -> bool:
    try:
        pedaco.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


EXPERIMENTOS = {1: exp_ida_e_volta, 2: exp_bpe_a_mao, 3: exp_aprender_fusoes,
                4: exp_espaco, 5: exp_portugues, 6: exp_vocabulario}

if __name__ == "__main__":
    sys.exit(LICAO.rodar(EXPERIMENTOS))
