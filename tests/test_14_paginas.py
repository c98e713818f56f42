"""A página do placar da lição 14 (--placar PASTA --html): a tabela e o gráfico são os
registros da pasta. Oráculos: os registros (as médias e as notas de cada semente, o que o
teste ordena e empata pela definição, 1 + quantas ficaram 0,01 abaixo) e o placar que a lição
imprime no terminal (o resumo do modelo de cada linha). A página de apostilas/paginas/ (o
placar dos registros do lab) é conferida byte a byte por tests/test_paginas.py."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from comum import importar_licao
from comum.console import inteiro, num
from corrida import com_media, corrida, gravar, registro_mini
from navegador import dados_de, navegador, rodar_no_node  # noqa: F401 - navegador: fixture

L14 = importar_licao("14_corrida")
EIXOS = ("parametros", "passos", "tokens_por_parametro")


@pytest.fixture(scope="module")
def placar(tmp_path_factory):
    """Uma turma (o registro minúsculo, dois empatados com ele, um atrás e um editado, que
    fica fora) e a página dela: (pasta, página, saída do terminal, registros da turma)."""
    arquivo, r, _ = registro_mini()
    pasta = tmp_path_factory.mktemp("turma")
    shutil.copy(arquivo, pasta / arquivo.name)
    m = r["media"]
    for nome, media in (("Bia Lima", m + 0.003), ("Caio", m - 0.005), ("Davi", m + 0.05)):
        gravar(pasta, f"{nome.split()[0].lower()}.json", com_media(r, nome, media))
    gravar(pasta, "editado.json", {**com_media(r, "Eva", m - 1), "hash": "0" * 64})
    saida = pasta.parent / f"{pasta.name}-pagina"
    p = corrida("--placar", pasta, "--html", saida)
    assert p.returncode == 0, p.saida[-2000:] + p.erros[-2000:]
    registros = [json.loads(a.read_text(encoding="utf-8")) for a in sorted(pasta.glob("*.json"))]
    return pasta, saida / "14_corrida.html", p.saida, registros


def esperado(saida, registros, eixo, rotulo) -> dict[str, str]:
    """O texto de cada data-campo: das médias e notas dos registros (os que passam nas contas:
    todos menos o de hash editado) e do resumo do modelo que o terminal imprime."""
    bons = sorted((r for r in registros if r["hash"] != "0" * 64),
                  key=lambda r: (r["media"], r["nome"]))
    medias = [r["media"] for r in bons]
    pos = [1 + sum(o <= m - 0.01 for o in medias) for m in medias]
    c = {"legenda": "= : empate, a menos de 0,01 bits (o ruído da média de três sementes). "
                    "Tokens por parâmetro: o Chinchilla usou cerca de 20.",
         "fora": "Fora do placar: corrida-linha-de-base.json: orcamento: 4.001.366.016.000, não "
                 "o desta corrida (200.000.000) Fora do placar: editado.json: hash: não é o "
                 "sha256 da inscrição: a inscrição ou o hash mudou"}
    resumos = re.findall(r"^     (gpt2 .*)$", saida, re.M)
    for k, r in enumerate(bons):
        c[f"linha.{k}.pos"] = f"{pos[k]}{'=' if pos.count(pos[k]) > 1 else ''}"
        c[f"linha.{k}.nome"] = r["nome"]
        c[f"linha.{k}.media"] = num(r["media"], 3)
        c[f"linha.{k}.sementes"] = " ".join(num(x["exato"], 3) for x in r["sementes"])
        c[f"linha.{k}.parametros"] = inteiro(r["parametros"])
        tokens = r["inscricao"]["passos"] * r["inscricao"]["lote"] * r["inscricao"]["contexto"]
        c[f"linha.{k}.tokens"] = num(tokens / r["parametros"], 1)
        c[f"linha.{k}.modelo"] = resumos[k]
    primeiro = bons[0]
    c["frase"] = f"O primeiro, {primeiro['nome']}: " + {
        "parametros": f"{inteiro(primeiro['parametros'])} parâmetros.",
        "passos": f"{inteiro(primeiro['inscricao']['passos'])} passos.",
        "tokens_por_parametro": f"{c['linha.0.tokens']} tokens por parâmetro."}[eixo]
    c["descricao"] = (f"O placar dos registros em {rotulo}: {len(bons)} inscrições e a linha de base, no "
                      "orçamento de 200.000.000 FLOPs (ORÇAMENTO DE TESTE: fora da corrida). "
                      "Nota: bits por caractere na validação, a média das sementes 0, 1 e 2 "
                      "(menos é melhor). As contas são as de lab/14_corrida.py (leia junto: "
                      "apostilas/14_corrida.md).")
    return c


def diferencas(obtido, certo) -> list[str]:
    return [f"{k}: página {obtido.get(k)!r}, esperado {v!r}" for k, v in certo.items()
            if obtido.get(k) != v] + [f"{k}: só na página" for k in set(obtido) - set(certo)]


def test_a_pagina_e_o_placar_dos_registros(placar):
    pasta, pagina, saida, registros = placar
    html = pagina.read_text(encoding="utf-8")
    assert html.count("<script>") == 1 and "Content-Security-Policy" in html
    dados = dados_de(pagina)
    assert dados["pasta"] == f"{pasta.name}/" and dados["empate"] == 0.01
    obtido = rodar_no_node(html, f"{list(EIXOS)}.map(eixo => PAGINA.campos({{eixo}}))")
    ruins = [f"{eixo}: {d}" for eixo, o in zip(EIXOS, obtido)
             for d in diferencas(o, esperado(saida, registros, eixo, f"{pasta.name}/"))]
    assert not ruins, "\n".join(ruins[:10])
    # o terminal e a página dizem as mesmas posições e médias
    linhas = [l.split() for l in saida.splitlines() if re.match(r"^\d+=? ", l)]
    assert [(l[0], l[-6]) for l in linhas] == [
        (obtido[0][f"linha.{k}.pos"], obtido[0][f"linha.{k}.media"]) for k in range(4)]


def test_no_navegador_o_eixo_muda_o_grafico(placar, navegador):
    pasta, pagina, saida, registros = placar
    nav = navegador
    nav.abrir(pagina, 1280, 800)
    for eixo in EIXOS:
        nav.avaliar(f"(() => {{ const s = document.querySelector('#eixo'); s.value = {eixo!r}; "
                    "s.dispatchEvent(new Event('change', {bubbles: true})); })()")
        assert nav.avaliar("PAGINA.ler()") == {"eixo": eixo}
        ruins = diferencas(nav.campos(), esperado(saida, registros, eixo, f"{pasta.name}/"))
        assert not ruins, "\n".join(ruins[:10])
        pontos = nav.avaliar("Array.from(document.querySelectorAll('#grafico [data-ponto]'), "
                             "p => p.dataset.ponto)")
        assert sorted(pontos) == sorted(r["nome"] for r in registros if r["hash"] != "0" * 64)
    assert nav.erros == []


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 720)])
def test_cabe_no_celular_e_no_projetor(placar, navegador, largura, altura):
    _, pagina, _, _ = placar
    nav = navegador
    nav.abrir(pagina, largura, altura)
    assert nav.transbordos() == [] and nav.erros == []
    assert nav.menor_fonte() >= 12
    assert nav.alcancaveis("#eixo")
