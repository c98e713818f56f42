"""Base dos testes: um thread de conta, GPT-2 pequenos offline e lições rodadas uma vez.

Nenhum teste usa a rede. Os modelos são de verdade (transformers' GPT2LMHeadModel), só
que pequenos e com pesos aleatórios (ferramentas/modelos_de_teste.py).

Um thread de conta em todo processo de teste e em toda lição que ele roda: as variáveis
OMP_NUM_THREADS=1 e MKL_NUM_THREADS=1 entram aqui, antes de qualquer import do torch, e
os subprocessos as herdam (numa máquina de 2 núcleos com outro processo de teste ao lado,
duas threads por processo deixam um treino dezenas de vezes mais lento). Um pytest filho
de tests/test_cpus.py (LAB_TESTES_VARIANTE=nome) usa as variáveis daquela variante de
CPU por cima, inclusive a de duas threads (ferramentas/cpus.py).

A mesma lição, com a mesma configuração, roda uma vez na sessão inteira: rodar_script()
guarda o código de saída e a saída numa pasta comum aos processos do xdist. A chave, quando
vale a execução guardada e quando a lição roda num interpretador quente: a docstring de
tests/apoio/sessao.py (o lugar dessas regras). Para outros cálculos caros que vários testes
repetem (treinos da lição 05...): compartilhado(chave, funcao); para um modelo de teste
numa pasta que todos os processos veem: modelo_compartilhado(nome, construir).

Marcador @pytest.mark.cpus: um teste que confere um número citado numa apostila e que
sai de contas do torch; tests/test_cpus.py o roda de novo em cada variante de CPU.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(RAIZ / "lab"))
sys.path.insert(0, str(RAIZ / "ferramentas"))
# a infraestrutura dos testes (não são testes): `from sessao import ...`, `import navegador`
sys.path.insert(0, str(RAIZ / "tests" / "apoio"))
os.environ["HF_HUB_OFFLINE"] = "1"

# O bytecode do lab, gravado aqui uma vez: com PYTHONDONTWRITEBYTECODE=1 (comum em contêineres
# e CIs), cada lição que a suíte roda compilaria de novo as lições que importa (uns 70 ms de
# CPU numa execução da 13). Cada processo lê o .pyc, que o Python confere pela data e pelo
# tamanho da fonte; é o que um aluno sem a variável já tem depois da primeira execução.
import compileall  # noqa: E402

compileall.compile_dir(RAIZ / "lab", quiet=1)

import cpus  # noqa: E402

VARIANTE = os.environ.get("LAB_TESTES_VARIANTE")  # num pytest filho de test_cpus.py
os.environ.update(cpus.UM_THREAD)
if VARIANTE:
    os.environ.update(cpus.VARIANTES[VARIANTE][0])

import pytest  # noqa: E402
import torch  # noqa: E402  (depois das variáveis: o torch as lê ao começar)

torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

# As variantes de CPU desta máquina, {nome: variáveis} (a primeira, "padrao", é a base).
# Num pytest filho de test_cpus.py, só a dele: ninguém roda variantes de variantes.
VARIANTES_CPU = {"padrao": {}} if VARIANTE else cpus.variantes(
    os.environ, capacidade=torch.backends.cpu.get_cpu_capability(),
    threads=torch.get_num_threads())

import sessao  # noqa: E402
from modelos_de_teste import (TEXTO_TREINO, construir_gpt2,  # noqa: E402,F401
                              construir_tokenizador)
from sessao import compartilhado, pasta_da_sessao  # noqa: E402,F401

modelo_compartilhado = sessao.pasta_de_modelo


@pytest.fixture(scope="session", autouse=True)
def _pasta_da_sessao(tmp_path_factory):
    """A pasta que os processos da sessão compartilham (e os servidores quentes fecham
    no fim)."""
    sessao.definir_pasta(tmp_path_factory)
    yield
    sessao.fechar_servidores()


@pytest.fixture(scope="session")
def gpt2_pequeno() -> Path:
    """Pasta com um GPT-2 de 3 camadas, d = 64, 4 cabeças, e seu tokenizador (a mesma
    pasta para todos os processos da sessão)."""
    return modelo_compartilhado("gpt2_pequeno", construir_gpt2)


@pytest.fixture(scope="session")
def gpt2_12_camadas() -> Path:
    """GPT-2 de teste com 12 camadas, como o gpt2 de verdade (tabelas por camada do
    tamanho das da aula)."""
    return modelo_compartilhado("gpt2_12_camadas", lambda p: construir_gpt2(p, camadas=12))


def ambiente_de_aluno(env=None) -> dict:
    """O ambiente de um aluno: sem cores, console cp1252, 80 colunas, sem rede."""
    ambiente = {k: v for k, v in os.environ.items() if not k.startswith("LAB_TESTES_")}
    ambiente.update({"NO_COLOR": "1", "PYTHONIOENCODING": "cp1252", "COLUMNS": "80",
                     "HF_HUB_OFFLINE": "1"})
    ambiente.pop("LAB_MODELO", None)
    if env:
        ambiente.update(env)
    return ambiente


class Execucao:
    """O que subprocess.run devolveria, e a saída decodificada como no console cp1252
    (saida, erros)."""

    def __init__(self, args, returncode, stdout, stderr):
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr
        self.saida = stdout.decode("cp1252", errors="replace")
        self.erros = stderr.decode("cp1252", errors="replace")


def _tem_surrogate(texto: str) -> bool:
    try:
        texto.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def rodar_script(script: str, *args, env=None, entrada: str | None = None, timeout=240,
                 guardar: bool = True) -> Execucao:
    """Roda lab/<script> como um aluno: subprocesso, sem cores, console cp1252.

    A mesma configuração roda uma vez por sessão (as regras: tests/apoio/sessao.py);
    guardar=False: um processo novo, sempre."""
    ambiente = ambiente_de_aluno(env)
    caminho = RAIZ / "lab" / script
    # Bytes num argumento (um terminal que não manda UTF-8): vão crus, num processo novo.
    # Idem para um texto com surrogates (bytes crus decodificados com surrogateescape).
    brutos = any(isinstance(a, bytes) or (isinstance(a, str) and _tem_surrogate(a)) for a in args)
    codigo, saida, erros = sessao.rodar(caminho, [a if brutos else str(a) for a in args],
                                        ambiente, entrada, timeout=timeout,
                                        guardar=guardar and not brutos,
                                        citados=list((env or {}).values()))
    return Execucao([sys.executable, str(caminho), *args], codigo, saida, erros)


# O encanamento do lab (lab/comum/): uma cópia de lição precisa dele ao lado.
ENCANAMENTO = sorted((RAIZ / "lab" / "comum").glob("*.py"))


def pytest_collection_modifyitems(session, config, items):
    """Os testes mais longos (o treino padrão da lição 10 e as reexecuções em outras CPUs)
    começam primeiro, repartidos entre os dois processos do xdist: com --dist worksteal, o
    primeiro processo recebe a primeira metade da lista e o segundo a outra, cada um na
    ordem; um teste longo no fim deixaria um processo sozinho, e todos os longos na mesma
    metade fariam uma fila de minutos num processo só (os 100 primeiros passos em outra CPU
    ainda esperariam pelo treino padrão)."""
    # As páginas dos treinos padrão (10, 11) logo depois dos testes que fazem esses treinos
    # (tests/apoio/treinos.py): no mesmo processo, que já tem o treino guardado, em vez de o
    # outro processo ficar parado esperando por ele.
    for pagina, depois_de in (("test_10_paginas.py", "test_o_treino_padrao_cumpre"),
                              ("test_11_paginas.py", "test_11_inducao.py")):
        movidos = [item for item in items if item.path.name == pagina]
        resto = [item for item in items if item.path.name != pagina]
        antes = [k for k, item in enumerate(resto)
                 if item.path.name == depois_de or item.name.startswith(depois_de)]
        if movidos and antes:
            items[:] = resto[:antes[-1] + 1] + movidos + resto[antes[-1] + 1:]
    # O treino padrão (com as páginas dele atrás) e uma reexecução abrem a primeira metade;
    # as outras reexecuções, a segunda.
    treino = [item for item in items if item.name.startswith("test_o_treino_padrao_cumpre")
              or item.path.name == "test_10_paginas.py"]
    outras = [item for item in items if item.name.startswith("test_marcados_em_outra_cpu")]
    resto = [item for item in items if item not in treino and item not in outras]
    primeira = treino + outras[:1]
    segunda = outras[1:]
    k = max(0, len(items) // 2 - len(primeira))
    items[:] = primeira + resto[:k] + segunda + resto[k:]
