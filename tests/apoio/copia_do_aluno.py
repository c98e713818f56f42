"""O que o aluno escreve e roda fora das lições do lab:

- copia_da_licao() e rodar_copia(): a cópia de uma lição que ele editou (lab/meu_05.py, com
  uma troca de texto feita como no editor), rodada como ele a rodaria, da raiz da cópia;
- rodar_trecho(): um trecho de Python de uma apostila (`python -c`), da raiz do lab;
- LICAO_DO_ALUNO e rodar_licao_do_aluno(): uma lição escrita por ele (meu_98.py) com dois
  erros, para test_erros (o arquivo e a linha do erro) e test_opcoes (as opções declaradas).

As duas primeiras rodam num filho do interpretador quente (tests/apoio/licao_quente.py: o
torch já importado), sem guardar nada. A meu_98 roda sempre num processo novo: é ela que
prova que o erro do aluno sai com o arquivo e a linha num Python de verdade.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import sessao
from conftest import RAIZ, Execucao, ambiente_de_aluno


def lab_copiado(pasta: Path) -> Path:
    """pasta/lab: uma cópia de lab/ (as lições, o encanamento e os dados), como a pasta de
    um aluno que baixou o lab e vai editar uma lição."""
    lab = pasta / "lab"
    lab.mkdir(parents=True, exist_ok=True)
    for arquivo in (RAIZ / "lab").glob("*.py"):
        shutil.copy(arquivo, lab / arquivo.name)
    for dados in ("comum", "dados", "html"):
        shutil.copytree(RAIZ / "lab" / dados, lab / dados, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return lab


def copia_da_licao(pasta: Path, script: str, *trocas: tuple[str, str],
                   nome: str | None = None) -> Path:
    """pasta/lab/meu_NN.py: lab/<script> com cada troca (de, para) feita no texto, ao lado
    de uma cópia de lab/ (o encanamento, as lições que ela importa e os dados). Cada `de`
    aparece exatamente uma vez no original (senão a troca do aluno seria ambígua)."""
    lab = lab_copiado(pasta)
    texto = (RAIZ / "lab" / script).read_text(encoding="utf-8")
    for de, para in trocas:
        assert texto.count(de) == 1, f"{script}: {de!r} aparece {texto.count(de)} vezes"
        texto = texto.replace(de, para)
    copia = lab / (nome or f"meu_{script[:2]}.py")
    copia.write_text(texto, encoding="utf-8")
    return copia


def rodar_copia(copia: Path, *args, env=None, cwd: Path | None = None,
                timeout: float = 240) -> Execucao:
    """`python lab/meu_NN.py *args` da raiz da cópia (ou de cwd), no ambiente de um aluno
    (cp1252, 80 colunas, sem cores; env por cima)."""
    ambiente = ambiente_de_aluno(env)
    codigo, saida, erros = sessao.rodar_sem_guardar([copia, *args], ambiente,
                                                    cwd or copia.parent.parent, timeout)
    return Execucao([sys.executable, str(copia), *args], codigo, saida, erros)


def rodar_trecho(codigo: str, raiz: Path = RAIZ, env=None, timeout: float = 180) -> str:
    """Um trecho de Python de uma apostila (`python -c`), rodado da pasta raiz do lab (ou da
    raiz de uma cópia), em UTF-8 e 80 colunas: o que ele imprime, sem os brancos das pontas.
    Um erro no trecho faz o teste falhar com o stderr dele."""
    ambiente = {k: v for k, v in os.environ.items() if not k.startswith("LAB_TESTES_")}
    ambiente.update({"COLUMNS": "80", "PYTHONIOENCODING": "utf-8", **(env or {})})
    r, saida, erros = sessao.rodar_sem_guardar(["-c", codigo], ambiente, raiz, timeout)
    assert r == 0, erros.decode("utf-8", "replace")
    return saida.decode("utf-8").strip()


LICAO_DO_ALUNO = '''
import sys
from comum.licao import Licao, opcao, inteiro_entre

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


def rodar_licao_do_aluno(tmp_path, *args, env=None):
    copia = tmp_path / "meu_98.py"
    copia.write_text(LICAO_DO_ALUNO, encoding="utf-8")
    ambiente = {**os.environ, "PYTHONPATH": str(RAIZ / "lab"), "PYTHONIOENCODING": "utf-8",
                "NO_COLOR": "1", "COLUMNS": "80", **(env or {})}
    r = subprocess.run([sys.executable, str(copia), "--sem-figuras", *args], cwd=tmp_path,
                       capture_output=True, env=ambiente, timeout=120)
    return r, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")
