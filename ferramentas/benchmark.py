"""Benchmark das lições: tempo até a primeira linha, tempo total e pico de memória,
cada um ao lado do "piso" (python + import torch e transformers + carregar o GPT-2 +
uma passada), que nenhuma lição consegue evitar.

Usa um GPT-2 do tamanho real (124M, pesos aleatórios) salvo em .bench/, então não
precisa de rede; o tokenizador dele é treinado nos textos das lições, para que eles
virem quase tantos tokens quanto no GPT-2 de verdade. Uso:

    .venv/bin/python ferramentas/benchmark.py                 (Linux/macOS)
    .venv\\Scripts\\python.exe ferramentas\\benchmark.py        (Windows)
    ... --licoes 05_block,06_gpt2 --repeticoes 5
    ... --licoes 06_gpt2 --tamanhos gpt2-medium,gpt2-large

Metas (lição 05): primeira linha < 0,5 s; total <= 2x o piso; pico <= 1,5 GB.
Com --tamanhos, cada lição roda também (uma vez) numa pasta aleatória no formato de um
GPT-2 maior, criada em .bench/ na primeira vez: pico de memória / tamanho dos pesos
(meta <= 1,3x) e, se a lição o imprime, o tempo de montar o nosso GPT2 / o de carregar
o modelo do transformers.
"""
from __future__ import annotations

import argparse
import os
import re
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


CRIAR_TAMANHO = """
import shutil, sys
from pathlib import Path
sys.path[:0] = [r"{lab}"]
import torch
from transformers import GPT2Config, GPT2LMHeadModel
import common
L, d, h = common.TAMANHOS_GPT2["{nome}"]
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


def medir_tamanhos(licoes: list[str], nomes: list[str], base: Path, ambiente: dict) -> bool:
    """Cada lição, uma vez, em cada pasta grande: pico / pesos e montar / carregar."""
    ok = True
    for nome in nomes:
        pasta = preparar_tamanho(nome, base)
        pesos = sum(p.stat().st_size for p in pasta.glob("*.safetensors"))
        for licao in licoes:
            script = RAIZ / "lab" / f"{licao}.py"
            m = medir([sys.executable, str(script), "--sem-figuras"],
                      dict(ambiente, LAB_MODELO=str(pasta)))
            print(f"lab/{script.name} numa pasta no formato {nome} (pesos de "
                  f"{pesos / 2**30:.2f} GiB; uma rodada; saída {m['codigo']}):")
            print(f"  total           {m['total']:6.1f} s")
            if m["pico"] is not None:
                razao = m["pico"] / pesos
                print(f"  pico de memória {m['pico'] / 2**30:6.2f} GiB = {razao:4.2f}x os pesos"
                      f"   meta <= 1,3x   {'ok' if razao <= 1.3 else 'ACIMA'}")
                ok &= razao <= 1.3
            carregar = _segundos(r"carregado de .* em ([\d.,]+) s", m["saida"])
            montar = _segundos(r"montado .*?([\d.,]+) s\)", m["saida"])
            if carregar and montar is not None:
                print(f"  montar o nosso GPT2 {montar:5.2f} s = {montar / carregar:4.2f}x o "
                      f"tempo de carregar o do transformers ({carregar:.2f} s)")
            ok &= m["codigo"] == 0
    return ok


def medir(comando: list[str], ambiente: dict) -> dict:
    """Roda o comando; devolve segundos até a 1a linha, total, pico de RSS (bytes) e a saída."""
    inicio = time.perf_counter()
    proc = subprocess.Popen(comando, cwd=RAIZ, env=ambiente, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
                            errors="replace")
    primeira = None
    saida = []
    for linha in proc.stdout:
        saida.append(linha)
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
    return {"primeira": primeira, "total": total, "pico": pico, "codigo": codigo,
            "saida": saida}


def mediana(medidas: list[dict], chave: str):
    valores = [m[chave] for m in medidas if m[chave] is not None]
    return statistics.median(valores) if valores else None


def main() -> int:
    p = argparse.ArgumentParser(description="Benchmark das lições contra o piso.")
    p.add_argument("--licoes", default="05_block", help="lições, separadas por vírgula")
    p.add_argument("--repeticoes", type=int, default=3, help="rodadas (mediana)")
    p.add_argument("--tamanhos", default="",
                   help="também mede as lições (uma vez) em pastas aleatórias no formato "
                        "destes GPT-2, ex.: gpt2-medium,gpt2-large")
    p.add_argument("--so-tamanhos", action="store_true",
                   help="pula o piso e as rodadas de 124M; só as pastas de --tamanhos")
    args = p.parse_args()
    pasta = preparar_modelo()
    tamanhos = [t.strip() for t in args.tamanhos.split(",") if t.strip()]
    desconhecidos = [t for t in tamanhos if t not in ("gpt2", "gpt2-medium", "gpt2-large",
                                                      "gpt2-xl")]
    if desconhecidos:
        p.error(f"--tamanhos: não conheço {', '.join(desconhecidos)}")
    ambiente = dict(os.environ, LAB_MODELO=str(pasta), HF_HUB_OFFLINE="1", NO_COLOR="1",
                    PYTHONIOENCODING="utf-8")
    py = sys.executable
    licoes_nomes = [licao.strip() for licao in args.licoes.split(",")]
    if args.so_tamanhos:
        if not tamanhos:
            p.error("--so-tamanhos precisa de --tamanhos")
        return 0 if medir_tamanhos(licoes_nomes, tamanhos, pasta, ambiente) else 1
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
    for licao in licoes_nomes:
        script = RAIZ / "lab" / f"{licao}.py"
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
    if tamanhos:
        print()
        ok &= medir_tamanhos(licoes_nomes, tamanhos, pasta, ambiente)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
