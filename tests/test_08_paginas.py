"""A página da lição 08 (lab/08_since_2017.py --html): os números dela são os da lição.

As entradas são discretas (216 jeitos de montar o bloco x 2 tamanhos) e a contagem é a do
PyTorch, então a página leva os números já contados pela lição (contagens_da_pagina, que
chama contar_componentes em poucas configurações: cada componente depende só de alguns
controles) e só os soma e formata. O oráculo é contar_componentes em CADA configuração, nos
dois tamanhos (`esperado(cfg)`): se um componente dependesse de um controle que a página não
olha, ou a soma esquecesse um componente, a comparação acusa. Quatro conferências:
- no Node.js, PAGINA.campos() das 216 configurações, campo a campo;
- o código do bloco que a página mostra, das 216, executado em Python com as classes da
  lição: o mesmo bloco que o BlocoConfiguravel (mesmos pesos, mesma saída);
- num Chromium de verdade, sem rede: as predefinições, "mude todos os controles para a
  primeira opção, marque os vieses" e cada opção de cada controle, clicadas; o que a tela
  mostra contra o Python; nenhum erro de JavaScript; nada transborda a 390 e a 1280 px;
- uma página com a soma sem um componente, ou com um erro de JavaScript, ou com o código
  errado, é pega pelas mesmas conferências (o teste sabe falhar).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import json
import re

import pytest
import torch
from torch import nn

from comum.console import inteiro, num
from comum import importar_licao
from navegador import navegador, pagina_gravada, rodar_no_node  # noqa: F401 - navegador: fixture

L08 = importar_licao("08_since_2017")
CHAVES = [c for c, _, _ in L08.CONTROLES]
TODAS = [dict(zip(CHAVES, v)) for v in itertools.product(
    *[[x for x, _ in opcoes] for _, _, opcoes in L08.CONTROLES])]


# ------------------------------------------------------------ o oráculo: o Python da lição
@contextlib.contextmanager
def sem_sortear_pesos():
    """contar_componentes só lê as formas: sortear os pesos iniciais (reset_parameters)
    não muda nenhuma contagem e custa 3/4 do tempo. Sem ele, as 432 contagens levam ~8 s
    em vez de ~30 s (test_contar_sem_sortear_e_o_mesmo confere que dá o mesmo)."""
    classes = (nn.Linear, nn.Embedding, nn.LayerNorm, nn.RMSNorm)
    antes = [c.reset_parameters for c in classes]
    for c in classes:
        c.reset_parameters = lambda self: None
    try:
        yield
    finally:
        for c, f in zip(classes, antes):
            c.reset_parameters = f


@functools.lru_cache(maxsize=None)
def _contagem(valores: tuple, tamanho: str) -> dict:
    with sem_sortear_pesos():
        return L08.contar_componentes(dict(zip(CHAVES, valores)),
                                      dict(L08.TAMANHOS[tamanho], nome=tamanho))


def contagem(cfg: dict, tamanho: str) -> dict:
    """contar_componentes da lição para esta configuração e este tamanho (o modelo inteiro)."""
    return _contagem(tuple(cfg[c] for c in CHAVES), tamanho)


def esperado(cfg: dict) -> dict[str, str]:
    """O texto de cada data-campo da página (menos o código) para a configuração cfg."""
    c = {"nome": f"Configuração: {L08.nome_da_configuracao(cfg)}."}
    for chave in CHAVES:
        c[f"mudou.{chave}"] = "" if cfg[chave] == L08.ANOS["2017"][chave] else "(mudou)"
    base, big = L08.TAMANHOS["base"], L08.TAMANHOS["big"]
    c["kv"] = (f"Cabeças de K/V: {L08.cabecas_kv(cfg, base['h'])} das {base['h']} de consulta "
               f"no tamanho base; {L08.cabecas_kv(cfg, big['h'])} das {big['h']} no big.")
    for tamanho, t in L08.TAMANHOS.items():
        c[f"{tamanho}.descricao"] = (
            f"d = {inteiro(t['d'])}, {t['h']} cabeças, FFN {inteiro(t['ffn'])}, "
            f"{t['camadas']} + {t['camadas']} blocos, vocabulário de "
            f"{inteiro(L08.VOCAB_2017)} compartilhado")
        antes, agora = contagem(L08.ANOS["2017"], tamanho), contagem(cfg, tamanho)
        for g in [*L08.GRUPOS, "total"]:            # como mostrar_painel imprime
            dif = agora[g] - antes[g]
            c[f"{tamanho}.{g}.2017"] = inteiro(antes[g])
            c[f"{tamanho}.{g}"] = inteiro(agora[g])
            c[f"{tamanho}.{g}.dif"] = ("+" if dif > 0 else "\u2212" if dif < 0 else "") + inteiro(
                abs(dif))
        c[f"{tamanho}.milhoes"] = f"{num(agora['total'] / 1e6, 1)}M"   # como por_que_65m
    return c


def diferencas(obtido: dict, esperado_: dict) -> list[str]:
    obtido = {k: v for k, v in obtido.items() if k != "codigo"}
    return [f"campo {k}: só de um lado" for k in sorted(set(esperado_) ^ set(obtido))] + [
        f"{k}: página {obtido[k]!r}, lição {v!r}" for k, v in esperado_.items()
        if k in obtido and obtido[k] != v]


def conferir_codigo(cfg: dict, texto: str) -> None:
    """O código que a página mostra, executado com as classes da lição, é o bloco que
    bloco_de(cfg) monta: os mesmos parâmetros (nomes e formas) e a mesma saída."""
    espaco = {"nn": nn, "Atencao": L08.Atencao, "SwiGLU": L08.SwiGLU,
              "MLPClassico": L08.MLPClassico, "largura_swiglu": L08.largura_swiglu}
    exec(compile(texto, f"<código da página {cfg}>", "exec"), espaco)
    d, h = 32, 8                                    # 8 cabeças: MHA 8, GQA 2, MQA 1 de K/V
    referencia = L08.bloco_de(cfg, {"d": d, "h": h, "ffn": 4 * d}).double().eval()
    bloco = espaco["Bloco"](d, h).double().eval()
    bloco.load_state_dict(referencia.state_dict(), strict=True)   # nomes e formas iguais
    x = torch.randn(2, 5, d, dtype=torch.float64)                 # (B, T, C)
    with torch.no_grad():
        if cfg["posicoes"] == "rope":
            rot = L08.tabela_rope(range(5), d // h, dtype=torch.float64)
            deles, nosso = bloco(x, rot), referencia(x, rot)
        else:
            deles, nosso = bloco(x), referencia(x)
    assert (deles - nosso).abs().max() < 1e-12, f"{cfg}: o código da página dá outro bloco"


# ------------------------------------------------------------ a página gravada
@pytest.fixture(scope="module")
def pagina(tmp_path_factory):
    """A página como o aluno a grava: lab/08_since_2017.py --html PASTA."""
    caminho, r = pagina_gravada("08_since_2017.py", None, tmp_path_factory.mktemp("pagina08"))
    assert f"Página salva: {caminho}" in r.saida
    return caminho


def dados_da(html: str) -> dict:
    return json.loads(re.search(r"^const DADOS = (.*);$", html, re.M).group(1))


def test_pagina_autocontida(pagina):
    html = pagina.read_bytes().decode("utf-8")
    assert '<meta charset="utf-8">' in html and '<html lang="pt-BR">' in html
    assert html.count("<script>") == 1 and "<script src" not in html
    assert "Content-Security-Policy" in html
    assert len(html.encode("utf-8")) < 40_000
    dados = dados_da(html)           # os controles e as predefinições são os da lição
    assert dados["controles"] == [[c, n, [list(o) for o in op]] for c, n, op in L08.CONTROLES]
    assert dados["anos"] == L08.ANOS and dados["grupos"] == L08.GRUPOS
    linha = re.search(r"^const DADOS = .*$", html, re.M).group(0)
    assert not re.search(r"\d\.\d{3}\.\d{3}", linha) and "18944000" in linha  # não formatados


def test_o_2017_e_a_primeira_opcao_de_cada_controle():
    """'Mude todos os controles para a primeira opção, marque os vieses e você obtém o
    artigo de 2017, exatamente': na lição, a primeira opção de cada controle (vieses: sim)."""
    assert {chave: opcoes[0][0] for chave, _, opcoes in L08.CONTROLES} == L08.ANOS["2017"]
    assert L08.CONTROLES[-1][0] == "vieses" and L08.CONTROLES[-1][2][0][0] == "sim"
    assert L08.ANOS["2026"] == {chave: opcoes[-1][0] if chave != "atencao" else "gqa"
                                for chave, _, opcoes in L08.CONTROLES}


