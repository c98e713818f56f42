"""O que uma sessão de testes compartilha entre arquivos e processos do pytest-xdist.

Esta docstring é o lugar das regras do cache da sessão; tests/conftest.py e tests/README.md
apontam para cá.

Tudo mora numa pasta da sessão (a pasta temporária comum aos processos do xdist, ou a da
sessão sem xdist; os pytest filhos de tests/test_cpus.py herdam a mesma pela variável
LAB_TESTES_COMPARTILHADO). Cada coisa é calculada por quem chega primeiro, atrás de uma
trava de arquivo (filelock), e lida do disco pelos outros:

- rodar() (o rodar_script() do conftest): a execução de uma lição (código de saída, stdout
  e stderr), guardada pela chave
    script + argumentos + o ambiente inteiro (fora as variáveis que mudam de um processo
    do pytest para outro: PYTEST_*, LAB_TESTES_*, _ e OLDPWD) + a entrada + o código do lab
    (codigo_do_lab: lab/*.py, lab/comum/, lab/desafios/, lab/dados/ e lab/html/) + o (tamanho, data) de
    cada arquivo e de cada pasta (até dois níveis) citados por caminho absoluto nos
    argumentos ou nos valores do env= (um modelo copiado e depois estragado pelo teste
    muda a chave);
- compartilhado(chave, funcao): um resultado qualquer (pickle), como um treino que vários
  testes usam; a chave soma o código do lab e as variáveis de kernel e de threads;
- pasta_de_modelo(nome, construir) (o modelo_compartilhado do conftest): uma pasta (um
  GPT-2 ou um Llama de teste) montada uma vez, no mesmo caminho para todos;
- pasta_da_sessao(nome): uma pasta vazia comum a todos.

Quando a execução guardada vale:

- guarda-se o que é saída determinística de uma configuração: o que a lição imprime e o
  código de saída. Um tempo medido que sai na saída é o de uma execução de verdade, lido
  por todos os testes que pedem aquela configuração;
- os efeitos colaterais que um teste abre (as figuras de --figuras PASTA) vêm junto só
  porque a PASTA está na chave: uma pasta de tmp_path é de um teste só, então a chave é
  nova e a lição roda; uma de pasta_da_sessao() é de todos, e as figuras já estão lá para
  quem chega depois;
- rodar_script(..., guardar=False) roda sempre um processo novo: para um teste que precisa
  de duas execuções independentes da mesma configuração, ou que muda algo fora dos
  argumentos e do ambiente entre uma e outra;
- o que precisa de um processo novo por natureza não passa por rodar_script: a primeira
  linha antes do torch (-X importtime), Ctrl+C, o tmux, o pipe do --pausa, a lição com
  erros de test_erros (esses testes chamam o subprocess direto);
- a cópia de uma lição que o aluno editou e um trecho de `python -c` de uma apostila
  também não: rodam por tests/apoio/copia_do_aluno.py (rodar_sem_guardar), num filho do
  interpretador quente e sem guardar nada (o arquivo muda de teste para teste, e a chave
  não vê o conteúdo dele).

Sem estar guardada, a execução roda num interpretador quente (tests/apoio/licao_quente.py:
o torch e o transformers já importados, a lição num fork), um servidor por ambiente de
partida (o ambiente fora SEGURAS: LAB_MODELO, COLUMNS, NO_COLOR, LAB_TRACEBACK, LAB_DESAFIOS,
LAB_PRAZO_DO_DESAFIO e LAB_CORRIDA_ORCAMENTO, que a lição só lê depois; e a codificação de
PYTHONIOENCODING, que o filho troca nos fluxos), até MAX_SERVIDORES (o menos usado sai). Num
processo novo, sempre: um script que não é uma lição lab/NN_*.py, 00_check (ela mede a
própria partida), --help, -h, --lista, --pausa, uma entrada pelo stdin, um ambiente sem
PYTHONIOENCODING; e o código de saída 2 (uso errado) é refeito num processo novo.
LAB_TESTES_QUENTE=0 desliga o interpretador quente.

Cada execução de lição deixa uma linha em execucoes.log na pasta da sessão (guardada ou
não, quente ou fria, segundos de CPU): é como se conta quantas lições a suíte rodou.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

RAIZ = Path(__file__).resolve().parents[2]  # tests/apoio/sessao.py -> a raiz
VARIAVEL_PASTA = "LAB_TESTES_COMPARTILHADO"
VARIAVEL_QUENTE = "LAB_TESTES_QUENTE"            # "0": nenhuma lição no interpretador quente

sys.path.insert(0, str(RAIZ / "ferramentas"))
import cpus  # noqa: E402


# ------------------------------------------------------------------ a pasta da sessão
def definir_pasta(tmp_path_factory) -> Path:
    """A pasta compartilhada desta sessão (chamada uma vez por processo, pelo conftest)."""
    herdada = os.environ.get(VARIAVEL_PASTA)
    if herdada and Path(herdada).is_dir():
        return Path(herdada)
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent                          # pytest-N/, comum a gw0, gw1...
    pasta = base / "sessao"          # curto: o caminho dos modelos sai na tela das lições
    pasta.mkdir(exist_ok=True)
    os.environ[VARIAVEL_PASTA] = str(pasta)
    return pasta


def pasta() -> Path | None:
    """A pasta compartilhada, ou None fora de uma sessão (nada é guardado)."""
    p = os.environ.get(VARIAVEL_PASTA)
    return Path(p) if p else None


def _trava(caminho: Path):
    from filelock import FileLock

    return FileLock(str(caminho) + ".trava")


def _gravar(destino: Path, dados: bytes) -> None:
    temporario = destino.with_name(f".{destino.name}.{os.getpid()}")
    temporario.write_bytes(dados)
    os.replace(temporario, destino)


# ------------------------------------------------------------------ chaves
@functools.lru_cache(maxsize=None)
def codigo_do_lab() -> str:
    """Hash de lab/*.py, do encanamento (lab/comum/), dos desafios (lab/desafios/), dos
    dados das lições (lab/dados/) e das fontes das páginas (lab/html/): uma lição ou um
    módulo editado no meio da sessão não reusa nada velho."""
    h = hashlib.sha256()
    arquivos = (sorted((RAIZ / "lab").glob("*.py")) + sorted((RAIZ / "lab" / "comum").glob("*.py"))
                + sorted((RAIZ / "lab" / "desafios").glob("*.py"))
                + sorted((RAIZ / "lab" / "dados").glob("*"))
                + sorted((RAIZ / "lab" / "html").glob("*")))     # as páginas que as lições gravam
    for arquivo in arquivos:
        nome = arquivo.relative_to(RAIZ).as_posix().encode()
        h.update(nome + b"\0" + arquivo.read_bytes() + b"\0")
    return h.hexdigest()


def ambiente_numerico() -> dict:
    """As variáveis que mudam as contas, e as threads que o torch deste processo usa."""
    numerico = {v: os.environ.get(v) for v in cpus.VARIAVEIS}
    if "torch" in sys.modules:
        numerico["threads"] = sys.modules["torch"].get_num_threads()
    return numerico


def _impressao(valor: str):
    """(tamanho, data) de um arquivo, ou de cada arquivo de uma pasta (até dois níveis),
    citado pelo valor."""
    if not os.path.isabs(valor) or not os.path.exists(valor):
        return None
    p = Path(valor)
    if p.is_file():
        s = p.stat()
        return (s.st_size, s.st_mtime_ns)
    itens = []
    for filho in sorted(p.glob("*"))[:200] + sorted(p.glob("*/*"))[:200]:
        if filho.is_file():
            s = filho.stat()
            itens.append((str(filho.relative_to(p)), s.st_size, s.st_mtime_ns))
    return itens


