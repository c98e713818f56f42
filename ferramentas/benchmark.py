"""Benchmark das lições: tempo até a primeira linha, tempo total e pico de memória,
cada um ao lado do "piso" (python + import torch e transformers + carregar o GPT-2 +
uma passada), que nenhuma lição consegue evitar.

Usa um GPT-2 do tamanho real (124M, pesos aleatórios) salvo em .bench/, então não
precisa de rede; o tokenizador dele é treinado nos textos das lições, para que eles
virem quase tantos tokens quanto no GPT-2 de verdade. Uso:

    .venv/bin/python ferramentas/benchmark.py                 (Linux/macOS)
    .venv\\Scripts\\python.exe ferramentas\\benchmark.py        (Windows)
    ... --licoes 05_block,06_gpt2 --repeticoes 5

Metas (lição 05): primeira linha < 0,5 s; total <= 2x o piso; pico <= 1,5 GB.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
PASTA_MODELO = RAIZ / ".bench" / "gpt2-aleatorio"

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
sys.path[:0] = [r"{testes}", r"{lab}"]
import torch
from transformers import GPT2Config, GPT2LMHeadModel
import common
from conftest import construir_tokenizador
# O tokenizador aprende os textos das lições: assim eles viram mais ou menos as mesmas
# quantidades de tokens que no GPT-2 de verdade (palavras comuns = um token).
l05 = common.importar_licao("05_block")
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


def medir(comando: list[str], ambiente: dict) -> dict:
    """Roda o comando; devolve segundos até a 1a linha, total e pico de RSS (bytes)."""
    inicio = time.perf_counter()
    proc = subprocess.Popen(comando, cwd=RAIZ, env=ambiente, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    primeira = None
    for _linha in proc.stdout:
        if primeira is None:
            primeira = time.perf_counter() - inicio
    pico = None
    if hasattr(os, "wait4"):
        _pid, status, uso = os.wait4(proc.pid, 0)
        codigo = os.waitstatus_to_exitcode(status)
        pico = uso.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    else:
        codigo = proc.wait()
    total = time.perf_counter() - inicio
    return {"primeira": primeira, "total": total, "pico": pico, "codigo": codigo}


def mediana(medidas: list[dict], chave: str):
    valores = [m[chave] for m in medidas if m[chave] is not None]
    return statistics.median(valores) if valores else None


def main() -> int:
    p = argparse.ArgumentParser(description="Benchmark das lições contra o piso.")
    p.add_argument("--licoes", default="05_block", help="lições, separadas por vírgula")
    p.add_argument("--repeticoes", type=int, default=3, help="rodadas (mediana)")
    args = p.parse_args()
    pasta = preparar_modelo()
    ambiente = dict(os.environ, LAB_MODELO=str(pasta), HF_HUB_OFFLINE="1", NO_COLOR="1",
                    PYTHONIOENCODING="utf-8")
    py = sys.executable
    n = args.repeticoes
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} núcleos; mediana de {n} "
          "rodadas. Cada rodada mede o piso e as lições uma vez, intercaladas: se a\n"
          "máquina ficar mais lenta no meio, o piso e a lição sentem juntos.\n", flush=True)
    PISO_NOME = "piso (imports + carregar + 1 passada)"
    comandos = {
        "python vazio": [py, "-c", "pass"],
        "import torch": [py, "-c", "import torch"],
        "import torch + transformers": [py, "-c", "import torch, transformers; "
                                        "from transformers import GPT2LMHeadModel"],
        PISO_NOME: [py, "-c", PISO.format(pasta=pasta)],
    }
    pasta_figuras = RAIZ / ".bench" / "figuras"
    modos = {"como o aluno roda (com figuras)": ["--figuras", str(pasta_figuras)],
             "com --sem-figuras": ["--sem-figuras"]}
    licoes = []
    for licao in args.licoes.split(","):
        script = RAIZ / "lab" / f"{licao.strip()}.py"
        for modo, extra in modos.items():
            chave = f"lab/{script.name}, {modo}"
            licoes.append(chave)
            comandos[chave] = [py, str(script), *extra]
    medidas = {nome: [] for nome in comandos}
    for rodada in range(n):
        for nome, comando in comandos.items():
            medidas[nome].append(medir(comando, ambiente))
        print(f"  rodada {rodada + 1} de {n}: piso {medidas[PISO_NOME][-1]['total']:.2f} s",
              flush=True)
    print()
    for nome in comandos:
        if nome not in licoes:
            print(f"  {nome:<40} {mediana(medidas[nome], 'total'):6.2f} s  "
                  f"pico {mediana(medidas[nome], 'pico') / 2**20:7.0f} MiB")
    piso_t = mediana(medidas[PISO_NOME], "total")
    piso_m = mediana(medidas[PISO_NOME], "pico")
    print()
    ok = True
    for chave in licoes:
        m = medidas[chave]
        primeira, total, pico = mediana(m, "primeira"), mediana(m, "total"), mediana(m, "pico")
        # razão rodada a rodada (lição / piso da mesma rodada): menos sensível à deriva
        razoes = [a["total"] / b["total"] for a, b in zip(m, medidas[PISO_NOME])]
        codigos = sorted({x["codigo"] for x in m})
        print(f"{chave} (saída {codigos}):")
        print(f"  primeira linha  {primeira:6.2f} s   meta < 0,5 s   "
              f"{'ok' if primeira < 0.5 else 'ACIMA'}")
        print(f"  total           {total:6.2f} s   = {total / piso_t:4.2f}x o piso "
              f"({piso_t:.2f} s)   meta <= 2x   {'ok' if total <= 2 * piso_t else 'ACIMA'}")
        print(f"                  razão por rodada: "
              f"{', '.join(f'{r:.2f}x' for r in razoes)}")
        if pico is not None:
            print(f"  pico de memória {pico / 2**20:6.0f} MiB = {pico / piso_m:4.2f}x o piso "
                  f"({piso_m / 2**20:.0f} MiB)   meta <= 1,5 GB   "
                  f"{'ok' if pico <= 1.5e9 else 'ACIMA'}")
        else:
            print("  pico de memória: não medido neste sistema (sem os.wait4)")
        ok &= primeira < 0.5 and total <= 2 * piso_t and (pico is None or pico <= 1.5e9)
        ok &= codigos == [0]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
