"""ferramentas/outra_cpu.py: roda uma lição em outra CPU e compara as duas saídas."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import RAIZ


def test_ferramenta_outra_cpu_compara_as_duas_execucoes():
    """ferramentas/outra_cpu.py: uma lição sem contas de ponto flutuante instáveis
    não muda em nenhuma linha (as de tempo não contam)."""
    r = subprocess.run([sys.executable, "ferramentas/outra_cpu.py", "lab/09_scaling.py",
                        "--so", "2"], cwd=RAIZ, capture_output=True, timeout=300,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"})
    saida = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0 and "Nenhuma linha muda" in saida, saida
    assert int(saida.split("(")[1].split()[0]) > 5  # comparou a saída de verdade
