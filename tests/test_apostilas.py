"""Apostila e script concordam.

Convenções que estes testes conferem em toda apostila apostilas/NN_nome.md
que tem script lab/NN_nome.py:
- os títulos `### Experimento k/n · título` são exatamente os do script;
- a apostila traz o comando do Windows e o do Linux/macOS;
- um bloco de saída marcado com `<!-- saida: --so K [outros argumentos] -->`
  logo antes de um bloco ```text é saída real: cada linha dele (menos as
  linhas `...`, que marcam um trecho omitido) aparece, na mesma ordem, na saída do
  script rodado com esses argumentos e --sem-figuras;
- e, nas lições que fazem contas no PyTorch, as mesmas linhas saem idênticas em cada
  variante de CPU de ferramentas/cpus.py (os kernels genéricos do PyTorch, os de AVX2
  onde o padrão é outro, o MKL no modo reproduzível, duas threads de conta): os blocos
  delas são marcados com @pytest.mark.cpus, e tests/test_cpus.py os roda de novo num
  pytest filho por variante (o interpretador quente de cada variante é o que os outros
  testes marcados já usam ali). Um número que muda numa variante é ruído de
  arredondamento impresso como dígito: imprima um limite ("< 1e-12"), ou uma faixa ou
  um veredito que vale em todas.

Cada script roda uma vez por combinação de argumentos (fora o --so) e variante, na
sessão inteira (conftest.rodar_script guarda a saída): os blocos `--so 2` e `--so 5`
de uma apostila saem de uma execução `--so 2,5`, cada um lido só na seção do seu
experimento (cada experimento começa da mesma semente, então a saída dele não depende
de quem rodou antes).
"""
from __future__ import annotations

import difflib
import re
import shlex

import pytest

from conftest import RAIZ, VARIANTE, rodar_script
import cpus

APOSTILAS = sorted(p for p in (RAIZ / "apostilas").glob("[0-9][0-9]_*.md")
                   if (RAIZ / "lab" / (p.stem + ".py")).exists())
MARCA = re.compile(r"<!--\s*saida:(.*?)-->\s*\n```text\n(.*?)\n```", re.S)


def titulos_do_script(script: str) -> list[str]:
    r = rodar_script(script, "--lista")
    assert r.returncode == 0, r.erros
    linhas = r.saida.splitlines()[1:]
    total = len(linhas)
    titulos = []
    for linha in linhas:
        k, titulo = linha.strip().split(". ", 1)
        titulo = titulo.replace("  (usa o GPT-2)", "")
        titulos.append(f"{k}/{total} · {titulo}")
    return titulos


@pytest.mark.parametrize("apostila", APOSTILAS, ids=lambda p: p.name)
def test_titulos_e_comandos(apostila):
    texto = apostila.read_text(encoding="utf-8")
    script = apostila.stem + ".py"
    rotulo = "Verificação" if apostila.stem.startswith("00") else "Experimento"
    achados = re.findall(rf"^### {rotulo} (\d+/\d+ · .+?)\s*$", texto, re.M)
    assert achados == titulos_do_script(script)
    assert f".venv\\Scripts\\python.exe lab\\{script}" in texto
    assert f".venv/bin/python lab/{script}" in texto


def blocos_de_saida():
    for apostila in APOSTILAS:
        texto = apostila.read_text(encoding="utf-8")
        for i, (args, bloco) in enumerate(MARCA.findall(texto)):
            yield pytest.param(apostila, args.strip(), bloco, id=f"{apostila.stem}-{i}")


# Lições sem conta de ponto flutuante no PyTorch: a 01 não usa o torch (só o tokenizador)
# e a 09 só o usa em tensores "meta" (contagem inteira de FLOPs); o resto é aritmética do
# Python, que as variáveis da outra CPU não mudam. Nelas a variante não testaria nada. A 14
# só cita nos blocos contagens de FLOPs, a régua de frequências (Python puro), o placar dos
# registros e vereditos do --conferir; as notas dos treinos dela têm o teste marcado com cpus
# em test_14_corrida.
SEM_CONTA_NO_TORCH = {"01_tokens", "09_scaling", "14_corrida"}


CABECALHO = re.compile(r"^(?:Experimento|Verificação) (\d+)/\d+ · ")
RESUMO = ("Resumo", "experimentos rodaram", "experimentos rodou", "experimento rodou",
          "Próximo passo", "verificações rodaram", "verificações rodou")


