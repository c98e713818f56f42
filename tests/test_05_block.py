"""Lição 05: o bloco contra o GPT2Block do transformers, Pre-LN x Post-LN medido,
logit lens e normas contra contas independentes, contagens e GELU contra FACTS.md."""
from __future__ import annotations

import math

import pytest
import torch
from transformers import GPT2Config
from transformers.models.gpt2.modeling_gpt2 import GPT2Block

import common
from conftest import rodar_script

L05 = common.importar_licao("05_block")


def mascara_causal(T):
    """Máscara aditiva (1, 1, T, T): o GPT2Block sozinho não cria a sua (o modelo cria)."""
    return torch.full((T, T), float("-inf")).triu(1)[None, None]


def bloco_hf(bloco, x):
    y = bloco(x, attention_mask=mascara_causal(x.shape[1]))
    return y[0] if isinstance(y, tuple) else y


# ------------------------------------------------------------ experimento 1
@pytest.mark.parametrize("d, h, impl", [(768, 12, "eager"), (64, 4, "sdpa")])
def test_bloco_igual_ao_gpt2block(d, h, impl):
    torch.manual_seed(0)
    config = GPT2Config(n_embd=d, n_head=h, attn_implementation=impl)
    deles = GPT2Block(config, layer_idx=0).eval()
    with torch.no_grad():  # pesos não triviais em tudo, inclusive LayerNorm e vieses
        for p in deles.parameters():
            p.normal_(0, 0.05)
    nosso = L05.copiar_pesos_gpt2(L05.Bloco(d, h).eval(), deles.state_dict())
    x = torch.randn(2, 7, d)
    with torch.no_grad():
        esperado = bloco_hf(deles, x)
        diferenca = (nosso(x) - esperado).abs().max().item()
    assert diferenca <= 1e-5


def test_sem_transpor_o_conv1d_da_errado():
    """O teste acima pode falhar: sem a transposição do c_proj (quadrado) a saída muda."""
    torch.manual_seed(0)
    deles = GPT2Block(GPT2Config(n_embd=64, n_head=4), layer_idx=0).eval()
    with torch.no_grad():
        for p in deles.parameters():
            p.normal_(0, 0.05)
    nosso = L05.copiar_pesos_gpt2(L05.Bloco(64, 4).eval(), deles.state_dict())
    with torch.no_grad():
        nosso.attn.c_proj.weight.copy_(nosso.attn.c_proj.weight.t().clone())
        x = torch.randn(1, 5, 64)
        esperado = bloco_hf(deles, x)
        assert (nosso(x) - esperado).abs().max().item() > 1e-3


def test_forma_entra_igual_sai():
    bloco = L05.Bloco(48, 4)
    for pre in (True, False):
        bloco.pre_ln = pre
        assert bloco(torch.randn(3, 5, 48)).shape == (3, 5, 48)


def test_atencao_e_causal():
    torch.manual_seed(0)
    attn = L05.AtencaoMultiCabeca(32, 4).eval()
    x = torch.randn(1, 6, 32)
    y = torch.cat([x[:, :4], torch.randn(1, 2, 32)], dim=1)  # muda só o futuro
    with torch.no_grad():
        assert torch.allclose(attn(x)[:, :4], attn(y)[:, :4], atol=1e-6)


# ------------------------------------------------------------ experimento 2
@pytest.fixture(scope="module")
def corridas():
    return {s: (L05.treinar_pilha(True, s), L05.treinar_pilha(False, s)) for s in (0, 1, 2)}


@pytest.mark.parametrize("semente", [0, 1, 2])
def test_post_ln_colapsa_e_pre_ln_nao(corridas, semente):
    (perfil_pre, g_pre, perda_pre), (perfil_pos, g_pos, perda_pos) = corridas[semente]
    # no início, nada sumiu: na camada 1 os dois são da mesma ordem
    assert 0.3 < perfil_pos[0] / perfil_pre[0] < 3
    # Xiong et al.: no início o Post-LN recebe mais gradiente nas últimas camadas
    assert perfil_pos[-1] / perfil_pre[-1] > 1.5
    # treinando sem aquecimento: o gradiente da camada 1 do Post-LN cai >= 100x
    assert L05.quedas(g_pos) >= 100
    assert L05.quedas(g_pre) < 100
    # e a perda do Post-LN fica no acaso, a do Pre-LN desce abaixo dela
    assert abs(perda_pos[-1] - math.log(16)) < 0.1
    assert perda_pre[-1] < perda_pos[-1] - 0.02


