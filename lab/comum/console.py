"""O console e os formatos: o que toda lição usa para escrever na tela.

Texto que sobrevive a qualquer terminal (console antigo do Windows, pipe, sem cores,
80 colunas), números no formato brasileiro (0,84; 124.439.808), limites no lugar de
ruído de arredondamento ("< 1e-12"), durações, tokens legíveis, a barra de progresso, o
cronômetro e o comando que a tela sugere (nas duas formas do README). Nada aqui importa o torch: a primeira linha de uma lição sai antes dele.
"""
from __future__ import annotations

import math
import os
import shutil
import sys
import time

__all__ = [
    "dizer", "console", "largura", "unicode_ok", "caixa_tabela", "quebrar", "cortar", "citar",
    "em_linhas", "escritor", "perguntar", "Progresso", "num", "inteiro", "cientifico",
    "tamanho", "duracao", "pct", "plural", "limite", "legivel", "token", "marca_de_corte",
    "cronometrar",
    "comando",
]


# ---------------------------------------------------------------- o terminal
def preparar_saida() -> None:
    """Um caractere que o console não sabe escrever vira '?', nunca um erro."""
    for fluxo in (sys.stdout, sys.stderr):
        try:
            fluxo.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass


def _codificacao() -> str:
    return (getattr(sys.stdout, "encoding", None) or "ascii").lower()


def unicode_ok() -> bool:
    """True quando o console escreve UTF-8 (caixas e blocos de desenho)."""
    return _codificacao().replace("-", "").replace("_", "") in ("utf8", "utf8sig")


def largura() -> int:
    """Largura útil do terminal: entre 40 e 100 colunas."""
    colunas = shutil.get_terminal_size((80, 24)).columns
    return max(40, min(colunas, 100))


_console = None


def console():
    """Console do rich sem cores quando NO_COLOR, pipe ou terminal simples."""
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(width=largura(), no_color=bool(os.environ.get("NO_COLOR")),
                           emoji=False, highlight=False, safe_box=True)
    return _console


def mostrar_cursor() -> None:
    """O cursor de volta num terminal (a barra de progresso do rich o esconde)."""
    if _console is not None and _console.is_terminal:
        _console.show_cursor(True)


def dizer(texto: str = "") -> None:
    """Imprime texto simples já, sem passar pelo rich (rápido e seguro)."""
    try:
        print(texto, flush=True)
    except BrokenPipeError:
        cano_fechado()