def _hash(*partes) -> str:
    return hashlib.sha256(json.dumps(partes, sort_keys=True, default=str).encode()).hexdigest()


# ------------------------------------------------------------------ compartilhado
_MEMORIA: dict = {}
OCUPADO = object()          # compartilhado(..., esperar=False): outro processo está calculando


def compartilhado(chave: str, funcao, esperar: bool = True):
    """funcao(), calculada uma vez na sessão inteira (todos os arquivos e processos).

    chave: um texto que diz tudo de que o resultado depende além do código do lab (que
    entra sozinho na chave, junto com as variáveis de kernel e de threads: sob outra
    variante de CPU, o cálculo é refeito). Ex.:
        compartilhado("05 treinar_pilha pre_ln=False semente=8 passos=40 lr=1e-3",
                      lambda: L05.treinar_pilha(False, 8, passos=40, lr=1e-3))
    O resultado vai em pickle (tensores, listas, dicionários) e não deve ser modificado
    por quem o recebe (no mesmo processo, todos recebem o mesmo objeto).

    esperar=False: se outro processo está calculando essa chave agora, devolve OCUPADO em
    vez de esperar por ele (para quem pede várias chaves e pode começar por outra)."""
    h = _hash("compartilhado", chave, codigo_do_lab(), ambiente_numerico())
    if h in _MEMORIA:
        return _MEMORIA[h]
    base = pasta()
    if base is None:
        valor = funcao()
    else:
        from filelock import Timeout

        destino = base / "calculos" / f"{h}.pickle"
        destino.parent.mkdir(exist_ok=True)
        trava = _trava(destino)
        try:
            trava.acquire(timeout=-1 if esperar else 0)
        except Timeout:
            return OCUPADO
        try:
            if destino.exists():
                valor = pickle.loads(destino.read_bytes())
            else:
                valor = funcao()
                _gravar(destino, pickle.dumps(valor))
        finally:
            trava.release()
    _MEMORIA[h] = valor
    return valor


