"""O que nenhuma lição ensina, mas todas usam.

Console que sobrevive a qualquer terminal, linha de comando comum, sementes,
cabeçalhos dos experimentos, gráficos ASCII, figuras PNG, carregamento do
GPT-2 e contagem de parâmetros. Este módulo NÃO importa torch nem
transformers no topo: a primeira linha de cada lição aparece antes deles.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import shutil
import sys
import time
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
PASTA_LAB = RAIZ / "lab"


# ---------------------------------------------------------------- console
def _preparar_saida() -> None:
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

        _console = Console(
            width=largura(),
            no_color=bool(os.environ.get("NO_COLOR")),
            emoji=False,
            highlight=False,
            safe_box=True,
        )
    return _console


def dizer(texto: str = "") -> None:
    """Imprime texto simples já, sem passar pelo rich (rápido e seguro)."""
    try:
        print(texto, flush=True)
    except BrokenPipeError:
        _cano_fechado()


def _cano_fechado():
    """A saída foi cortada (| head, | more fechado): sai quieto, sem traceback."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)


def caixa_tabela():
    """Estilo de borda de tabela que o console consegue desenhar."""
    from rich import box

    return box.SIMPLE_HEAD if unicode_ok() else box.ASCII2


def quebrar(texto: str, recuo: int = 0) -> str:
    """Quebra o texto na largura do terminal, com recuo."""
    import textwrap

    return textwrap.fill(texto, width=largura() - 1, initial_indent=" " * recuo,
                         subsequent_indent=" " * recuo)


