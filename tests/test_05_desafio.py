"""--com-o-seu 05: as peças que o aluno escreveu nos desafios da lição 05 entram na lição 06.

Os testes genéricos (test_desafios.py) conferem o catálogo de cada desafio; aqui, que a troca
acontece de verdade no GPT-2 inteiro: com as três peças certas (a GELU, o LayerNorm e o
forward do bloco), a lição 06 dá os logits do transformers; com o LayerNorm que esqueceu o
`* peso + vies`, ela falha. O GPT-2 de teste tem ganhos e vieses sorteados nos LayerNorm: com
ganho 1 e viés 0 (um modelo recém-criado), esquecer os dois não mudaria nada.
"""
from __future__ import annotations

import inspect

import pytest

import desafios
from conftest import modelo_compartilhado, rodar_script
from desafios import aluno, motor


@pytest.fixture(scope="module")
def gpt2_ln_sorteado(gpt2_pequeno):
    """O GPT-2 de teste de 3 camadas (gpt2_pequeno) com os ganhos e os vieses dos LayerNorm
    sorteados; o mesmo tokenizador."""
    def construir(pasta):
        import shutil

        import torch
        from transformers import GPT2LMHeadModel

        modelo = GPT2LMHeadModel.from_pretrained(gpt2_pequeno)
        g = torch.Generator().manual_seed(5)
        with torch.no_grad():
            for nome, p in modelo.named_parameters():
                if ".ln_" in nome or nome.startswith("transformer.ln_f"):
                    p.add_(0.3 * torch.randn(p.shape, generator=g))
        modelo.save_pretrained(pasta, safe_serialization=True)
        for arquivo in gpt2_pequeno.glob("tokenizer*"):
            shutil.copy(arquivo, pasta)
    return modelo_compartilhado("gpt2_ln_sorteado", construir)


def arquivo_do_aluno(pasta, chave, ajustes=None):
    """meus_desafios/<chave>.py: a primeira versão certa do catálogo, ou a versão com os
    ajustes (um defeito)."""
    d = desafios.carregar(chave)
    chamada = ", ".join(inspect.signature(d.modelo).parameters)
    if ajustes is None:
        corpo = (f"    from desafios import carregar\n    return carregar({chave!r})"
                 f".alternativas[{next(iter(d.alternativas))!r}]({chamada})\n")
    else:
        corpo = (f"    from desafios import carregar\n"
                 f"    return carregar({chave!r}).versao({ajustes!r}, {chamada})\n")
    raise_ = f'    raise NotImplementedError("{motor.AINDA_NAO}")\n'
    pasta.mkdir(parents=True, exist_ok=True)
    (pasta / f"{chave}.py").write_text(aluno.modelo(d).replace(raise_, corpo), encoding="utf-8")


def _licao_06(modelo, pasta):
    return rodar_script("06_gpt2.py", "--so", "2", "--sem-figuras", "--com-o-seu", "05",
                        env={"LAB_MODELO": str(modelo), "LAB_DESAFIOS": str(pasta)})


def test_as_tres_pecas_certas_dao_os_logits_do_transformers(gpt2_ln_sorteado, tmp_path):
    for chave in ("05_bloco", "05_gelu", "05_layernorm"):
        arquivo_do_aluno(tmp_path, chave)
    r = _licao_06(gpt2_ln_sorteado, tmp_path)
    corrido = " ".join(r.saida.split())
    assert r.returncode == 0, r.saida
    for funcao in ("forward", "gelu", "layer_norm"):
        assert f"Com o seu {funcao}() (" in corrido
    assert corrido.count("no lugar do da lição 05: confere com a referência.") == 3
    assert "max |nosso - transformers| < 1e-4 x o maior |logit|: confere" in corrido


def test_o_layernorm_sem_peso_e_vies_estraga_os_logits(gpt2_ln_sorteado, tmp_path):
    """Só o LayerNorm escrito, e sem o `* peso + vies`: as outras peças seguem as da lição,
    e os logits do GPT-2 inteiro não conferem (o ln_1, o ln_2 e o ln_f são os do aluno)."""
    arquivo_do_aluno(tmp_path, "05_layernorm", {"afim": "nenhum"})
    r = _licao_06(gpt2_ln_sorteado, tmp_path)
    corrido = " ".join(r.saida.split())
    assert r.returncode == 1, r.saida
    assert "você ainda não escreveu forward()," in corrido
    assert "você ainda não escreveu gelu()," in corrido
    assert "no lugar do da lição 05: ainda NÃO confere (0 de 8 sondas" in corrido
    assert "max |nosso - transformers| =" in corrido and ": NÃO confere" in corrido


def test_o_layernorm_dos_tutoriais_tem_dois_defeitos(tmp_path, monkeypatch, capsys):
    """A apostila: (x - media) / (x.std(-1, keepdim=True) + eps), o LayerNorm de muitos
    tutoriais, é o eps fora da raiz e a variância com d - 1 juntos, e o lab diz os dois."""
    import argparse
    import re

    from conftest import RAIZ
    from desafios import linha_de_comando

    apostila = " ".join((RAIZ / "apostilas" / "05_block.md").read_text(encoding="utf-8").split())
    codigo = "(x - media) / (x.std(-1, keepdim=True) + eps)"
    assert f"O LayerNorm de muitos tutoriais, `{codigo}`, tem os dois primeiros" in apostila
    assert re.search(r"os dois \(\"Dois defeitos do catálogo, juntos\"\)", apostila)
    d = desafios.carregar("05_layernorm")
    corpo = ("    media = x.mean(-1, keepdim=True)\n"
             f"    return {codigo} * peso + vies\n")
    raise_ = f'    raise NotImplementedError("{motor.AINDA_NAO}")\n'
    tmp_path.joinpath("05_layernorm.py").write_text(aluno.modelo(d).replace(raise_, corpo),
                                                    encoding="utf-8")
    monkeypatch.setenv("LAB_DESAFIOS", str(tmp_path))
    args = argparse.Namespace(desafio="layernorm", dica=False, mostrar_defeito=None, pausa=False)
    assert linha_de_comando.conferir_um(d, args) == 1
    saida = " ".join(capsys.readouterr().out.split())
    assert "Dois defeitos do catálogo, juntos:" in saida
    for nome in ("eps_fora_da_raiz", "variancia_com_d_menos_1"):
        assert " ".join(d.defeito(nome).mensagem.split()) in saida
    assert aluno.registro()["05_layernorm"]["diagnostico"] == \
        "eps_fora_da_raiz+variancia_com_d_menos_1"
