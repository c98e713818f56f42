"""Benchmark das lições: cada lição contra o "piso", em rodadas intercaladas.

O piso é o que nenhuma lição consegue evitar: iniciar o Python, importar torch e
transformers, carregar o GPT-2 e fazer uma passada. Usa um GPT-2 do tamanho real (124M,
pesos aleatórios) salvo em .bench/, então não precisa de rede; o tokenizador dele é
treinado nos textos das lições, para que eles virem quase tantos tokens quanto no GPT-2
de verdade. Uso:

    .venv/bin/python ferramentas/benchmark.py                      (Linux/macOS)
    .venv\\Scripts\\python.exe ferramentas\\benchmark.py             (Windows)
    ... --licoes todas                   (da 01 em diante; ou --licoes 05,07,08)
    ... --licoes 05 --repeticoes 5 --max-rodadas 12 --tolerancia 1
    ... --perfil 08 --argumentos "--so 8"    (onde o tempo vai, com o cProfile)
    ... --licoes 06 --tamanhos gpt2-medium,gpt2-large
    ... --geracao 1000 --repeticoes 5   (a gulosa da 07 contra o generate(), 1 thread)
    ... --corrida                        (a lição 14: uma inscrição inteira, 3 sementes)

Como mede. Cada rodada roda piso, lição A, piso, lição B, piso, ... (a ordem se inverte
a cada rodada): cada medida de uma lição fica entre duas do piso, e a razão daquela
rodada é o tempo da lição / a média desses dois pisos. Se a máquina ficar mais lenta por
um tempo, o piso e a lição sentem juntos e a razão quase não muda. Antes da primeira
rodada o piso roda uma vez sem contar (o disco e o cache esquentam).

Quando para. Depois de --repeticoes rodadas (padrão 3), uma lição sai das rodadas quando
a mediana das suas razões muda no máximo --tolerancia por cento (padrão 2) com a última
rodada; as que ainda mexem seguem, até --max-rodadas (padrão 10). A que não estabilizar
sai marcada "não estabilizou".

Como ler o espalhamento. Para cada lição sai a mediana das razões (o número a citar) e,
ao lado, a menor e a maior razão das rodadas e o "+/- %" (metade da distância entre elas,
em % da mediana); "melhor/melhor" é o menor tempo da lição / o menor tempo do piso.
- Máquina quieta: razões a poucos % umas das outras (+/- de uns 5 % ou menos) e melhor/melhor
  perto da mediana. Aí a mediana é o número, com dois dígitos.
- +/- acima de ~10 %, ou melhor/melhor longe da mediana: outra coisa disputou a CPU.
  A mediana ainda vale mais que qualquer rodada sozinha, mas não cite a segunda casa:
  rode de novo com a máquina quieta (ou com mais rodadas).
- O piso também sai com mínimo e máximo: se ele variou muito (mais de ~15 %), compare
  razões, nunca segundos.

Metas: primeira linha < 0,5 s; total <= 1,5x o piso (a 13, que carrega o Tucano-160m,
maior que o GPT-2 do piso, e o compara ao transformers gerando: <= 2x); pico <= 1,5 GB.
Sai com 1 se alguma lição passar de uma meta ou terminar com código diferente de 0.

A lição 13 roda também uma vez sozinha no Tucano-160m de tamanho real (pesos aleatórios em
.bench/): o pico de memória do processo contra o tamanho dos pesos, de dois jeitos. Inteiro
(com o que o Python com torch e transformers ocupa antes de ler qualquer peso, a "base",
medida no começo) e sem essa base, que nenhuma lição evita: a meta, <= 1,3x, é a sem base.

Com --perfil LIÇÃO (e --argumentos "--so 8" para um experimento só), roda a lição uma vez
sob o cProfile e mostra onde o tempo vai, para quem escreve a lição: quanto foi importar
módulos (torch, transformers...), as --perfil-linhas (padrão 15) funções com mais tempo
acumulado (a própria e as que ela chama) fora as importações, e as da lição e de lab/. O
cProfile deixa o código Python mais lento: leia as frações, não compare os segundos com
os do benchmark.

Com --geracao N, em vez das lições, a gulosa da lição 07 (16 tokens novos, --novos) a
partir de N tokens sorteados contra o generate() do transformers, no mesmo processo e no
mesmo GPT-2 de 124M, com uma thread de conta (--threads): as mesmas rodadas intercaladas,
com o generate() no papel do piso. Mede o nosso laço com a atenção pelo SDPA (o padrão,
conferido igual à conta à mão na lição 03) e com a atenção à mão; os tokens têm de ser os
do generate(). Meta: o padrão em até 1,0x o generate() (a mediana das razões).

Com --corrida, em vez das lições, a 14 no orçamento inteiro: o --conferir de cada registro
que vem com o lab (lab/dados/corrida-*.json) treina as 3 sementes, uma thread de conta cada, lado a
lado. Sai o tempo da inscrição inteira (e o CPU dos filhos, que não mente numa máquina
dividida) e o de cada semente. Metas, numa máquina de 2 núcleos quieta: uma semente em até
2 min, uma inscrição em até 6 min.

Com --tamanhos, cada lição roda também (uma vez) numa pasta aleatória no formato de um
GPT-2 maior, criada em .bench/ na primeira vez: pico de memória / tamanho dos pesos
(meta <= 1,3x) e, se a lição o imprime, o tempo de montar o nosso GPT2 / o de carregar
o modelo do transformers.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
PASTA_MODELO = RAIZ / ".bench" / "gpt2-aleatorio"
sys.path.insert(0, str(RAIZ / "lab"))
from comum import console  # noqa: E402  (os números com vírgula; sem torch)
from comum import carregar_gpt2  # noqa: E402  (os tamanhos do GPT-2)
from comum import licao  # noqa: E402  (importar_licao)
from comum import opcoes  # noqa: E402  (o parser em português)

PISO = """
import torch, transformers
from transformers import AutoTokenizer, GPT2LMHeadModel
m = GPT2LMHeadModel.from_pretrained(r"{pasta}", use_safetensors=True).eval()
t = AutoTokenizer.from_pretrained(r"{pasta}")
with torch.no_grad():
    m(t("O gato subiu no telhado", return_tensors="pt")["input_ids"])