def pasta_de_modelo(nome: str, construir) -> Path:
    """Pasta `nome` da sessão montada uma vez com construir(pasta) (a mesma para todos os
    processos: as execuções que a usam também são compartilhadas). Sem sessão: numa
    pasta temporária."""
    base = pasta()
    if base is None:
        import tempfile

        destino = Path(tempfile.mkdtemp(prefix=nome + "-"))
        construir(destino)
        return destino
    destino = base / nome
    with _trava(destino):
        if not (destino / ".pronta").exists():
            construir(destino)
            (destino / ".pronta").write_text("")
    return destino


def pasta_da_sessao(nome: str) -> Path:
    """Uma pasta vazia `nome` comum a todos os processos da sessão (para, por exemplo, as
    figuras de uma execução compartilhada)."""
    base = pasta()
    if base is None:
        import tempfile

        return Path(tempfile.mkdtemp(prefix=nome + "-"))
    destino = base / "pastas" / nome
    destino.mkdir(parents=True, exist_ok=True)
    return destino


# ------------------------------------------------------------------ rodar uma lição
# Variáveis que mudam de um processo do pytest para outro e não mudam a lição.
def _volatil(nome: str) -> bool:
    return nome.startswith(("PYTEST_", "LAB_TESTES_")) or nome in ("_", "OLDPWD")


# Lidas pela lição quando ela roda (não na partida do Python): um servidor quente serve
# qualquer valor delas.
SEGURAS = {"LAB_MODELO", "COLUMNS", "NO_COLOR", "LAB_TRACEBACK", "LAB_DESAFIOS",
           "LAB_PRAZO_DO_DESAFIO", "LAB_CORRIDA_ORCAMENTO"}
