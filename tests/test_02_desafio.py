"""Os desafios que não rodam onde o --com-o-seu os pede: a fundir da lição 01 não roda em
nenhuma lição seguinte, e a entrada da lição 02 entra no GPT2.forward da lição 06, que só as
lições que importam a 06 usam (da 07 em diante) e a própria 06. Nos outros casos a lição diz que nada muda,
em vez de prometer um efeito que não vem; e o forward com a entrada do aluno é o da lição 06
quando a entrada é a da lição 02."""
from __future__ import annotations

import torch

import desafios
from comum import desafio as opcoes_de_desafio
from comum import importar_licao
from desafios import linha_de_comando


def _sem_trocas():
    return not any(opcoes_de_desafio.SUBSTITUICOES.values())


def test_com_o_seu_01_diz_que_nada_muda(capsys):
    linha_de_comando.com_o_seu("03", "01")
    saida = " ".join(capsys.readouterr().out.split())
    assert "--com-o-seu 01: nenhuma lição seguinte usa a peça que você escreveu na lição 01 " \
           "(fundir()): esta lição roda como sempre." in saida
    assert _sem_trocas()


def test_com_o_seu_02_onde_roda_e_onde_nada_muda(capsys, tmp_path, monkeypatch):
    """Na 05 (que não importa a 06) a troca não acontece, e a lição diz onde ela acontece; na
    06, que define o GPT2 como __main__, a troca entra em Licao.rodar: ela lê o arquivo do
    aluno (aqui, ainda não escrito)."""
    monkeypatch.setenv("LAB_DESAFIOS", str(tmp_path))
    linha_de_comando.com_o_seu("05", "02")
    saida = " ".join(capsys.readouterr().out.split())
    assert "a sua entrada() entra numa peça da lição 06 quando outra lição a importa; " \
           "esta não a importa: aqui nada muda." in saida
    assert "lab/07_generation.py --com-o-seu 02 --so 5" in saida
    assert "Com o seu entrada()" not in saida            # nem confere o arquivo
    linha_de_comando.com_o_seu("06", "02")
    saida = " ".join(capsys.readouterr().out.split())
    assert "nada muda" not in saida and "você ainda não escreveu entrada()," in saida
    assert _sem_trocas()


def test_o_forward_com_a_entrada_da_licao_e_o_da_licao_06():
    import sys

    d = desafios.carregar("02_entrada")
    desafios.carregar("06_forward")                   # o GPT2 sorteado das sondas da 06
    L02, L06 = importar_licao("02_embeddings"), importar_licao("06_gpt2")
    modelo = sys.modules["desafios.d06_forward"].modelo_sorteado(7)
    ids = torch.randint(0, 11, (2, 6), generator=torch.Generator().manual_seed(0))
    troca = d.substituir(L02.entrada)["06_gpt2"]["GPT2.forward"]
    for ultima in (False, True):
        assert torch.equal(troca(modelo, ids, ultima), L06.GPT2.forward(modelo, ids, ultima))
    errada = d.substituir(lambda wte, wpe, ids: wte[ids])["06_gpt2"]["GPT2.forward"]
    assert not torch.allclose(errada(modelo, ids), L06.GPT2.forward(modelo, ids))
