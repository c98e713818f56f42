"""Congela os dados da lição 10: a prosa das apostilas 01 a 09 num arquivo do repositório.

A lição 10 treina um GPT no texto do próprio curso. Se ela lesse as apostilas na hora,
cada correção de uma vírgula numa apostila mudaria as perdas, as amostras e as faixas que a
apostila 10 cita. Por isso ela treina em lab/dados/apostilas.txt, feito uma vez por este
script, e só ele o refaz, de propósito. Uso:

    .venv/bin/python ferramentas/congelar_corpus.py              (Linux/macOS)
    .venv\\Scripts\\python.exe ferramentas\\congelar_corpus.py    (Windows)
    ... --conferir      não grava: diz se o arquivo é o que as apostilas de agora dariam

O texto: cada apostila 01 a 09, em ordem, sem os blocos de código e de saída (```), os
comentários (<!-- -->), as fórmulas em destaque ($$) e as linhas de tabela (as que começam
com |), com as linhas em branco repetidas reduzidas a uma; as apostilas unidas por uma
linha nova. A apostila 10 fica de fora: ela descreve estes dados.

Depois de refazer o arquivo (e só então), atualize o tamanho e o SHA-256 que
tests/test_10_treino.py confere (o script os imprime) e as faixas que a apostila 10 cita
(os testes da lição dizem quais saíram delas). Sai com 0; com --conferir, 1 se o arquivo
difere do que as apostilas dariam agora; 2 num uso errado.
"""
from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
APOSTILAS = RAIZ / "apostilas"
ARQUIVO = RAIZ / "lab" / "dados" / "apostilas.txt"


def prosa(texto: str) -> str:
    """A prosa de uma apostila: sem código, saídas, comentários, fórmulas em destaque e
    tabelas."""
    for bloco in (r"```.*?```", r"<!--.*?-->", r"\$\$.*?\$\$"):
        texto = re.sub(bloco + r"\n?", "", texto, flags=re.S)
    texto = "\n".join(linha for linha in texto.split("\n")
                      if not linha.lstrip().startswith("|"))              # sem tabelas
    return re.sub(r"\n{3,}", "\n\n", texto)                               # o que sobrou


def texto_das_apostilas(pasta: Path = APOSTILAS) -> tuple[str, list[Path]]:
    """(a prosa das apostilas 01 a 09 da pasta, unida; os arquivos lidos)."""
    arquivos = sorted(pasta.glob("0[1-9]_*.md"))
    if not arquivos:
        raise FileNotFoundError(f"não achei as apostilas 01 a 09 em {pasta}")
    partes = [prosa(a.read_text(encoding="utf-8", errors="replace")) for a in arquivos]
    return "\n".join(partes), arquivos


def milhar(n: int) -> str:
    """1.234.567: o ponto do milhar, como a lição imprime."""
    return f"{n:,}".replace(",", ".")


def impressao(texto: str) -> tuple[int, int, str]:
    """(caracteres, bytes em UTF-8, SHA-256 dos bytes) de um texto."""
    dados = texto.encode("utf-8")
    return len(texto), len(dados), hashlib.sha256(dados).hexdigest()


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv not in ([], ["--conferir"]):
        print(f"erro: opção desconhecida {' '.join(argv)!r} (só --conferir).", file=sys.stderr)
        return 2
    try:
        texto, arquivos = texto_das_apostilas()
    except FileNotFoundError as erro:
        print(f"erro: {erro}.", file=sys.stderr)
        return 2
    caracteres, tamanho, sha = impressao(texto)
    relativo = ARQUIVO.relative_to(RAIZ).as_posix()
    origem = f"{len(arquivos)} apostilas ({arquivos[0].name} a {arquivos[-1].name})"
    if argv == ["--conferir"]:
        atual = ARQUIVO.read_bytes() if ARQUIVO.exists() else None
        if atual == texto.encode("utf-8"):
            print(f"{relativo} é o que as {origem}\ndão agora ({milhar(caracteres)} "
                  "caracteres).")
            return 0
        print(f"{relativo} difere do que as {origem} dão agora: a lição 10 segue\n"
              "treinando no arquivo congelado (rode sem --conferir para refazê-lo).")
        return 1
    ARQUIVO.parent.mkdir(parents=True, exist_ok=True)
    ARQUIVO.write_bytes(texto.encode("utf-8"))        # bytes: a mesma linha nova em todo sistema
    print(f"Gravei {relativo} a partir das {origem}:")
    print(f"  {milhar(caracteres)} caracteres, {milhar(tamanho)} bytes em UTF-8")
    print(f"  SHA-256 {sha}")
    print("Atualize o tamanho e o SHA-256 em tests/test_10_treino.py e confira as faixas da\n"
          "apostila 10 com os testes da lição.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
