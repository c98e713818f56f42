"""As opções da linha de comando (lab/comum/opcoes.py): a ajuda e os erros de uso em português,
em 80 colunas, os validadores (inteiro_entre, real_entre...)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from comum import opcoes
from conftest import RAIZ, rodar_script
from copia_do_aluno import rodar_licao_do_aluno


def test_ajuda_em_portugues_e_sem_torch():
    codigo = (
        "import sys, runpy\n"
        "sys.argv = ['lab/05_block.py', '--help']\n"
        "try:\n    runpy.run_path('lab/05_block.py', run_name='__main__')\n"
        "except SystemExit as s:\n    print('saida', s.code)\n"
        "print('torch importado:', 'torch' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ, capture_output=True,
                       text=True, env={"PYTHONPATH": str(RAIZ / "lab"), "PATH": ""})
    assert "uso:" in r.stdout and "mostra esta ajuda" in r.stdout
    assert "[--so 2,4]" in r.stdout and "  --so 2,4  " in r.stdout
    assert "saida 0" in r.stdout
    assert "torch importado: False" in r.stdout


@pytest.mark.parametrize("args, trecho", [
    (["--so", "9"], "não há experimento 9"),
    (["--so", "abc"], "não é uma lista de números"),
    (["--semente", "x"], "não é um número inteiro"),
    (["--semente", "-1"], "fora do intervalo"),
    (["--semente", str(2**32)], "fora do intervalo"),
    (["--nao-existe"], "argumentos desconhecidos"),
])
def test_uso_errado_sai_com_2_e_explica(args, trecho):
    r = rodar_script("05_block.py", *args)
    assert r.returncode == 2
    assert trecho in r.erros
    assert "Traceback" not in r.erros + r.saida


def test_real_entre_com_sufixos_e_limites_legiveis():
    """real_entre(sufixos=True) lê as quantidades como as lições as escrevem (70B, 1,4T),
    no mesmo número que a notação científica; os limites saem como o aluno os digitaria
    (1e30, não 1e+30) e um mínimo excluído diz "maior que"."""
    import argparse

    ler = opcoes.real_entre(0, 1e30, "--tokens 1e13", sufixos=True)
    assert ler("1,4T") == 1.4e12 and ler("15T") == 15e12 and ler(" 70B ") == 70e9
    assert ler("400M") == 400e6 and ler("8k") == ler("8K") == 8000 and ler("2,5e12") == 2.5e12
    for ruim, motivo in (("T", "'T' não é um número"), ("1e3T", "não é um número"),
                         ("5b", "não é um número"), ("2e30", "use um número entre 0 e 1e30"),
                         ("-1B", "-1B está fora do intervalo")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(motivo)):
            ler(ruim)
    with pytest.raises(argparse.ArgumentTypeError, match="não é um número"):
        opcoes.real_entre(0, 10)("7B")                    # sem sufixos=True, 7B não é número
    positivo = opcoes.real_entre(0, 1e30, inclui_minimo=False)
    with pytest.raises(argparse.ArgumentTypeError, match="use um número maior que 0 e até 1e30"):
        positivo("0")
    assert [opcoes._g(x) for x in (1e-5, 0.001, 1.5, 1e30, 2.5e12, 30)] == \
        ["1e-5", "0,001", "1,5", "1e30", "2,5e12", "30"]


def test_figuras_vao_para_a_pasta_do_lab(tmp_path):
    """O padrão de --figuras não depende de onde o aluno está no terminal."""
    p = opcoes.criar_parser("x", "x", [])
    assert Path(p.parse_args([]).figuras) == RAIZ / "figuras"


@pytest.mark.parametrize("script", sorted(p.name for p in (RAIZ / "lab").glob("[0-9][0-9]_*.py")))
def test_ajuda_cabe_em_80_colunas(script):
    """Nenhuma linha do --help passa de 80 colunas com COLUMNS=80 (eram 117), nem com
    um LAB_MODELO comprido."""
    r = rodar_script(script, "--help", env={"PYTHONIOENCODING": "utf-8",
                                            "LAB_MODELO": "/tmp/" + "m" * 120})
    assert r.returncode == 0, r.erros
    longas = [l for l in r.stdout.decode("utf-8").splitlines() if len(l) > 80]
    assert not longas, longas


def test_ajuda_quebra_linhas_longas_da_descricao_com_recuo():
    fmt = opcoes._Formatador("x", width=40)
    texto = fmt._fill_text("Experimentos:\n  1. " + "palavra " * 12, 40, "")
    linhas = texto.splitlines()
    assert linhas[0] == "Experimentos:" and linhas[1].startswith("  1. palavra")
    assert all(len(l) <= 40 for l in linhas) and linhas[2].startswith("     palavra")


def test_opcao_declarada_valida_em_portugues(tmp_path):
    r, saida, erros = rodar_licao_do_aluno(tmp_path, "--camadas", "99")
    assert r.returncode == 2 and "Traceback" not in erros
    assert "erro: opção --camadas: 99 está fora do intervalo; use um inteiro de 1 a 64" in erros
    assert "(exemplo: --camadas 4)" in erros
    assert all(len(linha) <= 80 for linha in erros.splitlines()), erros
    r, saida, _ = rodar_licao_do_aluno(tmp_path, "--help")
    assert r.returncode == 0 and "--camadas N" in saida and "camadas (padrão: 2)" in saida
    assert "LAB_TRACEBACK=1" in saida


@pytest.mark.parametrize("args, trecho", [
    (["--so"], "esperava um valor"),
    (["--semente", "4294967295"], "use um inteiro de 0 a 2147483647"),
    (["--semente", "-1"], "use um inteiro de 0 a 2147483647"),
    (["--xyz"], "argumentos desconhecidos: --xyz"),
])
def test_mensagens_do_argparse_em_portugues(tmp_path, args, trecho):
    r, _, erros = rodar_licao_do_aluno(tmp_path, *args)
    assert r.returncode == 2 and trecho in " ".join(erros.split()), erros
    assert "expected" not in erros and "argument " not in erros
    assert all(len(linha) <= 80 for linha in erros.splitlines()), erros


def test_nargs_em_portugues():
    p = opcoes.criar_parser("x", "x", [])
    p.add_argument("--ids", nargs="+", type=int)
    with pytest.raises(SystemExit):
        p.parse_args(["--ids"])


def test_para_ajuda_e_um_comando_que_roda(tmp_path):
    """Issue 40: depois de um uso errado, 'Para ajuda: lab/10_treino.py --help' não rodava
    colado no terminal (o arquivo não é executável). Agora são as duas formas do README, e a
    do Linux, rodada como está, mostra a ajuda."""
    r = rodar_script("09_scaling.py", "--semente", "-1")
    assert r.returncode == 2
    ajuda = r.erros.split("Para ajuda:\n", 1)[1].splitlines()
    assert ajuda == ["  .venv\\Scripts\\python.exe lab\\09_scaling.py --help",
                     "  .venv/bin/python lab/09_scaling.py --help"], r.erros
    linux = ajuda[1].split()
    assert linux[0] == ".venv/bin/python"
    pedida = subprocess.run([sys.executable, *linux[1:]], cwd=RAIZ, capture_output=True,
                            text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert pedida.returncode == 0 and "Lição 09" in pedida.stdout, pedida.stderr
    assert opcoes.para_ajuda("ferramentas") == "Para ajuda: ferramentas --help"


def test_uso_errado_nao_quebra_o_exemplo(monkeypatch, capsys):
    """O exemplo de uma mensagem de uso errado fica numa linha só em qualquer largura (o
    aluno o copia inteiro); antes, '--d 2048' ia para a linha de baixo sem o 'exemplo:'."""
    p = opcoes.criar_parser("lab/99.py", "teste", ["um"],
                           [opcoes.opcao("--d", opcoes.inteiro_entre(1, 100_000, "--d 2048"),
                                        4096, "d")])
    for colunas in range(40, 101):
        monkeypatch.setenv("COLUMNS", str(colunas))
        with pytest.raises(SystemExit) as saida:
            p.parse_args(["--d", "-3"])
        assert saida.value.code == 2
        erro = capsys.readouterr().err.split("erro: ", 1)[1].split("\nPara ajuda")[0]
        assert "exemplo: --d 2048" in erro.splitlines()[-1], (colunas, erro)
        assert all(len(linha) < colunas for linha in ("erro: " + erro).splitlines()), erro


def test_aponta_um_gpt2(tmp_path):
    """O LAB_MODELO que a lição 13 não usa: um nome de GPT-2 do hub ou uma pasta cujo
    config.json diz model_type 'gpt2'; um Llama, um id qualquer ou uma pasta sem config, não."""
    for nome in ("gpt2", "gpt2-xl", "openai-community/gpt2-medium", "distilgpt2"):
        assert opcoes.aponta_um_gpt2(nome), nome
    for nome in ("TucanoBR/Tucano-160m", "gpt2x", str(tmp_path)):
        assert not opcoes.aponta_um_gpt2(nome), nome
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}', encoding="utf-8")
    assert opcoes.aponta_um_gpt2(str(tmp_path))
    (tmp_path / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    assert not opcoes.aponta_um_gpt2(str(tmp_path))
