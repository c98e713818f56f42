"""As páginas: o painel de uma lição num arquivo .html que abre com um duplo clique, sem
internet (o estilo e o script vão dentro dele, e uma política de segurança na própria
página bloqueia qualquer pedido à rede). Só o --abrir abre o navegador (nunca os testes).

O HTML, o JavaScript e o CSS moram em lab/html/: os de cada lição (NN_nome.*, lidos com
fonte()) e os de todas as páginas (comum.css, comum_formatos.js, comum_kit.js). Como
uma lição escreve a sua página e como ela é testada: tests/README.md, "As páginas".
"""
from __future__ import annotations

import html as _html
import json
from pathlib import Path

from .console import dizer, quebrar
from .caminhos import PASTA_LAB, RAIZ
from .erros import ExperimentoPulado, erro_legivel, traceback_pedido
from .opcoes import opcao

__all__ = ["opcoes", "pedida", "documento", "gravar", "abrir", "PASTA_PADRAO", "fonte"]

PASTA_PADRAO = RAIZ / "paginas"


# ---------------------------------------------------------------- as opções
def opcoes(do_treino: bool = False) -> list:
    """As opções --html [PASTA] e --abrir, para o opcoes=[...] de uma Licao. do_treino=True:
    a página sai de um treino da lição (10, 11), que a grava no fim; --html só diz onde."""
    if do_treino:
        return [
            opcao("--html", None, None, "a pasta da página que o treino grava no fim (um "
                  "arquivo .html que abre sem internet, com um duplo clique; padrão: a pasta "
                  "paginas/ do lab)", "PASTA", nargs="?", const=str(PASTA_PADRAO)),
            opcao("--abrir", "flag", None, "abre no navegador a página que o treino grava"),
        ]
    return [
        opcao("--html", None, None, "grava a página interativa da lição (um arquivo .html "
              "que abre sem internet, com um duplo clique) em PASTA e sai, sem rodar os "
              "experimentos (sem PASTA: a pasta paginas/ do lab)", "PASTA", nargs="?",
              const=str(PASTA_PADRAO)),
        opcao("--abrir", "flag", None, "grava a página (como --html) e a abre no navegador"),
    ]


def pedida(args) -> bool:
    """A linha de comando pediu a página (--html ou --abrir)?"""
    return getattr(args, "html", None) is not None or bool(getattr(args, "abrir", False))


# ---------------------------------------------------------------- o documento
# Nenhum pedido a lugar nenhum: só o estilo e o script de dentro do arquivo.
POLITICA = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "img-src data:; base-uri 'none'; form-action 'none'")


FONTES = PASTA_LAB / "html"


def fonte(nome: str) -> str:
    """O texto de lab/html/<nome>: o HTML, o CSS e o JavaScript de uma página moram em
    arquivos próprios (a lição fica com o que calcula; o navegador, com o que mostra)."""
    return (FONTES / nome).read_text(encoding="utf-8")


def _json_no_script(dados) -> str:
    """dados em JSON, seguro dentro de <script> (nada de '</script>' nem '<!--')."""
    texto = json.dumps(dados, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return texto.replace("</", "<\\/").replace("<!--", "<\\!--")


# O que toda página leva, de lab/html/: comum.css, o estilo; comum_formatos.js, antes do
# script da lição, os formatos de console.py em JavaScript com os mesmos arredondamentos
# (o Python arredonda o valor binário exato, metade para o par: 0.125 -> '0.12';
# toFixed e toExponential mandam a metade para cima e toFixed desiste a partir de 1e21;
# ali o valor exato de cada double sai em dígitos decimais, com BigInt, e o arredondamento
# é o do Python; tests/test_paginas.py compara com console.py em mais de mil valores); e
# comum_kit.js, depois dele, o que toda página faz com o PAGINA da lição: liga os
# controles, preenche os campos, desenha e mostra numa faixa vermelha qualquer erro.
def documento(titulo: str, corpo: str, script: str, dados=None, estilo: str = "",
              descricao: str = "") -> str:
    """O HTML inteiro de uma página: um arquivo só, que não pede nada à rede.

    corpo: o HTML de dentro do <main>; script: o JavaScript da lição (define PAGINA);
    dados: vira `const DADOS = ...` (JSON); estilo: CSS além do comum (comum.css)."""
    if "</script" in script.lower():
        raise ValueError("o script da página não pode conter '</script'")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="pt-BR">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLITICA}">',
        *([f'<meta name="description" content="{_html.escape(descricao)}">'] if descricao
          else []),
        f"<title>{_html.escape(titulo)}</title>",
        f"<style>\n{fonte('comum.css')}{estilo}</style>",
        "</head>",
        "<body>",
        '<p id="erro-pagina" role="alert" hidden></p>',
        f"<main>\n{corpo.strip()}\n</main>",
        "<script>",
        '"use strict";',
        f"const DADOS = {_json_no_script(dados if dados is not None else {})};",
        fonte("comum_formatos.js").strip(),
        script.strip(),
        fonte("comum_kit.js").strip(),
        "</script>",
        "</body>",
        "</html>",
        "",
    ])


# ---------------------------------------------------------------- gravar e abrir
def gravar(licao, pagina, nome: str) -> int:
    """Grava pagina() (o HTML) em --html PASTA (ou paginas/) com o nome dado, imprime o
    caminho e, com --abrir, abre no navegador. Devolve o código de saída (0 ou 1)."""
    try:
        html = pagina() if callable(pagina) else pagina
    except ExperimentoPulado as motivo:  # ex.: a página sai do GPT-2, que não está aqui
        dizer(quebrar(f"PULADO: a página {nome}: {motivo}"))
        return 1
    except Exception as erro:  # noqa: BLE001 - o erro do aluno, com arquivo e linha
        if traceback_pedido():
            raise
        dizer(erro_legivel(erro)[0])
        return 1
    pasta = Path(getattr(licao.args, "html", None) or PASTA_PADRAO)
    caminho = pasta / nome
    try:
        pasta.mkdir(parents=True, exist_ok=True)
        caminho.write_text(html, encoding="utf-8", newline="\n")
    except OSError as erro:
        dizer(f"Não consegui gravar a página {caminho}: {erro.strerror or erro}")
        return 1
    dizer(f"Página salva: {caminho}")  # o caminho é do aluno: uma linha só
    dizer("Abra com um duplo clique: funciona sem internet, em qualquer navegador.")
    if getattr(licao.args, "abrir", False):
        abrir(caminho)
    return 0


def abrir(caminho: Path) -> bool:
    """Abre o arquivo no navegador padrão (o webbrowser do Python); sem navegador, diz
    o que fazer. Só com --abrir: um teste, o CI ou uma sessão por SSH nunca abre nada."""
    import webbrowser

    try:
        aberto = webbrowser.open(Path(caminho).resolve().as_uri())
    except webbrowser.Error:
        aberto = False
    if not aberto:
        dizer("(não encontrei um navegador para abrir a página: abra o arquivo acima "
              "com um duplo clique)")
    return aberto
