"""Os desafios: o aluno escreve a peça da lição, e o lab confere e diz o defeito em português.

Cada arquivo NN_nome.py desta pasta é um desafio da lição NN (03_atencao.py: a atenção da
lição 03) e define DESAFIO: a função que o aluno escreve (assinatura e docstring, nunca a
resposta), as sondas, a referência e o catálogo de defeitos conhecidos, cada um com a sua
mensagem e a seção da apostila que o explica. O resto é de todos:

    motor.py             as sondas em estágios, a comparação e o diagnóstico por impressão
                         digital (as saídas do aluno iguais às de um defeito do catálogo)
    aluno.py             os arquivos do aluno em meus_desafios/: o modelo, a leitura, as
                         dicas e o registro que o professor recolhe
    linha_de_comando.py  --desafio, --dica, --mostrar-defeito e --com-o-seu numa lição
    painel.py            o quadro de todos os desafios; --turma: os arquivos de uma turma

Um desafio roda pela lição dele (lab/03_attention.py --desafio); as opções entram na lição
por comum/desafio.py, que só olha os nomes dos arquivos desta pasta.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PASTA = Path(__file__).resolve().parent

__all__ = ["PASTA", "chaves", "carregar"]


def chaves(numero: str | None = None) -> list[str]:
    """As chaves 'NN_nome' dos desafios (de uma lição, ou de todas), na ordem do curso."""
    padrao = f"{numero}_*.py" if numero else "[0-9][0-9]_*.py"
    return [p.stem for p in sorted(PASTA.glob(padrao))]


def carregar(chave: str):
    """O DESAFIO de lab/desafios/<chave>.py (um nome que começa com dígito não cabe em
    'import'; carregado uma vez por processo)."""
    nome = f"desafios.d{chave}"
    if nome not in sys.modules:
        spec = importlib.util.spec_from_file_location(nome, PASTA / f"{chave}.py")
        modulo = importlib.util.module_from_spec(spec)
        sys.modules[nome] = modulo
        try:
            spec.loader.exec_module(modulo)
        except BaseException:
            del sys.modules[nome]
            raise
    return sys.modules[nome].DESAFIO
