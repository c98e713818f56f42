"""A lição: opções da linha de comando e o roteiro dos experimentos.

Toda lição começa igual: a docstring do arquivo (entre aspas triplas) é o sumário, o
título e um experimento por linha, na ordem, e a lição é lida dela:

    Lição 05 · O bloco Transformer completo (leia junto: apostilas/05_block.md)
    1. Monte o bloco e veja as formas
    2. A norma do fluxo residual, camada a camada, no GPT-2
    from licao import Licao, inteiro_entre, opcao
    LICAO = Licao.da_docstring(__doc__, usa_gpt2={2}, opcoes=[
        opcao("--passos", inteiro_entre(1), 20, "passos de treino do experimento 2"),
    ])
    LICAO.abrir()  # lê as opções e imprime a primeira linha, antes do torch

e termina com `sys.exit(LICAO.rodar())`. Cada experimento é uma função marcada com
`@LICAO.experimento(k)`, que recebe a lição (`licao.args`, `licao.gpt2()`,
`licao.verificar(...)`, `licao.pausa(...)`, `licao.salvar_figura(...)`).

As convenções (as mesmas em todo script, README.md): --lista, --so 2,4, --pausa, --modelo,
--semente, --figuras, --sem-figuras; saída 0 quando tudo rodou, 1 quando algo foi pulado
ou falhou, 2 para uso errado, 130 no Ctrl+C. Um erro dentro de um experimento (no código
do aluno, numa cópia da lição) aparece em português com o arquivo e a linha; os outros
experimentos rodam; LAB_TRACEBACK=1 mostra o traceback inteiro.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import re
import sys
import time
import traceback
from pathlib import Path

import pausas
from console import cano_fechado, dizer, largura, num, plural, preparar_saida, quebrar

__all__ = [
    "Licao", "opcao", "inteiro_entre", "real_entre", "lista_de_inteiros", "texto_utf8",
    "arquivo_de_texto", "no_maximo", "ExperimentoPulado",
    "VerificacaoFalhou", "importar_licao", "interromper", "esperar", "em_paralelo", "semear",
    "RAIZ",
]

RAIZ = Path(__file__).resolve().parent.parent
PASTA_LAB = RAIZ / "lab"
ULTIMA_DO_MAPA = 10  # o mapa do lab vai de 00_check a 10_treino
SEMENTE_MAXIMA = 2**31 - 1  # lições somam à semente (semente + 1000...): longe de 2**32


# ---------------------------------------------------------------- o argparse em português
_MENSAGENS = {
    "usage: ": "uso: ",
    "options": "opções",
    "positional arguments": "argumentos",
    "show this help message and exit": "mostra esta ajuda e sai",
    "unrecognized arguments: %s": "argumentos desconhecidos: %s",
    "expected one argument": "esperava um valor",
    "expected at most one argument": "esperava no máximo um valor",
    "expected at least one argument": "esperava ao menos um valor",
    "expected %s argument": "esperava %s valor",
    "expected %s arguments": "esperava %s valores",
    "the following arguments are required: %s": "faltam os argumentos: %s",
    "argument %(argument_name)s: %(message)s": "opção %(argument_name)s: %(message)s",
    "ambiguous option: %(option)s could match %(matches)s":
        "opção ambígua: %(option)s pode ser %(matches)s",
    "invalid %(type)s value: %(value)r": "valor inválido: %(value)r",
    "invalid choice: %(value)r (choose from %(choices)s)":
        "escolha inválida: %(value)r (escolha entre %(choices)s)",
    "not allowed with argument %s": "não combina com a opção %s",
    "ignored explicit argument %r": "não aceita valor %r",
    "%(prog)s: error: %(message)s\n": "%(prog)s: erro: %(message)s\n",
    "one of the arguments %s is required": "uma das opções %s é obrigatória",
}


def _traduzir(texto: str) -> str:
    return _MENSAGENS.get(texto, texto)


def _traduzir_n(singular: str, plural_: str, n: int) -> str:
    return _traduzir(singular if n == 1 else plural_)


argparse._ = _traduzir            # o argparse busca as mensagens nestes nomes na hora do uso
argparse.ngettext = _traduzir_n


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


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """Uso errado: a mensagem em português, quebrada em 80 colunas, e saída 2."""
        self.print_usage(sys.stderr)
        import textwrap  # sem quebrar no hífen: '--tokens-' + 'inferencia' não é uma opção

        # "exemplo: --d 2048" numa linha só (o aluno copia o exemplo inteiro)
        colado = re.sub(r"exemplo: [^;)]*", lambda m: m.group().replace(" ", "\xa0")
                        if len(m.group()) < 40 else m.group(), message)  # um exemplo, não um texto
        texto = textwrap.fill(f"erro: {colado}", width=largura() - 1,
                              break_on_hyphens=False).replace("\xa0", " ")
        sys.stderr.write(f"{texto}\nPara ajuda: {self.prog} --help\n")
        sys.exit(2)


# ---------------------------------------------------------------- os validadores de opção
_SUFIXOS = {"k": 3, "K": 3, "M": 6, "B": 9, "T": 12}  # mil, milhão, bilhão, trilhão


def _numero(texto: str, tipo, sufixos: bool = False):
    texto = texto.strip()
    if tipo is int:
        return int(texto)
    texto = texto.replace(",", ".")
    if sufixos and texto[-1:] in _SUFIXOS and "e" not in texto.lower():
        texto = f"{texto[:-1].rstrip()}e{_SUFIXOS[texto[-1]]}"  # '1.4T' -> '1.4e12': exato
    return float(texto)


def _g(x) -> str:
    """1e-3 -> '0,001', 1.5 -> '1,5', 30 -> '30', 1e30 -> '1e30': um limite de opção no
    formato pt-BR (um inteiro sai inteiro, como o aluno o digitaria)."""
    if isinstance(x, int):
        return str(x)
    mantissa, e, expoente = f"{x:g}".partition("e")
    return mantissa.replace(".", ",") + (f"e{int(expoente)}" if e else "")


def _faixa(minimo, maximo) -> str:
    if minimo is not None and maximo is not None:
        return f"de {_g(minimo)} a {_g(maximo)}"
    if minimo is not None:
        return f"{_g(minimo)} ou mais"
    return f"até {_g(maximo)}"


def inteiro_entre(minimo: int | None = None, maximo: int | None = None,
                  exemplo: str | None = None):
    """Tipo de opção: um inteiro em [minimo, maximo]; fora disso, uma mensagem em
    português que diz o intervalo e dá um exemplo ("use um inteiro de 1 a 64;
    exemplo: --camadas 4")."""
    def ler(texto: str) -> int:
        try:
            n = _numero(texto, int)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{texto}' não é um número inteiro" + (f"; exemplo: {exemplo}" if exemplo
                                                        else "")) from None
        if (minimo is not None and n < minimo) or (maximo is not None and n > maximo):
            raise argparse.ArgumentTypeError(
                f"{texto} está fora do intervalo; use um inteiro {_faixa(minimo, maximo)}"
                + (f" (exemplo: {exemplo})" if exemplo else ""))
        return n
    ler.__name__ = "inteiro"
    return ler


