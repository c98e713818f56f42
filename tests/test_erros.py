"""O erro do aluno (lab/comum/erros.py): em português, com o arquivo e a linha do código dele
(não do encanamento); LAB_TRACEBACK=1 mostra o traceback inteiro."""
from __future__ import annotations

import os
import subprocess
import sys

from comum import erros
from conftest import ENCANAMENTO
from copia_do_aluno import LICAO_DO_ALUNO, lab_copiado, rodar_licao_do_aluno


def test_erro_no_codigo_do_aluno_mostra_arquivo_e_linha(tmp_path):
    """Qualquer exceção (RuntimeError do torch, TypeError do Python) sai em português com o
    quadro mais interno do código do aluno (arquivo:linha, função, a linha); os outros
    experimentos rodam; o resumo lista as falhas; sem "Próximo passo"; saída 1."""
    r, saida, erros = rodar_licao_do_aluno(tmp_path)
    assert r.returncode == 1 and "Traceback" not in saida + erros, saida + erros
    fonte = LICAO_DO_ALUNO.splitlines()
    linha_forward = 1 + fonte.index("        return self.c_proj(self.c_fc(x))")
    linha_tipo = 1 + fonte.index("    print(n + 1)")
    assert "FALHOU: RuntimeError: mat1 and mat2 shapes cannot be multiplied" in saida
    assert f"  em meu_98.py:{linha_forward}, na função forward:\n" \
           "    return self.c_proj(self.c_fc(x))" in saida
    assert "FALHOU: TypeError: unsupported operand" in saida
    assert f"  em meu_98.py:{linha_tipo}, na função exp_tipo:\n    print(n + 1)" in saida
    assert "o terceiro rodou" in saida
    assert "1 de 3 experimentos rodou." in saida
    assert "  falhou: 1. um erro de forma" in saida and "  falhou: 2. um TypeError" in saida
    assert f"(meu_98.py:{linha_tipo})" in saida
    assert "Próximo passo" not in saida
    assert all(len(linha) <= 80 for linha in saida.splitlines()
               if not linha.startswith(("FALHOU: Runtime", "    RuntimeError"))), saida


def test_lab_traceback_mostra_o_traceback_inteiro(tmp_path):
    r, saida, erros = rodar_licao_do_aluno(tmp_path, "--so", "2", env={"LAB_TRACEBACK": "1"})
    assert r.returncode == 1 and "Traceback (most recent call last)" in erros
    assert "TypeError" in erros and "o terceiro rodou" not in saida


def test_o_encanamento_e_lido_da_pasta():
    """A lista dos arquivos que não são do aluno sai da pasta lab/ (um módulo novo do
    encanamento conta sozinho), não de uma lista mantida à mão."""
    assert erros.encanamento() == {p.name for p in ENCANAMENTO}
    assert {"licao.py", "caminhos.py", "opcoes.py", "erros.py", "processo.py",
            "paginas.py"} <= erros.encanamento()


def test_a_copia_do_aluno_dentro_de_lab_continua_dele(tmp_path):
    """A cópia do aluno mora em lab/ ao lado do encanamento, sem número no nome (meu_98.py):
    o erro ainda aponta a linha dela, não a do roteiro que a chamou."""
    copia = lab_copiado(tmp_path) / "meu_98.py"
    copia.write_text(LICAO_DO_ALUNO, encoding="utf-8")
    r = subprocess.run([sys.executable, str(copia), "--so", "2", "--sem-figuras"], cwd=tmp_path,
                       capture_output=True, timeout=120,
                       env={**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"})
    saida = r.stdout.decode("utf-8")
    linha = 1 + LICAO_DO_ALUNO.splitlines().index("    print(n + 1)")
    assert r.returncode == 1 and "Traceback" not in saida, saida
    assert f"  em lab/meu_98.py:{linha}, na função exp_tipo:\n    print(n + 1)" in saida, saida
