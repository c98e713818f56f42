"""Uma lição do aluno (meu_98.py) com dois erros, e como rodá-la num terminal de aluno:
usada por test_erros (o arquivo e a linha do erro) e test_opcoes (as opções declaradas)."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import RAIZ

LICAO_DO_ALUNO = '''
import sys
from licao import Licao, opcao, inteiro_entre

LICAO = Licao("98", "a cópia do aluno", ["um erro de forma", "um TypeError", "roda"],
              opcoes=[opcao("--camadas", inteiro_entre(1, 64, "--camadas 4"), 2, "camadas")])
if __name__ == "__main__":
    LICAO.abrir()

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc, self.c_proj = nn.Linear(d, 4 * d), nn.Linear(d, d)  # o erro: 4 * d

    def forward(self, x):
        return self.c_proj(self.c_fc(x))


@LICAO.experimento(1)
def exp_forma(licao):
    MLP(8)(torch.randn(2, 8))


@LICAO.experimento(2)
def exp_tipo(licao):
    n = None
    print(n + 1)


@LICAO.experimento(3)
def exp_roda(licao):
    print("o terceiro rodou")


if __name__ == "__main__":
    sys.exit(LICAO.rodar())
'''


def rodar_copia(tmp_path, *args, env=None):
    copia = tmp_path / "meu_98.py"
    copia.write_text(LICAO_DO_ALUNO, encoding="utf-8")
    ambiente = {**os.environ, "PYTHONPATH": str(RAIZ / "lab"), "PYTHONIOENCODING": "utf-8",
                "NO_COLOR": "1", "COLUMNS": "80", **(env or {})}
    r = subprocess.run([sys.executable, str(copia), "--sem-figuras", *args], cwd=tmp_path,
                       capture_output=True, env=ambiente, timeout=120)
    return r, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")
