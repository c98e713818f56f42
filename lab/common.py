"""TRANSIÇÃO: o que era lab/common.py agora mora em módulos com o nome do que guardam.

    console.py        o console e os formatos (dizer, num, inteiro, limite, token...)
    licao.py          as opções e o roteiro da lição (Licao, opcao, importar_licao...)
    pausas.py         as pausas do --pausa
    figuras.py        gráficos ASCII e PNGs do matplotlib
    carregar_gpt2.py  o GPT-2 do cache, do hub ou de uma pasta, e a memória livre
    otimizador.py     Adam / AdamW à mão
    conferir.py       confira o seu código contra o da lição

Este arquivo só reexporta os nomes antigos enquanto as lições mudam; ele some depois.
"""
from carregar_gpt2 import *  # noqa: F401,F403
from carregar_gpt2 import (PARAMETROS_GPT2, PREFIXO_HUB, TAMANHOS_GPT2,  # noqa: F401
                           ModeloIndisponivel, carregar_gpt2, carregar_tokenizador,
                           estimar_memoria, ler_vm_stat, memoria_disponivel)
from console import *  # noqa: F401,F403
from console import preparar_saida as _preparar_saida  # noqa: F401
from figuras import *  # noqa: F401,F403
from licao import *  # noqa: F401,F403
from licao import (PASTA_LAB, RAIZ, ExperimentoPulado, Licao, VerificacaoFalhou,  # noqa: F401
                   _Formatador, criar_parser as _criar_parser_novo, esperar, importar_licao,
                   interromper, proxima_licao, semear)
from otimizador import Adam  # noqa: F401


def contar_parametros(modulo) -> int:
    """Parâmetros distintos: parameters() já conta um peso amarrado uma vez só."""
    return sum(p.numel() for p in modulo.parameters())


def parametros_gpt2(camadas: int, d: int, vocab: int = 50257, posicoes: int = 1024) -> int:
    por_bloco = 12 * d * d + 13 * d
    return vocab * d + posicoes * d + camadas * por_bloco + 2 * d


def criar_parser(prog, descricao, experimentos, extras=None):
    return _criar_parser_novo(prog, descricao, [t for _k, t, *_ in experimentos],
                              [extras] if extras else [])
