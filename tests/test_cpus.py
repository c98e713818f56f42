"""Os números citados nas apostilas valem em todas as variantes de CPU, e a maquinaria
que deixa a suíte rápida não muda o que os testes veem.

- test_marcados_em_outra_cpu[variante]: roda de novo, num pytest filho com as variáveis
  da variante (postas antes de o torch começar), todos os testes marcados com
  @pytest.mark.cpus (os que conferem números citados que saem de contas do torch), entre
  eles os blocos <!-- saida --> das lições com contas no torch (tests/test_apostilas.py).
- o interpretador quente (tests/apoio/licao_quente.py) imprime, byte a byte, o que um processo
  novo imprime, também com duas threads, nos códigos de saída 1 e 2, num console cp1252
  servido por um servidor que subiu em UTF-8, e na cópia de uma lição e no trecho de
  `python -c` que tests/apoio/copia_do_aluno.py roda nele;
- a chave das execuções guardadas muda quando muda uma pasta citada nos argumentos.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import cpus
import licao_quente
import sessao
from conftest import RAIZ, VARIANTES_CPU, ambiente_de_aluno, rodar_script

OUTRAS = [nome for nome in VARIANTES_CPU if nome != "padrao"]


@pytest.mark.parametrize("variante", OUTRAS)
def test_marcados_em_outra_cpu(variante, request, tmp_path):
    """Todo teste marcado com @pytest.mark.cpus passa também nesta variante de CPU."""
    marcados = [item for item in request.session.items if item.get_closest_marker("cpus")]
    arquivos = sorted({str(item.path) for item in marcados})
    if not arquivos:                       # rodado sozinho (-k): procura em todos
        arquivos = [str(RAIZ / "tests")]
    ambiente = dict(os.environ, LAB_TESTES_VARIANTE=variante, **VARIANTES_CPU[variante])
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider",
         "-m", "cpus", "-q", "-rfE", "--no-header", "--tb=short",
         "--basetemp", str(tmp_path / "base"), *arquivos],
        cwd=RAIZ, capture_output=True, env=ambiente, timeout=3000)
    saida = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0, (
        f"com {cpus.descrever(variante)}, testes marcados com @pytest.mark.cpus falham "
        f"(um número citado que muda com o arredondamento: cite uma faixa ou um veredito "
        f"que valha em todas as variantes):\n{saida[-6000:]}")
    passaram = re.search(r"(\d+) passed", saida)
    assert passaram and int(passaram.group(1)) >= len(marcados), saida[-3000:]


def test_variantes_desta_maquina_e_de_outras():
    """A lista sai da mesma regra em qualquer máquina: avx2 só onde o padrão é mais
    largo; a de threads que repete a base sai."""
    um = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert list(cpus.variantes(um, capacidade="AVX2", threads=1)) == [
        "padrao", "generico", "mkl_compativel", "dois_threads"]
    assert list(cpus.variantes(um, capacidade="AVX512", threads=1)) == [
        "padrao", "generico", "avx2", "mkl_compativel", "dois_threads"]
    assert list(cpus.variantes({}, capacidade="DEFAULT", threads=2)) == [
        "padrao", "generico", "mkl_compativel", "um_thread"]
    # nos testes: um thread de conta, e as variantes que esta máquina tem
    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "1"
    import torch

    assert torch.get_num_threads() == 1
    assert "dois_threads" in VARIANTES_CPU
    # os kernels genéricos, a menos que a base já os use (a suíte toda rodada com
    # ATEN_CPU_CAPABILITY=default: aí a variante repetiria a base e sai)
    assert ("generico" in VARIANTES_CPU) == (os.environ.get("ATEN_CPU_CAPABILITY") != "default")
    assert ("avx2" in VARIANTES_CPU) == cpus.acima_de_avx2(
        torch.backends.cpu.get_cpu_capability())


# ------------------------------------------------------------ o interpretador quente
TEMPO = re.compile(rb"\d+,\d+ s\b")


def _novo(argv, ambiente, cwd=RAIZ):
    r = subprocess.run([sys.executable, *argv], cwd=cwd, env=ambiente, capture_output=True,
                       input=b"", timeout=600)
    return r.returncode, r.stdout, r.stderr


# (variante, casos): com duas threads basta o treino, que é onde elas entram. Os servidores
# sobem em UTF-8; as execuções da base, num console cp1252 (o filho troca a codificação,
# como um servidor da suíte que atende os dois), as de duas threads, em UTF-8.
QUENTE = [
    ("padrao", [["lab/05_block.py", "--so", "1,2", "--passos", "3", "--sem-figuras"],
                ["lab/06_gpt2.py", "--so", "2", "--sem-figuras"],
                ["lab/04_multihead.py", "--so", "4", "--modelo", "{nada}", "--sem-figuras"],
                ["lab/03_attention.py", "--so", "9"]]),
    ("dois_threads", [["lab/05_block.py", "--so", "1,2", "--passos", "3", "--sem-figuras"]]),
]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="sem fork (Windows): o interpretador "
                    "quente não é usado, toda lição roda num processo novo")
@pytest.mark.parametrize("variante, casos", QUENTE, ids=[v for v, _ in QUENTE])
def test_quente_igual_a_processo_novo(variante, casos, gpt2_pequeno, tmp_path):
    """Mesmas linhas (fora os tempos medidos), mesmo stderr, mesmo código de saída:
    treino (05), o modelo carregado pelo transformers (06), um experimento pulado (saída
    1) e um uso errado (saída 2); na base, em cp1252 num servidor que subiu em UTF-8."""
    extra = cpus.DOIS_THREADS if variante == "dois_threads" else {}
    ambiente = ambiente_de_aluno({"PYTHONIOENCODING": "utf-8", "LAB_MODELO": str(gpt2_pequeno),
                                  **extra})
    partida = {k: v for k, v in ambiente.items() if k not in sessao.SEGURAS}
    servidor = licao_quente.Servidor(partida, RAIZ)
    if variante == "padrao":
        ambiente["PYTHONIOENCODING"] = "cp1252"
    try:
        codigos = []
        for argv in casos:
            argv = [str(RAIZ / argv[0])] + [a.format(nada=tmp_path / "nada") for a in argv[1:]]
            quente = servidor.rodar(argv, ambiente, timeout=600)[:3]
            novo = _novo(argv, ambiente)
            assert quente[0] == novo[0], (argv, quente, novo)
            assert TEMPO.sub(b"N s", quente[1]) == TEMPO.sub(b"N s", novo[1]), argv
            assert quente[2] == novo[2], argv
            codigos.append(novo[0])
        assert codigos == [0, 0, 1, 2][:len(casos)]
    finally:
        servidor.fechar()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="sem fork (Windows): tudo num processo novo")
def test_copia_do_aluno_e_trecho_no_quente_iguais_a_processo_novo(tmp_path):
    """O que tests/apoio/copia_do_aluno.py roda no interpretador quente: a cópia de uma
    lição com um erro (a mensagem com o arquivo e a linha do aluno, a saída 1), a mesma
    cópia com LAB_TRACEBACK=1 (o traceback inteiro) e um trecho de `python -c` que falha
    (o traceback do Python, com o "<string>"): byte a byte o de um processo novo."""
    from copia_do_aluno import copia_da_licao

    copia = copia_da_licao(tmp_path, "05_block.py", ("self.c_proj = nn.Linear(4 * d, d)",
                                                     "self.c_proj = nn.Linear(d, d)"))
    trecho = ("import pickle, sys, torch\ndef f():\n    pass\n"        # f: do __main__ do trecho
              "print(sys.argv, sys.path[0] == '', len(pickle.dumps(f)))\ntorch.zeros(2) @ None\n")
    casos = [([copia, "--so", "1", "--sem-figuras"], {}),
             ([copia, "--so", "1", "--sem-figuras"], {"LAB_TRACEBACK": "1"}),
             (["-c", trecho, "a"], {})]
    for argv, extra in casos:
        ambiente = ambiente_de_aluno({"PYTHONIOENCODING": "utf-8", **extra})
        quente = sessao.rodar_sem_guardar(argv, ambiente, tmp_path)
        novo = _novo([str(a) for a in argv], dict(ambiente), cwd=tmp_path)
        assert quente[0] == novo[0] == 1, (argv, quente, novo)
        assert TEMPO.sub(b"N s", quente[1]) == TEMPO.sub(b"N s", novo[1]), argv
        assert quente[2] == novo[2], (quente[2].decode(), novo[2].decode())
    execucoes = [json.loads(linha) for linha in
                 (sessao.pasta() / "execucoes.log").read_text(encoding="utf-8").splitlines()]
    modos = [e["modo"] for e in execucoes if "modo" in e and e.get("teste", "").endswith(
        "test_copia_do_aluno_e_trecho_no_quente_iguais_a_processo_novo")]
    assert modos[-3:] == ["quente"] * 3, modos       # e não caiu num processo novo


def test_pasta_mudada_nao_reusa_a_execucao_guardada(gpt2_pequeno, tmp_path):
    """A mesma linha de comando com a mesma pasta, depois de o teste apagar o tokenizador
    dela: a chave muda e a lição roda de novo (e agora explica o que falta)."""
    pasta = tmp_path / "modelo"
    shutil.copytree(gpt2_pequeno, pasta)
    args = ("05_block.py", "--so", "3", "--modelo", str(pasta), "--sem-figuras")
    antes = rodar_script(*args)
    assert antes.returncode == 0, antes.saida + antes.erros
    for arquivo in ("tokenizer.json", "tokenizer_config.json"):
        (pasta / arquivo).unlink()
    depois = rodar_script(*args)
    assert depois.returncode == 1 and "não o tokenizador" in " ".join(depois.saida.split())