def real_entre(minimo: float | None = None, maximo: float | None = None,
               exemplo: str | None = None, inclui_minimo: bool = True,
               sufixos: bool = False):
    """Tipo de opção: um número real em [minimo, maximo] (ou (minimo, maximo] com
    inclui_minimo=False); aceita vírgula decimal ("1,5") e notação 1e-3. Com
    sufixos=True, também quantidades como as que as lições imprimem: 8k, 400M, 70B,
    1,4T (mil, milhão, bilhão, trilhão)."""
    def ler(texto: str) -> float:
        try:
            x = _numero(texto, float, sufixos)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{texto}' não é um número" + (f"; exemplo: {exemplo}" if exemplo else "")
            ) from None
        abaixo = minimo is not None and (x < minimo or (x == minimo and not inclui_minimo))
        if not math.isfinite(x) or abaixo or (maximo is not None and x > maximo):
            if minimo is not None and not inclui_minimo:
                faixa = f"maior que {_g(minimo)}" + (f" e até {_g(maximo)}"
                                                     if maximo is not None else "")
            elif minimo is not None and maximo is not None:
                faixa = f"entre {_g(minimo)} e {_g(maximo)}"
            else:
                faixa = _faixa(minimo, maximo)
            raise argparse.ArgumentTypeError(
                f"{texto} está fora do intervalo; use um número {faixa}"
                + (f" (exemplo: {exemplo})" if exemplo else ""))
        return x
    ler.__name__ = "real"
    return ler