SEMPRE_NOVO = {"00_check.py"}                    # ela mede a própria partida
ARGS_NOVOS = {"--help", "-h", "--lista", "--pausa"}
_SERVIDORES: dict = {}
_INDISPONIVEIS: dict = {}
# Cada servidor tem uns 340 MB residentes (boa parte, as bibliotecas do torch, dividida com
# os outros processos) e custa uns 4 s de CPU para subir. Um processo da suíte pede uns
# 4 ambientes de partida (a base, que serve o cp1252 e o UTF-8, e uns poucos de um teste
# só); quando eram 8 (as variantes de CPU do test_apostilas rodavam aqui), um limite de 6
# fazia a suíte fechar e reabrir 5 servidores.
MAX_SERVIDORES = 8


def _servidor(ambiente: dict):
    """O servidor quente para o ambiente de partida de `ambiente` (ou None). A codificação
    (PYTHONIOENCODING sem ":") não entra na chave: o filho do servidor a troca
    (licao_quente._trocar_codificacao), e um servidor serve o cp1252 e o utf-8."""
    if os.environ.get(VARIAVEL_QUENTE, "1") == "0" or not hasattr(os, "fork"):
        return None
    import licao_quente

    partida = {k: v for k, v in ambiente.items() if k not in SEGURAS}
    chave = _hash({k: v for k, v in partida.items() if not _volatil(k) and not (
        k == "PYTHONIOENCODING" and licao_quente.codificacao_trocavel(v))})
    if chave in _INDISPONIVEIS:
        return None
    servidor = _SERVIDORES.pop(chave, None)
    if servidor is not None and not servidor.vivo():
        servidor = None
    if servidor is None:
        while len(_SERVIDORES) >= MAX_SERVIDORES:   # o menos usado recentemente sai
            _SERVIDORES.pop(next(iter(_SERVIDORES))).fechar()
            _registrar({"evento": "servidor fechado (o menos usado)"})
        diferente = {k: v for k, v in partida.items()
                     if os.environ.get(k) != v and not _volatil(k)}
        _registrar({"evento": "servidor novo", "ambiente": diferente,
                    "sem": sorted(k for k in os.environ if k not in partida
                                  and k not in SEGURAS and not _volatil(k))})
        try:
            servidor = licao_quente.Servidor(partida, RAIZ)
        except licao_quente.Indisponivel as erro:
            _INDISPONIVEIS[chave] = str(erro)
            _registrar({"evento": "servidor indisponível", "motivo": str(erro)[:500]})
            return None
    _SERVIDORES[chave] = servidor                     # volta para o fim (o mais recente)
    return servidor


def fechar_servidores() -> None:
    while _SERVIDORES:
        _SERVIDORES.popitem()[1].fechar()


def _registrar(linha: dict) -> None:
    base = pasta()
    if base is None:
        return
    teste = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    texto = json.dumps({**linha, "teste": teste}, ensure_ascii=False, default=repr) + "\n"
    with open(base / "execucoes.log", "a", encoding="utf-8", errors="backslashreplace") as f:
        f.write(texto)


def _pode_ser_quente(script: Path, args, ambiente: dict, entrada) -> bool:
    return (re.fullmatch(r"\d\d_\w+\.py", script.name) is not None
            and script.parent == RAIZ / "lab" and script.name not in SEMPRE_NOVO
            and entrada is None and not ARGS_NOVOS & set(args)
            and ambiente.get("PYTHONIOENCODING") is not None)


def _cpu_dos_filhos() -> float:
    try:
        import resource                          # não existe no Windows
    except ImportError:
        return 0.0
    uso = resource.getrusage(resource.RUSAGE_CHILDREN)
    return uso.ru_utime + uso.ru_stime


def _subprocesso(argv, ambiente, entrada, timeout, cwd=RAIZ):
    antes = _cpu_dos_filhos()
    r = subprocess.run(argv, cwd=cwd, capture_output=True, env=ambiente,
                       input=(entrada or "").encode(), timeout=timeout)
    return r.returncode, r.stdout, r.stderr, _cpu_dos_filhos() - antes


