"""conferir() (lab/comum/conferir.py): diz ao aluno o que difere da referência."""
from __future__ import annotations

import torch


def test_conferir_diz_o_que_difere(capsys):
    from comum import conferir  # a função (o módulo é comum.conferir)

    x = torch.arange(6.0).reshape(2, 3)
    assert conferir(lambda t: t * 2, lambda t: t + t, [x], dica="nenhuma")
    assert "confere com a referência nas 1 entradas" in capsys.readouterr().out
    assert not conferir(lambda t: t[:, :2], lambda t: t, [x], dica="não corte")
    saida = " ".join(capsys.readouterr().out.split())
    assert "a forma difere: a sua (2, 2), a referência (2, 3)" in saida and "Dica: não corte" in saida
    errado = lambda t: t + (t == 4).float()  # noqa: E731
    assert not conferir(errado, lambda t: t, [x])
    saida = " ".join(capsys.readouterr().out.split())
    assert "1 de 6 valores diferem" in saida and "posição (1, 1)" in saida
    assert "a sua dá 5,0000, a referência 4,0000" in saida

    def quebra(t):
        return t @ t

    assert not conferir(quebra, lambda t: t, [x])
    saida = capsys.readouterr().out
    assert "deu erro" in saida and "na função quebra" in saida and "return t @ t" in saida
