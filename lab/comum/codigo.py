"""O código das peças na tela (o --codigo da lição 06): a fonte de cada função ou classe,
lida do próprio arquivo com o inspect e mostrada como está, com o arquivo e a linha (as
linhas das peças cabem em 79 colunas: tests/test_06_gpt2.py confere). Nada aqui é
conceito de lição: quem escolhe as peças e a ordem é a lição."""
from __future__ import annotations

import inspect
from pathlib import Path

from .caminhos import RAIZ
from .console import dizer, inteiro, pct, plural, quebrar

__all__ = ["fonte", "mostrar"]


def fonte(objeto):
    """(arquivo, primeira linha, linhas do código) de uma peça, lidos do próprio arquivo."""
    objeto = inspect.unwrap(objeto)                    # sob um decorador, a função dele
    linhas, inicio = inspect.getsourcelines(objeto)
    return inspect.getsourcefile(objeto), inicio, [l.rstrip("\n") for l in linhas]


def mostrar(pecas, de_onde: str) -> int:
    """A fonte de cada peça de `pecas` ([(lição, objeto)], na ordem das lições), com o
    arquivo e a linha; de_onde diz quem as monta ('as lições 03 a 06')."""
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
        "das lições e como estão neles."))
    licao_anterior = None
    for numero, nome, arquivo, inicio, linhas in pecas:
        if numero != licao_anterior:
            dizer(f"\n# {'=' * 20} lição {numero}: {curto(arquivo)}")
            licao_anterior = numero
        dizer(f"\n# {nome}: linhas {inicio} a {inicio + len(linhas) - 1} "
              f"({plural(len(linhas), 'linha')})")
        dizer("\n".join(linhas))
    dizer(f"\n# {plural(len(pecas), 'peça')}, {plural(total, 'linha')}: "
          f"{pct(total / nos_arquivos)} das {inteiro(nos_arquivos)} linhas dos "
          f"{len(arquivos)} arquivos.")
    dizer("# O resto dos arquivos: os experimentos que medem e conferem estas peças.")
    return 0
