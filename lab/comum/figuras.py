"""As figuras: gráficos em texto para o terminal e PNGs do matplotlib.

No terminal: `grafico_ascii` (linhas) e `niveis_ascii` (mapa de calor em caracteres).
Em PNG: `figura` (uma Figure sem janela e sem o pyplot), `escala_log`, `eixos_inteiros`,
`virgula_nos_eixos` (vírgula decimal em todo eixo linear) e `salvar`, que grava na
resolução do projetor. O matplotlib só é importado quando uma figura é pedida
(--sem-figuras não paga o seu import, quase 1 s).
"""
from __future__ import annotations

import math
from pathlib import Path

from .console import cientifico, dizer, inteiro, largura, num

__all__ = ["grafico_ascii", "niveis_ascii", "figura", "escala_log", "eixos_inteiros",
           "virgula_nos_eixos", "salvar", "DPI"]

DPI = 150  # legível no projetor: um rótulo de 10 pontos tem ~21 pixels de altura


# ---------------------------------------------------------------- no terminal
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


def niveis_ascii(matriz, minimo: float, maximo: float, rampa: str = " .:-=+*#%@") -> list[str]:
    """Um mapa de calor em caracteres: cada valor cai numa de len(rampa) faixas iguais
    de [minimo, maximo] (fora dele, na faixa da ponta). Com uma rampa de tamanho
    ímpar numa escala simétrica (-1 a 1), o zero fica no meio da faixa do meio, e o
    ruído perto de zero não pisca entre dois caracteres. Devolve uma string por linha."""
    faixas = len(rampa)
    linhas = []
    for linha in (matriz.tolist() if hasattr(matriz, "tolist") else matriz):
        indices = (min(faixas - 1, max(0, math.floor((v - minimo) / (maximo - minimo) * faixas)))
                   for v in linha)
        linhas.append("".join(rampa[i] for i in indices))
    return linhas


# ---------------------------------------------------------------- em PNG
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


def _expoente(x: float) -> int:
    return math.floor(math.log10(x) + 1e-9)


def rotulo_log(x: float, vmin: float | None = None, vmax: float | None = None) -> str:
    """O rótulo de uma marca da escala log: num eixo cujas décadas vão de 0,001 a 1.000
    (vmin, vmax; sem eles, a própria marca), com vírgula decimal ('0,2', '1', '1.000', como no texto);
    num eixo mais largo, potências de dez em todas as marcas ('10⁻⁸', '2×10⁹'), para o
    mesmo eixo não misturar as duas escritas."""
    expoente = _expoente(x)
    mantissa = round(x / 10 ** expoente)
    vmin, vmax = (x, x) if vmin is None or vmax is None or vmin <= 0 else (vmin, vmax)
    primeira = math.ceil(math.log10(min(vmin, vmax)) - 1e-9)   # a 1ª década dentro do eixo
    if -3 <= primeira and _expoente(max(vmin, vmax)) <= 3:
        return num(mantissa * 10.0 ** expoente, max(0, -expoente))
    potencia = "10" + str(expoente).translate(_SOBRESCRITO)
    return potencia if mantissa == 1 else f"{mantissa}\u00d7{potencia}"


def escala_log(*eixos, eixo: str = "y"):
    """Escala log com rótulos em texto simples (rotulo_log: 0,2 e 10⁻⁸): o padrão do
    matplotlib escreve 0.2 e passa cada rótulo pelo mathtext, ~0,3 s a mais na primeira
    figura."""
    from matplotlib.ticker import LogFormatter

    class Potencia(LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            return rotulo_log(x, vmin, vmax)

    for ax in eixos:
        getattr(ax, f"set_{eixo}scale")("log")
        alvo = ax.yaxis if eixo == "y" else ax.xaxis
        alvo.set_major_formatter(Potencia())
        alvo.set_minor_formatter(Potencia(labelOnlyBase=False))


def eixos_inteiros(*eixos, eixo: str = "x") -> None:
    """Marcas só em números inteiros (passos, camadas, posições, ids): nada de '2,5 passos',
    e com o ponto do milhar, como no texto (1.000, não 1000)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    for ax in eixos:
        getattr(ax, f"{eixo}axis").set_major_locator(MaxNLocator(integer=True))
        getattr(ax, f"{eixo}axis").set_major_formatter(
            FuncFormatter(lambda x, _pos: inteiro(round(x))))


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


def salvar(fig, pasta: Path, nome: str) -> Path | None:
    """Grava a figura em pasta/nome (vírgula nos eixos, DPI do projetor) e imprime o
    caminho; um disco cheio ou uma pasta proibida viram uma linha de aviso."""
    virgula_nos_eixos(fig)
    try:
        pasta.mkdir(parents=True, exist_ok=True)
        caminho = pasta / nome
        fig.savefig(caminho, dpi=DPI)
    except OSError as erro:
        dizer(f"(não consegui salvar a figura {nome}: {erro.strerror or erro})")
        return None
    dizer(f"Figura salva: {caminho}")  # o caminho é do aluno: uma linha só
    return caminho
