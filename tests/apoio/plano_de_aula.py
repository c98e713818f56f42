"""O plano de aula das notas para o professor, conferido igual em toda apostila que o tem
(test_03_apostila e test_04_apostila)."""
from __future__ import annotations


def conferir_plano_de_90_minutos(apostila, experimentos):
    """As notas para o professor trazem um plano de 0 a 90 min, sem buraco, e cada --so do
    plano é um experimento que existe (a 03 e a 04 usam esta mesma conferência)."""
    import re

    texto = apostila.read_text(encoding="utf-8")
    notas = texto[texto.index("## Notas para o professor"):texto.index("## Respostas")]
    faixas = re.findall(r"^\| (\d+)–(\d+) min \| .*\|(.*)\|$", notas, re.M)
    assert faixas, "sem o plano de 90 minutos"
    inicio = 0
    for a, b, comando in faixas:
        assert int(a) == inicio and int(b) > int(a)
        inicio = int(b)
        for k in re.findall(r"--so (\d+)", comando):
            assert 1 <= int(k) <= experimentos
    assert inicio == 90