def _no_quente(argv, ambiente, timeout, cwd):
    """(código, stdout, stderr, cpu) de argv num filho do servidor quente de `ambiente`, ou
    None (sem servidor, ou ele morreu; um código 2, uso errado, vem de um processo novo)."""
    servidor = _servidor(ambiente)
    if servidor is None:
        return None
    import licao_quente

    try:
        r = servidor.rodar(argv[1:], dict(ambiente), timeout, cwd=cwd)
    except licao_quente.Indisponivel:
        return None                                  # o servidor morreu: processo novo
    return None if r[0] == 2 else r


def rodar_sem_guardar(argv: list[str], ambiente: dict, cwd: Path, timeout: float = 240):
    """(código, stdout, stderr) de `python *argv` (um script de fora de lab/, como a cópia de
    uma lição que o aluno editou, ou ["-c", código]) num filho do interpretador quente, sem
    guardar nada: o arquivo muda de um teste para outro, e a chave não vê o conteúdo dele.
    O ambiente precisa dizer a codificação (PYTHONIOENCODING), como em rodar()."""
    argv = [sys.executable, *map(str, argv)]
    inicio = time.monotonic()
    r = None
    if ambiente.get("PYTHONIOENCODING") is not None and not ARGS_NOVOS & set(argv):
        r = _no_quente(argv, ambiente, timeout, cwd)
    modo = "novo" if r is None else "quente"
    if r is None:
        r = _subprocesso(argv, ambiente, None, timeout, cwd=cwd)
    _registrar({"script": Path(argv[1]).name, "args": argv[2:], "modo": modo,
                "cpu": round(r[3], 2), "s": round(time.monotonic() - inicio, 2)})
    return r[:3]


def rodar(script: Path, args: list[str], ambiente: dict, entrada: str | None = None,
          timeout: float = 240, guardar: bool = True, citados=()):
    """(código, stdout, stderr) de `python script *args` no ambiente dado (já completo).

    guardar=False: sempre um processo novo, nada guardado. guardar=True: a mesma chave já
    rodada nesta sessão devolve a saída guardada; se não, roda (no interpretador quente,
    quando pode; ver _pode_ser_quente) e guarda. citados: valores (além dos argumentos)
    que podem ser caminhos de arquivos ou pastas que a lição lê, como o LAB_MODELO."""
    argv = [sys.executable, str(script), *args]
    inicio = time.monotonic()
    base = pasta()
    if not guardar or base is None:
        codigo, saida, erros, cpu = _subprocesso(argv, ambiente, entrada, timeout)
        _registrar({"script": script.name, "args": args, "modo": "novo", "cpu": cpu,
                    "s": time.monotonic() - inicio})
        return codigo, saida, erros
    impressoes = [_impressao(v) for v in [*args, *citados]]
    chave = _hash("rodar", str(script), args, {k: v for k, v in ambiente.items()
                                                if not _volatil(k)},
                  entrada, codigo_do_lab(), impressoes)
    destino = base / "execucoes" / f"{chave}.pickle"
    destino.parent.mkdir(exist_ok=True)
    with _trava(destino):
        if destino.exists():
            _registrar({"script": script.name, "args": args, "modo": "guardada"})
            return pickle.loads(destino.read_bytes())
        r = (_no_quente(argv, ambiente, timeout, RAIZ)
             if _pode_ser_quente(script, args, ambiente, entrada) else None)
        modo = "novo" if r is None else "quente"
        codigo, saida, erros, cpu = r or _subprocesso(argv, ambiente, entrada, timeout)
        resultado = (codigo, saida, erros)
        _gravar(destino, pickle.dumps(resultado))
    _registrar({"script": script.name, "args": args, "modo": modo, "cpu": round(cpu, 2),
                "s": round(time.monotonic() - inicio, 2)})
    return resultado