# ------------------------------------------------------------- números pt-BR
def num(x: float, casas: int = 2) -> str:
    """0.8413 -> '0,8413'; 1234.5 -> '1.234,50' (formato brasileiro)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—" if unicode_ok() else "-"
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


def pct(x: float, casas: int = 1) -> str:
    """0.666 -> '66,6 %'."""
    return f"{num(100 * x, casas)} %"


# ---------------------------------------------------------------- CLI
class _Formatador(argparse.RawDescriptionHelpFormatter):
    """Ajuda em português na largura do terminal (COLUMNS), até 100 colunas.

    A descrição e o epílogo mantêm as quebras de linha escritas (a lista de
    experimentos), mas uma linha longa é quebrada, com recuo alinhado ao texto."""

    def __init__(self, prog, **kwargs):
        kwargs.setdefault("width", largura() - 2)
        super().__init__(prog, **kwargs)

    def add_usage(self, usage, actions, groups, prefix=None):
        return super().add_usage(usage, actions, groups, prefix="uso: ")

    def _fill_text(self, text, width, indent):
        import re
        import textwrap

        linhas = []
        for linha in text.splitlines():
            recuo = re.match(r"\s*(\d+\.\s+)?", linha).group(0)  # "  3. " alinha o resto
            linhas.append(textwrap.fill(linha, width, initial_indent=indent,
                                        subsequent_indent=indent + " " * len(recuo))
                          if len(indent + linha) > width else indent + linha)
        return "\n".join(linhas)


class ErroDeUso(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    _TRADUCOES = {
        "unrecognized arguments": "argumentos desconhecidos",
        "expected one argument": "esperava um valor",
        "invalid int value": "não é um número inteiro",
        "the following arguments are required": "faltam os argumentos",
        "ambiguous option": "opção ambígua",
        "invalid choice": "escolha inválida",
        "choose from": "escolha entre",
    }

    def error(self, message):
        import re

        for ingles, portugues in self._TRADUCOES.items():
            message = message.replace(ingles, portugues)
        message = re.sub(r"\bargument\b", "opção", message)
        self.print_usage(sys.stderr)
        sys.stderr.write(f"erro: {message}\nPara ajuda: {self.prog} --help\n")
        sys.exit(2)


def _lista_de_numeros(texto: str) -> list[int]:
    try:
        numeros = [int(p) for p in texto.replace(" ", "").split(",") if p]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{texto}' não é uma lista de números; exemplo: --so 2,4"
        ) from None
    if not numeros:
        raise argparse.ArgumentTypeError("informe ao menos um número; exemplo: --so 2")
    return numeros


def _semente(texto: str) -> int:
    try:
        n = int(texto)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{texto}' não é um número inteiro") from None
    if not 0 <= n < 2**32:  # o numpy só aceita sementes de 32 bits sem sinal
        raise argparse.ArgumentTypeError(
            f"{texto} está fora do intervalo; use um inteiro de 0 a {2**32 - 1}")
    return n


def criar_parser(prog: str, descricao: str, experimentos, extras=None) -> argparse.ArgumentParser:
    lista = "\n".join(f"  {k}. {t}" for k, t, *_ in experimentos)
    p = _Parser(
        prog=prog,
        description=f"{descricao}\n\nExperimentos:\n{lista}",
        formatter_class=_Formatador,
        add_help=False,
        epilog="Variáveis de ambiente:\n"
        "  LAB_MODELO        padrão de --modelo\n"
        "  HF_HUB_OFFLINE=1  não tenta a rede\n"
        "  NO_COLOR          sem cores",
    )
    p._optionals.title = "opções"
    p._positionals.title = "argumentos"
    p.add_argument("-h", "--help", action="help", help="mostra esta ajuda e sai")
    p.add_argument("--lista", action="store_true", help="lista os experimentos e sai")
    p.add_argument("--so", type=_lista_de_numeros, metavar="2,4",
                   help="roda só estes experimentos")
    p.add_argument("--pausa", action="store_true",
                   help="para o projetor: espera Enter entre um experimento e outro "
                   "e antes de cada tabela ou gráfico que rolaria a tela, diz o que vem "
                   "e limpa a tela; r + Enter repete o experimento (só num terminal)")
    p.add_argument("--modelo", metavar="NOME_OU_PASTA",
                   default=os.environ.get("LAB_MODELO") or "gpt2",
                   help="GPT-2 a carregar: gpt2, gpt2-medium, gpt2-large, gpt2-xl "
                   "ou uma pasta local (padrão: $LAB_MODELO ou gpt2)")
    p.add_argument("--semente", type=_semente, default=0, metavar="N",
                   help="semente dos números aleatórios (padrão: 0)")
    p.add_argument("--figuras", metavar="PASTA", default=str(RAIZ / "figuras"),
                   help="onde salvar as figuras PNG (padrão: a pasta figuras/ do lab)")
    p.add_argument("--sem-figuras", action="store_true", help="não salva figuras")
    if extras:
        extras(p)
    return p


# ---------------------------------------------------------- lição e experimentos
class ExperimentoPulado(Exception):
    """O experimento não pode rodar aqui (ex.: sem GPT-2); a mensagem diz por quê."""


class VerificacaoFalhou(Exception):
    """Uma autoverificação da lição não confere: o experimento conta como falho (saída 1)."""


class Licao:
    """Descreve uma lição e roda seus experimentos com as convenções do lab."""

    def __init__(self, numero: str, titulo: str, experimentos, proxima=None,
                 argumentos=None, rotulo="Experimento"):
        self.numero = numero
        self.rotulo = rotulo
        self.pulados, self.falhos = [], []  # [(k, título, motivo inteiro)]
        self.titulo = titulo
        self.experimentos = list(experimentos)  # [(k, título, precisa_gpt2)]
        self.proxima = proxima  # aceito por compatibilidade; o próximo passo é calculado
                                # (proxima_licao): a menor lição seguinte que existe
        self.argumentos = argumentos
        self.args = None
        self._modelo = None
        self._erro_modelo = None
        self._verificacoes_falhas = []

    def verificar(self, ok, descricao: str) -> bool:
        """Registra uma autoverificação e devolve `ok` (para usar na frase impressa).

        Se alguma não conferir, o experimento termina como falho: aparece no resumo e a
        execução sai com código 1. Ex.: `'sim' if licao.verificar(a == b, 'tokens') else 'NÃO'`.
        """
        ok = bool(ok)
        if not ok:
            self._verificacoes_falhas.append(descricao)
        return ok

    # -- linha de comando (antes de importar torch)
    def abrir(self, argv=None):
        _preparar_saida()
        _ctrl_c_sem_traceback()
        prog = f"lab/{Path(sys.argv[0]).name}" if sys.argv and sys.argv[0] else "lab"
        p = criar_parser(prog, f"Lição {self.numero} · {self.titulo}",
                         self.experimentos, self.argumentos)
        self.args = p.parse_args(argv)
        if self.args.lista:
            dizer(f"Lição {self.numero} · {self.titulo}")
            for k, t, *resto in self.experimentos:
                aviso = "  (usa o GPT-2)" if resto and resto[0] else ""
                dizer(f"  {k}. {t}{aviso}")
            sys.exit(0)
        numeros = [k for k, *_ in self.experimentos]
        if self.args.so:
            fora = [k for k in self.args.so if k not in numeros]
            if fora:
                p.error(f"--so: não há experimento {', '.join(map(str, fora))} "
                        f"(há de 1 a {len(numeros)})")
        dizer(f"Lição {self.numero} · {self.titulo}")
        dizer("(carregando o PyTorch...)")
        return self.args

    # -- figuras
    @property
    def quer_figuras(self) -> bool:
        """False com --sem-figuras: nem vale a pena desenhar (importar o matplotlib
        custa quase 1 s)."""
        return not self.args.sem_figuras

    def salvar_figura(self, fig, nome: str) -> Path | None:
        if self.args.sem_figuras:
            return None
        pasta = Path(self.args.figuras)
        virgula_nos_eixos(fig)
        try:
            pasta.mkdir(parents=True, exist_ok=True)
            caminho = pasta / nome
            fig.savefig(caminho, dpi=100)
        except OSError as erro:
            dizer(f"(não consegui salvar a figura {nome}: {erro.strerror or erro})")
            return None
        dizer(f"Figura salva: {caminho}")  # o caminho é do aluno: uma linha só
        return caminho

    # -- GPT-2, carregado uma vez por execução
    def gpt2(self, margem: float = 1.3):
        """(modelo, tokenizador) ou ExperimentoPulado com a explicação.

        margem: memória que a lição precisa, em múltiplos do tamanho dos pesos
        (conferida antes de qualquer download)."""
        if self._modelo is None and self._erro_modelo is None:
            try:
                self._modelo = carregar_gpt2(self.args.modelo, margem=margem)
            except ModeloIndisponivel as erro:
                self._erro_modelo = str(erro)
        if self._erro_modelo:
            raise ExperimentoPulado(self._erro_modelo)
        return self._modelo

    # -- o roteiro
    def rodar(self, funcoes: dict) -> int:
        escolhidos = [e for e in self.experimentos
                      if not self.args.so or e[0] in self.args.so]
        n = len(self.experimentos)
        pulados, falhos = self.pulados, self.falhos
        try:
            for i, (k, titulo, *_) in enumerate(escolhidos):
                limpo = False
                if i and self.args.pausa:
                    while self._pausa_entre(f"{k}/{n} · {titulo}"):  # r + Enter
                        self._rodar_um(funcoes, *escolhidos[i - 1][:2], n, True)
                    limpo = _pausa_interativa(self.args)
                self._rodar_um(funcoes, k, titulo, n, limpo)
            while escolhidos and self.args.pausa and self._pausa_entre("Resumo"):
                self._rodar_um(funcoes, *escolhidos[-1][:2], n, True)
        except KeyboardInterrupt:
            print("\nInterrompido (Ctrl+C).", flush=True)
            return 130
        except BrokenPipeError:
            _cano_fechado()
        return self._resumo(len(escolhidos), pulados, falhos)

    def _rodar_um(self, funcoes, k, titulo, n, limpo=False):
        """Roda o experimento k; r + Enter numa pausa dentro dele o roda de novo."""
        while True:
            if not limpo:  # numa tela recém-limpa, sem a linha em branco
                dizer()
            limpo = True
            cabecalho = f"{self.rotulo} {k}/{n} · {titulo}"
            dizer(cabecalho)
            dizer("=" * min(len(cabecalho), largura()))
            self._atual = (f"{k}/{n}", cabecalho)
            semear(self.args.semente)
            inicio = time.perf_counter()
            self._verificacoes_falhas = []
            for lista in (self.pulados, self.falhos):  # uma repetição não conta duas vezes
                lista[:] = [item for item in lista if item[0] != k]
            try:
                funcoes[k](self)
                if self._verificacoes_falhas:
                    raise VerificacaoFalhou(
                        "não confere: " + "; ".join(self._verificacoes_falhas))
            except _Repetir:
                continue
            except BrokenPipeError:
                raise
            except VerificacaoFalhou as motivo:
                dizer(quebrar(f"FALHOU a autoverificação: {motivo}"))
                self.falhos.append((k, titulo, str(motivo)))
            except ExperimentoPulado as motivo:
                dizer(quebrar(f"PULADO: {motivo}"))
                self.pulados.append((k, titulo, str(motivo)))
            except (MemoryError, RuntimeError, OSError, ValueError) as erro:
                dizer(f"FALHOU: {type(erro).__name__}: {erro}")
                self.falhos.append((k, titulo, str(erro)))
            else:
                dizer(f"({num(time.perf_counter() - inicio, 1)} s)")
            return

    def pausa(self, a_seguir: str) -> None:
        """Pausa dentro de um experimento, antes de uma tabela ou gráfico que rolaria a
        anterior para fora de uma tela de 30 linhas (o projetor).

        Só com --pausa e entrada e saída num terminal: diz o que vem ("[Enter] 2/6,
        a seguir: ..."), espera o Enter e limpa a tela; r + Enter roda o experimento
        de novo. Num pipe, com a entrada fechada ou sem --pausa, não faz nada (a saída
        fica idêntica, linha a linha)."""
        if not _pausa_interativa(self.args):
            return
        numero, cabecalho = getattr(self, "_atual", ("", ""))
        if _perguntar_pausa(f"{numero}, a seguir: {a_seguir}"):
            _limpar_tela()
            raise _Repetir
        _limpar_tela()
        dizer(_cortar(cabecalho, len(" (continuação)")) + " (continuação)")

    def _pausa_entre(self, a_seguir: str) -> bool:
        """Pausa entre experimentos. True: repetir o anterior (r + Enter)."""
        if not _pausa_interativa(self.args):
            return False
        repetir = _perguntar_pausa(a_seguir)
        _limpar_tela()
        return repetir

    def _resumo(self, total, pulados, falhos) -> int:
        dizer()
        dizer("Resumo")
        dizer("------")
        feitos = total - len(pulados) - len(falhos)
        dizer(f"{feitos} de {total} {self.rotulo.lower()}(s) rodaram.")
        for situacao, lista in (("pulado", pulados), ("falhou", falhos)):
            for k, t, motivo in lista:  # no resumo, só a primeira linha do motivo
                dizer(f"  {situacao}: {k}. {t}")
                dizer(quebrar(motivo.split("\n")[0], recuo=4))
        script, apostila, escrevendo = proxima_licao(self.numero)
        if script:
            dizer(quebrar(f"Próximo passo: {script} (leia {apostila})."))
        if escrevendo:
            dizer(f"(a lição {escrevendo} ainda está sendo escrita)")
        return 1 if (pulados or falhos) else 0


ULTIMA_DO_MAPA = 9  # o mapa do lab vai de 00_check a 09_scaling


def proxima_licao(numero: str, pasta: Path | None = None):
    """(script, apostila, lição que falta) do próximo passo depois da lição `numero`.

    O próximo passo é a menor lição lab/NN_*.py com NN maior que `numero` que existe
    no disco; se a seguinte do mapa (numero + 1) ainda não existe, o terceiro valor é
    o número dela ("01"), senão None. Sem lição seguinte: (None, None, ...)."""
    pasta = pasta or PASTA_LAB
    try:
        atual = int(numero)
    except ValueError:
        return None, None, None
    seguintes = sorted(p for p in pasta.glob("[0-9][0-9]_*.py") if int(p.name[:2]) > atual)
    seguinte_no_mapa = f"{atual + 1:02d}" if atual < ULTIMA_DO_MAPA else None
    if seguinte_no_mapa and seguintes and seguintes[0].name.startswith(seguinte_no_mapa):
        seguinte_no_mapa = None
    if not seguintes:
        return None, None, seguinte_no_mapa
    stem = seguintes[0].stem
    return f"lab/{stem}.py", f"apostilas/{stem}.md", seguinte_no_mapa


def interromper() -> None:
    """Termina JÁ, com uma linha e código 130, como um Ctrl+C.

    os._exit, e não sys.exit: sys.exit esperaria as threads de trabalho terminarem
    (treinos em paralelo seguiriam por segundos, a barra de progresso desenhando) e
    um segundo Ctrl+C nessa espera abortava o processo ('terminate called...', 134).
    """
    try:
        if _console is not None and _console.is_terminal:
            _console.show_cursor(True)  # a barra do rich esconde o cursor
        print("\nInterrompido (Ctrl+C).", flush=True)
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - saindo de qualquer jeito
        pass
    os._exit(130)


def esperar(futuros):
    """Resultados de futuros (concurrent.futures), na ordem, esperando aos poucos.

    Esperar com `futuro.result()` trava a thread principal num lock que, no Windows,
    pode não acordar com Ctrl+C; olhando a cada 0,2 s, o Ctrl+C para na hora em todo
    sistema.
    Uma exceção numa thread sobe aqui, como em result()."""
    import concurrent.futures

    futuros = list(futuros)
    while concurrent.futures.wait(futuros, timeout=0.2).not_done:
        pass
    return [f.result() for f in futuros]


def _ctrl_c_sem_traceback() -> None:
    """Ctrl+C em qualquer ponto (até durante o import do torch ou com threads
    trabalhando): uma linha, saída 130, na hora."""
    import signal

    def parar(_sinal, _quadro):
        interromper()

    try:
        signal.signal(signal.SIGINT, parar)
    except ValueError:  # fora da thread principal
        pass


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


# ---------------------------------------------------------------- progresso
class Progresso:
    """Barra do rich num terminal; num pipe ou arquivo, nada (a saída fica limpa)."""

    def __init__(self, total, texto):
        self.total, self.texto, self.barra = total, texto, None

    def __enter__(self):
        terminal = console()
        if terminal.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            barra = [BarColumn()] if unicode_ok() else []   # a barra usa caixas Unicode
            self.barra = Progress(TextColumn("{task.description}"), *barra,
                                  MofNCompleteColumn(), console=terminal, transient=True)
            self.barra.start()
            self.tarefa = self.barra.add_task(self.texto, total=self.total)
        return self

    def avancar(self):
        if self.barra:
            self.barra.advance(self.tarefa)

    def __exit__(self, *erro):
        if self.barra:
            self.barra.stop()


# ---------------------------------------------------------------- sementes
def semear(semente: int) -> None:
    import random

    random.seed(semente)
    try:
        import numpy as np

        np.random.seed(semente)
    except ImportError:
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(semente)


# ---------------------------------------------------------------- gráficos ASCII
def grafico_ascii(series: dict, xs, altura: int = 14, larg: int | None = None,
                  log_y: bool = False, rotulo_y: str = "", rotulo_x: str = "") -> str:
    """Gráfico de linhas em texto puro. series: {"nome": [y...]}, um símbolo por série."""
    simbolos = "*o+x#@"
    larg = larg or max(30, largura() - 14)
    valores = [y for ys in series.values() for y in ys if y is not None]
    if log_y:
        valores = [math.log10(max(v, 1e-30)) for v in valores]
    y_min, y_max = min(valores), max(valores)
    if y_max - y_min < 1e-12:
        y_max = y_min + 1.0
    x_min, x_max = min(xs), max(xs)
    if x_max == x_min:
        x_max = x_min + 1
    grade = [[" "] * larg for _ in range(altura)]
    for s, ys in enumerate(series.values()):
        for x, y in zip(xs, ys):
            if y is None:
                continue
            v = math.log10(max(y, 1e-30)) if log_y else y
            col = round((x - x_min) / (x_max - x_min) * (larg - 1))
            lin = round((y_max - v) / (y_max - y_min) * (altura - 1))
            atual = grade[lin][col]
            grade[lin][col] = simbolos[s % len(simbolos)] if atual == " " else (
                atual if atual == simbolos[s % len(simbolos)] else "%")

    def rotulo(v):
        return cientifico(10 ** v, 1) if log_y else num(v, 2)

    linhas = []
    if rotulo_y:
        linhas.append(rotulo_y)
    for i, linha in enumerate(grade):
        v = y_max - i * (y_max - y_min) / (altura - 1)
        marca = rotulo(v) if i in (0, altura // 2, altura - 1) else ""
        linhas.append(f"{marca:>9} |{''.join(linha)}")
    linhas.append(" " * 10 + "+" + "-" * larg)
    esq, dir_ = num(x_min, 0) if x_min == int(x_min) else num(x_min, 1), \
        num(x_max, 0) if x_max == int(x_max) else num(x_max, 1)
    linhas.append(" " * 11 + esq + " " * max(1, larg - len(esq) - len(dir_)) + dir_)
    if rotulo_x:
        linhas.append(" " * 11 + rotulo_x)
    legenda = "   ".join(f"{simbolos[i % len(simbolos)]} {nome}"
                         for i, nome in enumerate(series))
    linhas.append(" " * 11 + legenda + ("   % sobreposição" if len(series) > 1 else ""))
    return "\n".join(linhas)


def figura(largura_pol: float = 7.0, altura_pol: float = 4.0, margens=None, **kwargs):
    """(fig, eixos) do matplotlib sem janela e sem o pyplot (que custa ~0,3 s a mais).

    margens=(esquerda, direita, baixo, cima) em polegadas fixa o layout à mão
    (o espaço entre painéis vai em ajuste={'wspace': ...}); sem elas, o layout
    automático ('constrained') acerta sozinho, mas custa 0,1 a 0,3 s por figura.
    """
    from matplotlib.figure import Figure

    ajuste = kwargs.pop("ajuste", {})
    layout = kwargs.pop("layout", None if margens else "constrained")
    fig = Figure(figsize=(largura_pol, altura_pol), layout=layout)
    if margens:
        esq, dir_, baixo, cima = margens
        fig.subplots_adjust(left=esq / largura_pol, right=1 - dir_ / largura_pol,
                            bottom=baixo / altura_pol, top=1 - cima / altura_pol, **ajuste)
    return fig, fig.subplots(**kwargs)


_SOBRESCRITO = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3"
                                            "\u2074\u2075\u2076\u2077\u2078\u2079")


def escala_log(*eixos, eixo: str = "y"):
    """Escala log com rótulos como 10⁻³ e 2×10⁻³ em texto simples: o padrão do
    matplotlib passa cada rótulo pelo mathtext, ~0,3 s a mais na primeira figura."""
    from matplotlib.ticker import LogFormatter

    class Potencia(LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            expoente = math.floor(math.log10(x) + 1e-9)
            mantissa = round(x / 10 ** expoente)
            potencia = "10" + str(expoente).translate(_SOBRESCRITO)
            return potencia if mantissa == 1 else f"{mantissa}\u00d7{potencia}"

    for ax in eixos:
        getattr(ax, f"set_{eixo}scale")("log")
        alvo = ax.yaxis if eixo == "y" else ax.xaxis
        alvo.set_major_formatter(Potencia())
        alvo.set_minor_formatter(Potencia(labelOnlyBase=False))


def eixos_inteiros(*eixos, eixo: str = "x") -> None:
    """Marcas só em números inteiros (passos, camadas, posições, ids): nada de '2,5 passos'."""
    from matplotlib.ticker import MaxNLocator

    for ax in eixos:
        getattr(ax, f"{eixo}axis").set_major_locator(MaxNLocator(integer=True))


def virgula_nos_eixos(fig) -> None:
    """Vírgula decimal em todo eixo linear da figura (barras de cor incluídas).

    Troca cada ScalarFormatter (o padrão do matplotlib, que escreve 0.5) por um que
    escreve 0,5, em texto simples (sem mathtext); outros formatadores, como os de
    `escala_log`, ficam como estão. `Licao.salvar_figura` chama isto sozinha."""
    from matplotlib.ticker import ScalarFormatter

    class Virgula(ScalarFormatter):
        def __call__(self, x, pos=None):
            return super().__call__(x, pos).replace(".", ",")

        def get_offset(self):
            return super().get_offset().replace(".", ",")

        def format_data_short(self, value):
            return super().format_data_short(value).replace(".", ",")

    def trocar(antigo):
        novo = Virgula(useOffset=antigo.get_useOffset(), useMathText=False)
        novo.set_scientific(antigo._scientific)
        novo.set_powerlimits(antigo._powerlimits)
        return novo

    for ax in fig.axes:
        barra = getattr(ax, "_colorbar", None)
        for eixo in (ax.xaxis, ax.yaxis):
            for pegar, por in ((eixo.get_major_formatter, eixo.set_major_formatter),
                               (eixo.get_minor_formatter, eixo.set_minor_formatter)):
                antigo = pegar()
                if type(antigo) is ScalarFormatter:
                    novo = trocar(antigo)
                    if barra is not None and antigo is barra.formatter:
                        barra.formatter = novo  # a barra de cor guarda o seu e o reaplica
                    else:
                        por(novo)


# ---------------------------------------------------------------- GPT-2
TAMANHOS_GPT2 = {
    # nome: (camadas, d, cabeças) -- só para estimar memória antes de baixar
    "gpt2": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
    "gpt2-xl": (48, 1600, 25),
}
PREFIXO_HUB = "openai-community/"


class ModeloIndisponivel(Exception):
    """O GPT-2 pedido não pode ser carregado; a mensagem diz o que fazer."""


def parametros_gpt2(camadas: int, d: int, vocab: int = 50257, posicoes: int = 1024) -> int:
    """Total exato de um GPT-2 com a cabeça de saída amarrada ao wte."""
    por_bloco = 12 * d * d + 13 * d
    return vocab * d + posicoes * d + camadas * por_bloco + 2 * d


def memoria_disponivel() -> int | None:
    """Bytes de RAM disponíveis, ou None se não der para saber."""
    try:
        with open("/proc/meminfo") as f:
            for linha in f:
                if linha.startswith("MemAvailable:"):
                    return int(linha.split()[1]) * 1024
    except OSError:
        pass
    if sys.platform == "win32":
        try:
            import ctypes

            class _Status(ctypes.Structure):
                _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                            ("ullTotalPhys", ctypes.c_ulonglong),
                            ("ullAvailPhys", ctypes.c_ulonglong),
                            ("ullTotalPageFile", ctypes.c_ulonglong),
                            ("ullAvailPageFile", ctypes.c_ulonglong),
                            ("ullTotalVirtual", ctypes.c_ulonglong),
                            ("ullAvailVirtual", ctypes.c_ulonglong),
                            ("sullAvailExtendedVirtual", ctypes.c_ulonglong)]
            status = _Status()
            status.dwLength = ctypes.sizeof(_Status)
            ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status))
            return int(status.ullAvailPhys)
        except Exception:
            return None
    if sys.platform == "darwin":
        import subprocess

        try:
            saida = subprocess.run(["vm_stat"], capture_output=True, text=True, timeout=3,
                                   check=True).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        return ler_vm_stat(saida)
    return None


def ler_vm_stat(texto: str) -> int | None:
    """Memória que o macOS entrega sem apertar ninguém, da saída do `vm_stat`.

    Páginas livres + inativas + especulativas, vezes o tamanho da página (que o
    próprio vm_stat informa: 4096 em Intel, 16384 em Apple Silicon). A RAM total
    (o que se usava antes) diria que há memória livre mesmo com ela toda ocupada.
    None se a saída não tiver essas linhas."""
    import re

    pagina = re.search(r"page size of (\d+) bytes", texto)
    contas = dict(re.findall(r"^Pages (free|inactive|speculative):\s+(\d+)\.?\s*$",
                             texto, re.M))
    if not pagina or "free" not in contas:
        return None
    return int(pagina.group(1)) * sum(int(v) for v in contas.values())


def _id_no_hub(nome: str) -> str:
    return PREFIXO_HUB + nome if nome in TAMANHOS_GPT2 else nome


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def estimar_memoria(nome: str) -> int | None:
    """Bytes que o modelo ocupa em fp32 (pesos), ou None se o tamanho é desconhecido."""
    if nome in TAMANHOS_GPT2:
        camadas, d, _cabecas = TAMANHOS_GPT2[nome]
        return 4 * parametros_gpt2(camadas, d)
    pasta = Path(nome)
    if pasta.is_dir():
        pesos = list(pasta.glob("*.safetensors"))
        if pesos:
            return sum(p.stat().st_size for p in pesos)
    return None


def _eh_hub(nome: str) -> bool:
    return not Path(nome).exists() and (nome in TAMANHOS_GPT2 or nome.startswith(PREFIXO_HUB))


def _comando_00(nome: str) -> str:
    """O comando que baixa ESTE modelo (o 00_check baixa o de --modelo, padrão gpt2)."""
    return "lab/00_check.py" if nome == "gpt2" else f"lab/00_check.py --modelo {nome}"


def _sugestao_menor(estimativa: int, margem: float, livre: int) -> str | None:
    """O maior GPT-2 do hub, menor que o pedido, que caberia na memória livre."""
    cabem = [n for n in TAMANHOS_GPT2
             if estimar_memoria(n) < estimativa and estimar_memoria(n) * margem <= livre]
    return cabem[-1] if cabem else None


ARQUIVOS_TOKENIZADOR = ("tokenizer.json", ("vocab.json", "merges.txt"))


def _conferir_pasta(nome: str, pasta: Path) -> None:
    """Antes de carregar: a pasta tem um GPT-2 (config, pesos e tokenizador)?"""
    import json

    como_salvar = ("Salve o GPT-2 nessa pasta com modelo.save_pretrained(pasta) e "
                   "tokenizador.save_pretrained(pasta), ou aponte --modelo para outra.")
    if not any(pasta.glob("*.safetensors")):
        raise ModeloIndisponivel(
            f"a pasta '{nome}' não tem pesos .safetensors.\n"
            "O lab só carrega safetensors: salve o modelo com save_pretrained() "
            "ou aponte --modelo para outra pasta.")
    config = pasta / "config.json"
    if not config.is_file():
        raise ModeloIndisponivel(f"a pasta '{nome}' não tem config.json.\n" + como_salvar)
    try:
        dados = json.loads(config.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, OSError) as erro:
        raise ModeloIndisponivel(
            f"não consegui ler '{config}' ({type(erro).__name__}).\n" + como_salvar) from None
    except json.JSONDecodeError as erro:
        raise ModeloIndisponivel(
            f"'{config}' não é um JSON válido (erro na linha {erro.lineno}, coluna "
            f"{erro.colno}).\nConserte o arquivo ou salve o modelo de novo com "
            "save_pretrained().") from None
    tipo = dados.get("model_type") if isinstance(dados, dict) else None
    if tipo != "gpt2":
        raise ModeloIndisponivel(
            f"a pasta '{nome}' guarda um modelo do tipo '{tipo or 'desconhecido'}' "
            "(model_type no config.json), não um GPT-2; o lab só carrega GPT-2.\n"
            "Use --modelo gpt2 (ou gpt2-medium, gpt2-large, gpt2-xl) ou uma pasta "
            "com um GPT-2 salvo com save_pretrained().")
    if not any((pasta / a).is_file() if isinstance(a, str)
               else all((pasta / b).is_file() for b in a) for a in ARQUIVOS_TOKENIZADOR):
        raise ModeloIndisponivel(
            f"a pasta '{nome}' tem os pesos, mas não o tokenizador (tokenizer.json, ou "
            "vocab.json e merges.txt): sem ele, o texto não vira tokens.\n"
            "Salve também o tokenizador nessa pasta: tokenizador.save_pretrained(pasta).")


def _conferir_pesos(nome: str, info: dict) -> None:
    """Todo peso do GPT-2 veio do arquivo? (o transformers inicia ao acaso o que falta)"""
    faltam = sorted(info.get("missing_keys") or ())
    sobram = sorted(k for k in (info.get("unexpected_keys") or ())
                    if not k.endswith(("attn.bias", "attn.masked_bias")))  # máscaras antigas
    if not faltam and not sobram:
        return
    partes = []
    if faltam:
        partes.append(f"faltam {len(faltam)} pesos do GPT-2 (ex.: {faltam[0]})")
    if sobram:
        partes.append(f"há {len(sobram)} pesos que o GPT-2 não tem (ex.: {sobram[0]})")
    raise ModeloIndisponivel(
        f"os pesos de '{nome}' não são os de um GPT-2: {' e '.join(partes)}.\n"
        "Carregá-los daria um GPT-2 com pesos ao acaso, e os números não significariam "
        "nada. Use --modelo gpt2 ou uma pasta salva de um GPT2LMHeadModel.")


def _conferir_tokenizador(nome: str, tokenizador) -> None:
    try:
        ids = tokenizador("O gato")["input_ids"]
    except Exception:  # noqa: BLE001 - tokenizador quebrado de qualquer jeito
        ids = []
    if len(tokenizador) == 0 or not ids:
        raise ModeloIndisponivel(
            f"o tokenizador de '{nome}' está vazio: o texto não vira nenhum token.\n"
            "Salve de novo o tokenizador do GPT-2 junto dos pesos "
            "(tokenizador.save_pretrained(pasta)).")


def _conferir_nome(nome: str) -> tuple[bool, Path]:
    """(é do hub?, pasta). Nem pasta nem nome de GPT-2 conhecido: ModeloIndisponivel."""
    hub = _eh_hub(nome)
    pasta = Path(nome)
    if not hub and not pasta.is_dir():
        raise ModeloIndisponivel(
            f"não há pasta '{nome}', e esse não é um nome de GPT-2 que eu conheça.\n"
            "Use --modelo gpt2 (ou gpt2-medium, gpt2-large, gpt2-xl) ou o caminho de "
            "uma pasta salva com save_pretrained(); confira também a variável LAB_MODELO.")
    return hub, pasta


def _importar_transformers():
    """Importa o transformers (devagar: por isso avisa antes) e cala os avisos dele."""
    dizer("(carregando o transformers...)")
    try:
        import transformers
        from transformers.utils import logging as hf_logging
    except ImportError as erro:
        raise ModeloIndisponivel(
            f"o pacote transformers não está instalado ({erro}).\n"
            "Rode de novo o script de instalação (.venv-setup.ps1 ou .venv-setup.sh).") from None
    hf_logging.set_verbosity_error()
    return transformers, hf_logging


def _do_cache_ou_do_hub(carregar, nome: str, hub: bool, aviso: str):
    """carregar(so_local=True) primeiro (sem rede); se faltar algo no cache e for um
    nome do hub com rede, avisa e baixa (carregar(so_local=False))."""
    try:
        return carregar(so_local=True)
    except OSError:
        if not hub or _offline() or not _rede_disponivel():
            raise
        dizer(aviso)
        return carregar(so_local=False)


def carregar_tokenizador(nome: str):
    """Só o tokenizador do GPT-2 (sem os pesos): do cache, de uma pasta ou do hub.

    Como carregar_gpt2: primeiro o cache (sem rede); só baixa se faltar e houver
    rede. Sem ele: ModeloIndisponivel com o que fazer. Os quatro tamanhos do
    GPT-2 usam o mesmo tokenizador.
    """
    hub, pasta = _conferir_nome(nome)
    transformers, _ = _importar_transformers()
    origem = _id_no_hub(nome) if hub else str(pasta)

    def carregar(so_local: bool):
        return transformers.AutoTokenizer.from_pretrained(
            origem, local_files_only=so_local, trust_remote_code=False)

    try:
        tokenizador = _do_cache_ou_do_hub(
            carregar, nome, hub, f"Baixando o tokenizador de '{nome}' (só na primeira vez)...")
    except Exception as erro:  # pasta sem os arquivos, cache incompleto, sem rede
        if hub:
            raise ModeloIndisponivel(
                f"o tokenizador do GPT-2 '{nome}' não está no cache deste computador e "
                f"não há acesso ao Hugging Face agora.\nConecte-se à internet e rode "
                f"{_comando_00(nome)} uma vez (ele baixa o modelo), ou aponte --modelo "
                "para uma pasta com o modelo salvo.") from None
        raise ModeloIndisponivel(
            f"não consegui carregar o tokenizador da pasta '{nome}' "
            f"({type(erro).__name__}).\nA pasta precisa dos arquivos do tokenizador "
            "(tokenizer.json ou vocab.json e merges.txt, como save_pretrained() grava).") from None
    dizer(f"Tokenizador carregado de {origem}.")
    return tokenizador


def carregar_gpt2(nome: str, margem: float = 1.3):
    """Carrega (modelo, tokenizador) de um id do hub ou de uma pasta local.

    Só safetensors, nunca código remoto, só GPT-2 (confere o tipo no config.json e
    que todo peso veio do arquivo). Primeiro tenta o cache (sem rede); só baixa se
    faltar e houver rede. Sem rede e sem cache, com download corrompido, pasta que
    não é de um GPT-2 ou nome desconhecido: ModeloIndisponivel com o que fazer.
    margem: a memória que a lição precisa, em múltiplos do tamanho dos pesos.
    """
    hub, pasta = _conferir_nome(nome)
    if not hub:
        _conferir_pasta(nome, pasta)
    estimativa = estimar_memoria(nome)
    livre = memoria_disponivel()
    if estimativa:
        dizer(quebrar(f"Modelo '{nome}': pesos de {tamanho(estimativa)} em fp32."))
        if livre is not None and estimativa * margem > livre:
            menor = _sugestao_menor(estimativa, margem, livre)
            raise ModeloIndisponivel(
                f"'{nome}' precisa de cerca de {num(estimativa * margem / 2**30, 1)} GiB "
                f"de memória (os pesos, {tamanho(estimativa)}, vezes {num(margem, 1)}, a "
                f"margem desta lição) e há {num(livre / 2**30, 1)} GiB livres.\n"
                "Feche outros programas"
                + (f" ou use um modelo menor, que caberia: --modelo {menor}." if menor
                   else "."))
    transformers, hf_logging = _importar_transformers()
    hf_logging.disable_progress_bar()  # carregar do disco é rápido: sem barra
    origem = _id_no_hub(nome) if hub else str(pasta)

    def carregar(so_local: bool):
        if not so_local:
            hf_logging.enable_progress_bar()  # o download, sim, mostra o progresso
        modelo, info = transformers.GPT2LMHeadModel.from_pretrained(
            origem, use_safetensors=True, trust_remote_code=False,
            local_files_only=so_local, output_loading_info=True)
        _conferir_pesos(nome, info)
        tokenizador = transformers.AutoTokenizer.from_pretrained(
            origem, local_files_only=so_local, trust_remote_code=False)
        return modelo, tokenizador

    inicio = time.perf_counter()
    try:
        modelo, tokenizador = _do_cache_ou_do_hub(
            carregar, nome, hub,
            f"Baixando '{nome}' do Hugging Face (só na primeira vez)...")
    except ModeloIndisponivel:
        raise
    except (OSError, ValueError) as erro:
        raise ModeloIndisponivel(_explicar_falha(nome, hub, erro)) from None
    except Exception as erro:  # safetensors corrompido levanta tipos variados
        if "mismatched_sizes" in str(erro) or "size mismatch" in str(erro):
            raise ModeloIndisponivel(
                f"os pesos de '{nome}' não têm as formas que o config.json pede (arquivos "
                "de modelos diferentes na mesma pasta?).\n" + _como_refazer(nome, hub)
            ) from None
        raise ModeloIndisponivel(
            f"os arquivos de '{nome}' parecem corrompidos ou incompletos "
            f"({type(erro).__name__}).\n" + _como_refazer(nome, hub)) from None
    if getattr(modelo.config, "model_type", None) != "gpt2":
        raise ModeloIndisponivel(
            f"'{nome}' não é um GPT-2 (model_type '{modelo.config.model_type}').")
    _conferir_tokenizador(nome, tokenizador)
    modelo.eval()
    dizer(quebrar(f"GPT-2 carregado de {origem} em "
                  f"{num(time.perf_counter() - inicio, 1)} s."))
    return modelo, tokenizador


def _como_refazer(nome: str, hub: bool) -> str:
    """O que fazer com arquivos estragados: no cache do HF, baixar de novo; numa pasta
    do aluno, salvar de novo nela (o cache do HF não tem nada com isso)."""
    if not hub:
        return (f"Salve o modelo de novo na pasta '{nome}' (modelo.save_pretrained(pasta) e "
                "tokenizador.save_pretrained(pasta)) ou copie-a outra vez de onde veio.")
    return ("Apague a pasta do modelo no cache do Hugging Face (~/.cache/huggingface/hub, "
            "no Windows %USERPROFILE%\\.cache\\huggingface\\hub) e rode "
            f"{_comando_00(nome)} com internet para baixar de novo.")


def _rede_disponivel() -> bool:
    """Teste rápido (1 s) de que o hub responde; evita esperas longas sem rede."""
    import socket

    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True  # atrás de um proxy, a conexão direta falharia: deixa o hub tentar
    host = os.environ.get("HF_ENDPOINT", "https://huggingface.co").split("//")[-1].split("/")[0]
    try:
        socket.create_connection((host, 443), timeout=1.5).close()
        return True
    except OSError:
        return False


def _explicar_falha(nome: str, hub: bool, erro: Exception) -> str:
    texto = str(erro)
    if "safetensors" in texto.lower() and ("incomplete" in texto.lower()
                                            or "header" in texto.lower()):
        return (f"os pesos de '{nome}' estão incompletos ou corrompidos.\n"
                + _como_refazer(nome, hub))
    if not hub:
        return (f"não consegui carregar o GPT-2 da pasta '{nome}' ({type(erro).__name__}).\n"
                "A pasta precisa de config.json, model.safetensors e os arquivos do "
                "tokenizador (como os que save_pretrained() grava). "
                + _como_refazer(nome, hub))
    if "safetensors" in texto.lower() and "not" in texto.lower():
        return (f"'{nome}' não tem pesos em safetensors no hub; o lab só carrega "
                "safetensors.")
    return (f"o GPT-2 '{nome}' não está no cache deste computador e não há acesso "
            "ao Hugging Face agora.\n"
            f"Conecte-se à internet e rode {_comando_00(nome)} uma vez (ele baixa o "
            "modelo), ou aponte --modelo para uma pasta com o modelo salvo.")


# ---------------------------------------------------------------- utilidades
def contar_parametros(modulo) -> int:
    """Parâmetros distintos: um peso amarrado (wte = cabeça de saída) conta uma vez."""
    vistos = {}
    for p in modulo.parameters():  # parameters() já deduplica tensores compartilhados
        vistos[id(p)] = p.numel()
    return sum(vistos.values())


class Adam:
    """Adam (Kingma e Ba, 2014) em poucas linhas: o mesmo passo de torch.optim.Adam.

    Por que não torch.optim.Adam? Criá-lo importa o compilador do PyTorch
    (1 a 2 s de espera numa aula); as contas são estas, e os testes conferem
    que dão o mesmo que o do PyTorch. Mude a taxa com `otimizador.lr = ...`
    (aquecimento, por exemplo).
    """

    def __init__(self, parametros, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        import torch

        self.parametros = [p for p in parametros if p.requires_grad]
        self.lr, (self.b1, self.b2), self.eps = lr, betas, eps
        self.m = [torch.zeros_like(p) for p in self.parametros]  # média dos gradientes
        self.v = [torch.zeros_like(p) for p in self.parametros]  # média dos quadrados
        self.t = 0

    def zero_grad(self):
        for p in self.parametros:
            p.grad = None

    def step(self):
        import torch

        self.t += 1
        correcao1 = 1 - self.b1 ** self.t
        raiz_correcao2 = math.sqrt(1 - self.b2 ** self.t)
        vivos = [i for i, p in enumerate(self.parametros) if p.grad is not None]
        ps = [self.parametros[i] for i in vivos]
        gs = [p.grad for p in ps]
        ms = [self.m[i] for i in vivos]
        vs = [self.v[i] for i in vivos]
        with torch.no_grad():  # as mesmas contas, em todos os tensores de uma vez (_foreach_)
            torch._foreach_mul_(ms, self.b1)
            torch._foreach_add_(ms, gs, alpha=1 - self.b1)            # m = b1 m + (1-b1) g
            torch._foreach_mul_(vs, self.b2)
            torch._foreach_addcmul_(vs, gs, gs, value=1 - self.b2)     # v = b2 v + (1-b2) g²
            denominador = torch._foreach_sqrt(vs)
            torch._foreach_div_(denominador, raiz_correcao2)
            torch._foreach_add_(denominador, self.eps)                 # raiz(v corrigido) + eps
            torch._foreach_addcdiv_(ps, ms, denominador, value=-self.lr / correcao1)


def importar_licao(nome: str):
    """Importa lab/NN_nome.py (nomes que começam com dígito não cabem em 'import')."""
    caminho = PASTA_LAB / f"{nome}.py"
    modulo_nome = "licao_" + nome
    if modulo_nome in sys.modules:
        return sys.modules[modulo_nome]
    spec = importlib.util.spec_from_file_location(modulo_nome, caminho)
    modulo = importlib.util.module_from_spec(spec)
    sys.modules[modulo_nome] = modulo
    spec.loader.exec_module(modulo)
    return modulo


# ---- acrescentado por pausas: as pausas do --pausa, para o projetor
class _Repetir(Exception):
    """r + Enter numa pausa: o experimento atual roda de novo, do começo."""


def _pausa_interativa(args) -> bool:
    """--pausa só vale com entrada E saída num terminal: num pipe (| tee, | more,
    < respostas.txt) ou com a entrada fechada, a saída não ganha nenhuma linha."""
    if not getattr(args, "pausa", False):
        return False
    try:
        return bool(sys.stdin and not sys.stdin.closed and sys.stdin.isatty()
                    and sys.stdout.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _cortar(texto: str, folga: int = 0) -> str:
    """Corta o texto para caber numa linha do terminal (menos `folga`), com reticências."""
    cabe = largura() - 1 - folga
    if len(texto) <= cabe:
        return texto
    fim = "…" if unicode_ok() else "..."
    return texto[:cabe - len(fim)].rstrip(" ,·:") + fim


def _perguntar_pausa(a_seguir: str) -> bool:
    """Uma linha só ('[Enter] 3/6 · título…  (r: repete)'), para não rolar a tela;
    True se a resposta for r (r + Enter: o experimento atual de novo)."""
    dica = "  (r: repete) "
    resposta = perguntar(_cortar(f"[Enter] {a_seguir}", len(dica)) + dica)
    return (resposta or "").strip().lower() in ("r", "repete", "repetir")


def _limpar_tela() -> None:
    """Limpa a tela do terminal. O rich manda ESC[2J ESC[H (terminais e o console novo
    do Windows); o console antigo do Windows não entende a sequência (e o rich só
    levaria o cursor ao topo, escrevendo por cima): ali, cls."""
    terminal = console()
    if not terminal.is_terminal or terminal.is_dumb_terminal:
        return
    if terminal.legacy_windows:
        os.system("cls")
    else:
        terminal.clear()
