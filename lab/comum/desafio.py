"""As opções dos desafios numa lição (--desafio, --dica, --mostrar-defeito, --com-o-seu) e
a troca de uma peça da lição pela do aluno. O desafio em si (as sondas, o catálogo de
defeitos, o diagnóstico) mora em lab/desafios/, não aqui: este módulo só sabe quais lições
têm desafio (pelos nomes dos arquivos, sem importar nada) e passa a vez para lá.

Nada aqui importa o torch: as opções são lidas antes dele."""
from __future__ import annotations

import argparse
import importlib
import sys
import types

from .caminhos import PASTA_LAB

__all__ = ["PASTA_DESAFIOS", "desafios_da_licao", "licoes_com_desafio", "opcoes",
           "despachar", "substituir", "SUBSTITUICOES", "Remendo", "ComTrocas"]

PASTA_DESAFIOS = PASTA_LAB / "desafios"

# {"03_attention": [("atencao", funcao)]}: o que importar_licao troca depois de carregar uma
# lição (--com-o-seu), na ordem; preenchido por lab/desafios antes de a lição importar as
# anteriores (uma lista: duas peças podem mexer no mesmo nome, com um Remendo cada).
SUBSTITUICOES: dict[str, list[tuple[str, object]]] = {}


def desafios_da_licao(numero: str) -> list[str]:
    """Os nomes dos desafios da lição ('03' -> ['atencao']): os arquivos NN_nome.py de
    lab/desafios/, na ordem do nome."""
    return [p.stem[3:] for p in sorted(PASTA_DESAFIOS.glob(f"{numero}_*.py"))]


def licoes_com_desafio() -> list[str]:
    return sorted({p.name[:2] for p in PASTA_DESAFIOS.glob("[0-9][0-9]_*.py")})


def opcoes(numero: str):
    """O acréscimo ao parser de uma lição: --desafio e companhia onde há desafio, e
    --com-o-seu onde esta lição ou uma anterior tem um (a peça dela roda aqui: a 06 com a
    atenção da 03; a 07 com o passo do cache da própria 07, que os experimentos dela usam)."""
    nomes = desafios_da_licao(numero)
    anteriores = [n for n in licoes_com_desafio() if n <= numero]

    def acrescentar(p: argparse.ArgumentParser):
        if nomes:
            g = p.add_argument_group("desafio (você escreve a peça)")
            g.add_argument("--desafio", nargs="?", const="todos", metavar="NOME",
                           choices=["todos", *nomes],
                           help="escreve meus_desafios/ na primeira vez e depois confere a sua "
                           f"peça: {', '.join(nomes)} (sem NOME: todos os desta lição)")
            g.add_argument("--dica", action="store_true",
                           help="com --desafio: uma dica a mais a cada vez")
            g.add_argument("--mostrar-defeito", metavar="DEFEITO",
                           help="com --desafio NOME: o diagnóstico de um defeito do catálogo "
                           "(para o professor mostrar; 'lista' lista os defeitos)")
        if anteriores:
            p.add_argument("--com-o-seu", metavar="NN", choices=anteriores,
                           help="roda esta lição com a peça que você escreveu no desafio "
                           f"da lição NN ({', '.join(anteriores)})")
    return acrescentar


def _motor():
    """lab/desafios/linha_de_comando.py (importado só quando o aluno pede um desafio)."""
    if str(PASTA_LAB) not in sys.path:
        sys.path.insert(0, str(PASTA_LAB))
    return importlib.import_module("desafios.linha_de_comando")


def despachar(numero: str, args, parser) -> None:
    """Depois de ler as opções: --desafio roda o desafio e sai (a lição não roda);
    --com-o-seu prepara a troca e a lição segue."""
    if getattr(args, "desafio", None) is None:
        if getattr(args, "dica", False) or getattr(args, "mostrar_defeito", None):
            parser.error("--dica e --mostrar-defeito vão junto com --desafio")
        if getattr(args, "com_o_seu", None):
            _motor().com_o_seu(numero, args.com_o_seu)
        return
    sys.exit(_motor().rodar(numero, args))


class Remendo:
    """Uma troca que parte do que já está lá: substituir() põe funcao(atual) no lugar. Duas
    peças do aluno que mexem no mesmo nome se somam (o LayerNorm e a GELU, as duas no `nn`
    da lição 05) em vez de a segunda apagar a primeira."""

    def __init__(self, funcao):
        self.funcao = funcao


class ComTrocas(types.ModuleType):
    """Um módulo (o `nn` que uma lição importou) com algumas peças trocadas e o resto igual
    ao `atual`: Remendo(lambda atual: ComTrocas(atual, LayerNorm=...)) troca o nn.LayerNorm
    das peças que a lição monta depois, sem mexer no torch.nn de todos (o transformers, que
    dá os logits de comparação, continua com o de verdade)."""

    def __init__(self, atual, **trocas):
        super().__init__(getattr(atual, "__name__", "trocado"))
        self._atual = atual
        for nome, peca in trocas.items():
            setattr(self, nome, peca)

    def __getattr__(self, nome):
        return getattr(self._atual, nome)


def substituir(nome_da_licao: str, modulo, trocas=None) -> None:
    """Troca no módulo recém-carregado o que --com-o-seu pediu ('Bloco.forward' entra pela
    classe): as trocas dadas, ou todas as da lição. A lição rodada como script (o __main__)
    troca as suas na hora de rodar os experimentos (Licao.rodar), depois de o arquivo
    inteiro ter definido a peça."""
    for caminho, nova in (SUBSTITUICOES.get(nome_da_licao, []) if trocas is None else trocas):
        dono = modulo
        *partes, ultimo = caminho.split(".")
        for parte in partes:
            dono = getattr(dono, parte)
        if isinstance(nova, Remendo):
            nova = nova.funcao(getattr(dono, ultimo))
        setattr(dono, ultimo, nova)