def lista_de_inteiros(exemplo: str = "--so 2,4"):
    """Tipo de opção: '2,4' ou '1-3' -> [2, 4] ou [1, 2, 3]."""
    def ler(texto: str) -> list[int]:
        numeros = []
        try:
            for pedaco in texto.replace(" ", "").split(","):
                if not pedaco:
                    continue
                a, _, b = pedaco.partition("-")
                numeros.extend(range(int(a), int(b or a) + 1))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{texto}' não é uma lista de números; exemplo: {exemplo}") from None
        if not numeros:
            raise argparse.ArgumentTypeError(f"informe ao menos um número; exemplo: {exemplo}")
        return numeros
    ler.__name__ = "lista"
    return ler


def texto_utf8(exemplo: str | None = None):
    """Tipo de opção: um texto digitado no terminal. Bytes que não são UTF-8 (um terminal em
    Latin-1 num sistema em UTF-8: $'a\\xe7\\xe3o') chegam ao Python como caracteres
    substitutos, que o tokenizador recusa com um TypeError; aqui viram uma mensagem."""
    def ler(texto: str) -> str:
        try:
            texto.encode("utf-8")
        except UnicodeEncodeError as erro:
            visivel = texto.encode("utf-8", "surrogateescape").decode("utf-8",
                                                                     "backslashreplace")
            byte = texto[erro.start].encode("utf-8", "surrogateescape")[0]
            raise argparse.ArgumentTypeError(
                f"'{visivel}' não é texto em UTF-8 (o byte \\x{byte:02x} não é): o terminal "
                "manda o texto em outra codificação. Configure o terminal para UTF-8 e "
                "digite de novo" + (f" (exemplo: {exemplo})" if exemplo else "")) from None
        return texto
    ler.__name__ = "texto"
    return ler


def arquivo_de_texto():
    """Tipo de opção: o caminho de um arquivo de texto em UTF-8, não vazio; devolve o
    conteúdo. Um arquivo que não existe, não é UTF-8 ou está vazio dá uma mensagem."""
    def ler(caminho: str) -> str:
        arquivo = Path(caminho)
        if not arquivo.is_file():
            raise argparse.ArgumentTypeError(
                f"o arquivo '{caminho}' não existe (confira o caminho)")
        try:
            conteudo = arquivo.read_text(encoding="utf-8").strip()
        except UnicodeDecodeError:
            raise argparse.ArgumentTypeError(
                f"'{caminho}' não está em UTF-8; salve-o como UTF-8 e tente de novo") from None
        except OSError as erro:
            raise argparse.ArgumentTypeError(
                f"não consegui ler '{caminho}': {erro.strerror or erro}") from None
        if not conteudo:
            raise argparse.ArgumentTypeError(f"o arquivo '{caminho}' está vazio")
        return conteudo
    ler.__name__ = "arquivo"
    return ler


def no_maximo(n: int, exemplo: str):
    """Ação de uma opção de vários valores (nargs="+"): mais de n valores é uso errado,
    com uma mensagem em português (saída 2), antes de a lição gastar memória com eles."""
    class NoMaximo(argparse.Action):
        def __call__(self, parser, namespace, valores, opcao=None):
            if len(valores) > n:
                parser.error(f"{opcao}: no máximo {n} valores ({len(valores)} dados); "
                             f"exemplo: {exemplo}")
            setattr(namespace, self.dest, valores)
    return NoMaximo


