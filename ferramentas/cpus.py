"""As "outras CPUs": o conjunto de variantes em que todo número citado tem de sair igual.

Alunos, CI e autores rodam em processadores diferentes (Intel com AVX-512, AMD, Apple),
cujos kernels arredondam diferente. Daqui não dá para rodar num Intel ou num Mac, mas dá
para trocar, uma de cada vez, cada peça que muda de uma máquina para outra:

- os kernels do PyTorch (ATen: somas, softmax, LayerNorm, GELU, elemento a elemento), que
  ele escolhe pela CPU: ATEN_CPU_CAPABILITY=default (os genéricos, sem AVX, como numa CPU
  sem AVX2 ou num ARM de vetor de 128 bits) e, numa máquina que usa os de AVX-512,
  ATEN_CPU_CAPABILITY=avx2 (os de uma CPU como esta; onde o padrão já é AVX2, seria a
  mesma execução e sai da lista);
- o BLAS (as multiplicações de matrizes do MKL), que também escolhe o caminho pela CPU:
  MKL_CBWR=COMPATIBLE (o caminho reproduzível, sem as instruções desta máquina);
- quantas threads de conta (OMP_NUM_THREADS e MKL_NUM_THREADS = 1 ou 2): uma soma
  repartida entre threads soma em outra ordem.

Por que uma peça de cada vez, e não o produto (3 x 2 x 2 = 12 execuções de cada
configuração): cada variável mexe num código diferente (kernels do ATen, BLAS, divisão
entre threads), então um número citado que depende do arredondamento de qualquer um deles
muda na variante que troca aquele código; a variante de uma peça só diz também qual peça
foi. O que o produto pegaria a mais são dois desvios pequenos que sozinhos não mudam o
dígito impresso e juntos mudam: é o caso de um número colado num limiar ou num
arredondamento, e a regra para esses (uma faixa, um veredito com margem) não depende de
qual combinação o empurrou. Cada variante a mais custa uma execução de cada configuração
citada nos testes; cinco (esta, genérica, AVX2 onde é outra, MKL compatível, uma e duas
threads) cobrem as peças sem multiplicar o tempo da suíte.

Quem usa: tests/conftest.py (um thread nos testes), tests/test_cpus.py (os testes
marcados com @pytest.mark.cpus, entre eles os blocos <!-- saida --> de
tests/test_apostilas.py) e ferramentas/outra_cpu.py (para achar as linhas que mudam antes
de escrever a apostila).
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys

# As variáveis que mudam as contas (lidas quando o torch e o MKL começam: valem só num
# processo novo).
VARIAVEIS = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

UM_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# OMP_WAIT_POLICY=PASSIVE: a thread sem trabalho dorme em vez de girar esperando. Não muda
# conta nenhuma (a divisão do trabalho entre as threads é a mesma), só o tempo: com outro
# processo ocupando um dos dois núcleos (a suíte roda em dois), 60 passos da lição 10 com
# duas threads levaram 116 s girando e 45 s dormindo, com a mesma saída.
DOIS_THREADS = {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE"}

# nome -> (variáveis que a variante põe sobre o ambiente de base, o que ela imita)
VARIANTES = {
    "padrao": ({}, "os kernels que o PyTorch escolhe para esta CPU"),
    "generico": ({"ATEN_CPU_CAPABILITY": "default"},
                 "os kernels genéricos do PyTorch, como numa CPU sem AVX2 ou num ARM"),
    "avx2": ({"ATEN_CPU_CAPABILITY": "avx2"},
             "os kernels de AVX2, como numa CPU sem AVX-512"),
    "mkl_compativel": ({"MKL_CBWR": "COMPATIBLE"},
                       "as multiplicações de matrizes do MKL no caminho reproduzível"),
    "um_thread": (UM_THREAD, "uma thread de conta"),
    "dois_threads": (DOIS_THREADS, "duas threads de conta"),
}


@functools.lru_cache(maxsize=None)
def perfil(capacidade: str | None = None, threads: str | None = None) -> tuple[str, int]:
    """(kernels que o PyTorch usa, threads de conta) num processo novo com o ambiente
    atual, mas ATEN_CPU_CAPABILITY = capacidade e OMP_NUM_THREADS = threads (None: sem a
    variável). Pergunta a um subprocesso: o processo atual pode já ter escolhido."""
    ambiente = {k: v for k, v in os.environ.items()
                if k not in ("ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    if capacidade:
        ambiente["ATEN_CPU_CAPABILITY"] = capacidade
    if threads:
        ambiente["OMP_NUM_THREADS"] = ambiente["MKL_NUM_THREADS"] = threads
    r = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability(),"
         " torch.get_num_threads())"], capture_output=True, text=True, env=ambiente,
        timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"não consegui perguntar ao PyTorch que kernels ele usa:\n{r.stderr}")
    nome, n = r.stdout.split()
    return nome.upper(), int(n)


def acima_de_avx2(capacidade: str) -> bool:
    """Os kernels nativos são mais largos que os de AVX2 (AVX512, AVX512_VNNI...)?"""
    return capacidade.upper().startswith("AVX512")


def variantes(base: dict | None = None, *, capacidade: str | None = None,
              threads: int | None = None) -> dict[str, dict]:
    """As variantes a rodar nesta máquina, {nome: variáveis}, começando por "padrao".

    base: o ambiente sobre o qual as variantes valem (padrão: os.environ). capacidade e
    threads: os kernels e as threads que a base usa (padrão: perguntar ao PyTorch num
    subprocesso). Sai da lista a variante que repete a base: "avx2" onde os kernels
    nativos já são os de AVX2 (ou de uma CPU que não é x86), "um_thread" ou
    "dois_threads" quando a base já usa esse número de threads."""
    base = dict(os.environ if base is None else base)
    if capacidade is None or threads is None:
        nativo = perfil(base.get("ATEN_CPU_CAPABILITY") or None,
                        base.get("OMP_NUM_THREADS") or None)
        capacidade = capacidade or nativo[0]
        threads = threads or nativo[1]
    escolhidas = {}
    for nome, (extra, _) in VARIANTES.items():
        if nome == "avx2" and not acima_de_avx2(capacidade):
            continue
        if "OMP_NUM_THREADS" in extra and int(extra["OMP_NUM_THREADS"]) == threads:
            continue
        if extra and all(base.get(k) == v for k, v in extra.items()):
            continue                              # a base já é essa variante
        escolhidas[nome] = dict(extra)
    return escolhidas


def descrever(nome: str) -> str:
    """'ATEN_CPU_CAPABILITY=default (os kernels genéricos...)' para mensagens."""
    extra, oque = VARIANTES[nome]
    variaveis = " ".join(f"{k}={v}" for k, v in extra.items())
    return f"{variaveis} ({oque})" if variaveis else oque