def cano_fechado():
    """A saída foi cortada (| head, | more fechado): sai quieto, sem traceback."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)


def caixa_tabela():
    """Estilo de borda de tabela que o console consegue desenhar."""
    from rich import box

    return box.SIMPLE_HEAD if unicode_ok() else box.ASCII2


def quebrar(texto: str, recuo: int = 0) -> str:
    """Quebra o texto num parágrafo da largura do terminal, com recuo (as quebras de
    linha que ele tinha viram espaços, como no textwrap)."""
    import textwrap

    return textwrap.fill(texto, width=largura() - 1, initial_indent=" " * recuo,
                         subsequent_indent=" " * recuo)


def reticencias() -> str:
    return "…" if unicode_ok() else "..."


def cortar(texto: str, folga: int = 0, colunas: int | None = None) -> str:
    """Corta o texto para caber numa linha (menos `folga` colunas), com reticências, no
    fim de uma palavra: nunca "o gradiente da cam…"."""
    cabe = (colunas or largura() - 1) - folga
    if len(texto) <= cabe:
        return texto
    fim = reticencias()
    corte = texto[:cabe - len(fim) + 1]
    if " " in corte.strip():
        corte = corte[:corte.rstrip().rfind(" ")]
    else:  # uma palavra só, maior que a linha: corta onde der
        corte = corte[:cabe - len(fim)]
    return corte.rstrip(" ,;·:-") + fim


def citar(texto: str, folga: int) -> str:
    """O texto entre aspas, cortado numa palavra se não couber na linha com `folga`."""
    return '"' + cortar(texto, folga + 2) + '"'


def em_linhas(itens, recuo: int = 2, colunas: int | None = None) -> str:
    """Itens separados por um espaço, quebrando a linha antes de passar da largura do
    terminal (ou de `colunas`); nenhum item é cortado ao meio."""
    cabe = colunas or largura() - 1
    linhas = [" " * recuo]
    for item in itens:
        if len(linhas[-1]) > recuo and len(linhas[-1]) + 1 + len(item) > cabe:
            linhas.append(" " * recuo)
        linhas[-1] += ("" if len(linhas[-1]) == recuo else " ") + item
    return "\n".join(linhas)


def escritor(tokenizador, recuo: int = 2):
    """Uma função que escreve o texto de ids (1, T) conforme a geração o estende (só o
    pedaço novo, já com o recuo da primeira linha), quebrando a linha antes de passar da
    largura. Espera quando o último token é meio caractere (o BPE corta bytes de um 'ç')."""
    estado = {"escrito": 0, "coluna": recuo}
    print(" " * recuo, end="")

    def escrever(ids):
        texto = tokenizador.decode(ids[0]).replace("\n", " ")
        if texto.endswith("\ufffd"):                   # meio caractere: espera o resto
            return
        pedaco = texto[estado["escrito"]:]
        estado["escrito"] = len(texto)
        if estado["coluna"] + len(pedaco) > largura() - 1 and pedaco.startswith(" "):
            print("\n" + " " * recuo, end="")
            pedaco, estado["coluna"] = pedaco[1:], recuo
        print(pedaco, end="", flush=True)
        estado["coluna"] += len(pedaco)
    return escrever


def perguntar(texto: str) -> str | None:
    """input() que não quebra: None quando não há entrada (stdin fechado, fim do
    arquivo, pipe vazio), para a lição seguir sem perguntar (--pausa, --interativo)."""
    if sys.stdin is None or sys.stdin.closed:
        return None
    try:
        return input(texto)
    except (EOFError, RuntimeError, OSError, ValueError):
        dizer()
        return None


_BARRAS = []  # as barras desenhando agora: parar_barras() as apaga (no Ctrl+C)


def parar_barras() -> None:
    """Apaga as barras de progresso abertas. O Ctrl+C chama isto antes de escrever: com a
    barra viva, o rich a redesenharia embaixo da mensagem, sem quebra de linha."""
    while _BARRAS:
        _BARRAS.pop().__exit__(None, None, None)


class Progresso:
    """Barra do rich num terminal; num pipe ou arquivo, nada (a saída fica limpa).

    `texto` pode ter campos que `avancar(**campos)` atualiza, como "{task.fields[vel]}"."""

    def __init__(self, total, texto, **campos):
        self.total, self.texto, self.campos, self.barra = total, texto, campos, None

    def __enter__(self):
        terminal = console()
        if terminal.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            barra = [BarColumn()] if unicode_ok() else []   # a barra usa caixas Unicode
            self.barra = Progress(TextColumn("{task.description}"), *barra,
                                  MofNCompleteColumn(), console=terminal, transient=True)
            self.barra.start()
            self.tarefa = self.barra.add_task(self.texto, total=self.total, **self.campos)
            _BARRAS.append(self)
        return self

    def avancar(self, passos: int = 1, descricao: str | None = None):
        if self.barra:
            self.barra.update(self.tarefa, advance=passos,
                              **({"description": descricao} if descricao else {}))

    def __exit__(self, *erro):
        if self.barra:
            barra, self.barra = self.barra, None
            barra.stop()
            if self in _BARRAS:
                _BARRAS.remove(self)


# ---------------------------------------------------------------- números pt-BR
def num(x: float, casas: int = 2) -> str:
    """0.8413 -> '0,8413'; 1234.5 -> '1.234,50' (formato brasileiro); nunca '-0,00'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—" if unicode_ok() else "-"
    if round(x, casas) == 0:
        x = 0.0
    texto = f"{x:,.{casas}f}"
    return texto.replace(",", "_").replace(".", ",").replace("_", ".")


def inteiro(n: int) -> str:
    """124439808 -> '124.439.808'."""
    return f"{int(n):,}".replace(",", ".")


def cientifico(x: float, casas: int = 2) -> str:
    """0.000473 -> '4,73e-4'."""
    if x == 0:
        return "0"
    mantissa, expoente = f"{x:.{casas}e}".split("e")
    return f"{mantissa.replace('.', ',')}e{int(expoente)}"


def tamanho(n_bytes: float) -> str:
    """Bytes em MiB ou GiB, formato brasileiro."""
    if n_bytes >= 2**30:
        return f"{num(n_bytes / 2**30, 2)} GiB"
    return f"{num(n_bytes / 2**20, 1)} MiB"


def duracao(segundos: float, cerca: str = "cerca de ") -> str:
    """'menos de 1 min', 'cerca de 12 min', '... 26 h', '... 3 dias': a unidade que se lê
    melhor (acima de 120 min, horas; acima de 48 h, dias)."""
    minutos = segundos / 60
    if minutos < 0.5:
        return "menos de 1 min"
    if minutos <= 120:
        return f"{cerca}{num(minutos, 0)} min"
    if minutos <= 48 * 60:
        return f"{cerca}{num(minutos / 60, 0)} h"
    return f"{cerca}{num(minutos / 1440, 0)} dias"


