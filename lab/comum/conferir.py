"""Confira o seu código contra o da lição, como os exercícios pedem.

    from comum import conferir
    L03 = importar_licao("03_attention")
    conferir(minha_atencao, lambda q, k, v: L03.atencao(q, k, v)[0],
             entradas=[(q, k, v)], dica="divida as notas por raiz(d_k) antes do softmax")

Roda as duas funções nas mesmas entradas e diz, em português, o que difere: um erro na
sua (com arquivo e linha), a forma, o tipo, ou o primeiro valor diferente (onde, quanto)
e quantos diferem; no fim, a dica. Devolve True quando tudo confere.
"""
from __future__ import annotations

from .console import cientifico, dizer, inteiro, num, quebrar
from .erros import erro_legivel

__all__ = ["conferir"]


def _como_tupla(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _descrever(x) -> str:
    forma = getattr(x, "shape", None)
    if forma is not None:
        return f"tensor {tuple(forma)} ({str(getattr(x, 'dtype', '')).replace('torch.', '')})"
    return f"{type(x).__name__} {x!r}"[:60]


def _comparar(sua, ref, tolerancia: float, onde: str) -> str | None:
    """None quando confere; senão, a frase que diz o que difere."""
    import torch

    if isinstance(ref, (tuple, list)):
        if not isinstance(sua, (tuple, list)) or len(sua) != len(ref):
            return (f"{onde}: a referência devolve {len(ref)} valores; a sua devolve "
                    f"{_descrever(sua)}")
        for i, (a, b) in enumerate(zip(sua, ref)):
            diferenca = _comparar(a, b, tolerancia, f"{onde}, valor {i + 1}")
            if diferenca:
                return diferenca
        return None
    if not torch.is_tensor(ref):
        return None if sua == ref else f"{onde}: a sua dá {sua!r}, a referência {ref!r}"
    if not torch.is_tensor(sua):
        return f"{onde}: a referência devolve um tensor; a sua devolve {_descrever(sua)}"
    if sua.shape != ref.shape:
        return (f"{onde}: a forma difere: a sua {tuple(sua.shape)}, a referência "
                f"{tuple(ref.shape)}")
    a, b = sua.detach().double(), ref.detach().double()
    erro = (a - b).abs()
    ruins = ~(erro <= tolerancia * (1 + b.abs()))          # NaN também conta como ruim
    if not ruins.any():
        return None
    primeiro = tuple(int(i) for i in ruins.nonzero()[0])
    return (f"{onde}: {inteiro(int(ruins.sum()))} de {inteiro(b.numel())} valores diferem "
            f"(tolerância {cientifico(tolerancia, 0)}). O primeiro, na posição {primeiro}: a "
            f"sua dá {num(float(a[primeiro]), 4)}, a referência {num(float(b[primeiro]), 4)}.")


def conferir(funcao, referencia, entradas, dica: str = "", tolerancia: float = 1e-6,
             nome: str | None = None) -> bool:
    """Roda funcao e referencia em cada entrada (uma tupla de argumentos, ou um argumento
    só) e imprime o que difere; True quando tudo confere."""
    nome = nome or getattr(funcao, "__name__", "a sua função")
    entradas = list(entradas)
    for n, entrada in enumerate(entradas, 1):
        args = _como_tupla(entrada)
        onde = f"entrada {n} de {len(entradas)}"
        esperado = referencia(*args)
        try:
            obtido = funcao(*args)
        except Exception as erro:  # noqa: BLE001 - o erro do aluno, com arquivo e linha
            texto, _ = erro_legivel(erro)
            dizer(f"{nome}: NÃO confere ({onde}): deu erro.")
            dizer(texto.replace("FALHOU: ", "  ", 1))
            _dica(dica)
            return False
        diferenca = _comparar(obtido, esperado, tolerancia, onde)
        if diferenca:
            dizer(quebrar(f"{nome}: NÃO confere. {diferenca}"))
            _dica(dica)
            return False
    dizer(f"{nome}: confere com a referência nas {len(entradas)} entradas.")
    return True


def _dica(dica: str) -> None:
    if dica:
        dizer(quebrar(f"Dica: {dica}"))