def opcao(nome: str, tipo=None, padrao=None, ajuda: str = "", metavar: str | None = None,
          **outros):
    """Uma opção da lição, declarada no cabeçalho: opcao("--passos", inteiro_entre(1), 20,
    "passos de treino do experimento 2"). A ajuda ganha "(padrão: 20)" sozinha; tipo pode
    ser uma tupla de escolhas, "flag" (liga/desliga) ou um validador."""
    def acrescentar(parser):
        kw = dict(outros)
        texto = ajuda
        if tipo == "flag":
            kw["action"] = "store_true"
        elif isinstance(tipo, (tuple, list)):
            kw.update(choices=list(tipo), default=padrao)
        else:
            kw.update(type=tipo or str, default=padrao,
                      metavar=metavar or ("N" if getattr(tipo, "__name__", "") == "inteiro"
                                          else "X"))
        if padrao is not None and tipo != "flag" and "(padrão" not in texto:
            texto += f" (padrão: {padrao if not isinstance(padrao, float) else _g(padrao)})"
        parser.add_argument(nome, help=texto, **kw)
    return acrescentar


def criar_parser(prog: str, descricao: str, titulos, opcoes=(),
                 com_modelo: bool = True) -> argparse.ArgumentParser:
    """com_modelo=False (uma lição que não carrega o GPT-2): --modelo e LAB_MODELO não
    aparecem na ajuda (a opção ainda é aceita, e ignorada)."""
    lista = "\n".join(f"  {k}. {t}" for k, t in enumerate(titulos, 1))
    p = _Parser(prog=prog, description=f"{descricao}\n\nExperimentos:\n{lista}",
                formatter_class=_Formatador, add_help=False,
                epilog="Variáveis de ambiente:\n"
                + ("  LAB_MODELO        padrão de --modelo\n" if com_modelo else "")
                + "  HF_HUB_OFFLINE=1  não tenta a rede\n"
                "  NO_COLOR          sem cores\n"
                "  LAB_TRACEBACK=1   num erro, o traceback inteiro do Python")
    p._optionals.title = "opções"
    p._positionals.title = "argumentos"
    p.add_argument("-h", "--help", action="help", help="mostra esta ajuda e sai")
    p.add_argument("--lista", action="store_true", help="lista os experimentos e sai")
    p.add_argument("--so", type=lista_de_inteiros(), metavar="2,4",
                   help="roda só estes experimentos")
    p.add_argument("--pausa", action="store_true",
                   help="para o projetor: espera Enter entre um experimento e outro "
                   "e antes de cada tabela ou gráfico que rolaria a tela, diz o que vem "
                   "e limpa a tela; r + Enter repete o experimento (só num terminal)")
    p.add_argument("--modelo", metavar="NOME_OU_PASTA",
                   default=os.environ.get("LAB_MODELO") or "gpt2",
                   help="GPT-2 a carregar: gpt2, gpt2-medium, gpt2-large, gpt2-xl "
                   "ou uma pasta local (padrão: $LAB_MODELO ou gpt2)" if com_modelo
                   else argparse.SUPPRESS)
    p.add_argument("--semente", type=inteiro_entre(0, SEMENTE_MAXIMA, "--semente 7"),
                   default=0, metavar="N", help="semente dos números aleatórios (padrão: 0)")
    p.add_argument("--figuras", metavar="PASTA", default=str(RAIZ / "figuras"),
                   help="onde salvar as figuras PNG (padrão: a pasta figuras/ do lab)")
    p.add_argument("--sem-figuras", action="store_true", help="não salva figuras")
    for acrescentar in opcoes:
        acrescentar(p)
    return p


# ---------------------------------------------------------------- lição e experimentos
class ExperimentoPulado(Exception):
    """O experimento não pode rodar aqui (ex.: sem GPT-2); a mensagem diz por quê."""


class VerificacaoFalhou(Exception):
    """Uma autoverificação da lição não confere: o experimento conta como falho (saída 1)."""


