"""O código das peças na tela (o --codigo da lição 06): a fonte de cada função ou classe,
lida do próprio arquivo com o inspect, com o arquivo e a linha, numa tela de 80 colunas.
Nada aqui é conceito de lição: quem escolhe as peças e a ordem é a lição."""
from __future__ import annotations

import inspect
from pathlib import Path

from .caminhos import RAIZ
from .console import dizer, inteiro, largura, pct, plural, quebrar


def fonte(objeto):
    """(arquivo, primeira linha, linhas do código) de uma peça, lidos do próprio arquivo."""
    objeto = inspect.unwrap(objeto)                    # o futuro vem com um lru_cache
    linhas, inicio = inspect.getsourcelines(objeto)
    return inspect.getsourcefile(objeto), inicio, [l.rstrip("\n") for l in linhas]


def para_a_tela(linhas, colunas):
    """As linhas de um trecho de Python numa tela de `colunas`, mudando só espaços e
    quebras de linha (o código continua o mesmo e roda igual). Numa linha que não cabe:
    o comentário do fim encosta no código e, se ainda não couber, sobe para a linha de
    cima; uma docstring é reparagrafada; uma linha de código quebra depois de uma
    vírgula dentro de parênteses, alinhada depois deles."""
    import ast
    import io
    import textwrap
    import tokenize

    fonte = "\n".join(linhas) + "\n"
    comentarios, virgulas, abertos = {}, {}, []
    for t in tokenize.generate_tokens(io.StringIO(fonte).readline):
        (lin, col), (_, fim) = t.start, t.end
        if t.type == tokenize.COMMENT:
            comentarios[lin] = col
        elif t.type == tokenize.OP and t.string in "([{":
            abertos.append(col)
        elif t.type == tokenize.OP and t.string in ")]}":
            abertos.pop()
        elif t.type == tokenize.OP and t.string == "," and abertos:
            virgulas.setdefault(lin, []).append((fim, abertos[-1] + 1))
    docstrings = {}                                    # primeira linha -> última
    for no in ast.walk(ast.parse(fonte)):
        corpo = getattr(no, "body", None)
        if isinstance(corpo, list) and corpo and isinstance(corpo[0], ast.Expr) \
                and isinstance(getattr(corpo[0].value, "value", None), str):
            docstrings[corpo[0].lineno] = corpo[0].end_lineno
    saida, n = [], 0
    while n < len(linhas):
        n += 1
        linha = linhas[n - 1]
        recuo = linha[:len(linha) - len(linha.lstrip())]
        ultima = docstrings.get(n)
        if ultima and any(len(l) > colunas for l in linhas[n - 1:ultima]):
            texto = "\n".join(l.strip() for l in linhas[n - 1:ultima])
            for i, paragrafo in enumerate(texto.split("\n\n")):
                saida += [""] * (i > 0) + textwrap.wrap(
                    " ".join(paragrafo.split()), colunas, initial_indent=recuo,
                    subsequent_indent=recuo, break_long_words=False, break_on_hyphens=False)
            n = ultima
            continue
        if len(linha) > colunas and n in comentarios and linha[:comentarios[n]].strip():
            codigo, nota = linha[:comentarios[n]].rstrip(), linha[comentarios[n]:]
            if len(codigo) + 2 + len(nota) <= colunas:
                linha = f"{codigo}  {nota}"
            else:
                saida.append(recuo + nota)
                linha = codigo
        cabem = [(fim, alinhar) for fim, alinhar in virgulas.get(n, []) if fim <= colunas]
        if len(linha) > colunas and cabem:
            fim, alinhar = cabem[-1]
            saida += [linha[:fim], " " * alinhar + linha[fim:].lstrip()]
            continue
        saida.append(linha)
    return saida


def mostrar(pecas, de_onde: str) -> int:
    """A fonte de cada peça de `pecas` ([(lição, objeto)], na ordem das lições), com o
    arquivo e a linha; de_onde diz quem as monta ('as lições 03 a 06')."""
    colunas = largura() - 1
    pecas = [(n, objeto.__name__, *fonte(objeto)) for n, objeto in pecas]
    total = sum(len(linhas) for *_, linhas in pecas)
    arquivos = {arquivo for _n, _nome, arquivo, _i, _l in pecas}
    nos_arquivos = sum(len(Path(a).read_text(encoding="utf-8").splitlines()) for a in arquivos)

    def curto(arquivo):
        caminho = Path(arquivo).resolve()
        return (caminho.relative_to(RAIZ).as_posix() if caminho.is_relative_to(RAIZ)
                else str(caminho))

    dizer(quebrar(
        f"O modelo inteiro que {de_onde} montam: {len(pecas)} peças, "
        f"{inteiro(total)} linhas de Python, lidas agora dos arquivos (inspect), na ordem "
        f"das lições. Numa linha que passaria de {colunas + 1} colunas, só os espaços e as "
        "quebras mudam; o código é o mesmo."))
    licao_anterior = None
    for numero, nome, arquivo, inicio, linhas in pecas:
        if numero != licao_anterior:
            dizer(f"\n# {'=' * 20} lição {numero}: {curto(arquivo)}")
            licao_anterior = numero
        dizer(f"\n# {nome}: linhas {inicio} a {inicio + len(linhas) - 1} "
              f"({plural(len(linhas), 'linha')})")
        dizer("\n".join(para_a_tela(linhas, colunas)))
    dizer(f"\n# {plural(len(pecas), 'peça')}, {plural(total, 'linha')}: "
          f"{pct(total / nos_arquivos)} das {inteiro(nos_arquivos)} linhas dos "
          f"{len(arquivos)} arquivos.")
    dizer("# O resto dos arquivos: os experimentos que medem e conferem estas peças.")
    return 0