def test_contar_sem_sortear_e_o_mesmo():
    for cfg in L08.ANOS.values():
        for tamanho, t in L08.TAMANHOS.items():
            assert contagem(cfg, tamanho) == L08.contar_componentes(cfg, dict(t, nome=tamanho))


def test_as_216_configuracoes_nos_dois_tamanhos(pagina):
    """PAGINA.campos() das 216 configurações, no Node.js: campo a campo o que o Python da
    lição dá (contar_componentes em cada uma, nos dois tamanhos); e o código do bloco de
    cada uma é o BlocoConfiguravel que a lição monta."""
    html = pagina.read_text(encoding="utf-8")
    obtido = rodar_no_node(html, f"{json.dumps(TODAS)}.map(c => PAGINA.campos(c))")
    assert len(obtido) == len(TODAS) == 216
    ruins = [f"{cfg}: {d}" for cfg, o in zip(TODAS, obtido) for d in diferencas(o, esperado(cfg))]
    assert not ruins, "\n".join(ruins[:10])
    assert _contagem.cache_info().currsize == 432
    torch.manual_seed(8)
    for cfg, o in zip(TODAS, obtido):
        conferir_codigo(cfg, o["codigo"])
    codigos = {o["codigo"] for o in obtido}
    assert len(codigos) == 216                  # cada configuração tem o seu código


