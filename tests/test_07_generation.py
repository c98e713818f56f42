"""Lição 07: geração de texto contra o transformers.

Oráculos: os logits processors do transformers (TemperatureLogitsWarper,
TopKLogitsWarper, TopPLogitsWarper) nos mesmos logits; o generate() nos mesmos
pesos, guloso e sorteado com a mesma semente; os logits sem cache do
GPT2LMHeadModel; a fórmula fechada do cache (FACTS.md: 72 KiB por token no gpt2).
"""
from __future__ import annotations

import math
import re

import pytest
import torch

import common
from conftest import RAIZ, rodar_script

licao = common.importar_licao("07_generation")
L06 = common.importar_licao("06_gpt2")


def perturbar(modelo, semente=1):
    """Vieses e ganhos sorteados e notas de atenção maiores: num GPT-2 recém-criado a
    atenção é quase uniforme e um erro de posição ou de máscara quase não apareceria."""
    g = torch.Generator().manual_seed(semente)
    with torch.no_grad():
        for nome, p in modelo.named_parameters():
            if p.dim() == 1:
                ruido = torch.randn(p.shape, generator=g)
                p.copy_(1 + 0.1 * ruido if ".ln_" in nome and nome.endswith("weight")
                        else 0.02 * ruido)
        for bloco in modelo.transformer.h:
            bloco.attn.c_attn.weight.mul_(4)
        modelo.transformer.wpe.weight.mul_(10)       # posições que pesam
    return modelo


@pytest.fixture(scope="module")
def pequeno(gpt2_pequeno):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    hf = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, use_safetensors=True).eval()
    hf = perturbar(hf)
    return hf, L06.montar_nosso(hf), AutoTokenizer.from_pretrained(gpt2_pequeno)


def logits_aleatorios(B=3, V=300, semente=0, escala=3.0):
    g = torch.Generator().manual_seed(semente)
    return escala * torch.randn(B, V, generator=g)


# ------------------------------------------------------------ os cortes contra o transformers
@pytest.mark.parametrize("k", [1, 2, 5, 50, 299, 300, 1000])
def test_top_k_igual_ao_transformers(k):
    from transformers.generation.logits_process import TopKLogitsWarper

    logits = logits_aleatorios()
    logits[0, :10] = logits[0, 0]                    # um empate grande na frente
    deles = TopKLogitsWarper(top_k=k)(None, logits.clone())
    assert torch.equal(licao.filtrar_top_k(logits, k), deles)


def test_top_k_mantem_os_empatados():
    logits = torch.tensor([[3.0, 2.0, 2.0, 1.0]])
    assert licao.filtrar_top_k(logits, 2).isfinite().sum() == 3      # k = 2 guarda 3
    assert licao.filtrar_top_k(logits, 0) is logits                   # 0 = desligado


@pytest.mark.parametrize("p", [0.1, 0.5, 0.7, 0.9, 0.95, 0.999, 1.0])
@pytest.mark.parametrize("semente", [0, 1, 2])
def test_top_p_igual_ao_transformers(p, semente):
    from transformers.generation.logits_process import TopPLogitsWarper

    logits = logits_aleatorios(semente=semente)
    deles = TopPLogitsWarper(top_p=p)(None, logits.clone())
    assert torch.equal(licao.filtrar_top_p(logits, p), deles)


def test_top_p_nos_casos_de_borda():
    """Acerto exato de p (massas diádicas) e a comparação em float32 (1 - 0,7 = 0,3)."""
    diadico = torch.tensor([[0.5, 0.25, 0.125, 0.125]]).log()
    for p, ficam in ((0.5, 1), (0.75, 2), (0.875, 3)):
        assert int(licao.filtrar_top_p(diadico, p).isfinite().sum()) == ficam
    quatro = torch.tensor([[0.4, 0.3, 0.2, 0.1]]).log()
    assert int(licao.filtrar_top_p(quatro, 0.7).isfinite().sum()) == 2
    assert int(licao.filtrar_top_p(quatro, 0.01).isfinite().sum()) == 1   # o maior fica


