"""Os arquivos do aluno, em meus_desafios/ (fora do git): o modelo que a primeira execução
escreve (a assinatura e a docstring da peça, nunca a resposta), a leitura do arquivo dele,
as dicas já dadas e o registro que o professor recolhe.

O registro (meus_desafios/registro.json) guarda, por desafio, a última conferência: se
passou, quantas sondas conferiram, o hash do arquivo conferido, a data e a versão do lab
(um hash dos arquivos do desafio e da lição)."""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import sys
import textwrap
import time
from pathlib import Path

from comum import RAIZ, curto

from . import PASTA as PASTA_DOS_DESAFIOS

__all__ = ["pasta", "arquivo", "escrever_modelo", "ler", "ArquivoComErro", "AindaNaoEscrita",
           "proxima_dica", "registrar", "registro", "hash_do_arquivo", "versao_do_lab"]


def pasta() -> Path:
    """meus_desafios/ na raiz do lab; LAB_DESAFIOS troca a pasta (o professor conferindo
    os arquivos de um aluno, os testes)."""
    return Path(os.environ.get("LAB_DESAFIOS") or RAIZ / "meus_desafios")


def arquivo(desafio) -> Path:
    return pasta() / f"{desafio.chave}.py"


def _comandos(desafio) -> str:
    script = next(PASTA_DOS_DESAFIOS.parent.glob(f"{desafio.licao}_*.py")).name
    return (f"    Windows:      .venv\\Scripts\\python.exe lab\\{script} --desafio {desafio.nome}\n"
            f"    Linux/macOS:  .venv/bin/python lab/{script} --desafio {desafio.nome}")


def _assinatura(funcao) -> str:
    """"(q, k, v, causal=False)": os parâmetros como estão escritos no desafio, letra por
    letra (eps=1e-5, não 1e-05; um padrão como marcar=lambda: None não tem repr que o
    Python leia de volta)."""
    import re

    try:
        cabeca = re.match(r"\s*def \w+(\(.*?\))\s*(?:->[^:]*)?:", inspect.getsource(funcao), re.S)
    except (OSError, TypeError):
        cabeca = None
    return cabeca[1] if cabeca else str(inspect.signature(funcao))


def modelo(desafio) -> str:
    """O texto do arquivo novo: o cabeçalho (o que fazer, como conferir), os imports e a
    função com a assinatura e a docstring da peça, e um corpo que diz 'ainda não escrita'."""
    assinatura = _assinatura(desafio.modelo)
    doc = textwrap.indent(inspect.cleandoc(desafio.modelo.__doc__ or ""), "    ")
    explica = textwrap.fill(f"A apostila explica a peça: {desafio.secao}. A opção --dica dá "
                            "uma dica a mais a cada vez.", width=79)
    imports = desafio.imports.strip() and f"{desafio.imports.strip()}\n"   # "": sem imports
    return (f'r"""Desafio da lição {desafio.licao}: {desafio.titulo}.\n\n'
            f"Escreva o corpo de {desafio.funcao}() abaixo, no lugar do raise. Para conferir:\n\n"
            f"{_comandos(desafio)}\n\n{explica}\n"
            '"""\n'
            f"{imports}\n\n"
            f"def {desafio.funcao}{assinatura}:\n"
            f'    """{doc.strip()}\n    """\n'
            f'    raise NotImplementedError("{_AINDA_NAO}")\n')


_AINDA_NAO = "ainda não escrita"


def escrever_modelo(desafio) -> Path | None:
    """Escreve o arquivo do aluno se ele ainda não existe; devolve o caminho escrito (None:
    já existia, e nada muda: o trabalho do aluno não se perde)."""
    destino = arquivo(desafio)
    if destino.exists():
        return None
    destino.parent.mkdir(parents=True, exist_ok=True)
    destino.write_text(modelo(desafio), encoding="utf-8")
    return destino