def test_cada_componente_depende_dos_controles_que_a_pagina_diz():
    """'Cada linha depende só de alguns controles': o 'só' a conferência das 216 prova;
    aqui, que cada controle citado muda mesmo o componente em alguma configuração."""
    for g, chaves in L08.DEPENDE.items():
        for chave in chaves:
            opcoes = [v for c, _, o in L08.CONTROLES if c == chave for v, _ in o]
            assert any(len({contagem(dict(cfg, **{chave: v}), "base")[g] for v in opcoes}) > 1
                       for cfg in TODAS), (g, chave)


# ------------------------------------------------------------ no navegador
def conferir_tela(nav) -> dict:
    """O que a tela mostra contra o Python, para o estado que a página leu dos controles;
    o código marcado é o que difere do de 2017; nenhum erro. Devolve o estado."""
    estado = nav.avaliar("PAGINA.ler()")
    campos = nav.campos()
    ruins = diferencas(campos, esperado(estado))
    assert not ruins, "\n".join(ruins[:10])
    assert campos["codigo"] == nav.avaliar(
        f"PAGINA.campos({json.dumps(estado)}).codigo")
    marcadas = nav.avaliar("Array.from(document.querySelectorAll('#codigo .mudou'),"
                           " s => s.textContent.replace(/\\n$/, ''))")
    de2017 = nav.avaliar(f"PAGINA.campos({json.dumps(L08.ANOS['2017'])}).codigo").split("\n")
    assert marcadas == [a for a, b in zip(campos["codigo"].split("\n"), de2017) if a != b]
    assert nav.erros == []
    return estado


def apertados(nav) -> list[str]:
    return nav.avaliar("Array.from(document.querySelectorAll('#anos button'),"
                       " b => b.getAttribute('aria-pressed'))")