"""


CRIAR = """
import sys
sys.path[:0] = [r"{testes}/../ferramentas", r"{lab}"]
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from comum import licao
from modelos_de_teste import construir_tokenizador
# O tokenizador aprende os textos das lições: assim eles viram mais ou menos as mesmas
# quantidades de tokens que no GPT-2 de verdade (palavras comuns = um token).
l05 = licao.importar_licao("05_block")
construir_tokenizador(r"{pasta}", vocab=2000, textos=l05.TEXTOS + l05.LENTE)
torch.manual_seed(0)
GPT2LMHeadModel(GPT2Config()).save_pretrained(r"{pasta}", safe_serialization=True)
"""


def preparar_modelo() -> Path:
    """GPT-2 de 124M aleatório em .bench/. Criado num subprocesso: este processo fica
    pequeno, e o pico de memória medido nos filhos é só deles."""
    if not (PASTA_MODELO / "model.safetensors").exists():
        print(f"Criando um GPT-2 de 124M com pesos aleatórios em {PASTA_MODELO} (uma vez)...",
              flush=True)
        PASTA_MODELO.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", CRIAR.format(testes=RAIZ / "tests", lab=RAIZ / "lab",
                                                           pasta=PASTA_MODELO)], check=True)
    return PASTA_MODELO


CRIAR_TAMANHO = """
import shutil, sys
from pathlib import Path
sys.path[:0] = [r"{lab}"]
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from comum import carregar_gpt2
L, d, h = carregar_gpt2.TAMANHOS_GPT2["{nome}"]
with torch.device("meta"):                  # só as formas: nada de 2 cópias ao criar
    modelo = GPT2LMHeadModel(GPT2Config(n_layer=L, n_embd=d, n_head=h))
modelo.to_empty(device="cpu")
torch.manual_seed(0)
with torch.no_grad():
    for nome, p in modelo.named_parameters():
        if p.dim() > 1:
            p.normal_(0.0, 0.02)                # a inicialização do GPT-2
        elif ".ln_" in nome and nome.endswith("weight"):
            p.normal_(1.0, 0.1)                 # ganhos perto de 1
        else:
            p.normal_(0.0, 0.02)                # vieses pequenos
modelo.tie_weights()
modelo.save_pretrained(r"{pasta}", safe_serialization=True)
for arquivo in Path(r"{base}").iterdir():   # o tokenizador da pasta de 124M
    if arquivo.name not in ("model.safetensors", "config.json", "generation_config.json"):
        shutil.copy(arquivo, r"{pasta}")