def pct(x: float, casas: int = 1) -> str:
    """0.666 -> '66,6 %'."""
    return f"{num(100 * x, casas)} %"


def plural(n: int, singular: str, plural_: str | None = None) -> str:
    """'1 token', '2 tokens', '1 fusão', '3 fusões': o número e a palavra concordando."""
    palavra = singular if n == 1 else (plural_ or singular + "s")
    return f"{inteiro(n)} {palavra}"


def limite(x: float, teto: float, casas: int = 1) -> str:
    """Uma diferença que pode ser só arredondamento: '< 1e-12' abaixo do teto (os dígitos
    do ruído mudam de um processador para outro), o valor ('3,2e-4') acima dele.

    O teto é fixo, escolhido pela lição (bem acima do arredondamento da conta, bem abaixo
    de um erro de verdade): nunca a casa decimal do próprio x, que mudaria de CPU para CPU."""
    if not math.isfinite(x):
        return num(x) if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if abs(x) < teto:
        return "< " + f"{teto:.0e}".replace("e-0", "e-").replace("e+0", "e")
    return cientifico(x, casas)


def legivel(pedaco: str | bytes, limite_: int | None = None, espaco: str | None = None,
            reticencias_: bool | str = False) -> str:
    """Um pedaço de texto (ou os bytes de um token) legível em qualquer console e numa
    tabela: espaço vira '·' ('_' num console sem Unicode), quebra de linha vira '\\n' e
    tabulação '\\t'. Em bytes, um pedaço que não é UTF-8 válido (meio 'ç') aparece como
    \\xNN; em texto, o caractere de substituição do decode (o mesmo meio 'ç') vira '?'.
    Com limite_, corta: seco (uma coluna de tabela), com '...' (reticencias_=True) ou com
    a marca dada (reticencias_='…': 'capital' em 6 vira 'capit…')."""
    if isinstance(pedaco, bytes):
        texto = pedaco.decode("utf-8", errors="backslashreplace")
    else:
        texto = pedaco.replace("\ufffd", "?")
    texto = texto.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    texto = "".join(c if c.isprintable() or c == " " else
                    (f"\\x{ord(c):02x}" if ord(c) < 256 else "?") for c in texto)
    if espaco is None:
        espaco = "·" if unicode_ok() else "_"
    texto = texto.replace(" ", espaco) or "?"
    if limite_ and len(texto) > limite_:
        marca = "..." if reticencias_ is True else (reticencias_ or "")
        texto = texto[:limite_ - len(marca)] + marca
    return texto


def token(tokenizador, i, limite_: int = 12, espaco: str | None = None,
          marca: bool | str = False) -> str:
    """O token de id i em texto legível (veja legivel): o que uma tabela mostra. Com
    marca=True, um token cortado termina com a marca de corte do console ('capit…'); com
    marca='…', com essa (numa figura)."""
    return legivel(tokenizador.decode([int(i)]), limite_, espaco,
                   marca_de_corte() if marca is True else marca)


def marca_de_corte() -> str:
    """Um caractere que diz "cortado": '…' onde o console o escreve (UTF-8, cp1252),
    '~' num console ASCII."""
    try:
        "…".encode(_codificacao())
        return "…"
    except (UnicodeEncodeError, LookupError):
        return "~"


# ---------------------------------------------------------------- tempo
def cronometrar(funcao, repeticoes: int = 1) -> float:
    """O menor tempo, em segundos, de `repeticoes` chamadas de funcao() (o menor é o
    que menos sofre com o resto da máquina)."""
    melhor = math.inf
    for _ in range(repeticoes):
        inicio = time.perf_counter()
        funcao()
        melhor = min(melhor, time.perf_counter() - inicio)
    return melhor


# ---------------------------------------------------------------- o comando que a tela sugere
def comando(script: str, *argumentos: str) -> str:
    """O comando que roda lab/<script> como o README manda, na pasta do lab: a linha do
    Windows (PowerShell) e a do Linux/macOS, com dois espaços de recuo (um argumento com
    espaço vai entre aspas)."""
    resto = "".join(f" {a}" if a and " " not in a else f' "{a}"' for a in argumentos)
    return (f"  .venv\\Scripts\\python.exe lab\\{script}{resto}\n"
            f"  .venv/bin/python lab/{script}{resto}")
