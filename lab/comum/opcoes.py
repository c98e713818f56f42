"""As opções da linha de comando de uma lição, em português: o argparse traduzido, os
validadores (inteiro_entre, real_entre, texto_utf8...), opcao() e criar_parser().

Importar este módulo traduz as mensagens do argparse para o processo inteiro (o argparse
as busca em argparse._ e argparse.ngettext na hora do uso): toda lição, e todo teste ou
ferramenta que importe o encanamento, vê as mensagens em português."""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

from .caminhos import RAIZ
from .console import comando, largura, quebrar

__all__ = ["opcao", "inteiro_entre", "real_entre", "lista_de_inteiros", "texto_utf8",
           "arquivo_de_texto", "no_maximo", "criar_parser", "uso_errado", "para_ajuda",
           "SEMENTE_MAXIMA", "aponta_um_gpt2"]

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
        sys.stderr.write(f"{texto}\n{para_ajuda(self.prog)}\n")
        sys.exit(2)


def para_ajuda(prog: str) -> str:
    """'Para ajuda:' e o comando que roda como está, nas duas formas do README (o arquivo da
    lição não é executável: 'lab/10_treino.py --help' sozinho não roda)."""
    if prog.endswith(".py"):
        return "Para ajuda:\n" + comando(Path(prog).name, "--help")
    return f"Para ajuda: {prog} --help"


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


def aponta_um_gpt2(nome: str) -> bool:
    """O nome é de um GPT-2: um dos do hub ('gpt2', 'gpt2-xl', 'openai-community/gpt2'...) ou
    uma pasta cujo config.json diz model_type 'gpt2'."""
    if re.fullmatch(r"(openai-community/)?(distil)?gpt2(-medium|-large|-xl)?", nome):
        return True
    try:
        config = json.loads((Path(nome) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == "gpt2"


def criar_parser(prog: str, descricao: str, titulos, opcoes=(),
                 com_modelo: bool = True, modelo_padrao: str | None = None
                 ) -> argparse.ArgumentParser:
    """com_modelo=False (uma lição que não carrega o GPT-2): --modelo e LAB_MODELO não
    aparecem na ajuda (a opção ainda é aceita, e ignorada). modelo_padrao: o --modelo de uma
    lição que carrega outro modelo, não o GPT-2 (a 13: o Tucano)."""
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
    if modelo_padrao:
        # O LAB_MODELO das lições do GPT-2 não vale aqui quando aponta um GPT-2 (a lição
        # diz por quê: args.modelo_do_ambiente = (valor, ignorado?)).
        ambiente = os.environ.get("LAB_MODELO") or None
        ignorado = bool(ambiente) and aponta_um_gpt2(ambiente)
        p.add_argument("--modelo", metavar="NOME_OU_PASTA",
                       default=ambiente if ambiente and not ignorado else modelo_padrao,
                       help="modelo da família Llama a carregar: um id do hub ou uma pasta "
                       f"local (padrão: $LAB_MODELO, se não for um GPT-2, ou {modelo_padrao})")
        p.set_defaults(modelo_do_ambiente=(ambiente, ignorado) if ambiente else None)
    else:
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


def uso_errado(mensagem: str) -> None:
    """O uso errado que só aparece com as opções juntas (h que não divide d, um lote que
    não se divide entre os processos): 'erro: ...' quebrado em 80 colunas, no stderr, e a
    saída 2, como um erro do argparse."""
    print(quebrar(f"erro: {mensagem}."), file=sys.stderr)
    sys.exit(2)