def _separar_so(args: str):
    """'--so 2,4 --passos 40' -> ({2, 4}, '--passos 40'); sem --so: (None, args)."""
    partes = shlex.split(args)
    if "--so" not in partes:
        return None, args
    i = partes.index("--so")
    numeros = set()
    for pedaco in partes[i + 1].split(","):
        a, _, b = pedaco.partition("-")
        numeros.update(range(int(a), int(b or a) + 1))
    return numeros, shlex.join(partes[:i] + partes[i + 2:])


def _plano():
    """Uma execução por (script, argumentos fora o --so): os --so dos blocos se juntam,
    e cada bloco lê só as seções dos seus experimentos. Um bloco que cita o resumo (que
    muda com o --so) roda sozinho, com os argumentos dele."""
    juntos: dict = {}
    for apostila, args, bloco in ((p.values[0], p.values[1], p.values[2])
                                  for p in blocos_de_saida()):
        numeros, resto = _separar_so(args)
        if numeros is None or any(r in bloco for r in RESUMO):
            continue
        juntos.setdefault((apostila.stem + ".py", resto), set()).update(numeros)
    return juntos


_JUNTOS = None


def _terminar(script: str, args: str):
    r = rodar_script(script, *shlex.split(args), "--sem-figuras",
                     env={"PYTHONIOENCODING": "utf-8"})
    linhas = [linha.rstrip() for linha in r.stdout.decode("utf-8").splitlines()]
    return r.returncode, linhas, r.stderr.decode("utf-8", "replace")


def saida_do_script(script: str, args: str):
    """(código de saída, linhas do stdout que o bloco pode citar, stderr).

    Com --so, as linhas vêm da execução conjunta (ver _plano): o começo (antes do
    primeiro experimento) e as seções dos experimentos pedidos, na ordem."""
    global _JUNTOS
    if _JUNTOS is None:
        _JUNTOS = _plano()
    numeros, resto = _separar_so(args)
    juntos = _JUNTOS.get((script, resto)) if numeros is not None else None
    if not juntos or not numeros <= juntos:
        return _terminar(script, args)
    todos = ",".join(str(k) for k in sorted(juntos))
    codigo, linhas, erros = _terminar(script, f"--so {todos} {resto}".strip())
    escolhidas, atual = [], None
    for linha in linhas:
        cabeca = CABECALHO.match(linha)
        if cabeca:
            atual = int(cabeca.group(1))
        elif linha == "Resumo" and atual is not None:
            atual = -1
        if atual is None or atual in numeros:
            escolhidas.append(linha)
    return codigo, escolhidas, erros


def _blocos_marcados():
    """Os blocos; os das lições com contas no torch, marcados com cpus (test_cpus.py os roda
    de novo em cada variante de CPU)."""
    for p in blocos_de_saida():
        apostila, args, bloco = p.values
        marcas = () if apostila.stem in SEM_CONTA_NO_TORCH else (pytest.mark.cpus,)
        yield pytest.param(apostila, args, bloco, id=p.id, marks=marcas)


@pytest.mark.parametrize("apostila, args, bloco", list(_blocos_marcados()))
def test_blocos_de_saida_sao_reais(apostila, args, bloco):
    codigo, saida, erros = saida_do_script(apostila.stem + ".py", args)
    assert codigo in (0, 1), erros
    posicao = 0
    for linha in bloco.splitlines():
        linha = linha.rstrip()
        if linha.strip() in ("...", "\u2026") or not linha.strip():
            continue
        try:
            posicao = saida.index(linha, posicao) + 1
        except ValueError:
            parecida = difflib.get_close_matches(linha, saida[posicao:], n=1, cutoff=0.6)
            ambiente = cpus.descrever(VARIANTE) if VARIANTE else ""
            pytest.fail(
                f"{apostila.name}: a linha abaixo não aparece (nessa ordem) na saída de "
                f"{apostila.stem}.py {args}" + (f" com {ambiente}" if ambiente else "")
                + f":\n{linha!r}"
                + (f"\na mais parecida:\n{parecida[0]!r}" if parecida else "")
                + ("\n(ruído de arredondamento impresso como dígitos? imprima um limite)"
                   if ambiente else ""))


def test_toda_apostila_com_script_tem_blocos_verificados():
    sem = [a.name for a in APOSTILAS if not MARCA.search(a.read_text(encoding="utf-8"))]
    assert not sem, f"apostilas sem nenhum bloco de saída verificado: {sem}"


FIM = ["Exercícios", "Notas para o professor", "Respostas dos exercícios"]