def test_tarefa_do_token_anterior():
    ids, alvo = L05.lote_token_anterior(torch.Generator().manual_seed(0))
    assert (alvo[:, 0] == -100).all() and torch.equal(alvo[:, 1:], ids[:, :-1])


# ------------------------------------------------------------ experimentos 3 e 4
@pytest.fixture(scope="module")
def pequeno(gpt2_pequeno):
    return common.carregar_gpt2(str(gpt2_pequeno))


def _estados_na_mao(modelo, ids):
    """Fluxo residual passo a passo, sem output_hidden_states: wte + wpe, depois cada bloco."""
    t = modelo.transformer
    x = t.wte(ids) + t.wpe(torch.arange(ids.shape[1]))[None]
    estados = [x]
    for bloco in t.h:
        x = bloco_hf(bloco, x)
        estados.append(x)
    return estados


def test_normas_residuais_conferem(pequeno):
    modelo, tok = pequeno
    texto = L05.TEXTOS[0]
    normas = L05.normas_residuais(modelo, tok, texto)
    ids = tok(texto, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        esperado = torch.stack([e[0].norm(dim=-1) for e in _estados_na_mao(modelo, ids)])
    assert torch.allclose(normas, esperado, atol=1e-5)


def test_logit_lens_confere(pequeno):
    modelo, tok = pequeno
    ids = tok(L05.LENTE[0], return_tensors="pt")["input_ids"]
    p, i = L05.logit_lens(modelo, ids)
    with torch.no_grad():
        estados = _estados_na_mao(modelo, ids)
        t = modelo.transformer
        for c, e in enumerate(estados):
            probs = (t.ln_f(e) @ t.wte.weight.T)[0].softmax(-1)  # ln_f uma única vez
            assert torch.equal(i[c], probs.argmax(-1))
            assert torch.allclose(p[c], probs.max(-1).values, atol=1e-5)
        # a última linha é o próprio modelo
        assert torch.equal(i[-1], modelo(ids).logits[0].argmax(-1))


# ------------------------------------------------------------ experimentos 5 e 6
def test_parametros_sem_modelo_batem_com_facts(tmp_path):
    r = rodar_script("05_block.py", "--so", "5", env={"LAB_MODELO": str(tmp_path / "nada")})
    assert r.returncode == 0, r.saida + r.erros
    s = r.saida
    for figura in ("1.769.472", "2.304", "589.824", "2.359.296", "3.072", "7.087.872",
                   "38.597.376", "786.432", "124.439.808", "163.037.184", "66,6 %"):
        assert figura in s, figura
    assert "configuração" in s and "confere com a contagem" in s


def test_parametros_do_modelo_carregado(gpt2_pequeno):
    r = rodar_script("05_block.py", "--so", "5", env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0
    d = 64
    assert common.inteiro(12 * d * d + 13 * d) in r.saida and "modelo carregado" in r.saida


def test_gelu_bate_com_facts():
    r = rodar_script("05_block.py", "--so", "6", "--sem-figuras")
    assert r.returncode == 0
    for figura in ("4,73e-4 em x = 2,70", "-0,16997 em x = -0,7518", "GELU(1) = 0,8413",
                   "GELU 0,50"):
        assert figura in r.saida, figura
    x = torch.linspace(-4, 4, 101, dtype=torch.float64)
    assert torch.allclose(L05.gelu_exata(x), torch.nn.functional.gelu(x), atol=1e-12)
    assert torch.allclose(L05.gelu_tanh(x), torch.nn.functional.gelu(x, approximate="tanh"),
                          atol=1e-12)


# ------------------------------------------------------------ de ponta a ponta
def test_licao_inteira_com_modelo(gpt2_pequeno, tmp_path):
    r = rodar_script("05_block.py", "--figuras", str(tmp_path),
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    assert "Traceback" not in r.saida + r.erros
    for k in range(1, 7):
        assert f"Experimento {k}/6 · " in r.saida
    assert "6 de 6 experimento(s) rodaram" in r.saida
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "05_gelu_relu.png", "05_logit_lens.png", "05_norma_residual.png", "05_pre_post_ln.png"]


def test_licao_sem_modelo_explica_e_segue(tmp_path):
    r = rodar_script("05_block.py", "--sem-figuras", "--so", "3,4,5",
                     env={"LAB_MODELO": str(tmp_path / "sem-modelo"), "COLUMNS": "60"})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert r.saida.count("PULADO: não há pasta") == 2
    assert "Contagem da configuração do gpt2 (sem baixar pesos)" in r.saida
    assert "1 de 3 experimento(s) rodaram" in r.saida
