"""Lição 14, a corrida: o orçamento contado (a lição 10 gasta exatamente 4.001.366.016 FLOPs
por passo, a conta fechada da 12; um passo a mais é recusado sem treinar), a nota por
caractere (o denominador contado à parte no arquivo; um modelo uniforme dá log2 V bits por
token), o registro (a mesma inscrição duas vezes dá as mesmas notas; em outra CPU, a menos
de 1e-5), o --conferir (um registro editado falha e diz o campo), o placar (empates de
0,01, a linha de base sempre nele), a final, o Ctrl+C que guarda o que terminou, e a linha de
base do lab contra o treino padrão da lição 10.

Os treinos daqui usam um orçamento de teste minúsculo (LAB_CORRIDA_ORCAMENTO): os registros
dele dizem que não são oficiais e ficam fora do placar oficial."""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import sessao
from conftest import RAIZ, ambiente_de_aluno, rodar_script
from corrida import MINI, com_media, corrida, gravar, licao_inteira, registro_mini
from comum import importar_licao, uma_thread

L09 = importar_licao("09_scaling")
L10 = importar_licao("10_treino")
L14 = importar_licao("14_corrida")


def curtas(r) -> list[str]:
    """As linhas de mais de 80 colunas, fora as que citam um caminho (o do aluno cabe; o de
    uma pasta temporária dos testes, não)."""
    return [linha for linha in r.saida.splitlines() if len(linha) > 80 and "pytest-" not in linha]


@pytest.fixture(scope="module")
def registro():
    return registro_mini()


# ---------------------------------------------------------------- as regras
def test_a_inscricao_da_licao_10_sao_as_opcoes_padrao_dela():
    import inspect

    from comum.licao import criar_parser

    padrao = criar_parser("x", "x", [], L10.LICAO.opcoes).parse_args([])
    c = L14.INSCRICAO_DA_LICAO_10
    assert (c["camadas"], c["largura"], c["cabecas"], c["contexto"], c["lote"], c["taxa"],
            c["passos"]) == (padrao.camadas, padrao.largura, padrao.cabecas, padrao.contexto,
                             padrao.lote, padrao.taxa, padrao.passos)
    assert c["aquecimento"] == L10.passos_de_aquecimento(padrao.passos)
    assert c["fracao_final"] == inspect.signature(L10.taxa).parameters["final"].default
    assert c["decaimento"] == inspect.signature(L10.adamw).parameters["decaimento"].default
    assert (c["bloco"], c["cabecas_kv"], c["tokenizador"], c["fusoes"]) == (
        "gpt2", c["cabecas"], "caracteres", 0)
    assert L14.conferir_inscricao(json.loads(json.dumps(c))) == c


def test_o_padrao_conta_o_passo_da_licao_12_e_o_orcamento_e_1000_deles():
    """4.001.366.016 FLOPs por passo, como a lição 12 conta num passo de verdade na CPU, e
    como a conta fechada dela dá; o orçamento é 1.000 passos desses."""
    c = L14.INSCRICAO_DA_LICAO_10
    contados = L14.flops_por_passo(c, 128)
    L, d, T, B, V = 4, 128, 64, 12, 128
    assert contados == (6 * (12 * L * d * d + V * d) + 12 * L * T * d) * B * T == 4_001_366_016
    config = {"camadas": L, "largura": d, "cabecas": 4, "contexto": T, "alfabeto": L10.ALFABETO}
    modelo = L10.novo_modelo(config, 0)                         # na CPU, como a 12 conta
    x, y = L10.lote(torch.arange(5000) % V, B, T, torch.Generator().manual_seed(0))
    assert L09.contar_flops(lambda: L10.perda(modelo, x, y).backward()) == contados
    assert L14.ORCAMENTO_OFICIAL == 1000 * contados == 4_001_366_016_000