@pytest.mark.parametrize("apostila", APOSTILAS, ids=lambda p: p.name)
def test_fim_da_apostila(apostila):
    """Toda apostila termina igual: exercícios, notas para o professor, as respostas
    (fechadas num <details>, uma por exercício, na mesma numeração) e a próxima lição
    (ou, na última, o fim do curso)."""
    texto = apostila.read_text(encoding="utf-8")
    secoes = re.findall(r"^## (?:\d+\. )?(.+?)\s*$", texto, re.M)
    assert secoes[-4:-1] == FIM, secoes
    assert secoes[-1] in ("Próxima lição", "Fim do curso: o que você construiu e para onde ir")
    exercicios = re.search(r"^## (?:\d+\. )?Exercícios\n(.*?)^## ", texto, re.S | re.M).group(1)
    respostas = re.search(r"^## Respostas dos exercícios\n(.*?)^## ", texto, re.S | re.M).group(1)
    assert respostas.lstrip().startswith("<details>") and "</details>" in respostas
    numeros = re.findall(r"^(\d+)\. ", exercicios, re.M)
    assert numeros == [str(k) for k in range(1, len(numeros) + 1)] and numeros
    assert re.findall(r"^\*\*(\d+)\.(?:\*\*|\s)", respostas, re.M) == numeros, \
        "cada exercício tem uma resposta, na mesma ordem (**k. título.** ou **k.**)"


# ------------------------------------------------------------ a apostila fala com o aluno
# Uma apostila fala com quem a lê, no computador dele: nada sobre a máquina em que foi
# escrita ou sobre o que não pôde ser baixado ou rodado ali, nada da sua própria história
# (o que uma revisão viu, como era antes, o que "escolhemos"). O que depende dos pesos reais
# é dito como fato da lição ("esta saída depende dos pesos do GPT-2: rode e compare"). E
# nenhuma apostila chama uma lição de "a última": o curso cresce.
SOBRE_A_AUTORIA = {
    "a máquina da autoria": r"(m[áa]quinas?|computador)\s+(em\s+que|onde)\s+(esta|a)\s+apostila",
    "apostila foi preparada/escrita": r"apostila\s+foi\s+(preparada|escrita|feita|gerada)",
    "não roda aqui": r"n[ãa]o\s+roda(m)?\s+aqui",
    "não pode ser baixado": r"n[ãa]o\s+pode(m)?\s+ser\s+baixad",
    "uma execução aqui": r"execu[çc][ãa]o\s+aqui",
    "não dá para reproduzir aqui": r"n[ãa]o\s+(d[áa]\s+para\s+reproduzir|reproduz[íi]vel)\s+aqui",
    "aqui não há os pesos": r"aqui\s+n[ãa]o\s+h[áa]|n[ãa]o\s+h[áa]\s+[^.]{0,30}\baqui\b",
    "pesos que não existem aqui": r"pesos\s+(reais\s+)?(que\s+)?n[ãa]o\s+existem",
    "conferido aqui": r"\b(conferid[oa]s?|medid[oa]s?|testad[oa]s?)\s+aqui\b",
    "o que esta revisão viu": r"\b(esta|nesta|da|uma)\s+revis[ãa]o\b",
    "antes (de uma mudança)": r"\(antes,[^)]*\b(era|eram|havia|ficava|dava|sa[íi]a)\b|\bantes\s+da\s+(corre[çc][ãa]o|mudan[çc]a|revis[ãa]o)"
                              r"|\bmedidas\s+s[ãa]o\s+de\s+antes\b|\bvers[ãa]o\s+anterior\b",
    "escolhemos, refizemos...": r"\b(escolhemos|refizemos|decidimos|optamos|mudamos|trocamos"
                                r"|n[ãa]o\s+conferimos|reescrevemos|corrigimos)\b",
    "a última lição": r"[úu]ltima\s+(li[çc][ãa]o\s+)?do\s+curso|\b\d\d?,\s+a\s+[úu]ltima\b"
                      r"|\b[ée]\s+a\s+[úu]ltima\s+li[çc][ãa]o",
}
# Linhas de apostilas de outros donos, à espera de correção (apostila: [trecho da linha]).
# Cada entrada é um achado conhecido: o teste falha se ela sumir (tire-a daqui) ou se
# aparecer outro.
PENDENTES_DE_OUTROS_DONOS: dict[str, list[str]] = {}
TEXTOS_DO_ALUNO = sorted((RAIZ / "apostilas").glob("*.md"))