class ArquivoComErro(Exception):
    """O arquivo do aluno não carrega (erro de sintaxe, um import que falha) ou não tem a
    função: a mensagem diz o arquivo e a linha."""


class AindaNaoEscrita(Exception):
    """A função ainda levanta o 'ainda não escrita' do modelo."""


def ler(desafio, caminho: Path):
    """A função do aluno, lida do arquivo dele (um módulo novo a cada leitura)."""
    from comum.erros import erro_legivel

    nome = f"meu_desafio_{desafio.chave}"
    spec = importlib.util.spec_from_file_location(nome, caminho)
    modulo = importlib.util.module_from_spec(spec)
    try:
        fonte = Path(caminho).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ArquivoComErro(f"{curto(caminho)} não está em UTF-8: salve-o como UTF-8 no "
                             "editor (no Bloco de Notas: Salvar como, Codificação UTF-8).")
    try:
        codigo = compile(fonte, str(caminho), "exec")
    except SyntaxError as erro:
        linha = (erro.text or "").rstrip()
        raise ArquivoComErro(
            f"FALHOU: erro de sintaxe em {curto(caminho)}:{erro.lineno}: {erro.msg}"
            + (f"\n    {linha.strip()}" if linha else "")) from None
    sys.modules[nome] = modulo
    try:
        exec(codigo, modulo.__dict__)
    except Exception as erro:  # noqa: BLE001 - o erro do aluno, com arquivo e linha
        texto, _ = erro_legivel(erro)
        raise ArquivoComErro(f"o arquivo não carrega:\n{texto}") from None
    funcao = getattr(modulo, desafio.funcao, None)
    if not callable(funcao):
        raise ArquivoComErro(f"{curto(caminho)} não tem a função {desafio.funcao}() (o nome "
                             "precisa ser esse: a lição a chama por ele).")
    return funcao


def hash_do_arquivo(caminho: Path) -> str:
    return hashlib.sha256(Path(caminho).read_bytes()).hexdigest()[:16]


def versao_do_lab(desafio) -> str:
    """Um hash dos arquivos que decidem o veredito: o motor, o desafio e a lição."""
    h = hashlib.sha256()
    licao = next(PASTA_DOS_DESAFIOS.parent.glob(f"{desafio.licao}_*.py"))
    for p in [PASTA_DOS_DESAFIOS / "motor.py", PASTA_DOS_DESAFIOS / f"{desafio.chave}.py", licao]:
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


# ---------------------------------------------------------------- dicas e registro
def _ler_json(nome: str) -> dict:
    try:
        return json.loads((pasta() / nome).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _gravar_json(nome: str, dados: dict) -> None:
    pasta().mkdir(parents=True, exist_ok=True)
    temporario = pasta() / f".{nome}.{os.getpid()}.tmp"
    temporario.write_text(json.dumps(dados, ensure_ascii=False, indent=1, sort_keys=True),
                          encoding="utf-8")
    os.replace(temporario, pasta() / nome)


def proxima_dica(desafio) -> tuple[int, str]:
    """(n, texto) da próxima dica deste desafio; depois da última, a última de novo."""
    dadas = _ler_json("dicas.json")
    n = min(dadas.get(desafio.chave, 0) + 1, len(desafio.dicas))
    dadas[desafio.chave] = n
    _gravar_json("dicas.json", dadas)
    return n, desafio.dicas[n - 1]


def registrar(desafio, caminho: Path, passou: bool, conferem: int, total: int,
              diagnostico: str) -> dict:
    dados = _ler_json("registro.json")
    linha = {"passou": passou, "sondas": f"{conferem}/{total}",
             "hash": hash_do_arquivo(caminho), "data": time.strftime("%Y-%m-%d %H:%M"),
             "versao_do_lab": versao_do_lab(desafio), "diagnostico": diagnostico}
    dados[desafio.chave] = linha
    _gravar_json("registro.json", dados)
    return linha


def registro() -> dict:
    return _ler_json("registro.json")