@pytest.mark.parametrize("t, k, p", [(0.5, 0, 0.8), (1.0, 50, 0.9), (2.0, 10, 1.0),
                                     (0.7, 0, 0.95), (1.3, 5, 0.5)])
def test_ordem_igual_a_do_generate(t, k, p):
    from transformers.generation.logits_process import (LogitsProcessorList,
                                                        TemperatureLogitsWarper,
                                                        TopKLogitsWarper, TopPLogitsWarper)

    logits = logits_aleatorios(semente=7)
    cadeia = LogitsProcessorList([TemperatureLogitsWarper(t)]
                                 + ([TopKLogitsWarper(k)] if k else [])
                                 + ([TopPLogitsWarper(p)] if p < 1 else []))
    deles = cadeia(None, logits.clone())
    nossos = licao.filtrar_top_p(licao.filtrar_top_k(logits / t, k), p)
    assert torch.equal(nossos, deles)


def test_a_ordem_muda_o_nucleo_no_brinquedo():
    z = torch.tensor(list(licao.BRINQUEDO.values()), dtype=torch.float64)
    assert licao.sobreviventes(z, top_p=0.9, temperatura=0.5) == 2
    assert licao.sobreviventes(z, top_p=0.9) == 4
    assert licao.sobreviventes(z, top_k=3) == 4                  # o empate no 3º lugar


def test_temperatura_nos_limites():
    z = torch.tensor(list(licao.BRINQUEDO.values()), dtype=torch.float64)
    assert licao.entropia(z / 0.01) < 1e-12
    assert abs(licao.entropia(z / 1e6) - math.log(8)) < 1e-9
    e = [licao.entropia(z / t) for t in (0.5, 1, 2, 10)]
    assert e == sorted(e)                                        # cresce com T


# ------------------------------------------------------------ o laço contra o generate()
def test_gulosa_com_e_sem_cache_igual_ao_generate(pequeno):
    hf, nosso, tok = pequeno
    ids = tok("The quick brown fox", return_tensors="pt")["input_ids"]
    deles = licao.generate_deles(hf, ids, 24)
    for cache in (True, False):
        nossos = licao.gerar(nosso, ids, 24, hf.config.n_head, cache=cache)
        assert nossos.tolist() == deles.tolist()
    assert len(set(deles[0, ids.shape[1]:].tolist())) > 3      # não é um token repetido


@pytest.mark.parametrize("regras", [dict(temperatura=1.0), dict(temperatura=0.7, top_p=0.9),
                                    dict(temperatura=1.5, top_k=20),
                                    dict(temperatura=0.8, top_k=40, top_p=0.8)])
def test_sorteio_bit_a_bit_igual_ao_generate(pequeno, regras):
    hf, nosso, tok = pequeno
    ids = tok("O gato subiu no", return_tensors="pt")["input_ids"]
    torch.manual_seed(3)
    deles = licao.generate_deles(hf, ids, 20, **regras)
    torch.manual_seed(3)
    nossos = licao.gerar(nosso, ids, 20, hf.config.n_head, **regras)
    assert nossos.tolist() == deles.tolist()
    torch.manual_seed(4)
    outra = licao.gerar(nosso, ids, 20, hf.config.n_head, **regras)
    assert outra.tolist() != nossos.tolist()                     # outra semente, outro texto


def test_um_gerador_por_linha_igual_a_uma_semente_global_por_texto(pequeno):
    """O experimento 4 sorteia as três sementes num lote: cada linha tem de dar o mesmo
    texto que torch.manual_seed(s) e um texto sozinho (o que o generate faria)."""
    hf, nosso, tok = pequeno
    ids = tok("O gato subiu no", return_tensors="pt")["input_ids"]
    regras = dict(temperatura=1.0, top_p=0.9)
    geradores = [torch.Generator().manual_seed(s) for s in (0, 1, 2)]
    lote = licao.gerar(nosso, ids.expand(3, -1), 16, hf.config.n_head,
                       geradores=geradores, **regras)
    for s, linha in zip((0, 1, 2), lote):
        torch.manual_seed(s)
        sozinho = licao.gerar(nosso, ids, 16, hf.config.n_head, **regras)[0]
        assert linha.tolist() == sozinho.tolist()
    assert len({tuple(linha.tolist()) for linha in lote}) == 3


