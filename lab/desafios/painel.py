"""O quadro dos desafios: todos, de todas as lições, e onde cada um está.

    .venv\\Scripts\\python.exe lab\\desafios\\painel.py               (Windows)
    .venv/bin/python lab/desafios/painel.py                        (Linux/macOS)

Sem opções: os seus (meus_desafios/): ainda não escrito, escrito, confere ou não (com o
diagnóstico e a data da última conferência), e se o arquivo mudou depois dela.

--turma PASTA (o professor): confere de novo os arquivos de uma turma, uma pasta por aluno
(PASTA/ana/03_atencao.py ou PASTA/ana/meus_desafios/03_atencao.py), cada lição de cada aluno
num processo separado, com prazo, sobre uma cópia (nada na pasta dos alunos muda). Uma
linha por aluno, e PASTA/turma.csv com uma linha por desafio. Isto RODA o código dos alunos
nesta máquina: rode só arquivos em que você confia (ou numa máquina virtual).

Saída: 0; 2 para uso errado (uma pasta que não existe).
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

PASTA_LAB = Path(__file__).resolve().parent.parent
if str(PASTA_LAB) not in sys.path:
    sys.path.insert(0, str(PASTA_LAB))

from comum import curto, dizer, quebrar  # noqa: E402
from comum.console import largura, preparar_saida  # noqa: E402

import desafios  # noqa: E402

PRAZO_POR_LICAO = 120      # segundos para conferir os desafios de uma lição de um aluno


def nomes_dos_desafios() -> list[tuple[str, str, str]]:
    """[(chave, lição, nome)] de todos os desafios, sem importar o torch."""
    return [(c, c[:2], c[3:]) for c in desafios.chaves()]


def estado(chave: str, pasta: Path, registro: dict) -> str:
    from desafios.aluno import hash_do_arquivo

    arquivo = pasta / f"{chave}.py"
    if not arquivo.exists():
        return "ainda não escrito"
    linha = registro.get(chave)
    if linha is None:
        return "escrito, ainda não conferido"
    quando = f" ({linha['data']})"
    if hash_do_arquivo(arquivo) != linha["hash"]:
        return f"editado depois da última conferência{quando}"
    if linha["passou"]:
        return f"confere{quando}"
    return f"NÃO confere: {linha['diagnostico']}, {linha['sondas']} sondas{quando}"


def quadro() -> int:
    from desafios import aluno

    pasta = aluno.pasta()
    registro = aluno.registro()
    todos = nomes_dos_desafios()
    linhas = [(licao, nome, estado(chave, pasta, registro)) for chave, licao, nome in todos]
    conferem = sum(e.startswith("confere") for _, _, e in linhas)
    escritos = sum(not e.startswith("ainda não") for _, _, e in linhas)
    dizer(f"Os desafios do laboratório: {len(todos)}, em {len({l for _, l, _ in todos})} lições")
    dizer(quebrar(f"Os seus, em {curto(pasta)}: {escritos} escritos, {conferem} conferem."))
    dizer()
    dizer(f"  {'lição':<7}{'desafio':<18}estado")
    for licao, nome, e in linhas:
        dizer(textwrap.fill(f"  {licao:<7}{nome:<18}{e}", width=largura() - 1,
                            subsequent_indent=" " * 27))
    dizer()
    dizer(quebrar("Para começar um: rode a lição com --desafio NOME (ex.: lab/03_attention.py "
                  "--desafio atencao). O registro que o professor recolhe é "
                  f"{curto(pasta / 'registro.json')}."))
    return 0


# ---------------------------------------------------------------- a turma
def _arquivos_do_aluno(pasta: Path) -> Path:
    interna = pasta / "meus_desafios"
    return interna if interna.is_dir() else pasta


def conferir_aluno(pasta: Path, prazo: float) -> dict:
    """{chave: linha do registro} de um aluno: cada lição num processo, numa cópia."""
    import json
    import os
    import shutil
    import subprocess
    import tempfile

    origem = _arquivos_do_aluno(pasta)
    chaves = [c for c, _, _ in nomes_dos_desafios() if (origem / f"{c}.py").exists()]
    resultado = {}
    with tempfile.TemporaryDirectory(prefix="turma_") as temporaria:
        copia = Path(temporaria) / "meus_desafios"
        copia.mkdir()
        for chave in chaves:
            shutil.copy2(origem / f"{chave}.py", copia / f"{chave}.py")
        for licao in sorted({c[:2] for c in chaves}):
            script = next(PASTA_LAB.glob(f"{licao}_*.py"))
            ambiente = dict(os.environ, LAB_DESAFIOS=str(copia), PYTHONIOENCODING="utf-8",
                            NO_COLOR="1")
            try:
                subprocess.run([sys.executable, str(script), "--desafio"], env=ambiente,
                               cwd=str(PASTA_LAB.parent), capture_output=True, timeout=prazo)
            except subprocess.TimeoutExpired:
                for chave in (c for c in chaves if c[:2] == licao):
                    resultado[chave] = {"passou": False, "diagnostico": "demorou demais"}
        try:
            registro = json.loads((copia / "registro.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            registro = {}
    for chave in chaves:
        resultado.setdefault(chave, registro.get(chave) or {
            "passou": False, "diagnostico": "não conferiu (um erro ao carregar o arquivo?)"})
    return resultado


def turma(pasta: Path, prazo: float) -> int:
    import csv

    alunos = sorted(p for p in pasta.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not alunos:
        print(quebrar(f"erro: {curto(pasta)} não tem nenhuma pasta de aluno (uma pasta por "
                      "aluno, com os arquivos NN_nome.py dele)."), file=sys.stderr)
        return 2
    total = len(nomes_dos_desafios())
    dizer(quebrar(f"A turma em {curto(pasta)}: {len(alunos)} alunos, {total} desafios no lab. "
                  f"Cada lição de cada aluno roda num processo, com {prazo:g} s de prazo, numa "
                  "cópia dos arquivos. Atenção: isto roda o código dos alunos nesta máquina."))
    dizer()
    linhas_csv = []
    for p in alunos:
        resultado = conferir_aluno(p, prazo)
        ok = [c for c, r in resultado.items() if r.get("passou")]
        nao = [f"{c} ({r.get('diagnostico', '?')})" for c, r in resultado.items()
               if not r.get("passou")]
        texto = (f"{p.name}: {len(ok)} de {len(resultado)} escritos conferem"
                 + (f"; não: {', '.join(nao)}" if nao else "") + ".")
        dizer(quebrar(texto, recuo=0))
        for chave, r in sorted(resultado.items()):
            linhas_csv.append([p.name, chave, "sim" if r.get("passou") else "não",
                               r.get("sondas", ""), r.get("diagnostico", ""), r.get("hash", ""),
                               r.get("data", ""), r.get("versao_do_lab", "")])
    destino = pasta / "turma.csv"
    with open(destino, "w", newline="", encoding="utf-8") as f:
        escritor = csv.writer(f)
        escritor.writerow(["aluno", "desafio", "confere", "sondas", "diagnostico",
                           "hash_do_arquivo", "data", "versao_do_lab"])
        escritor.writerows(linhas_csv)
    dizer()
    dizer(quebrar(f"Uma linha por desafio de cada aluno: {curto(destino)}."))
    return 0


def main(argv=None) -> int:
    import argparse

    from comum.opcoes import criar_parser  # noqa: F401 - traduz o argparse para o português

    preparar_saida()
    p = argparse.ArgumentParser(prog="lab/desafios/painel.py",
                                description="O quadro dos desafios do laboratório.")
    p.add_argument("--turma", metavar="PASTA", help="confere os arquivos de uma turma, uma "
                   "pasta por aluno (roda o código deles: só em arquivos de confiança)")
    p.add_argument("--prazo", type=float, default=PRAZO_POR_LICAO, metavar="S",
                   help=f"segundos por lição de cada aluno (padrão: {PRAZO_POR_LICAO})")
    args = p.parse_args(argv)
    if args.turma is None:
        return quadro()
    pasta = Path(args.turma)
    if not pasta.is_dir():
        p.error(f"--turma {args.turma}: não há essa pasta")
    return turma(pasta, args.prazo)


if __name__ == "__main__":
    sys.exit(main())
