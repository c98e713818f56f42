"""A inscrição minúscula da lição 14 e o registro dela, feito uma vez na sessão: os testes da
lição (tests/test_14_corrida.py) e os da página do placar (tests/test_14_paginas.py) leem o
mesmo. O orçamento é o de teste (LAB_CORRIDA_ORCAMENTO): o registro diz que não é oficial."""
from __future__ import annotations

import json
from pathlib import Path

import sessao
from conftest import rodar_script
from comum import importar_licao

L14 = importar_licao("14_corrida")
TESTE = {"LAB_CORRIDA_ORCAMENTO": "2e8"}          # o orçamento de teste: 200 milhões de FLOPs
MINI = {**L14.INSCRICAO_DA_LICAO_10, "camadas": 1, "largura": 16, "cabecas": 2,
        "cabecas_kv": 2, "contexto": 16, "lote": 4, "taxa": 3e-3, "aquecimento": 5,
        "passos": 50}


def gravar(pasta: Path, nome: str, dados) -> Path:
    pasta.mkdir(parents=True, exist_ok=True)
    arquivo = pasta / nome
    arquivo.write_text(json.dumps(dados, ensure_ascii=False), encoding="utf-8")
    return arquivo


def corrida(*args, env=None, **kw):
    """lab/14_corrida.py com o orçamento de teste, como um aluno (cp1252, 80 colunas)."""
    return rodar_script("14_corrida.py", *map(str, args), env={**TESTE, **(env or {})}, **kw)


def registro_mini():
    """(arquivo, conteúdo, saída) do registro da inscrição MINI de "Ana Souza" (uma vez na
    sessão, numa pasta dela)."""
    pasta = sessao.pasta_da_sessao("l14_registro")

    def inscrever():
        entrada = gravar(pasta, "mini.json", MINI)
        r = corrida("--inscrever", entrada, "--nome", "Ana Souza", "--pasta", pasta / "turma")
        return r.returncode, r.saida, r.erros

    codigo, saida, erros = sessao.compartilhado("14 inscrever a mini", inscrever)
    assert codigo == 0, saida[-3000:] + erros[-2000:]
    arquivo, = (pasta / "turma").glob("ana-souza-*.json")
    return arquivo, json.loads(arquivo.read_text(encoding="utf-8")), saida


def com_media(r, nome, media):
    """Uma cópia do registro com outro nome e notas que dão esta média: passa nas contas sem
    treino (só o --conferir, treinando de novo, a pega)."""
    copia = json.loads(json.dumps(r))
    copia["nome"] = nome
    for k, x in enumerate(copia["sementes"]):
        x["exato"] = media + (k - 1) * 0.001
        x["bits_por_caractere"] = round(x["exato"], 6)
    copia["media"] = sum(x["exato"] for x in copia["sementes"]) / 3
    return copia


def licao_inteira():
    """A execução que tests/test_apostilas.py faz para os blocos da apostila 14 (--so 1,2,3,4,
    a saída em UTF-8): os testes da lição e da apostila leem a mesma (uma vez na sessão)."""
    r = rodar_script("14_corrida.py", "--so", "1,2,3,4", "--sem-figuras",
                     env={"PYTHONIOENCODING": "utf-8"})
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")