def test_generate_recusa_temperatura_zero(pequeno):
    hf, _, tok = pequeno
    ids = tok("The cat", return_tensors="pt")["input_ids"]
    with pytest.raises(ValueError, match="do_sample=False"):
        hf.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                    temperature=0.0, max_new_tokens=2, pad_token_id=None)


def test_generate_sem_top_k_explicito_usa_50(pequeno):
    """A armadilha: com do_sample=True e sem top_k, o generate() corta em 50 escondido."""
    hf, nosso, tok = pequeno
    ids = tok("The cat", return_tensors="pt")["input_ids"]
    torch.manual_seed(5)
    deles = hf.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                        max_new_tokens=20, pad_token_id=None)
    saidas = {}
    for k in (0, 50):
        torch.manual_seed(5)
        saidas[k] = licao.gerar(nosso, ids, 20, hf.config.n_head, temperatura=1.0, top_k=k)
    assert deles.tolist() == saidas[50].tolist() != saidas[0].tolist()


@pytest.mark.cpus
def test_sortear_so_os_sobreviventes_da_outro_texto(pequeno):
    """O que a apostila afirma: renumerar os sobreviventes também é um sorteio correto,
    mas gasta os números aleatórios de outro jeito (mesma semente, outro texto)."""
    hf, nosso, tok = pequeno
    ids = tok("The cat", return_tensors="pt")["input_ids"]

    def so_os_sobreviventes(logits):
        mantidos = licao.filtrar_top_k(logits.float(), 40)[0].isfinite().nonzero()[:, 0]
        escolhido = torch.multinomial(logits[0, mantidos].softmax(-1), 1)
        return mantidos[escolhido].view(1, 1)

    torch.manual_seed(6)
    inteiro = licao.gerar(nosso, ids, 20, hf.config.n_head, temperatura=1.0, top_k=40)
    original = licao.escolher
    try:
        licao.escolher = lambda logits, **_: so_os_sobreviventes(logits)
        torch.manual_seed(6)
        renumerado = licao.gerar(nosso, ids, 20, hf.config.n_head, temperatura=1.0)
    finally:
        licao.escolher = original
    assert inteiro.tolist() != renumerado.tolist()


def test_is_causal_do_pytorch_alinha_pelo_canto_de_cima():
    """Por que o passo com cache não usa is_causal=True: com 1 consulta e 5 chaves, o
    token novo veria só a chave 0 (a apostila avisa)."""
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, n, 4, generator=g) for n in (1, 5, 5))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(y, v[:, :, :1])


# ------------------------------------------------------------ o cache KV
def test_logits_com_cache_iguais_aos_do_transformers(pequeno):
    hf, nosso, _ = pequeno
    P = hf.config.n_positions
    ids = torch.randint(0, hf.config.vocab_size, (2, P),
                        generator=torch.Generator().manual_seed(0))   # lote 2, contexto cheio
    with torch.no_grad():
        deles = hf(ids).logits                                        # (2, P, V)
        cache = licao.CacheKV.para(hf.config)
        nossos = [licao.passo(nosso, ids[:, :5], cache)]             # 5 de uma vez
        nossos += [licao.passo(nosso, ids[:, t:t + 1], cache) for t in range(5, P)]
    nossos = torch.stack(nossos, dim=1)                               # (2, P - 4, V)
    assert (nossos - deles[:, 4:]).abs().max() < 1e-4
    assert cache.tamanho == P
    with pytest.raises(ValueError, match="posições"):
        licao.passo(nosso, ids[:, :1], cache)                         # não cabe mais