def test_o_llama_e_o_bpe_pagam_a_atencao_e_a_cabeca():
    """No Llama (atenção fundida na CPU), a corrida conta a atenção: a conta fechada da lição
    08 (as matrizes) mais 3 x 4LTd por token; o BPE paga a cabeça de V = 256 + fusões."""
    c = {**L14.INSCRICAO_DA_LICAO_10, "bloco": "llama", "cabecas_kv": 2, "contexto": 32,
         "tokenizador": "bpe", "fusoes": 40}
    L, d, h, kv, T, B = 4, 128, 4, 2, 32, 12
    V, w = 256 + 40, L14.L08.largura_swiglu(d)
    matrizes = L * (2 * d * d + 2 * d * kv * (d // h) + 3 * d * w) + V * d
    assert L14.flops_por_passo(c, V) == (6 * matrizes + 12 * L * T * d) * B * T
    modelo = L14.novo_modelo(c, V, 0)                           # na CPU, a atenção fundida
    x = torch.zeros(B, T, dtype=torch.long)
    vista = L09.contar_flops(lambda: L10.perda(modelo, x, x).backward())
    assert vista == 6 * matrizes * B * T                        # o ponto cego do contador
    assert L14.vocabulario(c) == V


def test_um_passo_a_mais_e_recusado_antes_de_treinar(tmp_path, monkeypatch, capsys):
    """A inscrição da lição 10 com 1.001 passos, no orçamento oficial: recusada com a conta e
    os passos que cabem, saída 2, nada treinado e nada gravado (o --inscrever da lição, aqui
    no processo do teste: a saída 2 num processo de verdade é a do teste seguinte)."""
    from types import SimpleNamespace

    entrada = gravar(tmp_path, "a.json", {**L14.INSCRICAO_DA_LICAO_10, "passos": 1001})
    treinou = []
    monkeypatch.setattr(L14, "treinar_sementes", lambda *a, **k: treinou.append(a))
    monkeypatch.delenv("LAB_CORRIDA_ORCAMENTO", raising=False)
    args = SimpleNamespace(nome="Ana", inscrever=str(entrada), pasta=str(tmp_path / "turma"))
    assert L14.inscrever(args) == 2
    texto = " ".join(capsys.readouterr().out.split())
    assert "Recusada antes de treinar: passos: 1.001 passos x 4.001.366.016 FLOPs" in texto
    assert "cabem 1.000 passos" in texto
    assert not treinou and not (tmp_path / "turma").exists()


@pytest.mark.parametrize("mudanca, campo", [
    ({"largua": 128}, "largua"),
    ({"cabecas_kv": 2}, "cabecas_kv"),                  # o GPT-2 não tem GQA
    ({"camadas": 4.0}, "camadas"),
    ({"tokenizador": "bpe"}, "fusoes"),
    ({"bloco": "llama", "largura": 12, "cabecas": 4, "cabecas_kv": 4}, "cabecas"),  # dh ímpar
    ({"passos": 10_001}, "passos"),
])
def test_inscricoes_fora_das_regras_dizem_o_campo(mudanca, campo):
    dados = {**L14.INSCRICAO_DA_LICAO_10, **mudanca}
    with pytest.raises(L14.Recusada) as erro:
        L14.conferir_inscricao(dados)
    assert erro.value.campo == campo, str(erro.value)


def test_uma_inscricao_gravada_pelo_bloco_de_notas_e_lida(tmp_path):
    """O Bloco de Notas do Windows grava UTF-8 com BOM; uma vírgula decimal dá uma dica."""
    com_bom = tmp_path / "bom.json"
    com_bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(L14.INSCRICAO_DA_LICAO_10).encode())
    assert L14.ler_inscricao(com_bom) == L14.INSCRICAO_DA_LICAO_10
    virgula = gravar(tmp_path, "v.json", {})
    virgula.write_text('{"taxa": 0,001}', encoding="utf-8")
    with pytest.raises(L14.Recusada, match="o decimal é com ponto, 0.001"):
        L14.ler_inscricao(virgula)


def test_arquivos_e_opcoes_errados_saem_com_2(tmp_path):
    ruim = tmp_path / "ruim.json"
    ruim.write_text('{"bloco": "gpt2",\n "camadas": }', encoding="utf-8")
    r = rodar_script("14_corrida.py", "--inscrever", str(ruim), "--nome", "Ana")
    assert r.returncode == 2 and "não é JSON válido: linha 2, coluna 13" in " ".join(
        r.saida.split())
    for args in (["--final", str(tmp_path), "--sementes", "1,100"],):   # saída 2: processo novo
        r = rodar_script("14_corrida.py", *args)
        assert r.returncode == 2 and "Traceback" not in r.saida + r.erros, (args, r.erros)
        assert r.erros.startswith("erro:"), (args, r.erros)


# ---------------------------------------------------------------- a nota
def normalizado(texto: str) -> str:
    """O texto com os caracteres fora do alfabeto da lição 10 trocados por '\\ufffd'."""
    alfabeto = set(L10.ALFABETO)
    return "".join(c if c in alfabeto else "\ufffd" for c in texto)


def validacao_contada_a_parte() -> str:
    """A validação da lição 10 refeita daqui: um pedaço de 1.000 caracteres a cada 10."""
    texto = normalizado((RAIZ / "lab" / "dados" / "apostilas.txt").read_text(encoding="utf-8"))
    pedacos = [texto[i:i + 1000] for i in range(0, len(texto), 1000)]
    return "".join(p for k, p in enumerate(pedacos) if k % 10 == 9)


@pytest.mark.parametrize("tokenizador", ["caracteres", "bpe"])
def test_o_denominador_sao_os_caracteres_e_um_modelo_uniforme_da_log2_V(tokenizador):
    """Um modelo com a cabeça zerada dá a mesma probabilidade a todo token: log2 V bits por
    token previsto. Todo token do texto é previsto uma vez (com a linha nova antes), e o
    denominador é o número de caracteres do texto, contado aqui no arquivo."""
    c = {**MINI, "contexto": 24, "tokenizador": tokenizador,
         "fusoes": 30 if tokenizador == "bpe" else 0}
    validacao = validacao_contada_a_parte()
    assert L14.textos()[1] == validacao and len(validacao) == 30_000
    tok = L14.tokenizador(c, L14.textos()[0])
    modelo = L14.novo_modelo(c, len(tok), 0)
    with torch.no_grad():
        modelo.wte.weight.zero_()                     # logits = x @ wte.T = 0: uniforme
    bits, caracteres, previstos = L14.pontuar(modelo, tok, validacao, c["contexto"])
    assert caracteres == len(validacao)
    ids = tok.codificar(validacao)
    assert previstos == len(ids) and tok.decodificar(ids) == validacao
    assert bits == pytest.approx(len(ids) * math.log2(len(tok)), rel=1e-6)   # float32
    assert L14.bits_por_caractere(modelo, tok, validacao, c["contexto"]) == pytest.approx(
        len(ids) * math.log2(len(tok)) / 30_000, rel=1e-6)
    if tokenizador == "bpe":
        assert len(tok) == 256 + 30 and len(ids) < 30_000


def test_um_tokenizador_que_nao_volta_e_recusado_antes_de_treinar(monkeypatch):
    class Minusculas(L10.Caracteres):
        def codificar(self, texto):
            return super().codificar(texto.lower())

    assert L14.ida_e_volta(L14.BPE(L14.L01.treinar_bpe(L14.textos()[0][:20_000], 20)),
                           L14.textos()[1]) is None
    posicao = L14.ida_e_volta(Minusculas(), L14.textos()[1])
    assert posicao is not None and L14.textos()[1][posicao].isupper()
    monkeypatch.setitem(L14._TOKENIZADORES, ("caracteres", 0), Minusculas())
    treinou = []
    monkeypatch.setattr(L14, "treinar", lambda *a, **k: treinou.append(1))
    with pytest.raises(L14.Recusada, match="não volta ao texto de treino") as erro:
        L14.treinar_sementes(MINI, [0], {"validação": L14.textos()[1]})
    assert erro.value.campo == "tokenizador" and not treinou


# ---------------------------------------------------------------- o registro
def test_o_registro_tem_tudo(registro):
    arquivo, r, saida = registro
    assert arquivo.name == f"ana-souza-{L14.hash_da_inscricao(MINI)[:8]}.json"
    assert r["inscricao"] == MINI and r["hash"] == L14.hash_da_inscricao(MINI)
    assert r["flops_por_passo"] == L14.flops_por_passo(MINI, 128) and r["orcamento"] == 2 * 10**8
    assert r["flops_total"] == 50 * r["flops_por_passo"] and r["oficial"] is False
    assert [x["semente"] for x in r["sementes"]] == [0, 1, 2] and r["completa"] is True
    for x in r["sementes"]:
        assert isinstance(x["exato"], float) and x["bits_por_caractere"] == round(x["exato"], 6)
    assert r["media"] == sum(x["exato"] for x in r["sementes"]) / 3
    assert r["texto"]["caracteres"] == 30_000
    amb = r["ambiente"]
    assert amb["torch"] == torch.__version__ and amb["threads"] == 1
    assert amb["cpu"] == torch.backends.cpu.get_cpu_capability() and len(amb["lab"]) == 12
    assert "orçamento de teste: fora do placar" in saida and "ORÇAMENTO DE TESTE" in saida
    assert not [l for l in saida.splitlines() if len(l) > 80 and "sessao" not in l]


def test_o_conferir_passa_no_registro_de_verdade(registro):
    arquivo, r, _ = registro
    c = corrida("--conferir", arquivo)
    assert c.returncode == 0, c.saida[-2000:]
    assert "CONFERE: as 3 sementes treinadas aqui dão as notas do registro" in " ".join(
        c.saida.split())
    assert c.saida.count("< 1e-6") == 3 and not curtas(c)


def _editar(r, como):
    copia = json.loads(json.dumps(r))
    como(copia)
    return copia


def _nota_editada(x):
    x["sementes"][1]["exato"] += 0.02
    x["sementes"][1]["bits_por_caractere"] = round(x["sementes"][1]["exato"], 6)
    x["media"] = sum(s["exato"] for s in x["sementes"]) / 3


@pytest.mark.parametrize("como, campo, treina", [
    (lambda x: x.update(media=x["media"] - 0.1), "media", False),
    (lambda x: x.update(flops_total=x["flops_total"] // 2), "flops_total", False),
    (lambda x: x.update(flops_por_passo=x["flops_por_passo"] - 1), "flops_por_passo", False),
    (lambda x: x["inscricao"].update(passos=40), "hash", False),
    (lambda x: x.update(oficial=True), "oficial", False),
    (lambda x: x.update(parametros=x["parametros"] * 7), "parametros", False),
    (lambda x: x["sementes"][0].update(bits_por_caractere=1.0), "sementes[0].bits_por_caractere",
     False),
    (_nota_editada, "sementes[1].exato", True),
], ids=["media", "flops_total", "flops_por_passo", "passos", "oficial", "parametros", "6_casas",
        "nota"])
def test_um_registro_editado_nao_confere_e_diz_o_campo(registro, tmp_path, como, campo, treina):
    _, r, _ = registro
    arquivo = gravar(tmp_path, "editado.json", _editar(r, como))
    c = corrida("--conferir", arquivo)
    assert c.returncode == 1, c.saida[-2000:]
    assert f"NÃO CONFERE: o campo {campo}" in " ".join(c.saida.split())
    assert ("Treinando de novo" in c.saida) == treina


@pytest.mark.cpus  # a nota vem de um treino: em toda variante de CPU
def test_as_notas_de_um_registro_em_outra_cpu_a_menos_de_1e_5():
    """O registro é feito uma vez na sessão (na variante que chegar primeiro); cada variante
    treina as três sementes de novo, como a lição (uma thread de conta), e chega a menos de
    1e-5. Na mesma
    variante (a mesma inscrição duas vezes, a mesma máquina), as notas são as mesmas, bit a
    bit."""
    from filelock import FileLock

    pasta = sessao.pasta_da_sessao("l14_entre_cpus")
    with FileLock(str(pasta / "trava")):
        if not list(pasta.glob("turma/*.json")):
            entrada = gravar(pasta, "mini.json", MINI)
            r = corrida("--inscrever", entrada, "--nome", "Entre CPUs", "--pasta",
                        pasta / "turma")
            assert r.returncode == 0, r.saida[-2000:]
            (pasta / "variante").write_text(os.environ.get("LAB_TESTES_VARIANTE", "padrao"))
    feito = json.loads(next(pasta.glob("turma/*.json")).read_text(encoding="utf-8"))
    treino, validacao = L14.textos()
    tok = L10.Caracteres()
    ids = torch.tensor(tok.codificar(treino))
    for x in feito["sementes"]:
        with uma_thread():                                  # como a lição treina: 1 thread
            modelo = L14.treinar(L14.novo_modelo(MINI, 128, x["semente"]), MINI, ids,
                                 x["semente"])
            agora = L14.bits_por_caractere(modelo, tok, validacao, MINI["contexto"])
        assert abs(agora - x["exato"]) < 1e-5, (x["semente"], agora, x["exato"])
        if (pasta / "variante").read_text() == os.environ.get("LAB_TESTES_VARIANTE", "padrao"):
            assert agora == x["exato"]                      # a mesma máquina: os mesmos bits


# ---------------------------------------------------------------- o placar e a final
@pytest.fixture(scope="module")
def turma(registro, tmp_path_factory):
    """Uma pasta com o registro, dois empatados com ele e um atrás, um incompleto e um com
    os FLOPs editados."""
    arquivo, r, _ = registro
    pasta = tmp_path_factory.mktemp("turma")
    shutil.copy(arquivo, pasta / arquivo.name)
    m = r["media"]
    gravar(pasta, "bia.json", com_media(r, "Bia", m + 0.003))
    gravar(pasta, "caio.json", com_media(r, "Caio", m - 0.005))
    gravar(pasta, "davi.json", com_media(r, "Davi", m + 0.05))
    incompleto = json.loads(json.dumps(r))
    incompleto.update(nome="Eva", completa=False, media=None)
    incompleto["sementes"] = incompleto["sementes"][:1]
    gravar(pasta, "eva.json", incompleto)
    gravar(pasta, "fabio.json", {**com_media(r, "Fábio", m - 1), "flops_total": 1})
    return pasta


def test_o_placar_empata_a_menos_de_001_e_deixa_de_fora_o_que_nao_confere(registro, turma):
    _, r, _ = registro
    p = corrida("--placar", turma)
    assert p.returncode == 0, p.saida[-2000:]
    assert not curtas(p)
    linhas = [l for l in p.saida.splitlines() if re.match(r"^\d+=? ", l)]
    nomes = [re.split(r"\s{2,}", l)[1] for l in linhas]
    assert nomes == ["Caio", "Ana Souza", "Bia", "Davi"]
    # Caio, Ana e Bia a menos de 0,01 uns dos outros: empate; Davi, 0,05 atrás de todos
    assert [l.split()[0] for l in linhas] == ["1=", "1=", "1=", "4"]
    texto = " ".join(p.saida.split())
    assert "eva.json: incompleto: 1 de 3 sementes" in texto
    assert "fabio.json: flops_total: contados agora" in texto
    assert "corrida-linha-de-base.json: orcamento: 4.001.366.016.000, não o desta corrida" in texto


def test_um_registro_interrompido_guarda_as_sementes_que_terminaram_em_ordem(registro):
    """Um Ctrl+C pode deixar só a semente 1 (a 0 ainda treinava): o registro incompleto passa
    nas contas; sementes fora de ordem ou repetidas, não."""
    _, r, _ = registro
    so_a_1 = _editar(r, lambda x: x.update(sementes=x["sementes"][1:2], completa=False,
                                          media=None))
    assert L14.conferir_registro(so_a_1) == MINI
    for sementes in ([1, 0], [0, 0], [0, 1, 2, 3]):
        ruim = _editar(r, lambda x: x.update(
            sementes=[{**x["sementes"][0], "semente": s} for s in sementes], completa=False))
        with pytest.raises(L14.Recusada) as erro:
            L14.conferir_registro(ruim)
        assert erro.value.campo == "sementes", sementes


def test_as_posicoes_empatam_pelo_ruido():
    """Posição = 1 + quantas ficaram pelo menos 0,01 abaixo (oráculo: a definição, aqui)."""
    medias = [2.30, 2.305, 2.312, 2.5, None]
    assert L14.posicoes(medias) == [1, 1, 2, 4, None]
    assert L14.marcas(L14.posicoes(medias)) == ["1=", "1=", "2", "4", "-"]


def test_o_placar_oficial_sempre_tem_a_linha_de_base(tmp_path):
    base = json.loads(L14.LINHA_DE_BASE.read_text(encoding="utf-8"))
    p = rodar_script("14_corrida.py", "--placar", str(tmp_path / "ninguem"))
    assert p.returncode == 0, p.saida[-2000:]
    assert "ainda não existe" in p.saida and not curtas(p)
    primeira = next(l for l in p.saida.splitlines() if l.startswith("1 "))
    assert L14.NOME_DA_BASE in primeira and f"{base['media']:.3f}".replace(".", ",") in primeira
    assert "ORÇAMENTO DE TESTE" not in p.saida and "Fora do placar" not in p.saida


def test_a_final_treina_sementes_novas_e_pontua_a_prova(registro, turma, tmp_path):
    """A final dos 2 primeiros nomes (Caio e Ana, a mesma inscrição) nas sementes 100 e 101:
    as notas são as de um treino feito aqui com essas sementes, na validação e na prova."""
    prova = tmp_path / "prova.txt"
    prova.write_text("A corrida do laboratório mede bits por caractere. " * 8, encoding="utf-8")
    f = corrida("--final", turma, "--sementes", "100,101", "--prova", prova, "--primeiros", "2")
    assert f.returncode == 0, f.saida[-2000:]
    assert not curtas(f)
    treino, validacao = L14.textos()
    tok, texto = L10.Caracteres(), prova.read_text(encoding="utf-8")
    ids = torch.tensor(tok.codificar(treino))
    notas = {"v": [], "p": []}
    for s in (100, 101):
        modelo = L14.treinar(L14.novo_modelo(MINI, 128, s), MINI, ids, s)
        notas["v"].append(L14.bits_por_caractere(modelo, tok, validacao, MINI["contexto"]))
        notas["p"].append(L14.bits_por_caractere(modelo, tok, texto, MINI["contexto"]))
    v, p = (f"{sum(n) / 2:.3f}".replace(".", ",") for n in notas.values())
    linhas = [l.split() for l in f.saida.splitlines() if re.match(r"^1= ", l)]
    assert [l[1] for l in linhas] == ["Caio", "Ana"]                 # a mesma inscrição: empate
    assert all(l[-2:] == [v, p] for l in linhas), (linhas, v, p)
    assert "Davi" not in f.saida.split("A final:")[1]


def test_ctrl_c_guarda_as_sementes_que_terminaram(tmp_path):
    """Ctrl+C depois da primeira semente: saída 130, o registro incompleto com o que
    terminou; o mesmo comando continua só com as que faltam."""
    c = {**MINI, "passos": 500}                      # perto de 1 s por semente
    entrada = gravar(tmp_path, "c.json", c)
    comando = [sys.executable, str(RAIZ / "lab" / "14_corrida.py"), "--inscrever", str(entrada),
               "--nome", "Gil", "--pasta", str(tmp_path / "turma")]
    env = ambiente_de_aluno({"LAB_CORRIDA_ORCAMENTO": "1e10",
                             "PYTHONUNBUFFERED": "1"})
    processo = subprocess.Popen(comando, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env, cwd=RAIZ)
    saida = b""
    for linha in processo.stdout:
        saida += linha
        if linha.startswith(b"  semente "):
            processo.send_signal(signal.SIGINT)
            break
    saida += processo.stdout.read()
    assert processo.wait(timeout=60) == 130, saida.decode("cp1252", "replace")
    texto = " ".join(saida.decode("cp1252", "replace").split())
    assert "Interrompido (Ctrl+C)." in texto and "o mesmo comando continua" in texto
    r = json.loads(next((tmp_path / "turma").glob("gil-*.json")).read_text(encoding="utf-8"))
    feitas = [x["semente"] for x in r["sementes"]]
    assert r["completa"] is False and 1 <= len(feitas) < 3
    # o mesmo comando de novo: só o Ctrl+C pedia um processo de verdade; este roda num filho
    # do interpretador quente (sem o PYTHONUNBUFFERED, que pediria outro servidor)
    codigo, saida, _ = sessao.rodar_sem_guardar(
        comando[1:], ambiente_de_aluno({"LAB_CORRIDA_ORCAMENTO": "1e10"}), RAIZ, timeout=120)
    texto = " ".join(saida.decode("cp1252", "replace").split())
    assert codigo == 0, texto[-2000:]
    faltavam = ", ".join(str(s) for s in (0, 1, 2) if s not in feitas)
    assert f"faltam as sementes {faltavam}" in texto


def test_a_barra_diz_o_tempo_que_falta(monkeypatch):
    descricoes = []

    class Barra:
        def __init__(self, total, texto):
            self.total = total

        def __enter__(self):
            return self

        def __exit__(self, *erro):
            return False

        def avancar(self, passos=1, descricao=None):
            descricoes.append(descricao)

    monkeypatch.setattr(L14, "Progresso", Barra)
    L14.treinar_sementes({**MINI, "passos": 12}, [0, 1], {})
    assert len(descricoes) == 24
    assert all(re.fullmatch(r"sementes 0, 1: falta (menos de 1 min|~\d+ min)", d)
               for d in descricoes), descricoes[:3]


# ---------------------------------------------------------------- a linha de base do lab
def test_a_linha_de_base_e_o_treino_padrao_da_licao_10():
    """O registro da linha de base que vem com o lab: a inscrição da lição 10, nas contas sem
    treino; e a semente 0 dele é a nota do checkpoint do treino padrão da lição 10 (o mesmo
    que tests/test_10_treino.py faz), a menos da tolerância entre CPUs."""
    from treinos import treino_padrao_10

    base = json.loads(L14.LINHA_DE_BASE.read_text(encoding="utf-8"))
    assert L14.conferir_registro(base, L14.ORCAMENTO_OFICIAL) == L14.INSCRICAO_DA_LICAO_10
    assert base["oficial"] is True and base["completa"] is True
    codigo, saida, _erros, pasta = treino_padrao_10()
    assert codigo == 0, saida[-2000:]
    modelo, tok, checkpoint = L10.carregar(Path(pasta) / "10_gpt.pt")
    assert checkpoint["passo"] == 1000
    nota = L14.bits_por_caractere(modelo, tok, L14.textos()[1], 64)
    assert abs(nota - base["sementes"][0]["exato"]) < L14.TOLERANCIA, nota


# ---------------------------------------------------------------- o experimento 3
def test_o_experimento_3_treina_e_confere_de_novo():
    """A miniatura (na execução dos blocos da apostila: as notas dela, no teste marcado com
    cpus acima): a semente 0 de novo dá a mesma nota; as notas ficam longe das da linha de base
    e variam mais de uma semente para outra, como a apostila diz."""
    codigo, saida, erros = licao_inteira()
    assert codigo == 0, saida[-3000:] + erros[-2000:]
    assert not [l for l in saida.splitlines() if len(l) > 80] and "Traceback" not in saida + erros
    assert "4 de 4 experimentos rodaram." in saida
    assert "a semente 0 de novo: diferença < 1e-6, confere (os mesmos bits)." in saida
    notas = [float(n.replace(",", ".")) for n in
             re.findall(r"^  semente \d: ([\d,]+) bits por caractere$", saida, re.M)]
    espalha = max(notas) - min(notas)
    base = json.loads(L14.LINHA_DE_BASE.read_text(encoding="utf-8"))
    exatos = [x["exato"] for x in base["sementes"]]
    assert espalha > max(exatos) - min(exatos)          # "variam mais de uma semente para outra"
    assert min(notas) > max(exatos)                     # "longe das de uma inscrição de verdade"