def test_cada_controle_no_navegador(pagina, navegador):
    nav = navegador
    nav.abrir(pagina, 1280, 800)
    assert conferir_tela(nav) == L08.ANOS["2026"]                    # abre no de hoje
    assert apertados(nav) == ["false", "false", "true"]
    for i, ano in enumerate(L08.ANOS):                               # as predefinições
        nav.clicar(f'#anos [data-ano="{ano}"]')
        assert conferir_tela(nav) == L08.ANOS[ano]
        assert apertados(nav) == ["true" if j == i else "false" for j in range(3)]
    nav.clicar('#anos [data-ano="2026"]')
    # "mude todos os controles para a primeira opção, marque os vieses": o artigo de 2017
    for chave, _, opcoes in L08.CONTROLES[:-1]:
        nav.clicar(f'input[name="{chave}"][value="{opcoes[0][0]}"]')
        assert conferir_tela(nav)[chave] == opcoes[0][0]
    assert nav.campos()["nome"] == "Configuração: personalizada."     # falta marcar os vieses
    nav.marcar("#vieses")
    assert conferir_tela(nav) == L08.ANOS["2017"]
    assert nav.campos()["nome"] == "Configuração: a de 2017."
    assert nav.campos()["base.total.dif"] == "0" and apertados(nav)[0] == "true"
    assert nav.avaliar("document.querySelectorAll('#codigo .mudou').length") == 0
    for chave, _, opcoes in L08.CONTROLES[:-1]:                      # cada opção de cada um
        for valor, _ in opcoes[::-1]:
            nav.clicar(f'input[name="{chave}"][value="{valor}"]')
            assert conferir_tela(nav)[chave] == valor
    nav.marcar("#vieses", False)
    assert conferir_tela(nav)["vieses"] == "nao"
    assert conferir_tela(nav) == dict(L08.ANOS["2017"], vieses="nao")


@pytest.mark.parametrize("largura, altura", [(390, 844), (1280, 800)])
def test_cabe_no_celular_e_no_projetor(pagina, navegador, largura, altura, tmp_path):
    nav = navegador
    nav.abrir(pagina, largura, altura)
    assert nav.transbordos() == [] and nav.erros == []
    nav.clicar('#anos [data-ano="2017"]')
    assert nav.transbordos() == [] and nav.erros == []
    menor = nav.menor_fonte()
    assert menor >= 12, f"texto de {menor} px"
    if largura >= 1000:            # no projetor, os controles e o total na primeira tela
        for seletor in ("#controle-vieses", "#tabela-base tr.total"):
            assert nav.avaliar(f"document.querySelector({seletor!r}).getBoundingClientRect()"
                               ".bottom + scrollY") < altura, seletor
    nav.captura(tmp_path / f"08_{largura}.png")


def test_a_pagina_nao_pede_nada_a_rede(pagina, navegador):
    nav = navegador
    nav.abrir(pagina, 1280, 800)
    assert nav.erros == []
    nav.avaliar("fetch('https://exemplo.invalid/x').catch(() => null)")
    nav.avaliar("new Promise(r => setTimeout(r, 100))")
    assert any("pedido bloqueado" in e for e in nav.erros), nav.erros


# ------------------------------------------------------------ o teste sabe falhar
def pagina_modificada(pagina, tmp_path, de, para):
    """A página que a lição gravou, com um trecho do script trocado."""
    html = pagina.read_text(encoding="utf-8")
    assert html.count(de) == 1, de
    caminho = tmp_path / "errada.html"
    caminho.write_text(html.replace(de, para), encoding="utf-8")
    return caminho


