"""A lição: o roteiro dos experimentos (Licao), o mapa do curso e importar_licao.

Toda lição começa igual: a docstring do arquivo (entre aspas triplas) é o sumário, o
título e um experimento por linha, na ordem, e a lição é lida dela:

    Lição 05 · O bloco Transformer completo (leia junto: apostilas/05_block.md)
    1. Monte o bloco e veja as formas
    2. A norma do fluxo residual, camada a camada, no GPT-2
    from comum import Licao, inteiro_entre, opcao
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

O resto do encanamento da lição mora ao lado, em comum/: caminhos.py (RAIZ, PASTA_LAB),
opcoes.py (o argparse em português e os validadores), erros.py (ExperimentoPulado, o erro
do aluno) e processo.py (Ctrl+C, em_paralelo, semear); alguns nomes deles saem também
daqui (`from comum.licao import criar_parser`).
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from pathlib import Path

from . import desafio
from .caminhos import PASTA_LAB, RAIZ
from .console import (cano_fechado, console, cortar, dizer, largura, num, perguntar, plural,
                      preparar_saida, quebrar)
from .erros import ExperimentoPulado, VerificacaoFalhou, erro_legivel, traceback_pedido
# nomes de opcoes e processo que saem também daqui (os testes e ferramentas os usam)
from .opcoes import (SEMENTE_MAXIMA, arquivo_de_texto, criar_parser, inteiro_entre,  # noqa: F401
                     lista_de_inteiros, no_maximo, opcao, real_entre, texto_utf8)
from .processo import (ao_interromper, em_paralelo, esperar, instalar_ctrl_c,  # noqa: F401
                       interromper, semear)

__all__ = [
    "Licao", "opcao", "inteiro_entre", "real_entre", "lista_de_inteiros", "texto_utf8",
    "arquivo_de_texto", "no_maximo", "ExperimentoPulado",
    "VerificacaoFalhou", "importar_licao", "interromper", "esperar", "em_paralelo", "semear",
    "RAIZ", "FIM_DO_CURSO",
]

ULTIMA_DO_MAPA = 14  # o mapa do lab vai de 00_check a 14_corrida (números podem faltar)
# A última lição que existe em lab/ fecha o curso: a seção da apostila dela com este título.
FIM_DO_CURSO = "Fim do curso: o que você construiu e para onde ir"


# ---------------------------------------------------------------- as pausas do --pausa
# Entre um experimento e outro, e dentro dele antes de cada tabela ou gráfico que rolaria
# a tela de 30 linhas, a lição para, diz numa linha o que vem ("[Enter] 3/6 · A norma do
# fluxo residual…  (r: repete)"), espera o Enter e limpa a tela; r + Enter roda o
# experimento de novo. Só num terminal: num pipe, com a entrada fechada ou sem --pausa,
# nada muda na saída.

class Repetir(Exception):
    """r + Enter numa pausa: o experimento atual roda de novo, do começo."""


def interativa(args) -> bool:
    """--pausa só vale com entrada E saída num terminal: num pipe (| tee, | more,
    < respostas.txt) ou com a entrada fechada, a saída não ganha nenhuma linha."""
    if not getattr(args, "pausa", False):
        return False
    try:
        return bool(sys.stdin and not sys.stdin.closed and sys.stdin.isatty()
                    and sys.stdout.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def perguntar_pausa(a_seguir: str) -> bool:
    """Uma linha só ('[Enter] 3/6 · título…  (r: repete)'), para não rolar a tela;
    True se a resposta for r (r + Enter: o experimento atual de novo)."""
    dica = "  (r: repete) "
    resposta = perguntar(cortar(f"[Enter] {a_seguir}", len(dica)) + dica)
    return (resposta or "").strip().lower() in ("r", "repete", "repetir")


def limpar_tela() -> None:
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


# ---------------------------------------------------------------- lição e experimentos
class Licao:
    """Descreve uma lição e roda seus experimentos com as convenções do lab."""

    proximo_no_resumo = True    # o resumo termina com o próximo passo (dizer_o_proximo_passo)

    def __init__(self, numero: str, titulo: str, experimentos, usa_gpt2=(), opcoes=(),
                 rotulo: str = "Experimento", modulo: str = "__main__",
                 modelo_padrao: str | None = None):
        """experimentos: os títulos, na ordem (o 1º é o experimento 1); usa_gpt2: os números
        dos que carregam o GPT-2 (para o --lista); opcoes: [opcao(...)] (uma lição que
        grava uma página soma *paginas.opcoes(): --html, --abrir); modulo: o __name__ do
        arquivo da lição (abrir() sem argumentos só age quando ele é o script rodado);
        modelo_padrao: o --modelo de uma lição que não carrega o GPT-2 (a 13: o Tucano)."""
        self.numero, self.titulo, self.rotulo, self.modulo = numero, titulo, rotulo, modulo
        self.modelo_padrao = modelo_padrao
        self.titulos, self.usa_gpt2 = list(experimentos), set(usa_gpt2)
        assert all(isinstance(t, str) for t in self.titulos), "experimentos: uma lista de títulos"
        self.opcoes = list(opcoes)
        self.funcoes = {}
        self.pulados, self.falhos = [], []  # [(k, título, motivo inteiro)]
        self.args = None
        self._modelo = self._erro_modelo = None
        self._verificacoes_falhas = []
        self._atual = ("", "")
        self._pausado = 0.0         # segundos à espera de Enter no experimento atual
        self._tipo_da_falha = {}    # k: "conferência", "linha" (arquivo e linha) ou "erro"
        self._feito = {}            # chave: o valor (ou o ExperimentoPulado) de uma_vez()

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
        instalar_ctrl_c()
        prog = f"lab/{Path(sys.argv[0]).name}" if sys.argv and sys.argv[0] else "lab"
        p = criar_parser(prog, f"Lição {self.numero} · {self.titulo}", self.titulos,
                         [*self.opcoes, desafio.opcoes(self.numero)],
                         com_modelo=bool(self.usa_gpt2), modelo_padrao=self.modelo_padrao)
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
        desafio.despachar(self.numero, self.args, p)   # --desafio roda o desafio e sai
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
        from . import figuras
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
        from . import carregar_gpt2
        if self._modelo is None and self._erro_modelo is None:
            try:
                self._modelo = carregar_gpt2.carregar_gpt2(self.args.modelo, margem=margem,
                                                          base=base)
            except carregar_gpt2.ModeloIndisponivel as erro:
                self._erro_modelo = str(erro)
        if self._erro_modelo:
            raise ExperimentoPulado(self._erro_modelo)
        return self._modelo

    # -- o que mais de um experimento usa, calculado uma vez por execução
    def uma_vez(self, chave, funcao):
        """funcao() na primeira chamada com esta chave; nas seguintes, o mesmo valor (ou o
        mesmo ExperimentoPulado), sem calcular de novo. Um tokenizador, um treino, uma frase
        já no cache: com --so, o experimento que precisa calcula; a lição inteira calcula
        uma vez; r + Enter numa pausa repete o experimento, não a conta. Guardado na lição
        (uma por execução), não no módulo: outra Licao começa do zero."""
        if chave not in self._feito:
            try:
                self._feito[chave] = funcao()
            except ExperimentoPulado as motivo:   # só o motivo: nada dos quadros de então
                self._feito[chave] = ExperimentoPulado(*motivo.args)
        feito = self._feito[chave]
        if isinstance(feito, ExperimentoPulado):
            raise ExperimentoPulado(*feito.args)
        return feito

    def ja_feito(self, chave) -> bool:
        """True se uma_vez(chave, ...) já rodou nesta execução (e deu um valor ou pulou)."""
        return chave in self._feito

    # -- o roteiro
    def rodar(self, funcoes: dict | None = None) -> int:
        """Roda os experimentos escolhidos (--so) em ordem; devolve o código de saída."""
        funcoes = funcoes or self.funcoes
        self._com_o_seu()
        escolhidos = [(k, t) for k, t in enumerate(self.titulos, 1)
                      if not self.args.so or k in self.args.so]
        n = len(self.titulos)
        try:
            for i, (k, titulo) in enumerate(escolhidos):
                limpo = False
                if i and self.args.pausa:
                    while self._pausa_entre(f"{k}/{n} · {titulo}"):  # r + Enter
                        self._rodar_um(funcoes, *escolhidos[i - 1], n, True)
                    limpo = interativa(self.args)
                self._rodar_um(funcoes, k, titulo, n, limpo)
            while escolhidos and self.args.pausa and self._pausa_entre("Resumo"):
                self._rodar_um(funcoes, *escolhidos[-1], n, True)
        except KeyboardInterrupt:
            print("\nInterrompido (Ctrl+C).", flush=True)
            return 130
        except BrokenPipeError:
            cano_fechado()
        return self._resumo(len(escolhidos))

    def _com_o_seu(self):
        """--com-o-seu com o número desta lição: a peça do aluno no lugar da que este
        arquivo acabou de definir (as lições importadas já trocaram as suas em
        importar_licao)."""
        modulo = sys.modules.get(self.modulo)
        arquivo = getattr(modulo, "__file__", None)
        if arquivo:
            desafio.substituir(Path(arquivo).stem, modulo)

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
            inicio, self._pausado = time.perf_counter(), 0.0
            self._verificacoes_falhas = []
            for lista in (self.pulados, self.falhos):  # uma repetição não conta duas vezes
                lista[:] = [item for item in lista if item[0] != k]
            try:
                funcoes[k](self)
                if self._verificacoes_falhas:
                    raise VerificacaoFalhou(
                        "não confere: " + "; ".join(self._verificacoes_falhas))
            except Repetir:
                continue
            except (BrokenPipeError, KeyboardInterrupt, SystemExit):
                raise
            except VerificacaoFalhou as motivo:
                dizer(quebrar(f"FALHOU a autoverificação: {motivo}"))
                self._tipo_da_falha[k] = "conferência"
                self.falhos.append((k, titulo, str(motivo)))
            except ExperimentoPulado as motivo:
                anterior = next((j for j, _t, m in self.pulados if m == str(motivo)), None)
                if anterior is None:
                    dizer(quebrar(f"PULADO: {motivo}"))
                else:  # a mesma explicação, dita uma vez só
                    artigo = "a" if self.rotulo.endswith("ção") else "o"   # a verificação
                    dizer(quebrar(f"PULADO: {str(motivo).splitlines()[0]} (veja {artigo} "
                                  f"{self.rotulo.lower()} {anterior}, acima)"))
                self.pulados.append((k, titulo, str(motivo)))
            except Exception as erro:  # noqa: BLE001 - o erro do aluno, com arquivo e linha
                if traceback_pedido():
                    raise
                texto, onde = erro_legivel(erro)
                dizer(texto)
                self._tipo_da_falha[k] = "linha" if onde else "erro"
                self.falhos.append((k, titulo, f"{type(erro).__name__}: {erro}"
                                    + (f" ({onde})" if onde else "")))
            else:  # o tempo do experimento, sem o de quem leu a tela numa pausa
                dizer(f"({num(time.perf_counter() - inicio - self._pausado, 1)} s)")
            return

    def pausa(self, a_seguir: str) -> None:
        """Pausa dentro de um experimento, antes de uma tabela ou gráfico que rolaria a
        anterior para fora de uma tela de 30 linhas (o projetor).

        Só com --pausa e entrada e saída num terminal: diz o que vem ("[Enter] 2/6,
        a seguir: ..."), espera o Enter e limpa a tela; r + Enter roda o experimento
        de novo. Num pipe, com a entrada fechada ou sem --pausa, não faz nada (a saída
        fica idêntica, linha a linha)."""
        if not interativa(self.args):
            return
        numero, cabecalho = self._atual
        espera = time.perf_counter()
        repetir = perguntar_pausa(f"{numero}, a seguir: {a_seguir}")
        self._pausado += time.perf_counter() - espera
        if repetir:
            limpar_tela()
            raise Repetir
        limpar_tela()
        from .console import cortar

        dizer(cortar(cabecalho, len(" (continuação)")) + " (continuação)")

    def _pausa_entre(self, a_seguir: str) -> bool:
        """Pausa entre experimentos. True: repetir o anterior (r + Enter)."""
        if not interativa(self.args):
            return False
        repetir = perguntar_pausa(a_seguir)
        limpar_tela()
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
            dizer(quebrar(f"Corrija o que falhou ({self._onde_ler()}) e rode de novo."))
            return 1
        if self.proximo_no_resumo:
            self.dizer_o_proximo_passo()
        return 1 if self.pulados else 0

    def dizer_o_proximo_passo(self) -> None:
        """A linha "Próximo passo: a lição seguinte" (ou, na última, o fim do curso), no resumo;
        uma lição com proximo_no_resumo = False (a 00, que só aponta a lição 01 depois do
        "Pronto") o chama ela mesma."""
        script, apostila, escrevendo = proxima_licao(self.numero)
        if script:
            dizer(quebrar(f"Próximo passo: {script} (leia {apostila})."))
        if escrevendo:
            dizer(f"(a lição {escrevendo} ainda está sendo escrita)")
        if not script and not self.args.so:   # a última lição, rodada inteira
            self._fechar_curso()

    def _onde_ler(self) -> str:
        """O que a mensagem acima de uma falha diz: o arquivo e a linha (um erro no código)
        ou o que não bateu (uma autoverificação, que não tem linha a apontar)."""
        tipos = {self._tipo_da_falha.get(k, "erro") for k, _t, _m in self.falhos}
        if tipos == {"conferência"}:
            return "a conferência acima diz o que não bateu"
        if tipos == {"linha"}:
            return "a mensagem acima diz o arquivo e a linha"
        if "conferência" in tipos:
            return "acima: o que não bateu em cada conferência e onde foi cada erro"
        return "a mensagem acima diz o que deu errado" + (
            ", e onde" if "linha" in tipos else "")

    def _fechar_curso(self) -> None:
        """A última lição que existe em lab/ não tem "Próximo passo": fecha o curso e aponta
        para a seção FIM_DO_CURSO da apostila dela (uma lição nova depois dela leva o fim
        junto, sem mexer em nenhuma outra). O fim fala do que as lições cobrem, não
        do que o aluno viu (uma lição anterior pode ter ficado sem o modelo); com um
        experimento pulado nesta, diz o que falta."""
        arquivos = sorted(PASTA_LAB.glob(f"{self.numero}_*.py"))
        apostila = f"apostilas/{arquivos[0].stem}.md" if arquivos else "apostilas/README.md"
        dizer()
        dizer(quebrar(f"Fim do curso. As lições 00 a {self.numero} montaram, mediram e treinaram "
                      "um Transformer peça por peça: tokens, embeddings, atenção, o bloco, o "
                      "GPT-2 inteiro, a geração com cache KV, o bloco moderno, as leis de "
                      "escala, um GPT seu, os circuitos que copiam e as mesmas peças num modelo "
                      "de verdade."
                      + (" Nesta lição, os experimentos pulados acima dizem o que falta; feito "
                         "isso, rode-a de novo." if self.pulados else "")))
        dizer(quebrar(f"Para onde ir depois: {apostila}, seção \"{FIM_DO_CURSO}\"."))

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
    desafio.substituir(nome, modulo)       # --com-o-seu: a peça do aluno no lugar da lição
    return modulo
