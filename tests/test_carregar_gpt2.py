"""Carregar o GPT-2 (lab/comum/carregar_gpt2.py): de uma pasta, os erros explicados em português,
a memória conferida antes, sem rede, a tabela de parâmetros. (Um Llama: test_13_tucano.py; o
caminho até o hub e a memória lida em cada sistema: test_hub.py.)"""
from __future__ import annotations

import shutil

import pytest
import torch

from comum import carregar_gpt2
from comum.hub import ModeloIndisponivel
from conftest import rodar_script


def test_carrega_da_pasta(gpt2_pequeno):
    modelo, tokenizador = carregar_gpt2.carregar_gpt2(str(gpt2_pequeno))
    assert modelo.config.n_layer == 3 and not modelo.training
    assert len(tokenizador("Olá")["input_ids"]) > 0


@pytest.mark.parametrize("caso, trecho", [
    ("pasta_inexistente", "não há pasta"),
    ("sem_safetensors", "não tem pesos .safetensors"),
    ("corrompido", "corrompidos"),
    ("nome_desconhecido", "não é um nome de GPT-2"),
])
def test_erros_de_carregamento_explicam(caso, trecho, gpt2_pequeno, tmp_path):
    if caso == "pasta_inexistente":
        nome = str(tmp_path / "nada")
    elif caso == "sem_safetensors":
        nome = str(tmp_path)
        (tmp_path / "config.json").write_text("{}")
    elif caso == "corrompido":
        copia = tmp_path / "modelo"
        shutil.copytree(gpt2_pequeno, copia)
        pesos = copia / "model.safetensors"
        pesos.write_bytes(pesos.read_bytes()[: pesos.stat().st_size // 2])
        nome = str(copia)
    else:
        nome = "gpt7-gigante"
    with pytest.raises(ModeloIndisponivel, match=trecho):
        carregar_gpt2.carregar_gpt2(nome)


def test_sem_rede_e_sem_cache_explica(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    import huggingface_hub.constants as constantes

    monkeypatch.setattr(constantes, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constantes, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModeloIndisponivel, match="00_check"):
        carregar_gpt2.carregar_gpt2("gpt2")


def test_sem_rede_com_hf_hub_offline_diz_para_tirar_a_variavel(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constantes

    monkeypatch.setattr(constantes, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constantes, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: None)
    with pytest.raises(ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2")
    assert "HF_HUB_OFFLINE=1 está definida" in str(erro.value)
    assert "Remove-Item Env:HF_HUB_OFFLINE" in str(erro.value) and "unset" in str(erro.value)
    assert "Conecte-se" not in str(erro.value)


def test_recusa_modelo_que_nao_cabe(monkeypatch):
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 2 * 2**30)
    with pytest.raises(ModeloIndisponivel, match="GiB livres"):
        carregar_gpt2.carregar_gpt2("gpt2-xl")  # 6,2 GB em fp32: recusa antes de tentar


def test_memoria_sugere_um_menor_que_caberia_e_diz_a_margem(monkeypatch):
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 3 * 2**30)
    with pytest.raises(ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2-xl", margem=1.3)
    texto = str(erro.value)
    # gpt2-large (3,1 GB x 1,3) não cabe em 3 GiB; gpt2-medium (1,4 GB x 1,3) cabe
    assert "--modelo gpt2-medium" in texto and "gpt2-large" not in texto
    assert "vezes 1,3" in texto and "7,5 GiB" in texto and "3,0 GiB livres" in texto
    # já é o menor: não sugere "--modelo gpt2" de novo
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 2**28)
    with pytest.raises(ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2", margem=2.5)
    assert "--modelo" not in str(erro.value) and "vezes 2,5" in str(erro.value)
    assert "o gpt2 já é o menor" in str(erro.value)


def test_memoria_com_base_fixa_sugere_pela_mesma_conta(monkeypatch):
    """Com uma base fixa (o Python com o PyTorch), o modelo menor sugerido é o que cabe
    com ela: em 3 GiB, com 2 GiB de base, o gpt2-large (2,9 GiB de pesos) não cabe."""
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 3 * 2**30)
    with pytest.raises(ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2-xl", margem=1.0, base=2 * 2**30)
    texto = " ".join(str(erro.value).split())
    assert "--modelo gpt2." in texto and "gpt2-large" not in texto
    assert "mais 2,00 GiB do Python com o PyTorch" in texto and "7,8 GiB" in texto


def _llama_minusculo(pasta):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(
        vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2,
        tie_word_embeddings=True)).save_pretrained(pasta)
    return pasta


def test_pasta_de_outro_modelo_nao_vira_gpt2_aleatorio(gpt2_pequeno, tmp_path):
    """Um Llama salvo com save_pretrained carregava como GPT-2 ao acaso, sem aviso."""
    llama = _llama_minusculo(tmp_path / "llama")
    for arquivo in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(gpt2_pequeno / arquivo, llama)
    with pytest.raises(ModeloIndisponivel, match="tipo 'llama'.*não um GPT-2"):
        carregar_gpt2.carregar_gpt2(str(llama))
    # o config diz gpt2, mas os pesos são de outro modelo: faltam e sobram pesos
    shutil.copy(gpt2_pequeno / "config.json", llama)
    with pytest.raises(ModeloIndisponivel,
                       match=r"não são os de um GPT-2: faltam \d+ pesos.*há \d+ pesos"):
        carregar_gpt2.carregar_gpt2(str(llama))


def test_pesos_de_forma_errada_explicam(gpt2_pequeno, tmp_path):
    import json

    pasta = tmp_path / "formas"
    shutil.copytree(gpt2_pequeno, pasta)
    config = json.loads((pasta / "config.json").read_text())
    config["n_embd"] = 32
    (pasta / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModeloIndisponivel, match="não têm as formas que o config"):
        carregar_gpt2.carregar_gpt2(str(pasta))


def test_pasta_sem_tokenizador_explica(gpt2_pequeno, tmp_path):
    pasta = tmp_path / "sem_tok"
    shutil.copytree(gpt2_pequeno, pasta)
    for arquivo in ("tokenizer.json", "tokenizer_config.json"):
        (pasta / arquivo).unlink()
    with pytest.raises(ModeloIndisponivel, match="não o tokenizador"):
        carregar_gpt2.carregar_gpt2(str(pasta))
    r = rodar_script("05_block.py", "--so", "3", "--modelo", str(pasta), "--sem-figuras")
    # a mensagem quebra na largura, e onde quebra depende do comprimento da pasta
    assert r.returncode == 1 and "não o tokenizador" in " ".join(r.saida.split())
    assert "Traceback" not in r.saida + r.erros and "reshape" not in r.saida


def test_tokenizador_vazio_explica(gpt2_pequeno, tmp_path):
    from tokenizers import Tokenizer, models
    from transformers import GPT2TokenizerFast

    pasta = tmp_path / "tok_vazio"
    shutil.copytree(gpt2_pequeno, pasta)
    GPT2TokenizerFast(tokenizer_object=Tokenizer(models.BPE())).save_pretrained(pasta)
    with pytest.raises(ModeloIndisponivel, match="tokenizador .* está vazio"):
        carregar_gpt2.carregar_gpt2(str(pasta))


def test_config_invalido_em_portugues(gpt2_pequeno, tmp_path):
    pasta = tmp_path / "config_ruim"
    shutil.copytree(gpt2_pequeno, pasta)
    (pasta / "config.json").write_text("{isto não é json", encoding="utf-8")
    with pytest.raises(ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2(str(pasta))
    texto = str(erro.value)
    assert "não é um JSON válido" in texto and "linha 1" in texto
    assert ".." not in texto and "It looks like" not in texto


def test_pesos_truncados_numa_pasta_falam_da_pasta(gpt2_pequeno, tmp_path):
    pasta = tmp_path / "minha_pasta"
    shutil.copytree(gpt2_pequeno, pasta)
    pesos = pasta / "model.safetensors"
    pesos.write_bytes(pesos.read_bytes()[: pesos.stat().st_size // 2])
    with pytest.raises(ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2(str(pasta))
    texto = str(erro.value)
    assert "corrompidos" in texto and f"na pasta '{pasta}'" in texto
    assert "huggingface" not in texto and "cache" not in texto


def test_modelo_grande_sem_rede_manda_baixar_esse_modelo(tmp_path, monkeypatch):
    """O 00_check baixa o modelo de --modelo: a mensagem diz o comando com ele."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constantes

    monkeypatch.setattr(constantes, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constantes, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: None)
    with pytest.raises(ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2-xl")
    assert "lab/00_check.py --modelo gpt2-xl" in str(erro.value)


def _parametros_gpt2(L, d, V=50257, P=1024):
    """12d² + 13d por bloco, wte, wpe e ln_f (fatos.md), contado à parte."""
    return V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d


def test_tabela_de_parametros_bate_com_o_transformers_e_fatos():
    from transformers import GPT2Config, GPT2LMHeadModel

    assert carregar_gpt2.estimar_memoria("gpt2") == 4 * 124_439_808
    for nome, (L, d, h) in carregar_gpt2.TAMANHOS_GPT2.items():
        with torch.device("meta"):
            m = GPT2LMHeadModel(GPT2Config(n_layer=L, n_embd=d, n_head=h))
        n = sum(p.numel() for p in m.parameters())
        assert carregar_gpt2.PARAMETROS_GPT2[nome] == n == _parametros_gpt2(L, d)
    assert carregar_gpt2.PARAMETROS_GPT2["gpt2-xl"] == 1_557_611_200


def test_contagem_nao_conta_a_cabeca_amarrada_duas_vezes(gpt2_pequeno):
    modelo, _ = carregar_gpt2.carregar_gpt2(str(gpt2_pequeno))
    soma_estado = sum(t.numel() for t in modelo.state_dict().values())
    wte = modelo.transformer.wte.weight.numel()
    contados = sum(p.numel() for p in modelo.parameters())  # parameters() deduplica
    assert contados == soma_estado - wte
    cfg = modelo.config
    assert contados == _parametros_gpt2(cfg.n_layer, cfg.n_embd, cfg.vocab_size,
                                        cfg.n_positions)