"""


CRIAR_TUCANO = """
import sys
sys.path[:0] = [r"{testes}/../ferramentas", r"{lab}"]
from comum import licao
from modelos_de_teste import construir_tucano_aleatorio
l05 = licao.importar_licao("05_block")
construir_tucano_aleatorio(r"{pasta}", textos=l05.TEXTOS + l05.LENTE)
"""
PASTA_TUCANO = RAIZ / ".bench" / "tucano-aleatorio"


def preparar_tucano() -> Path:
    """O Tucano-160m no tamanho real (162.417.408 parâmetros, float32), pesos aleatórios,
    em .bench/: o modelo da lição 13 no benchmark (ela não carrega o GPT-2)."""
    if not (PASTA_TUCANO / "model.safetensors").exists():
        print(f"Criando um Tucano-160m com pesos aleatórios em {PASTA_TUCANO} (uma vez)...",
              flush=True)
        PASTA_TUCANO.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", CRIAR_TUCANO.format(
            testes=RAIZ / "tests", lab=RAIZ / "lab", pasta=PASTA_TUCANO)], check=True)
    return PASTA_TUCANO


def argumentos_da_licao(script: Path, gpt2: Path) -> list[str]:
    """A lição 13 carrega um Llama (o Tucano de .bench/) e compara o BPE do GPT-2 de .bench/;
    as outras leem o GPT-2 de LAB_MODELO."""
    if script.name.startswith("13_"):
        return ["--modelo", str(preparar_tucano()), "--gpt2", str(gpt2)]
    return []


META_MEMORIA = 1.3     # pico sem a base / pesos, no Tucano de tamanho real


def medir_tucano(script: Path, gpt2: Path, ambiente: dict, base: int | None) -> bool:
    """A lição 13 uma vez no Tucano de tamanho real: o pico de memória contra os pesos
    (float32), inteiro e sem a base (`base`: o pico de um Python que só importa torch e
    transformers; a meta vale para o que sobra)."""
    pesos = sum(p.stat().st_size for p in preparar_tucano().glob("*.safetensors"))
    m = medir([sys.executable, str(script), "--sem-figuras",
               *argumentos_da_licao(script, gpt2)], ambiente)
    print(f"{rotulo(script)} no Tucano-160m aleatório, uma vez: pesos de "
          f"{_mib(pesos)} (float32);\n  saída {m['codigo']}, {num(m['total'], 1)} s")
    ok = m["codigo"] == 0
    if m["pico"] is not None:
        print(f"  pico do processo inteiro {_mib(m['pico']):>10} = {_x(m['pico'] / pesos):>6} "
              "os pesos")
        if base:
            razao = (m["pico"] - base) / pesos
            print(f"  a base (Python + torch + transformers, sem pesos) {_mib(base)}\n"
                  f"  pico sem a base          {_mib(m['pico'] - base):>10} = {_x(razao):>6} "
                  f"os pesos   meta <= 1,3x   {'ok' if razao <= META_MEMORIA else 'ACIMA'}")
            ok &= razao <= META_MEMORIA
    else:
        print("  pico de memória: não medido neste sistema (sem os.wait4)")
    _mostrar_erro(m)
    return ok


def preparar_tamanho(nome: str, base: Path) -> Path:
    """Pasta com um GPT-2 aleatório no formato `nome` (gpt2-medium, gpt2-large...)."""
    pasta = RAIZ / ".bench" / f"{nome}-aleatorio"
    if not (pasta / "model.safetensors").exists():
        print(f"Criando um {nome} com pesos aleatórios em {pasta} (uma vez)...", flush=True)
        pasta.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", CRIAR_TAMANHO.format(
            lab=RAIZ / "lab", nome=nome, pasta=pasta, base=base)], check=True)
    return pasta


def _segundos(padrao: str, linhas: list[str]) -> float | None:
    """Segundos impressos por uma lição numa linha que casa com `padrao` (vírgula decimal)."""
    for linha in linhas:
        achado = re.search(padrao, linha)
        if achado:
            return float(achado.group(1).replace(".", "").replace(",", "."))
    return None


num, inteiro, pct = console.num, console.inteiro, console.pct
META_PRIMEIRA = 0.5    # s
META_RAZAO = 1.5       # x o piso
# A 13 carrega um modelo 30 % maior que o GPT-2 do piso e gera 80 tokens, metade deles no
# transformers, que é o oráculo: a issue dela pede até 2x.
META_RAZAO_DA = {"13_tucano": 2.0}
META_PICO = 1.5e9      # bytes
PISO_NOME = "piso (imports + carregar + 1 passada)"


def _x(razao: float) -> str:
    return f"{num(razao, 2)}x"


def meta_razao(chave: str) -> float:
    """A meta da razão de uma lição ('lab/13_tucano.py --sem-figuras' -> a da 13)."""
    nome = Path(chave.split(" ")[0]).stem
    return META_RAZAO_DA.get(nome, META_RAZAO)


def _mib(n_bytes: float) -> str:
    return f"{inteiro(round(n_bytes / 2**20))} MiB"


def medir_tamanhos(licoes: list[Path], nomes: list[str], base: Path, ambiente: dict) -> bool:
    """Cada lição, uma vez, em cada pasta grande: pico / pesos e montar / carregar."""
    ok = True
    for nome in nomes:
        pasta = preparar_tamanho(nome, base)
        pesos = sum(p.stat().st_size for p in pasta.glob("*.safetensors"))
        for script in (s for s in licoes if not s.name.startswith("13_")):   # 13: um Llama
            m = medir([sys.executable, str(script), "--sem-figuras"],
                      dict(ambiente, LAB_MODELO=str(pasta)))
            print(f"{rotulo(script)} numa pasta no formato {nome}:\n  pesos de "
                  f"{num(pesos / 2**30, 2)} GiB; uma rodada; saída {m['codigo']}")
            print(f"  total           {num(m['total'], 1):>6} s")
            if m["pico"] is not None:
                razao = m["pico"] / pesos
                print(f"  pico de memória {num(m['pico'] / 2**30, 2):>6} GiB = {_x(razao)} os "
                      f"pesos   meta <= 1,3x   {'ok' if razao <= 1.3 else 'ACIMA'}")
                ok &= razao <= 1.3
            carregar = _segundos(r"carregado de .* em ([\d.,]+) s", m["saida"])
            montar = _segundos(r"montado .*?([\d.,]+) s\)", m["saida"])
            if carregar and montar is not None:
                print(f"  montar o nosso GPT2 {num(montar, 2)} s = {_x(montar / carregar)} o "
                      f"tempo de carregar o do transformers ({num(carregar, 2)} s)")
            _mostrar_erro(m)
            ok &= m["codigo"] == 0
    return ok


def medir(comando: list[str], ambiente: dict) -> dict:
    """Roda o comando; devolve segundos até a 1a linha, total, pico de RSS (bytes), a saída
    e o fim do stderr (para dizer por que uma lição falhou)."""
    with tempfile.TemporaryFile() as erros:
        inicio = time.perf_counter()
        proc = subprocess.Popen(comando, cwd=RAIZ, env=ambiente, stdout=subprocess.PIPE,
                                stderr=erros, stdin=subprocess.DEVNULL, text=True,
                                encoding="utf-8", errors="replace")
        primeira = None
        saida = []
        for linha in proc.stdout:
            saida.append(linha)
            if primeira is None:
                primeira = time.perf_counter() - inicio
        pico = None
        if hasattr(os, "wait4"):
            _pid, status, uso = os.wait4(proc.pid, 0)
            proc.returncode = codigo = os.waitstatus_to_exitcode(status)
            pico = uso.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        else:
            codigo = proc.wait()
        total = time.perf_counter() - inicio
        proc.stdout.close()
        erros.seek(0)
        fim_do_stderr = erros.read().decode("utf-8", "replace").strip().splitlines()[-8:]
    return {"primeira": primeira, "total": total, "pico": pico, "codigo": codigo,
            "saida": saida, "stderr": fim_do_stderr}


def _mostrar_erro(m: dict) -> None:
    if m["codigo"] != 0:
        print(f"  terminou com código {m['codigo']}; fim do stderr:")
        for linha in m["stderr"] or ["(vazio)"]:
            print(f"    {linha}")


def mediana(medidas: list[dict], chave: str):
    valores = [m[chave] for m in medidas if m[chave] is not None]
    return statistics.median(valores) if valores else None


# ---------------------------------------------------------------- as rodadas
def rodadas(nomes: list[str], medir_piso, medir_licao, minimo: int, maximo: int,
            tolerancia: float, dizer=print) -> tuple[dict, list[dict]]:
    """Intercala o piso e as lições até as razões pararem de mexer.

    Cada rodada: piso, lição, piso, lição, ..., piso (a ordem das lições se inverte a cada
    rodada). A razão de uma medida é o tempo da lição / a média dos pisos logo antes e logo
    depois dela. Depois de `minimo` rodadas (e pelo menos 2), uma lição sai quando a
    mediana das suas razões muda no máximo `tolerancia` (fração: 0.02 = 2 %) com a última
    rodada; ou quando termina com código diferente de 0. No máximo `maximo` rodadas.

    Devolve ({nome: {"medidas", "razoes", "medianas", "estado"}}, todas as medidas do piso).
    `medir_piso()` e `medir_licao(nome)` devolvem dicionários com "total" e "codigo"."""
    resultado = {nome: {"medidas": [], "razoes": [], "medianas": [], "estado": None}
                 for nome in nomes}
    pisos: list[dict] = []
    ativas = list(nomes)
    rodada = 0
    while ativas and rodada < maximo:
        rodada += 1
        ordem = ativas if rodada % 2 else ativas[::-1]
        antes = medir_piso()
        pisos.append(antes)
        for nome in ordem:
            m = medir_licao(nome)
            depois = medir_piso()
            pisos.append(depois)
            piso = (antes["total"] + depois["total"]) / 2
            r = resultado[nome]
            r["medidas"].append(m)
            r["razoes"].append(m["total"] / piso)
            r["medianas"].append(statistics.median(r["razoes"]))
            dizer(f"  rodada {rodada:>2}: {nome.removeprefix('lab/'):<32} "
                  f"{num(m['total'], 2):>6} s = {_x(r['razoes'][-1]):>6} o piso")
            if m["codigo"] != 0:
                r["estado"] = f"terminou com código {m['codigo']}"
                ativas.remove(nome)
                dizer(f"    {nome.removeprefix('lab/')}: terminou com código {m['codigo']}; "
                      "sai das rodadas")
                _mostrar_erro(m)
            antes = depois
        if rodada < max(minimo, 2):
            continue
        for nome in list(ativas):
            medianas = resultado[nome]["medianas"]
            mudou = abs(medianas[-1] - medianas[-2]) / medianas[-1]
            if mudou <= tolerancia:
                resultado[nome]["estado"] = (f"estável (a mediana mudou {pct(mudou)} com a "
                                             "última)")
                ativas.remove(nome)
                dizer(f"    {nome.removeprefix('lab/')}: estável (a mediana mudou "
                      f"{pct(mudou)}; até {pct(tolerancia)})")
    for nome in ativas:
        medianas = resultado[nome]["medianas"]
        resultado[nome]["estado"] = "não estabilizou" + (
            f" (a mediana ainda mudou {pct(abs(medianas[-1] - medianas[-2]) / medianas[-1])} "
            "com a última)" if len(medianas) > 1 else "")
    return resultado, pisos


def espalhamento(razoes: list[float]) -> tuple[float, float, float, float]:
    """(mediana, menor, maior, +/- em fração da mediana) das razões de uma lição."""
    med = statistics.median(razoes)
    menor, maior = min(razoes), max(razoes)
    return med, menor, maior, (maior - menor) / 2 / med


def _rodadas(n: int) -> str:
    return f"{n} rodada{'s' if n != 1 else ''}"


def relatorio(resultado: dict, pisos: list[dict]) -> bool:
    """Imprime o piso, cada lição e a tabela do resumo. True: todas dentro das metas."""
    tempos_piso = [m["total"] for m in pisos]
    piso_t = statistics.median(tempos_piso)
    piso_m = mediana(pisos, "pico")
    variacao = (max(tempos_piso) - min(tempos_piso)) / piso_t
    print(f"\n{PISO_NOME}:\n  mediana {num(piso_t, 2)} s, de {num(min(tempos_piso), 2)} a "
          f"{num(max(tempos_piso), 2)} s em {len(tempos_piso)} medidas"
          f"{f'; pico {_mib(piso_m)}' if piso_m else ''}")
    if variacao > 0.15:
        print(f"  O piso variou {pct(variacao)} entre as medidas: a máquina não estava "
              "quieta; compare\n  razões, não segundos.")
    print()
    ok = True
    tabela = []
    for chave, r in resultado.items():
        m = r["medidas"]
        if not m:
            continue
        codigos = sorted({x["codigo"] for x in m})
        print(f"{chave}: {_rodadas(len(m))}\n  {r['estado']}")
        if codigos != [0]:
            print("  sem medida: a lição não terminou com código 0 (o stderr está acima)")
            tabela.append((chave, None))
            ok = False
            continue
        med, menor, maior, mais_menos = espalhamento(r["razoes"])
        primeira, pico = mediana(m, "primeira"), mediana(m, "pico")
        melhor = min(x["total"] for x in m) / min(tempos_piso)
        if primeira is None:
            print("  primeira linha  nenhuma (a lição não imprimiu nada)")
        else:
            print(f"  primeira linha  {num(primeira, 2):>6} s   meta < 0,5 s   "
                  f"{'ok' if primeira < META_PRIMEIRA else 'ACIMA'}")
        print(f"  total           {num(mediana(m, 'total'), 2):>6} s (mediana das rodadas)")
        meta = meta_razao(chave)
        print(f"  razão           {_x(med):>7} o piso (mediana)   meta <= {_x(meta)}   "
              f"{'ok' if med <= meta else 'ACIMA'}")
        print(f"                  de {_x(menor)} a {_x(maior)} (+/- {pct(mais_menos)}); "
              f"melhor/melhor {_x(melhor)}")
        if pico is not None and piso_m:
            print(f"  pico de memória {_mib(pico):>10} = {_x(pico / piso_m)} o piso "
                  f"({_mib(piso_m)})   meta <= 1,5 GB   "
                  f"{'ok' if pico <= META_PICO else 'ACIMA'}")
        else:
            print("  pico de memória: não medido neste sistema (sem os.wait4)")
        certo = (primeira is not None and primeira < META_PRIMEIRA and med <= meta
                 and (pico is None or pico <= META_PICO))
        ok &= certo
        tabela.append((chave, (med, menor, maior, mais_menos, melhor, len(m),
                               "ok" if certo else "ACIMA")))
    medidas = {Path(chave.split(" ")[0]).stem for chave in resultado}
    outras = "".join(f", {n[:2]}: {_x(m)}" for n, m in META_RAZAO_DA.items() if n in medidas)
    print(f"\nResumo: razão = tempo da lição / piso ({num(piso_t, 2)} s), mediana das "
          f"rodadas;\nmeta <= {_x(META_RAZAO)}{outras} e primeira linha < 0,5 s.")
    print(f"  {'lição':<27} {'razão':>6} {'menor':>6} {'maior':>6} {'+/-':>7} "
          f"{'mel/mel':>7} {'rod.':>4}")
    for chave, linha in tabela:
        nome = chave.removeprefix("lab/").replace(".py", "", 1)
        nome = nome if len(nome) <= 27 else "..." + nome[-24:]
        if linha is None:
            print(f"  {nome:<27} FALHOU (terminou com código diferente de 0)")
            continue
        med, menor, maior, mais_menos, melhor, n, veredito = linha
        print(f"  {nome:<27} {_x(med):>6} {_x(menor):>6} {_x(maior):>6} {pct(mais_menos):>7} "
              f"{_x(melhor):>7} {n:>4}  {veredito}")
    return ok


# ---------------------------------------------------------------- a geração (lição 07)
def medir_geracao(pasta: Path, prompt: int, novos: int, threads: int, minimo: int,
                  maximo: int, tolerancia: float) -> bool:
    """A gulosa da lição 07 (o gerar() com cache) contra o generate() do transformers, no
    mesmo GPT-2 de 124M, a partir de `prompt` tokens sorteados, com `threads` threads de
    conta. Num processo só (o modelo carregado uma vez), nas rodadas de rodadas(): o
    generate() faz o papel do piso, e cada medida do nosso laço fica entre duas dele.
    Dois laços: com a atenção pelo SDPA (o padrão, rapida=True) e à mão (rapida=False).
    Os tokens têm de ser os mesmos do generate(); se não forem, a medida sai com código 1.
    True: o padrão fica em até 1,0x o generate() (a mediana das razões)."""
    import torch
    from transformers import GPT2LMHeadModel

    torch.set_num_threads(threads)
    L07 = licao.importar_licao("07_generation")
    hf = GPT2LMHeadModel.from_pretrained(pasta, use_safetensors=True).eval()
    nosso = licao.importar_licao("06_gpt2").nosso_gpt2(hf)
    cfg = hf.config
    ids = torch.randint(0, cfg.vocab_size, (1, prompt),
                        generator=torch.Generator().manual_seed(0))          # (1, prompt)
    deles: list[list[int]] = []

    def generate():
        inicio = time.perf_counter()
        with torch.no_grad():
            saida = L07.generate_deles(hf, ids, novos)                        # (1, prompt + novos)
        total = time.perf_counter() - inicio
        deles.append(saida[0, prompt:].tolist())
        return {"total": total, "codigo": 0}

    def nosso_laco(nome):
        rapida = nome == RAPIDA
        inicio = time.perf_counter()
        with torch.no_grad():
            cache = L07.CacheKV.para(cfg)
            logits, tokens = L07.passo(nosso, ids, cache, rapida=rapida), []   # (1, V)
            for n in range(novos):
                proximo = L07.escolher(logits)                                # (1, 1)
                tokens.append(int(proximo))
                if n < novos - 1:
                    logits = L07.passo(nosso, proximo, cache, rapida=rapida)
        total = time.perf_counter() - inicio
        return {"total": total, "codigo": 0 if tokens == deles[-1] else 1,
                "stderr": [f"tokens diferentes do generate(): {tokens} x {deles[-1]}"]}

    print(f"Geração gulosa a partir de {inteiro(prompt)} tokens sorteados, {novos} tokens "
          f"novos,\n{threads} thread{'s' if threads > 1 else ''} de conta, no GPT-2 de 124M "
          "aleatório. Cada rodada: generate(),\nnosso laço, generate(), ...; a razão é o "
          "tempo do nosso laço / a média dos dois\ngenerate() ao lado.\n", flush=True)
    generate()                                                                # aquece
    resultado, pisos = rodadas([RAPIDA, A_MAO], generate, nosso_laco, minimo, maximo,
                               tolerancia, dizer=lambda texto: print(
                                   texto.replace(" o piso", " o generate()"), flush=True))
    t_deles = [m["total"] for m in pisos]
    print(f"\ngenerate(): mediana {num(statistics.median(t_deles), 2)} s, de "
          f"{num(min(t_deles), 2)} a {num(max(t_deles), 2)} s (compare razões, não "
          "segundos).")
    ok = True
    for nome, r in resultado.items():
        if any(m["codigo"] for m in r["medidas"]):
            print(f"  {nome}: FALHOU ({r['estado']})")
            ok = False
            continue
        med, menor, maior, mais_menos = espalhamento(r["razoes"])
        meta = f"   meta <= 1,0x   {'ok' if med <= 1.0 else 'ACIMA'}" if nome == RAPIDA else ""
        print(f"  {nome:<29} {_x(med):>6} o generate() (mediana){meta}\n"
              f"  {'':<29} de {_x(menor)} a {_x(maior)} (+/- {pct(mais_menos)}), "
              f"{_rodadas(len(r['razoes']))}; mesmos tokens")
        ok &= nome != RAPIDA or med <= 1.0
    return ok


RAPIDA = "nosso laço (atencao_rapida)"
A_MAO = "nosso laço (atenção à mão)"


# ---------------------------------------------------------------- o perfil
def _primeiros_passos_da_10(ambiente: dict, pasta: Path) -> tuple[float, list[str], list[str]]:
    """O treino padrão da lição 10 até a contagem de palavras da amostra do passo 100 (o
    processo para ali): (segundos, as linhas da tabela e das amostras com o tempo
    mascarado, os avisos do Ritmo)."""
    comando = [sys.executable, str(RAIZ / "lab" / "10_treino.py"), "--so", "3", "--sem-figuras",
               "--checkpoint", str(pasta / "ck.pt")]
    inicio = time.perf_counter()
    proc = subprocess.Popen(comando, cwd=RAIZ, env=ambiente, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                            encoding="utf-8", errors="replace")
    linhas, avisos, amostras, no_aviso = [], [], 0, False
    for linha in proc.stdout:
        linha = linha.rstrip("\n")
        if linha.startswith("Ritmo:"):
            avisos.append(linha)
            no_aviso = True
        elif no_aviso and linha and not linha.startswith(" "):
            avisos[-1] += " " + linha                 # o parágrafo do aviso, quebrado
        elif linha.startswith("  "):
            no_aviso = False
            linhas.append(re.sub(r" *[\d.]+,\d s$", " ... s", linha))
        if linha.startswith("  palavras de 3+ letras"):
            amostras += 1
            if amostras == 2:
                break
    segundos = time.perf_counter() - inicio
    proc.kill()
    proc.wait()
    proc.stdout.close()
    return segundos, linhas, avisos


def medir_ocupada(rodadas_: int) -> bool:
    """A lição 10 num notebook ocupado: os 100 primeiros passos do treino padrão (até a
    amostra do passo 100) com a máquina quieta e ao lado de dois processos que ocupam um
    núcleo cada, intercalados (quieta, ocupada, quieta...). As threads ficam por conta da
    lição (sem OMP_NUM_THREADS): o Ritmo dela escolhe. Meta: a ocupada em até 3x a quieta
    (a mediana de cada), com as mesmas perdas e amostras (as linhas iguais, fora o tempo)."""
    ambiente = {k: v for k, v in os.environ.items()
                if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OMP_WAIT_POLICY")}
    ambiente.update(NO_COLOR="1", PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1",
                    HF_HUB_OFFLINE="1")
    print(f"Lição 10, os 100 primeiros passos do treino padrão, {os.cpu_count()} núcleos; "
          f"{_rodadas(rodadas_)} de quieta e ocupada (dois processos ocupando um núcleo "
          "cada), intercaladas.", flush=True)
    tempos = {"quieta": [], "ocupada": []}
    referencia, iguais, avisos = None, True, []
    with tempfile.TemporaryDirectory() as pasta:
        for rodada in range(rodadas_):
            for estado in ("quieta", "ocupada"):
                ocupando = []
                if estado == "ocupada":
                    ocupando = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                                for _ in range(2)]
                    time.sleep(0.5)
                try:
                    segundos, linhas, ditos = _primeiros_passos_da_10(ambiente, Path(pasta))
                finally:
                    for proc in ocupando:
                        proc.kill()
                        proc.wait()
                tempos[estado].append(segundos)
                avisos += ditos
                referencia = referencia or linhas
                if linhas != referencia:
                    iguais = False
                    diferentes = [(a, b) for a, b in zip(referencia, linhas) if a != b]
                    a, b = diferentes[0] if diferentes else (len(referencia), len(linhas))
                    print(f"  a saída mudou: {a!r}\n               {b!r}")
                print(f"  rodada {rodada + 1}, {estado:<7} {num(segundos, 1):>6} s"
                      f"{'  (o Ritmo trocou de threads)' if ditos else ''}", flush=True)
    quieta, ocupada = (statistics.median(tempos[e]) for e in ("quieta", "ocupada"))
    razao = ocupada / quieta
    print(f"\nMediana: quieta {num(quieta, 1)} s, ocupada {num(ocupada, 1)} s: "
          f"{_x(razao)} (meta: até 3,00x). Perdas e amostras "
          f"{'iguais em todas as rodadas' if iguais else 'DIFERENTES entre as rodadas'}.")
    if avisos:
        print("O primeiro aviso do Ritmo:")
        print(textwrap.fill(avisos[0], width=78, initial_indent="  ", subsequent_indent="  "))
    return razao <= 3 and iguais and len(tempos["quieta"]) > 0


META_SEMENTE, META_INSCRICAO = 120.0, 360.0   # s: uma semente, uma inscrição inteira (3)
SEMENTE = re.compile(r"^  semente (\d+): .* \(([\d.]+) s\)$")


def _segundos_das_sementes(linhas: list[str]) -> dict[int, float]:
    """{semente: segundos} das linhas '  semente 0: 3,1284 bits por caractere (52 s)'."""
    return {int(m.group(1)): float(m.group(2).replace(".", "")) for m in map(SEMENTE.match, linhas)
            if m}


def medir_corrida() -> bool:
    """A lição 14 no orçamento inteiro: o --conferir de cada registro que vem com o lab
    (lab/dados/corrida-*.json: a linha de base e os exemplos da apostila) treina as 3 sementes, uma
    thread de conta cada, lado a lado. Mede a inscrição inteira (relógio e CPU dos filhos) e
    cada semente (o tempo que a lição imprime). Metas, numa máquina de 2 núcleos quieta: uma
    semente em até 2 min, uma inscrição em até 6 min (numa máquina dividida, o relógio mente:
    compare o CPU)."""
    import resource

    ambiente = dict(os.environ, NO_COLOR="1", PYTHONIOENCODING="utf-8", HF_HUB_OFFLINE="1")
    for variavel in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        ambiente.pop(variavel, None)
    registros = sorted((RAIZ / "lab" / "dados").glob("corrida-*.json"))
    print(f"Lição 14, --conferir dos {len(registros)} registros do lab, {os.cpu_count()} "
          "núcleos (metas: uma semente <= 2 min, uma inscrição <= 6 min).", flush=True)
    ok = True
    for registro in registros:
        antes = resource.getrusage(resource.RUSAGE_CHILDREN)
        m = medir([sys.executable, str(RAIZ / "lab" / "14_corrida.py"), "--conferir",
                   str(registro)], ambiente)
        depois = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (depois.ru_utime + depois.ru_stime) - (antes.ru_utime + antes.ru_stime)
        sementes = _segundos_das_sementes([l.rstrip("\n") for l in m["saida"]])
        pior = max(sementes.values(), default=float("inf"))
        certo = m["codigo"] == 0 and pior <= META_SEMENTE and m["total"] <= META_INSCRICAO
        print(f"  {registro.name:<32} saída {m['codigo']}; inscrição {num(m['total'], 0):>4} s "
              f"(CPU {num(cpu, 0)} s); sementes "
              + ", ".join(f"{num(t, 0)} s" for _, t in sorted(sementes.items()))
              + f"  {'ok' if certo else 'ACIMA'}", flush=True)
        _mostrar_erro(m)
        ok &= certo
    return ok


def _nome_funcao(arquivo: str, linha: int, funcao: str, espaco: int) -> str:
    """'função (arquivo:linha)' em até `espaco` colunas; o que sobra sai do caminho."""
    if arquivo == "~":  # função embutida: "<built-in method time.sleep>"
        return funcao[:espaco]
    caminho = Path(arquivo)
    try:
        local = caminho.resolve().relative_to(RAIZ).as_posix()
    except (ValueError, OSError):
        local = "/".join(caminho.parts[-2:]) if len(caminho.parts) > 1 else arquivo
    local = f"{local}:{linha}"
    cabe = espaco - len(funcao) - 3
    if len(local) > cabe:
        local = "..." + local[-(cabe - 3):] if cabe > 8 else ""
    return f"{funcao} ({local})" if local else funcao[:espaco]


def _e_importacao(arquivo: str, funcao: str, script: Path) -> bool:
    """O mecanismo de import do Python, ou o corpo de um módulo de fora de lab/ (o que ele
    roda ao ser importado): o tempo disso já sai, somado, na linha das importações."""
    if arquivo.startswith("<frozen importlib") or (
            funcao == "import_module" and Path(arquivo).parent.name == "importlib") or funcao in (
            "<built-in method builtins.exec>", "<built-in method builtins.__import__>",
            "<built-in method _imp.create_dynamic>", "<built-in method _imp.exec_dynamic>"):
        return True
    return funcao == "<module>" and not _da_licao(arquivo, script)


def _da_licao(arquivo: str, script: Path) -> bool:
    """Função escrita em lab/ ou no próprio arquivo medido (a cópia de um aluno, por ex.)."""
    if arquivo.startswith("<") or arquivo == "~":
        return False
    try:
        caminho = Path(arquivo).resolve()
    except OSError:
        return False
    return caminho.parent == RAIZ / "lab" or caminho == script.resolve()


def perfil(script: Path, extra: list[str], ambiente: dict, linhas: int,
           descricao: str = "") -> int:
    """Roda a lição sob o cProfile e mostra onde o tempo vai: as `linhas` funções com mais
    tempo acumulado, fora as importações (somadas numa linha), e as das lições (lab/)."""
    import pstats

    comando_licao = [str(script), *extra]
    print(f"Perfil (cProfile) de uma execução de:\n  {rotulo(script)} {descricao}".rstrip(),
          flush=True)
    with tempfile.TemporaryDirectory() as pasta:
        arquivo = Path(pasta) / "perfil.prof"
        m = medir([sys.executable, "-m", "cProfile", "-o", str(arquivo), *comando_licao],
                  ambiente)
        if not arquivo.exists():
            print("O cProfile não gravou o perfil.")
            _mostrar_erro(m)
            return 1
        estatisticas = pstats.Stats(str(arquivo))
    itens = sorted(estatisticas.stats.items(), key=lambda kv: kv[1][3], reverse=True)
    total = max(estatisticas.total_tt, itens[0][1][3] if itens else 0.0) or 1.0
    # _find_and_load acumula só as chamadas de fora (um import dentro de outro não soma
    # duas vezes): é o tempo de todos os imports.
    importar = max((v[3] for (arq, _l, f), v in itens
                    if arq.startswith("<frozen importlib") and f == "_find_and_load"),
                   default=0.0)
    print(f"{num(m['total'], 2)} s com o cProfile (saída {m['codigo']}); {num(total, 2)} s "
          "dentro do Python medido,\n"
          f"dos quais {num(importar, 2)} s ({pct(importar / total)}) importando módulos "
          "(torch, transformers...).\n"
          "'acumulado' é o tempo na função e nas que ela chama; 'próprio', só dentro dela.\n"
          "O cProfile deixa o Python mais lento: leia as frações.")
    largura = console.largura()

    def tabela(titulo, escolhidos):
        print(f"\n{titulo}")
        print(f"{'acumulado':>9} {'fração':>7} {'próprio':>8} {'chamadas':>9}  função")
        for (arquivo_f, linha, funcao), (_cc, nc, tt, ct, _quem) in escolhidos[:linhas]:
            nome = _nome_funcao(arquivo_f, linha, funcao, largura - 38)
            print(f"{num(ct, 2):>7} s {pct(ct / total):>7} {num(tt, 2):>6} s "
                  f"{inteiro(nc):>9}  {nome}")

    fora = [item for item in itens if not _e_importacao(item[0][0], item[0][2], script)]
    tabela(f"As {min(linhas, len(fora))} funções com mais tempo acumulado, fora as "
           "importações:", fora)
    da_licao = [item for item in itens if _da_licao(item[0][0], script)]
    tabela(f"Só as funções da lição e de lab/ (as {min(linhas, len(da_licao))} primeiras):",
           da_licao)
    _mostrar_erro(m)
    return 0 if m["codigo"] == 0 else 1


# ---------------------------------------------------------------- a linha de comando
def rotulo(script: Path) -> str:
    try:
        return script.relative_to(RAIZ).as_posix()
    except ValueError:
        return str(script)


def _licoes_disponiveis() -> list[Path]:
    return sorted((RAIZ / "lab").glob("[0-9][0-9]_*.py"))


def _lista_de_licoes(texto: str) -> list[Path]:
    """'todas', '05,07', '05_block' ou caminhos de arquivos .py (a cópia de um aluno)."""
    disponiveis = _licoes_disponiveis()
    if texto.strip() == "todas":
        return [p for p in disponiveis if not p.name.startswith("00_")]  # 00 verifica o PC
    escolhidas = []
    for parte in (p.strip() for p in texto.split(",")):
        if not parte:
            continue
        if parte.endswith(".py") and Path(parte).is_file():
            escolhidas.append(Path(parte).resolve())
            continue
        numero = parte.zfill(2) if parte.isdigit() else None
        achadas = [p for p in disponiveis if parte in (p.stem, p.name) or numero == p.stem[:2]]
        if len(achadas) != 1:
            nomes = ", ".join(p.stem for p in disponiveis)
            raise argparse.ArgumentTypeError(
                f"não conheço a lição '{parte}'.\nAs lições: {nomes}; ou 'todas'; ou o "
                "caminho de um arquivo .py")
        escolhidas.append(achadas[0])
    if not escolhidas:
        raise argparse.ArgumentTypeError("informe ao menos uma lição; exemplo: --licoes 05")
    return escolhidas


def _uma_licao(texto: str) -> Path:
    licoes = _lista_de_licoes(texto)
    if len(licoes) != 1:
        raise argparse.ArgumentTypeError("o perfil é de uma lição só; exemplo: --perfil 08")
    return licoes[0]


def _inteiro_positivo(texto: str) -> int:
    try:
        n = int(texto)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{texto}' não é um número inteiro") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{texto}: use um inteiro de 1 para cima")
    return n


def _porcentagem(texto: str) -> float:
    try:
        x = float(texto.replace(",", "."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{texto}' não é um número; exemplo: 2 ou 1,5") \
            from None
    if not 0 < x < 100:
        raise argparse.ArgumentTypeError(f"{texto}: use uma porcentagem entre 0 e 100")
    return x / 100


def _argumentos(texto: str) -> list[str]:
    try:
        return shlex.split(texto, posix=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"não entendi os argumentos {texto!r} (aspas "
                                         "abertas?)") from None


_Parser = opcoes._Parser  # o parser das lições: uso:, opções e erros em português


def criar_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="benchmark.py",
        description="Benchmark das lições: tempo até a primeira linha, tempo total e pico de "
        "memória, cada um contra o piso (iniciar o Python, importar torch e transformers, "
        "carregar o GPT-2 e uma passada), em rodadas que intercalam piso e lições até as "
        "razões pararem de mexer. Usa um GPT-2 de 124M com pesos aleatórios em .bench/ "
        "(criado na primeira vez; não precisa de rede).",
        formatter_class=opcoes._Formatador,
        add_help=False,
        epilog="Exemplos:\n"
        "  benchmark.py --licoes todas\n"
        "  benchmark.py --licoes 05,07,08 --repeticoes 5 --tolerancia 1\n"
        "  benchmark.py --perfil 08 --argumentos \"--so 8\"\n"
        "  benchmark.py --geracao 1000 --repeticoes 5\n"
        "Como ler o espalhamento das razões: veja o começo de ferramentas/benchmark.py.",
    )
    p._optionals.title = "opções"
    p.add_argument("-h", "--help", action="help", help="mostra esta ajuda e sai")
    p.add_argument("--licoes", type=_lista_de_licoes, default="05", metavar="LISTA",
                   help="lições separadas por vírgula: números (05,07), nomes (05_block) "
                   "ou caminhos de arquivos .py; 'todas' = da 01 em diante (padrão: 05)")
    p.add_argument("--repeticoes", type=_inteiro_positivo, default=3, metavar="N",
                   help="rodadas antes de olhar se as razões pararam de mexer (padrão: 3)")
    p.add_argument("--max-rodadas", type=_inteiro_positivo, default=10, metavar="N",
                   help="no máximo N rodadas, mesmo que uma razão ainda mexa (padrão: 10)")
    p.add_argument("--tolerancia", type=_porcentagem, default=0.02, metavar="PCT",
                   help="uma lição para quando a mediana das suas razões muda no máximo "
                   "PCT %% com a última rodada (padrão: 2)")
    p.add_argument("--sem-figuras-tambem", action="store_true",
                   help="mede também cada lição com --sem-figuras (padrão: só como o aluno "
                   "roda, salvando as figuras)")
    p.add_argument("--argumentos", type=_argumentos, default=[], metavar="\"ARGS\"",
                   help="argumentos a mais para cada lição, entre aspas (veja os exemplos)")
    p.add_argument("--perfil", type=_uma_licao, metavar="LIÇÃO",
                   help="em vez do benchmark, roda esta lição uma vez sob o cProfile e "
                   "mostra onde o tempo vai")
    p.add_argument("--perfil-linhas", type=_inteiro_positivo, default=15, metavar="N",
                   help="quantas funções o perfil mostra (padrão: 15)")
    p.add_argument("--tamanhos", default="", metavar="LISTA",
                   help="também mede as lições (uma vez) em pastas aleatórias no formato "
                   "destes GPT-2, ex.: gpt2-medium,gpt2-large")
    p.add_argument("--so-tamanhos", action="store_true",
                   help="pula o piso e as rodadas de 124M; só as pastas de --tamanhos")
    p.add_argument("--geracao", type=_inteiro_positivo, metavar="N",
                   help="em vez do benchmark das lições, a gulosa da lição 07 contra o "
                   "generate() do transformers, a partir de N tokens (ex.: 1000), em "
                   "rodadas intercaladas")
    p.add_argument("--novos", type=_inteiro_positivo, default=16, metavar="N",
                   help="tokens gerados em cada medida de --geracao (padrão: 16)")
    p.add_argument("--threads", type=_inteiro_positivo, default=1, metavar="N",
                   help="threads de conta em --geracao (padrão: 1)")
    p.add_argument("--ocupada", action="store_true",
                   help="em vez do benchmark das lições, os 100 primeiros passos da lição 10 "
                   "com a máquina quieta e ao lado de dois processos ocupando a CPU "
                   "(--repeticoes rodadas de cada); meta: até 3x")
    p.add_argument("--corrida", action="store_true",
                   help="em vez do benchmark das lições, a lição 14 no orçamento inteiro: o "
                   "--conferir de cada registro do lab (3 sementes cada); metas: uma semente "
                   "<= 2 min, uma inscrição <= 6 min")
    return p


def main(argv: list[str] | None = None) -> int:
    console.preparar_saida()
    p = criar_parser()
    args = p.parse_args(argv)
    tamanhos = [t.strip() for t in args.tamanhos.split(",") if t.strip()]
    desconhecidos = [t for t in tamanhos if t not in carregar_gpt2.TAMANHOS_GPT2]
    if desconhecidos:
        p.error(f"--tamanhos: não conheço {', '.join(desconhecidos)}; use "
                f"{', '.join(carregar_gpt2.TAMANHOS_GPT2)}")
    if args.geracao and args.geracao + args.novos > 1024:
        p.error(f"--geracao {args.geracao} mais --novos {args.novos} passa das 1.024 "
                "posições do GPT-2")
    if args.so_tamanhos and not tamanhos:
        p.error("--so-tamanhos precisa de --tamanhos")
    if args.max_rodadas < args.repeticoes:
        p.error(f"--max-rodadas ({args.max_rodadas}) é menor que --repeticoes "
                f"({args.repeticoes})")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # sem barras em inglês
    if args.ocupada:
        return 0 if medir_ocupada(args.repeticoes) else 1
    if args.corrida:
        return 0 if medir_corrida() else 1
    pasta = preparar_modelo()
    ambiente = dict(os.environ, LAB_MODELO=str(pasta), HF_HUB_OFFLINE="1", NO_COLOR="1",
                    PYTHONIOENCODING="utf-8")
    py = sys.executable
    pasta_figuras = RAIZ / ".bench" / "figuras"
    com_figuras = ["--figuras", str(pasta_figuras)]
    if args.geracao:
        return 0 if medir_geracao(pasta, args.geracao, args.novos, args.threads,
                                  args.repeticoes, args.max_rodadas, args.tolerancia) else 1
    if args.perfil:
        return perfil(args.perfil, com_figuras + args.argumentos, ambiente, args.perfil_linhas,
                      f"{shlex.join(args.argumentos)} (figuras em .bench/figuras)".lstrip())
    if args.so_tamanhos:
        return 0 if medir_tamanhos(args.licoes, tamanhos, pasta, ambiente) else 1

    comandos = {}
    for script in args.licoes:
        extra = argumentos_da_licao(script, pasta)
        comandos[rotulo(script)] = [py, str(script), *com_figuras, *extra, *args.argumentos]
        if args.sem_figuras_tambem:
            comandos[f"{rotulo(script)} --sem-figuras"] = [py, str(script), "--sem-figuras",
                                                           *extra, *args.argumentos]
    piso = [py, "-c", PISO.format(pasta=pasta)]
    threads = os.environ.get("OMP_NUM_THREADS")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} núcleos"
          f"{f', OMP_NUM_THREADS={threads}' if threads else ''}. Cada rodada: piso, lição, "
          "piso,\nlição, ..., piso; a razão de cada lição é o tempo dela / a média dos dois "
          "pisos\nao lado. Pelo menos "
          f"{args.repeticoes} rodadas; depois, uma lição para quando a mediana das\nrazões "
          f"muda até {pct(args.tolerancia)} com a última rodada (no máximo "
          f"{args.max_rodadas} rodadas).\n", flush=True)

    # Partes do piso, só para ler de onde ele vem (uma vez cada, fora das rodadas).
    partes = {"python vazio": [py, "-c", "pass"],
              "import torch": [py, "-c", "import torch"],
              "import torch + transformers": [py, "-c", "import torch, transformers; "
                                              "from transformers import GPT2LMHeadModel"]}
    print("Aquecendo (o piso uma vez, sem contar)...", flush=True)
    medir(piso, ambiente)
    picos = {}
    for nome, comando in partes.items():
        m = picos[nome] = medir(comando, ambiente)
        print(f"  {nome:<36} {num(m['total'], 2):>6} s  pico "
              f"{_mib(m['pico']) if m['pico'] else '?':>9}", flush=True)
    print()
    resultado, pisos = rodadas(list(comandos), lambda: medir(piso, ambiente),
                               lambda nome: medir(comandos[nome], ambiente),
                               args.repeticoes, args.max_rodadas, args.tolerancia)
    ok = relatorio(resultado, pisos)
    for script in (s for s in args.licoes if s.name.startswith("13_")):
        print()
        ok &= medir_tucano(script, pasta, ambiente, picos["import torch + transformers"]["pico"])
    if tamanhos:
        print()
        ok &= medir_tamanhos(args.licoes, tamanhos, pasta, ambiente)
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\nInterrompido (Ctrl+C).", flush=True)
        sys.exit(130)
    except BrokenPipeError:  # saída num pipe que fechou (| head): sai quieto
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