def test_varios_tokens_novos_com_o_cache_cheio(pequeno):
    """A máscara com deslocamento: 3 tokens novos de uma vez, depois de 5 guardados."""
    hf, nosso, _ = pequeno
    ids = torch.randint(0, hf.config.vocab_size, (2, 12),
                        generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        cache = licao.CacheKV.para(hf.config)
        licao.passo(nosso, ids[:, :5], cache)
        tres = licao.passo(nosso, ids[:, 5:8], cache)                 # (2, V)
        certo = hf(ids[:, :8]).logits[:, -1]
        errado = licao.passo(nosso, ids[:, 5:8], licao.CacheKV.para(hf.config),
                             causal=False)                           # sem o passado
    assert (tres - certo).abs().max() < 1e-4
    assert (errado - certo).abs().max() > 1e-2
    with torch.no_grad():                  # e sem máscara entre os três novos: outro resultado
        cache = licao.CacheKV.para(hf.config)
        licao.passo(nosso, ids[:, :5], cache)
        sem_mascara = licao.passo(nosso, ids[:, 5:8], cache, causal=False)
    assert (sem_mascara - certo).abs().max() > 1e-3


def test_posicoes_erradas_seriam_pegas(pequeno, monkeypatch):
    """Se as posições recomeçassem do 0 a cada passo, os logits sairiam outros."""
    hf, nosso, _ = pequeno
    ids = torch.randint(0, hf.config.vocab_size, (1, 12),
                        generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        certo = hf(ids).logits[0, -1]
        cache = licao.CacheKV.para(hf.config)
        licao.passo(nosso, ids[:, :-1], cache)
        monkeypatch.setattr(licao.CacheKV, "tamanho", property(lambda self: 0))
        errado = licao.passo(nosso, ids[:, -1:], cache)[0]
    assert (errado - certo).abs().max() > 1e-2


def test_conferir_logits_e_bytes_do_cache(pequeno):
    hf, nosso, tok = pequeno
    ids = tok("The cat sat on the", return_tensors="pt")["input_ids"]
    delta, escala, cache = licao.conferir_logits(nosso, ids, hf.config.n_head, 10)
    assert delta < 1e-4 and L06.confere(delta, escala)
    assert cache.tamanho == ids.shape[1] + 9
    cfg = hf.config
    assert cache.bytes() == cache.tamanho * licao.bytes_por_token(cfg.n_layer, cfg.n_embd)


def test_bytes_por_token_do_gpt2_conferem_com_facts():
    assert licao.bytes_por_token(12, 768) == 73_728 == 72 * 1024       # 72 KiB por token
    assert 1024 * licao.bytes_por_token(12, 768) == 72 * 2**20          # 72 MiB
    assert licao.bytes_por_token(48, 1600) == 600 * 1024


def test_cache_so_vale_com_causalidade(pequeno):
    hf, nosso, _ = pequeno
    ids = torch.randint(0, hf.config.vocab_size, (1, 20),
                        generator=torch.Generator().manual_seed(2))
    k, d_logit, escala = licao.aos_poucos_e_de_uma_vez(nosso, ids, hf.config.n_head, True)
    assert max(k) < 1e-4 and L06.confere(d_logit, escala)
    k, d_logit, escala = licao.aos_poucos_e_de_uma_vez(nosso, ids, hf.config.n_head, False)
    assert k[0] < 1e-4                                  # camada 1: só o próprio token
    assert min(k[1:]) > 1e-2                            # as outras ficam velhas
    assert d_logit > 1e-3 and not L06.confere(d_logit, escala)


def test_somar_interpola_as_medidas():
    # tempos lineares em n: a soma interpolada é a soma exata de 1..ate
    comprimentos, tempos = [2, 10, 30], [2.0, 10.0, 30.0]
    assert licao.somar(comprimentos, tempos, 30) == pytest.approx(sum(range(1, 31)))
    assert licao.somar([4, 8], [1.0, 1.0], 8) == pytest.approx(8.0)


def test_limite_nunca_imprime_digitos_de_arredondamento():
    assert licao.limite(3.8e-6) == "< 1e-5"
    assert licao.limite(1e-5) == "< 1e-4"
    assert licao.limite(0.0) == "0"


# ------------------------------------------------------------ o script, como o aluno roda
def test_roda_inteiro_com_o_modelo_pequeno(gpt2_pequeno, tmp_path):
    figuras = tmp_path / "figuras"
    r = rodar_script("07_generation.py", "--figuras", str(figuras),
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    tudo = r.saida + r.erros
    assert r.returncode == 0, tudo
    assert "Traceback" not in tudo
    for esperado in ("Experimento 1/7", "tokens\niguais -> os mesmos.",
                     "-> os mesmos\n", "Semente 0 de novo: o mesmo texto, token a token.",
                     "= fórmula", "Causal: o cache é a conta certa.",
                     "o K guardado fica velho a partir da camada 2",
                     "7 de 7 experimentos rodaram.",
                     "Próximo passo: lab/08_since_2017.py"):
        assert esperado in r.saida, esperado
    assert "NÃO" not in r.saida
    sem_caminhos = [linha for linha in r.saida.splitlines()
                    if str(tmp_path) not in linha and str(gpt2_pequeno) not in linha]
    assert max(len(linha) for linha in sem_caminhos) <= 80      # 80 colunas
    assert (figuras / "07_tempo_por_token.png").stat().st_size > 10_000


def test_sem_modelo_explica_e_roda_o_que_nao_precisa_dele(tmp_path):
    r = rodar_script("07_generation.py", "--sem-figuras",
                     env={"LAB_MODELO": str(tmp_path / "nada")})
    tudo = r.saida + r.erros
    assert r.returncode == 1, tudo
    assert "Traceback" not in tudo
    assert r.saida.count("PULADO: não há pasta") == 7
    for esperado in ("uniforme: entropia ln 8 = 2,079 nats.",       # brinquedo do exp. 2
                     "  top-p 0,90: ficam 4",                          # brinquedo do exp. 3
                     "  gpt2-xl      48  1600    600 KiB"):            # tabela do exp. 6
        assert esperado in r.saida, esperado


@pytest.mark.parametrize("args, erro", [(("--top-p", "0"), "--top-p"),
                                        (("--temperatura", "0"), "--temperatura"),
                                        (("--top-k", "-1"), "--top-k"),
                                        (("--conversas", "0"), "--conversas"),
                                        (("--temperatura", "quente"), "não é um número")])
def test_argumentos_ruins(args, erro):
    r = rodar_script("07_generation.py", *args)
    assert r.returncode == 2
    assert erro in r.erros and "Traceback" not in r.erros


def test_apostila_cita_a_conta_do_cache():
    texto = " ".join((RAIZ / "apostilas" / "07_generation.md").read_text(
        encoding="utf-8").split())
    por_token = licao.bytes_por_token(12, 768)
    assert f"2 · 12 · 768 · 4 = {common.inteiro(por_token)} bytes" in texto
    assert "72 KiB por token" in texto and "72 MiB" in texto


# ------------------------------------------------------------ as respostas dos exercícios
TEXTO = " ".join((RAIZ / "apostilas" / "07_generation.md").read_text(encoding="utf-8").split())


def diz(trecho: str):
    """O trecho aparece na apostila (espaços e quebras de linha normalizados)."""
    trecho = " ".join(trecho.split())
    assert trecho in TEXTO, f"a apostila deveria dizer: {trecho!r}"


@pytest.mark.cpus
def test_resposta_1_probabilidades_a_mao():
    z = list(licao.BRINQUEDO.values())
    assert z == [3.0, 2.2, 1.4, 1.4, 0.6, -0.6, -1.6, -3.0]          # os do enunciado
    e = [math.exp(x) for x in z]
    for x, ex in zip(z, e):
        diz(f"e^{common.num(x, 1).replace('-', '−')} = {common.num(ex, 2)}")
    diz(f"com soma {common.num(sum(e), 2)}")
    probs = [x / sum(e) for x in e]
    diz(", ".join(common.pct(p) for p in probs[:-1]) + f" e {common.pct(probs[-1])}")
    acumulada = [sum(probs[:i + 1]) for i in range(len(probs))]
    ficam = next(i for i, a in enumerate(acumulada) if a >= 0.7) + 1   # o que cruza entra
    assert ficam == licao.sobreviventes(torch.tensor(z, dtype=torch.float64), top_p=0.7)
    diz(f"no segundo token ({common.pct(acumulada[1])}): com top-p 0,7 ficam **{ficam}**")


@pytest.mark.cpus
def test_resposta_2_temperatura_nao_muda_o_top_k_e_muda_o_top_p():
    z = torch.tensor(list(licao.BRINQUEDO.values()), dtype=torch.float64)
    aleatorios = logits_aleatorios(B=1, V=300, semente=3)[0]
    for t in (0.1, 0.5, 2.0, 10.0):
        for k in (1, 3, 5, 50):
            assert licao.sobreviventes(z, top_k=k, temperatura=t) == \
                licao.sobreviventes(z, top_k=k)
            assert torch.equal(licao.filtrar_top_k(aleatorios / t, k).isfinite(),
                               licao.filtrar_top_k(aleatorios, k).isfinite())
    antes, depois = (licao.sobreviventes(z, top_p=0.9, temperatura=t) for t in (0.5, 1.0))
    diz(f"*T* = 0,5 e depois top-p 0,9 deixa {antes} tokens, contra {depois} em *T* = 1")


@pytest.mark.cpus
def test_resposta_3_temperatura_baixa_e_empates():
    # T = 0,01: o segundo colocado fica com e^(-delta/T) vezes a probabilidade do primeiro
    quase = (torch.tensor([0.0, -0.01], dtype=torch.float64) / 0.01).softmax(-1)
    assert float(quase[1]) == pytest.approx(1 / (1 + math.e))
    diz(f"1/(1 + e) = {common.pct(float(quase[1]))}")
    longe = (torch.tensor([0.0, -0.1], dtype=torch.float64) / 0.01).softmax(-1)
    assert float(longe[1] / longe[0]) == pytest.approx(math.exp(-10))
    assert f"{math.exp(-10):.1e}" == "4.5e-05"
    diz("e^−10 ≈ 4,5 · 10⁻⁵")
    # o top-p 0,9 deixa o segundo só se o favorito tiver menos de 90 %
    for favorito, ficam in ((0.91, 1), (0.89, 2)):
        resto = (1 - favorito) / 3
        z = torch.tensor([[favorito, resto, resto, resto]]).log()
        assert int(licao.filtrar_top_p(z, 0.9).isfinite().sum()) == ficam
    diz("o segundo só sobrevive ao corte se o favorito tiver menos de 90 %")


def test_resposta_4_cache_em_float16():
    from transformers import GPT2Config, GPT2LMHeadModel

    def parametros(L, d, h):
        with torch.device("meta"):
            m = GPT2LMHeadModel(GPT2Config(n_layer=L, n_embd=d, n_head=h))
        return sum(p.numel() for p in m.parameters())       # o peso amarrado conta uma vez

    medio, xl = 2 * 24 * 1024 * 2, 2 * 48 * 1600 * 2       # bytes por token, float16
    diz(f"2 · 24 · 1.024 · 2 = {common.inteiro(medio)} bytes, ou {medio // 1024} KiB por token, "
        f"e **{1024 * medio // 2**20} MiB** com 1.024 tokens, contra "
        f"{common.tamanho(2 * parametros(24, 1024, 16))} de pesos em float16")
    diz(f"32 conversas de 1.024 tokens guardam **{common.tamanho(32 * 1024 * xl)}**, mais de "
        f"três vezes os {common.tamanho(2 * parametros(48, 1600, 25))} dos pesos")
    assert 3 < 32 * 1024 * xl / (2 * parametros(48, 1600, 25)) < 4


def test_resposta_5_o_que_cresce_com_n():
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    d = 768
    with torch.device("meta"):
        bloco = GPT2Block(GPT2Config(n_embd=d, n_head=12), layer_idx=0)
    matrizes = sum(p.numel() for p in bloco.parameters() if p.dim() == 2)
    assert matrizes == 12 * d * d                  # multiplicações por token, por camada
    diz("12*d*² multiplicações")
    for S in (256, 1024):
        atencao = 2 * S * d                        # q · K (S chaves) e pesos · V (S valores)
        assert atencao / matrizes == pytest.approx(S / (6 * d))
    diz(f"{common.pct(256 / (6 * d))} em *S* = 256 e {common.pct(1024 / (6 * d))} em "
        "*S* = 1.024")


@pytest.mark.cpus
def test_resposta_6_sobreviventes_renumerados_tem_as_mesmas_probabilidades():
    logits = logits_aleatorios(B=1, V=300, semente=5)
    cortados = licao.filtrar_top_p(licao.filtrar_top_k(logits, 40), 0.9)
    vivos = cortados[0].isfinite().nonzero()[:, 0]
    inteiro = cortados.softmax(-1)[0]
    assert torch.allclose(inteiro[vivos], cortados[0, vivos].softmax(-1))
    assert not inteiro[~cortados[0].isfinite()].any()              # os cortados têm 0


def _textos_do_exp4(saida: str) -> tuple[dict, int]:
    """{rótulo: texto} do experimento 4 e o número da linha 'Iguais ao texto da gulosa'."""
    textos, rotulo = {}, None
    for linha in saida.splitlines():
        if linha.startswith("    ") and rotulo:
            textos[rotulo] += linha.strip()
        elif linha.startswith("  ") and linha.endswith(":"):
            rotulo = linha.strip()[:-1]
            textos[rotulo] = ""
        else:
            rotulo = None
    iguais = int(re.search(r"Iguais ao texto da gulosa, token a token: (\d) de 3 sementes\.",
                           saida).group(1))
    return textos, iguais


def test_respostas_3_e_6_na_saida_e_numa_copia(gpt2_pequeno, tmp_path):
    """O exercício 6 feito numa cópia (a troca de linhas da resposta), rodada como o aluno
    a rodaria, contra o original; e a linha da gulosa do experimento 4 (exercício 3)."""
    import os
    import subprocess
    import sys

    from conftest import ambiente_de_aluno

    original = (RAIZ / "lab" / "07_generation.py").read_text(encoding="utf-8")
    antes = ("    if geradores is None:\n"
             "        return torch.multinomial(probs, num_samples=1)\n")
    depois = re.search(r"```python\n(    if geradores is None:\n.*?)```",
                       (RAIZ / "apostilas" / "07_generation.md").read_text(encoding="utf-8")
                       .split("## Respostas dos exercícios")[1], re.S).group(1)
    assert original.count(antes) == 1 and "vivos" in depois
    diz(antes)                                    # o enunciado mostra as linhas do script
    copia = tmp_path / "meu_07.py"
    copia.write_text(original.replace(antes, depois), encoding="utf-8")
    env = ambiente_de_aluno({"LAB_MODELO": str(gpt2_pequeno),
                             "PYTHONPATH": str(RAIZ / "lab") + os.pathsep
                             + os.environ.get("PYTHONPATH", "")})
    execucoes = {}
    for nome, script in (("original", RAIZ / "lab" / "07_generation.py"), ("copia", copia)):
        for args in (("--top-k", "40"), ("--top-k", "1"), ("--temperatura", "0.01")):
            if nome == "copia" and args[0] == "--temperatura":
                continue
            execucoes[nome, args[1]] = subprocess.Popen(
                [sys.executable, str(script), "--so", "4", "--sem-figuras", *args],
                cwd=RAIZ, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    saidas = {}
    for chave, proc in execucoes.items():
        saida, erros = proc.communicate(timeout=600)
        saidas[chave] = saida.decode("cp1252")
        assert proc.returncode == 0, saidas[chave] + erros.decode("cp1252", "replace")
    gulosa = "gulosa (sem sorteio, para comparar)"
    for chave, saida in saidas.items():
        textos, iguais = _textos_do_exp4(saida)
        sorteados = [t for r, t in textos.items() if r.startswith("semente")]
        assert len(sorteados) == 3 and gulosa in textos, saida
        assert iguais == sum(t == textos[gulosa] for t in sorteados), saida
        assert "Semente 0 de novo: o mesmo texto, token a token." in saida
        if chave[1] == "1":                            # top-k 1: sobra um token só
            assert iguais == 3, saida
    diz('rode-a com `--so 4 --top-k 1`: com um sobrevivente só, a última linha tem de dizer '
        '"3 de 3 sementes", como no original')
    # mesma semente, mesmas regras, outro jeito de gastar o número aleatório: outro texto
    originais, copias = (_textos_do_exp4(saidas[n, "40"])[0] for n in ("original", "copia"))
    assert [originais[f"semente {s}"] for s in range(3)] != \
        [copias[f"semente {s}"] for s in range(3)]
    assert originais[gulosa] == copias[gulosa]
    diz("Os textos da cópia saem **outros** que os do original com as mesmas sementes")