class Licao:
    """Descreve uma lição e roda seus experimentos com as convenções do lab."""

    def __init__(self, numero: str, titulo: str, experimentos, usa_gpt2=(), opcoes=(),
                 rotulo: str = "Experimento", pagina: bool = False, modulo: str = "__main__"):
        """experimentos: os títulos, na ordem (o 1º é o experimento 1); usa_gpt2: os números
        dos que carregam o GPT-2 (para o --lista); opcoes: [opcao(...)]; pagina: a lição
        grava uma página (--html, --abrir: paginas.py); modulo: o __name__ do arquivo da
        lição (abrir() sem argumentos só age quando ele é o script rodado)."""
        if pagina:
            import paginas

            opcoes = [*opcoes, *paginas.opcoes()]
        self.numero, self.titulo, self.rotulo, self.modulo = numero, titulo, rotulo, modulo
        self.titulos, self.usa_gpt2 = list(experimentos), set(usa_gpt2)
        assert all(isinstance(t, str) for t in self.titulos), "experimentos: uma lista de títulos"
        self.opcoes = list(opcoes)
        self.funcoes = {}
        self.pulados, self.falhos = [], []  # [(k, título, motivo inteiro)]
        self.args = None
        self._modelo = self._erro_modelo = None
        self._verificacoes_falhas = []
        self._atual = ("", "")

    @classmethod
    def da_docstring(cls, doc: str, **kwargs) -> "Licao":
        """A lição descrita na docstring do arquivo: a 1ª linha é 'Lição NN · Título' (e um
        '(leia junto: ...)', que não entra no título); cada experimento é uma linha
        'k. título', de 1 a n, na ordem. As outras linhas são só para quem lê."""
        primeira, *resto = doc.strip().splitlines()
        cabeca = re.fullmatch(r"Lição (\d\d) · (.+?)(?: \(leia junto: [^()]*\))?", primeira)
        numerados = [m for m in (re.fullmatch(r"\s*(\d+)\. (.+?)\s*", l) for l in resto) if m]
        assert cabeca, f"a docstring começa com 'Lição NN · Título', não {primeira!r}"
        assert [int(m[1]) for m in numerados] == list(range(1, len(numerados) + 1)), \
            "os experimentos da docstring são '1. título', '2. título'..., em ordem"
        modulo = sys._getframe(1).f_globals.get("__name__", "__main__")  # o arquivo da lição
        return cls(cabeca[1], cabeca[2], [m[2] for m in numerados], modulo=modulo, **kwargs)

    @property
    def experimentos(self):
        """[(k, título, usa o GPT-2?)], na ordem."""
        return [(k, t, k in self.usa_gpt2) for k, t in enumerate(self.titulos, 1)]

    def experimento(self, k: int):
        """Decorador: @LICAO.experimento(2) marca a função do experimento 2."""
        def marcar(funcao):
            self.funcoes[k] = funcao
            return funcao
        return marcar

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
        """Lê as opções (argv, ou as da linha de comando) e imprime a primeira linha. Sem
        argv, numa lição importada por outra (ou por um teste), não faz nada: é o
        `if __name__ == "__main__"` do arquivo da lição."""
        if argv is None and self.modulo != "__main__":
            return None
        preparar_saida()
        _ctrl_c_sem_traceback()
        prog = f"lab/{Path(sys.argv[0]).name}" if sys.argv and sys.argv[0] else "lab"
        p = criar_parser(prog, f"Lição {self.numero} · {self.titulo}", self.titulos,
                         self.opcoes, com_modelo=bool(self.usa_gpt2))
        self.args = p.parse_args(argv)
        if self.args.lista:
            dizer(f"Lição {self.numero} · {self.titulo}")
            for k, t, gpt2 in self.experimentos:
                dizer(f"  {k}. {t}{'  (usa o GPT-2)' if gpt2 else ''}")
            sys.exit(0)
        if self.args.so:
            fora = [k for k in self.args.so if not 1 <= k <= len(self.titulos)]
            if fora:
                p.error(f"--so: não há experimento {', '.join(map(str, fora))} "
                        f"(há de 1 a {len(self.titulos)})")
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
        """Grava a figura em --figuras (vírgula decimal nos eixos) e imprime o caminho."""
        if self.args.sem_figuras:
            return None
        import figuras

        return figuras.salvar(fig, Path(self.args.figuras), nome)

    @property
    def modelo_curto(self) -> str:
        """O nome do modelo para um título: 'gpt2', ou só o nome da pasta local."""
        return Path(self.args.modelo).name or self.args.modelo

    # -- GPT-2, carregado uma vez por execução
    def gpt2(self, margem: float = 1.3, base: int = 0):
        """(modelo, tokenizador) ou ExperimentoPulado com a explicação.

        margem, base: a memória que a lição precisa é margem x os pesos + base bytes
        (conferida antes de qualquer download)."""
        import carregar_gpt2

        if self._modelo is None and self._erro_modelo is None:
            try:
                self._modelo = carregar_gpt2.carregar_gpt2(self.args.modelo, margem=margem,
                                                          base=base)
            except carregar_gpt2.ModeloIndisponivel as erro:
                self._erro_modelo = str(erro)
        if self._erro_modelo:
            raise ExperimentoPulado(self._erro_modelo)
        return self._modelo

    # -- o roteiro
    def rodar(self, funcoes: dict | None = None) -> int:
        """Roda os experimentos escolhidos (--so) em ordem; devolve o código de saída."""
        funcoes = funcoes or self.funcoes
        escolhidos = [(k, t) for k, t in enumerate(self.titulos, 1)
                      if not self.args.so or k in self.args.so]
        n = len(self.titulos)
        try:
            for i, (k, titulo) in enumerate(escolhidos):
                limpo = False
                if i and self.args.pausa:
                    while self._pausa_entre(f"{k}/{n} · {titulo}"):  # r + Enter
                        self._rodar_um(funcoes, *escolhidos[i - 1], n, True)
                    limpo = pausas.interativa(self.args)
                self._rodar_um(funcoes, k, titulo, n, limpo)
            while escolhidos and self.args.pausa and self._pausa_entre("Resumo"):
                self._rodar_um(funcoes, *escolhidos[-1], n, True)
        except KeyboardInterrupt:
            print("\nInterrompido (Ctrl+C).", flush=True)
            return 130
        except BrokenPipeError:
            cano_fechado()
        return self._resumo(len(escolhidos))

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
            except pausas.Repetir:
                continue
            except (BrokenPipeError, KeyboardInterrupt, SystemExit):
                raise
            except VerificacaoFalhou as motivo:
                dizer(quebrar(f"FALHOU a autoverificação: {motivo}"))
                self.falhos.append((k, titulo, str(motivo)))
            except ExperimentoPulado as motivo:
                anterior = next((j for j, _t, m in self.pulados if m == str(motivo)), None)
                if anterior is None:
                    dizer(quebrar(f"PULADO: {motivo}"))
                else:  # a mesma explicação, dita uma vez só
                    dizer(quebrar(f"PULADO: {str(motivo).splitlines()[0]} (veja o "
                                  f"{self.rotulo.lower()} {anterior}, acima)"))
                self.pulados.append((k, titulo, str(motivo)))
            except Exception as erro:  # noqa: BLE001 - o erro do aluno, com arquivo e linha
                if os.environ.get("LAB_TRACEBACK", "").strip() not in ("", "0"):
                    raise
                texto, onde = erro_legivel(erro)
                dizer(texto)
                self.falhos.append((k, titulo, f"{type(erro).__name__}: {erro}"
                                    + (f" ({onde})" if onde else "")))
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
        if not pausas.interativa(self.args):
            return
        numero, cabecalho = self._atual
        if pausas.perguntar_pausa(f"{numero}, a seguir: {a_seguir}"):
            pausas.limpar_tela()
            raise pausas.Repetir
        pausas.limpar_tela()
        from console import cortar

        dizer(cortar(cabecalho, len(" (continuação)")) + " (continuação)")

    def _pausa_entre(self, a_seguir: str) -> bool:
        """Pausa entre experimentos. True: repetir o anterior (r + Enter)."""
        if not pausas.interativa(self.args):
            return False
        repetir = pausas.perguntar_pausa(a_seguir)
        pausas.limpar_tela()
        return repetir

    def _resumo(self, total) -> int:
        dizer()
        dizer("Resumo")
        dizer("------")
        feitos = total - len(self.pulados) - len(self.falhos)
        palavra = self.rotulo.lower()
        plurais = {"experimento": "experimentos", "verificação": "verificações"}
        if feitos == 0:
            nenhum, dos = ("Nenhuma", "das") if palavra.endswith("ção") else ("Nenhum", "dos")
            dizer(f"{nenhum} {palavra} rodou." if total == 1 else
                  f"{nenhum} {dos} {plural(total, palavra, plurais.get(palavra))} rodou.")
        else:
            rodaram = "rodou" if feitos == 1 else "rodaram"
            dizer(f"{feitos} de {plural(total, palavra, plurais.get(palavra))} {rodaram}.")
        ditos = set()
        for situacao, lista in (("pulado", self.pulados), ("falhou", self.falhos)):
            for k, t, motivo in lista:  # no resumo, só a primeira linha do motivo, uma vez
                dizer(f"  {situacao}: {k}. {t}")
                if motivo not in ditos:
                    dizer(quebrar(motivo.split("\n")[0], recuo=4))
                    ditos.add(motivo)
        if self.falhos:
            dizer(quebrar("Corrija o que falhou (a mensagem acima diz o arquivo e a linha) "
                          "e rode de novo."))
            return 1
        script, apostila, escrevendo = proxima_licao(self.numero)
        if script:
            dizer(quebrar(f"Próximo passo: {script} (leia {apostila})."))
        if escrevendo:
            dizer(f"(a lição {escrevendo} ainda está sendo escrita)")
        return 1 if self.pulados else 0