def achados_sobre_a_autoria(texto: str) -> list[tuple[str, int, str]]:
    """(padrão, número da linha, linha) de cada trecho que fala da autoria. O texto é lido
    com as quebras de linha trocadas por espaços (uma frase quebrada também conta)."""
    corrido = texto.replace("\n", " ")
    achados = []
    for nome, padrao in SOBRE_A_AUTORIA.items():
        for m in re.finditer(padrao, corrido, re.I):
            linha = texto.count("\n", 0, m.start()) + 1
            achados.append((nome, linha, texto.splitlines()[linha - 1].strip()))
    return achados


def test_os_padroes_pegam_as_frases_sobre_a_autoria():
    """Os padrões pegam as frases que as apostilas já tiveram (e que o achado de 04/12
    listou), inclusive quebradas no fim da linha; e não pegam um "aqui" da própria lição."""
    antigas = [
        "que não podem ser baixados na máquina em que esta apostila\nfoi preparada",
        "(nas máquinas em que esta apostila foi preparada, saiu de",
        "Depende do modelo real, que não roda aqui; por isso",
        "Rodando as sementes 0 a 9 na máquina\nem que esta apostila foi escrita:",
        "(não dá para reproduzir aqui, e a apostila não inventa",
        "mais provável em cerca de 12 % (número medido no GPT-2 de verdade, não reproduzível\naqui",
        "só sai com o GPT-2\nbaixado: não há número de referência aqui.",
        "Os números dependem dos pesos reais, que não existem no\ncomputador onde esta apostila",
        "espera-se (não conferimos, pois aqui não há os pesos reais) o mesmo",
        "16 cabeças (4 camadas × 4). Numa execução aqui, com o treino padrão",
        "com números de uma execução aqui, com o treino padrão da lição 10",
        "dividida com outros processos, esta revisão viu as\n  razões 3,3",
        "refizemos cada número citado com os pesos multiplicados",
        "O\npico também ficaria em uma cópia. Escolhemos compartilhar porque",
        "gpt2-medium (antes, copiando, eram 2,17 e 2,34 vezes)",
        "Este\ncomando foi conferido aqui com as duas \"máquinas\"",
        "Essas\nmedidas são de antes do experimento 6, que foi medido",
        "A lição 10 (`lab/10_treino.py`, [apostila](10_treino.md)), a\núltima do curso, treina",
        "Depois dela vem a última lição do curso,",
        "a 11, a última, termina com o **fim do curso**",
        "É a última lição do\ncurso;",
    ]
    for frase in antigas:
        assert achados_sobre_a_autoria(frase), frase
    da_licao = ["Até aqui, cada token virou um vetor", "tudo o que a saída mostra está "
                "reproduzido ou descrito aqui.", "a última linha do experimento 1 diz agora",
                "as fusões são aprendidas antes, só contando pares", "A última linha é a prova",
                "os dezesseis tokens\ndaqui", "Os textos dependem dos pesos e da máquina (seção "
                "4), por isso não estão aqui."]
    for frase in da_licao:
        assert not achados_sobre_a_autoria(frase), frase


@pytest.mark.parametrize("apostila", TEXTOS_DO_ALUNO, ids=lambda p: p.name)
def test_a_apostila_fala_com_o_aluno(apostila):
    texto = apostila.read_text(encoding="utf-8")
    achados = achados_sobre_a_autoria(texto)
    pendentes = PENDENTES_DE_OUTROS_DONOS.get(apostila.name, [])
    conhecidos = [a for a in achados if any(p in a[2] for p in pendentes)]
    novos = [a for a in achados if a not in conhecidos]
    assert not novos, "\n".join(f"{apostila.name}:{n}: [{nome}] {linha}"
                                for nome, n, linha in novos)
    sumiram = [p for p in pendentes if not any(p in a[2] for a in achados)]
    assert not sumiram, f"corrigido: tire de PENDENTES_DE_OUTROS_DONOS {sumiram}"


def test_amostrar_com_exportar_nao_sorteia():
    """Issue 40: três apostilas diziam que `--amostrar --exportar` sorteia 480 caracteres
    antes de gravar a pasta; com --exportar ele só grava e confere (test_10_treino confere
    que a saída não tem "caracteres sorteados"). Toda apostila que manda rodar o comando
    diz o que ele faz."""
    citam = [p for p in TEXTOS_DO_ALUNO
             if "10_treino.py --amostrar --exportar" in p.read_text(encoding="utf-8")]
    assert len(citam) >= 3, citam
    for apostila in citam:
        texto = " ".join(apostila.read_text(encoding="utf-8").split())
        assert "sorteia antes" not in texto, apostila.name
        if apostila.name != "10_treino.md":
            assert "Com `--exportar`, o `--amostrar` não sorteia nem treina nada" in texto, \
                apostila.name