def test_uma_pagina_que_esquece_um_componente_falha(pagina, tmp_path, navegador):
    """O total sem as normas (um componente a menos na soma): o teste do navegador acusa
    o total nos dois tamanhos (e só a página errada: a certa passa acima)."""
    nav = navegador
    errada = pagina_modificada(pagina, tmp_path, "c.total = GRUPOS.reduce(",
                               "c.total = GRUPOS.filter(g => g !== \"normas\").reduce(")
    nav.abrir(errada, 1280, 800)
    with pytest.raises(AssertionError) as erro:
        conferir_tela(nav)
    assert "base.total: página '55.900.160', lição '55.916.544'" in str(erro.value)
    assert "big.total: página" in str(erro.value)


def test_uma_pagina_que_lanca_um_erro_falha(pagina, tmp_path, navegador):
    nav = navegador
    errada = pagina_modificada(pagina, tmp_path, "  c.codigo = ",
                               "  if (cfg.mlp === \"gelu\") null.x;\n  c.codigo = ")
    nav.abrir(errada, 1280, 800)
    assert nav.erros == []
    nav.clicar('input[name="mlp"][value="gelu"]')
    assert any("null" in e for e in nav.erros), nav.erros
    assert nav.avaliar("document.getElementById('erro-pagina').textContent").startswith(
        "Erro na página")
    with pytest.raises(AssertionError):
        conferir_tela(nav)


def test_um_codigo_errado_na_pagina_falha(pagina, tmp_path):
    """A RMSNorm sem o eps da lição (o padrão do PyTorch é outro): a execução do código
    acusa a configuração de 2026; e o Post-LN escrito como Pre-LN, a de 2017."""
    for de, para, ano in [('"nn.RMSNorm(d, eps=1e-5)"', '"nn.RMSNorm(d)"', "2026"),
                          ("`        x = self.ln_1(x + self.attn(x${rot}))`",
                           "`        x = x + self.attn(self.ln_1(x)${rot})`", "2017")]:
        html = pagina_modificada(pagina, tmp_path, de, para).read_text(encoding="utf-8")
        texto = rodar_no_node(html, f"PAGINA.campos({json.dumps(L08.ANOS[ano])}).codigo")
        with pytest.raises(AssertionError, match="o código da página dá outro bloco"):
            conferir_codigo(L08.ANOS[ano], texto)


# ------------------------------------------------------------ a apostila
def test_a_apostila_cita_a_pagina_como_ela_e(monkeypatch):
    """A seção da página na apostila: como gravá-la e os números que ela cita, iguais aos
    que a página mostra (o oráculo acima) em 2026 e 2017, e as 18 contagens por tamanho."""
    from conftest import RAIZ

    texto = (RAIZ / "apostilas" / "08_since_2017.md").read_text(encoding="utf-8")
    secao = texto.split("### A página da lição", 1)[1].split("\n### ", 1)[0]
    assert ".venv\\Scripts\\python.exe lab\\08_since_2017.py --html" in secao
    assert ".venv/bin/python lab/08_since_2017.py --html" in secao
    assert "paginas/08_since_2017.html" in secao and "--abrir" in secao
    hoje, artigo = esperado(L08.ANOS["2026"]), esperado(L08.ANOS["2017"])
    frase = (f"Com 2026, o total é {hoje['base.milhoes']} no tamanho base e "
             f"{hoje['big.milhoes']} no big; com 2017, {artigo['base.milhoes']} e "
             f"{artigo['big.milhoes']}.")
    assert frase in " ".join(secao.split())
    assert L08.DEPENDE["posições"] == ["posicoes"]
    assert L08.DEPENDE["atenção"] == ["atencao", "vieses"]
    chamadas, original = [], L08.contar_componentes

    def contando(cfg, tam):
        chamadas.append(tam["nome"])
        return original(cfg, tam)

    monkeypatch.setattr(L08, "contar_componentes", contando)
    with sem_sortear_pesos():
        for nome, tam in L08.TAMANHOS.items():
            L08.contagens_da_pagina(dict(tam, nome=nome))
    n = chamadas.count("base")
    assert n == chamadas.count("big") and f"bastam {n} contagens por tamanho" in " ".join(
        secao.split())
    assert f"{len(TODAS)} configurações" in secao