# ---------------------------------------------------------------- o erro do aluno
_ENCANAMENTO = {"licao.py", "console.py", "pausas.py", "figuras.py", "carregar_gpt2.py",
                "otimizador.py", "conferir.py", "paginas.py", "codigo.py"}


def _de_biblioteca(arquivo: str) -> bool:
    """Um arquivo do Python, de um pacote instalado (torch, transformers...) ou do
    encanamento do lab: não é ali que está o erro do aluno."""
    caminho = Path(arquivo)
    if arquivo.startswith("<") or "site-packages" in caminho.parts \
            or "dist-packages" in caminho.parts:
        return True
    if caminho.parent == PASTA_LAB and caminho.name in _ENCANAMENTO:
        return True
    for prefixo in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        try:
            caminho.resolve().relative_to(Path(prefixo).resolve() / "lib")
            return True
        except (ValueError, OSError):
            pass
    return False


def _caminho_curto(arquivo: str) -> str:
    try:
        return str(Path(arquivo).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return arquivo


def erro_legivel(erro: BaseException) -> tuple[str, str]:
    """(o texto para o aluno, 'arquivo:linha') de uma exceção: a mensagem e o quadro mais
    interno que não é do Python, de uma biblioteca ou do encanamento do lab (o código da
    lição ou da cópia do aluno), com a linha de código."""
    quadros = traceback.extract_tb(erro.__traceback__)
    do_aluno = [q for q in quadros if not _de_biblioteca(q.filename)]
    quadro = (do_aluno or quadros or [None])[-1]
    mensagem = str(erro) or {"MemoryError": "faltou memória"}.get(type(erro).__name__, "")
    if type(erro).__name__ == "MemoryError":
        mensagem += " (feche outros programas ou use um modelo menor)"
    linhas = [f"FALHOU: {type(erro).__name__}: {mensagem}"]
    onde = ""
    if quadro is not None:
        onde = f"{_caminho_curto(quadro.filename)}:{quadro.lineno}"
        linhas.append(f"  em {onde}, na função {quadro.name}:")
        if quadro.line:
            linhas.append(f"    {quadro.line.strip()}")
    linhas.append("  (o traceback inteiro: rode com a variável LAB_TRACEBACK=1)")
    return "\n".join(linhas), onde


# ---------------------------------------------------------------- a lição seguinte
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


def importar_licao(nome: str):
    """Importa lab/NN_nome.py (um nome que começa com dígito não cabe em 'import'): uma
    lição usa assim a peça de outra, ex. importar_licao("05_block").Bloco."""
    caminho = PASTA_LAB / f"{nome}.py"
    modulo_nome = "licao_" + nome
    if modulo_nome in sys.modules:
        return sys.modules[modulo_nome]
    spec = importlib.util.spec_from_file_location(modulo_nome, caminho)
    modulo = importlib.util.module_from_spec(spec)
    sys.modules[modulo_nome] = modulo
    spec.loader.exec_module(modulo)
    return modulo


# ---------------------------------------------------------------- Ctrl+C, threads, sementes
def interromper() -> None:
    """Termina JÁ, com uma linha e código 130, como um Ctrl+C.

    os._exit, e não sys.exit: sys.exit esperaria as threads de trabalho terminarem
    (treinos em paralelo seguiriam por segundos, a barra de progresso desenhando) e
    um segundo Ctrl+C nessa espera abortava o processo ('terminate called...', 134).
    """
    import console as _c

    try:
        _c.parar_barras()                  # senão o rich redesenha a barra embaixo da linha
        if _c._console is not None and _c._console.is_terminal:
            _c._console.show_cursor(True)  # a barra do rich esconde o cursor
        print("\nInterrompido (Ctrl+C).", flush=True)
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - saindo de qualquer jeito
        pass
    os._exit(130)


def esperar(futuros):
    """Resultados de futuros (concurrent.futures), na ordem, esperando aos poucos.

    Esperar com `futuro.result()` trava a thread principal num lock que, no Windows,
    pode não acordar com Ctrl+C; olhando a cada 0,2 s, o Ctrl+C para na hora em todo
    sistema. Uma exceção numa thread sobe aqui, como em result()."""
    import concurrent.futures

    futuros = list(futuros)
    while concurrent.futures.wait(futuros, timeout=0.2).not_done:
        pass
    return [f.result() for f in futuros]


def em_paralelo(funcoes, threads=2):
    """[f() for f in funcoes], `threads` de cada vez (uma thread cada, um núcleo cada):
    os resultados na ordem das funções. Cada f deve ter o seu estado (pesos, gerador de
    lotes), sorteado antes, na thread principal: aí dá bit a bit o que daria sozinha.
    Ctrl+C para na hora: interromper() sai sem esperar as threads (esperá-las levava o
    torch a abortar o processo ao sair)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as grupo:
        futuros = [grupo.submit(f) for f in funcoes]
        try:
            return esperar(futuros)
        except KeyboardInterrupt:
            interromper()


_AO_INTERROMPER = []  # funções chamadas antes de sair no Ctrl+C (ex.: guardar um checkpoint)


def ao_interromper(funcao) -> None:
    """Registra funcao() para rodar no Ctrl+C, antes da linha 'Interrompido' (uma lição
    que treina guarda ali o último checkpoint)."""
    _AO_INTERROMPER.append(funcao)


def _ctrl_c_sem_traceback() -> None:
    """Ctrl+C em qualquer ponto (até durante o import do torch ou com threads
    trabalhando): uma linha, saída 130, na hora."""
    import signal

    def parar(_sinal, _quadro):
        try:
            import console as _c

            _c.parar_barras()              # as mensagens abaixo não ficam sob a barra
        except Exception:  # noqa: BLE001 - saindo de qualquer jeito
            pass
        for funcao in _AO_INTERROMPER:
            try:
                funcao()
            except Exception:  # noqa: BLE001 - saindo de qualquer jeito
                pass
        interromper()

    try:
        signal.signal(signal.SIGINT, parar)
    except ValueError:  # fora da thread principal
        pass


def semear(semente: int) -> None:
    """A mesma semente no random, no numpy e no torch (se já importado)."""
    import random

    random.seed(semente)
    try:
        import numpy as np

        np.random.seed(semente)
    except ImportError:
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(semente)
