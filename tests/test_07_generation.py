"""Lição 07: geração de texto contra o transformers.

Oráculos: os logits processors do transformers (TemperatureLogitsWarper,
TopKLogitsWarper, TopPLogitsWarper) nos mesmos logits; o generate() nos mesmos
pesos, guloso e sorteado com a mesma semente; os logits sem cache do
GPT2LMHeadModel; a fórmula fechada do cache (fatos.md: 72 KiB por token no gpt2);
a entropia e a mediana recalculadas aqui a partir do que o script imprime. O que a
apostila afirma (o texto, as respostas, as notas para o professor): test_07_apostila.
"""
from __future__ import annotations

import math
import re
import statistics

import pytest
import torch

from conftest import RAIZ, construir_gpt2, rodar_script
from copia_do_aluno import copia_da_licao, rodar_copia
from comum import montagem
from comum.console import inteiro, num, quebrar
from comum import importar_licao
from perturbar import perturbar
from terminal import Tela, sem_tmux

licao = importar_licao("07_generation")
L03 = importar_licao("03_attention")
L06 = importar_licao("06_gpt2")
APOSTILA = RAIZ / "apostilas" / "07_generation.md"


@pytest.fixture(scope="module")
def pequeno(gpt2_pequeno):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    hf = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, use_safetensors=True).eval()
    hf = perturbar(hf, atencao_forte=True)
    return hf, L06.nosso_gpt2(hf), AutoTokenizer.from_pretrained(gpt2_pequeno)


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


def entropia(logits):
    """A entropia de softmax(logits) pelo log_softmax (o caminho que a 07 usava antes)."""
    logp = logits.log_softmax(dim=-1)
    return float(-(logp.exp() * logp).sum())


def test_temperatura_nos_limites():
    z = torch.tensor(list(licao.BRINQUEDO.values()), dtype=torch.float64)
    h = [float(L03.entropia((z / t).softmax(-1))) for t in (0.01, 0.5, 1, 2, 10, 100, 1e6)]
    assert h[0] < 1e-12
    assert abs(h[-1] - math.log(8)) < 1e-9
    assert h == sorted(h)                                        # cresce com T
    # a entropia da lição 03 (das probabilidades) dá os mesmos números que a de antes
    for t, valor in zip((0.01, 0.5, 1, 2, 10, 100, 1e6), h):
        assert valor == pytest.approx(entropia(z / t), abs=1e-12)


def test_entropia_do_modelo_em_float64_nao_vira_nan():
    """Logits de ~100 em T = 0,5: em float32 parte das probabilidades vira 0 exato, e
    p log p daria NaN num 0 · log 0 ingênuo; a entropia da lição 03 (xlogy) dá 0 ali, e a
    tabela da 07, em float64, dá o que a conta direta dá."""
    g = torch.Generator().manual_seed(0)
    z = 30 * torch.randn(50257, generator=g)                     # float32, como o modelo
    p32 = (z / 0.5).softmax(-1)
    assert bool((p32 == 0).any())
    assert math.isnan(float(-(p32 * p32.log()).sum()))           # o 0 · log 0 ingênuo
    assert not math.isnan(float(L03.entropia(p32)))
    p = (z.double() / 0.5).softmax(-1)
    assert float(L03.entropia(p)) == pytest.approx(entropia(z.double() / 0.5), abs=1e-9)


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


@pytest.mark.cpus
@pytest.mark.parametrize("tipo, teto", [(torch.float32, 1e-5), (torch.float64, 1e-12)],
                         ids=["float32", "float64"])
def test_caminho_rapido_igual_a_conta_a_mao(pequeno, tipo, teto):
    """passo(rapida=True), a atenção pelo SDPA (atencao_rapida da 03), contra
    rapida=False, a conta à mão (notas, máscara, softmax), nos mesmos pesos: o prefill
    (T = S), 3 tokens novos sobre 5 guardados (T < S, a máscara alinhada por baixo) e
    passos de um token, com e sem máscara. Logits e K, V guardados: < teto x o maior
    |logit| (1e-5 em float32, 1e-12 em float64). E a gulosa rápida = o generate()."""
    import copy

    hf, _, tok = pequeno
    hf = copy.deepcopy(hf).to(tipo)
    nosso = L06.nosso_gpt2(hf)
    ids = torch.randint(0, hf.config.vocab_size, (2, 16),
                        generator=torch.Generator().manual_seed(5))    # (B, T)
    for causal in (True, False):
        logits, caches = {}, {}
        for rapida in (True, False):
            cache = licao.CacheKV.para(hf.config)
            with torch.no_grad():
                z = [licao.passo(nosso, ids[:, :5], cache, causal, rapida),
                     licao.passo(nosso, ids[:, 5:8], cache, causal, rapida)]
                z += [licao.passo(nosso, ids[:, t:t + 1], cache, causal, rapida)
                      for t in range(8, 16)]
            logits[rapida], caches[rapida] = torch.stack(z), cache     # (10, B, V)
        escala = max(1.0, float(logits[False].abs().max()))
        assert float((logits[True] - logits[False]).abs().max()) < teto * escala
        for a, b in zip(caches[True].k + caches[True].v, caches[False].k + caches[False].v):
            assert float((a - b).abs().max()) < teto * escala
    prompt = tok("The quick brown fox", return_tensors="pt")["input_ids"]
    deles = licao.generate_deles(hf, prompt, 24)
    assert licao.gerar(nosso, prompt, 24, hf.config.n_head).tolist() == deles.tolist()


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
    cache = licao.CacheKV.para(hf.config)
    with torch.no_grad():
        logits = licao.passo(nosso, ids, cache)
    tokens, de_onde = licao.continuar(nosso, cache, logits, 10)
    assert tokens == licao.generate_deles(hf, ids, 10)[0, ids.shape[1]:].tolist()
    delta, escala = licao.conferir_logits(nosso, ids, tokens, de_onde)
    assert delta < 1e-4 and montagem.confere(delta, escala)
    errados = [z + 1e-2 * (i == 3) for i, z in enumerate(de_onde)]   # um passo errado
    assert not montagem.confere(*licao.conferir_logits(nosso, ids, tokens, errados))
    assert cache.tamanho == ids.shape[1] + 9
    cfg = hf.config
    assert cache.bytes() == cache.tamanho * licao.bytes_por_token(cfg.n_layer, cfg.n_embd)
    primeiros = cache.primeiros(ids.shape[1])                 # a frase, sem cópia
    assert primeiros.tamanho == ids.shape[1]
    assert primeiros.k[0].data_ptr() == cache.k[0].data_ptr()


def test_continuar_de_um_cache_guardado_igual_ao_gerar(pequeno):
    """Os experimentos 3 e 4 sorteiam a partir da frase já no cache (o prefill uma vez
    só): o mesmo texto, bit a bit, que o gerar() com a frase inteira."""
    hf, nosso, tok = pequeno
    ids = tok("O gato subiu no", return_tensors="pt")["input_ids"]
    frase = licao.CacheKV.para(hf.config)
    with torch.no_grad():
        logits = licao.passo(nosso, ids, frase)
    regras = dict(temperatura=1.0, top_p=0.9)
    for semente in (0, 1):
        torch.manual_seed(semente)
        inteiro_ = licao.gerar(nosso, ids, 12, hf.config.n_head, **regras)[0, ids.shape[1]:]
        torch.manual_seed(semente)
        tokens, _ = licao.continuar(nosso, frase.primeiros(ids.shape[1]), logits, 12, **regras)
        assert tokens == inteiro_.tolist()
    assert frase.tamanho == ids.shape[1]                 # o cache da frase não mudou


def test_bytes_por_token_do_gpt2_conferem_com_fatos():
    assert licao.bytes_por_token(12, 768) == 73_728 == 72 * 1024       # 72 KiB por token
    assert 1024 * licao.bytes_por_token(12, 768) == 72 * 2**20          # 72 MiB
    assert licao.bytes_por_token(48, 1600) == 600 * 1024


@pytest.mark.parametrize("inicio", [1, 17])            # um token por vez; o prefill e 3
def test_cache_so_vale_com_causalidade(pequeno, inicio):
    hf, nosso, _ = pequeno
    ids = torch.randint(0, hf.config.vocab_size, (1, 20),
                        generator=torch.Generator().manual_seed(2))
    k, d_logit, escala = licao.aos_poucos_e_de_uma_vez(nosso, ids, hf.config.n_head, True,
                                                       inicio)
    assert max(k) < 1e-4 and montagem.confere(d_logit, escala)
    k, d_logit, escala = licao.aos_poucos_e_de_uma_vez(nosso, ids, hf.config.n_head, False,
                                                       inicio)
    assert k[0] < 1e-4                                  # camada 1: só o próprio token
    assert min(k[1:]) > 1e-2                            # as outras ficam velhas
    assert d_logit > 1e-3 and not montagem.confere(d_logit, escala)


def test_somar_interpola_as_medidas():
    # tempos lineares em n: a soma interpolada é a soma exata de 1..ate
    comprimentos, tempos = [2, 10, 30], [2.0, 10.0, 30.0]
    assert licao.somar(comprimentos, tempos, 30) == pytest.approx(sum(range(1, 31)))
    assert licao.somar([4, 8], [1.0, 1.0], 8) == pytest.approx(8.0)


def test_limites_com_teto_fixo():
    """O arredondamento sai como '< teto' com um teto FIXO: o limite antigo dizia a casa
    decimal do próprio número ('< 1e-6' ou '< 1e-7' conforme a CPU)."""
    from comum.console import limite

    for x in (3.8e-9, 9.9e-8, 1.2e-7, 0.0):             # ruído de duas CPUs diferentes
        assert limite(x, licao.TETO_K) == "< 1e-4"
        assert limite(x, licao.TETO_LOGITS) == "< 1e-3"
    assert limite(3.7e-2, licao.TETO_K) == "3,7e-2"      # uma diferença de verdade


# ------------------------------------------------------------ o script, como o aluno roda
@pytest.fixture(scope="module")
def inteira(gpt2_pequeno, tmp_path_factory):
    """A lição inteira com o modelo pequeno e as figuras, como o aluno roda (uma vez)."""
    figuras = tmp_path_factory.mktemp("figuras07")
    r = rodar_script("07_generation.py", "--figuras", str(figuras),
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    r.figuras = figuras
    return r


def _secao(saida: str, k: int) -> str:
    return saida.split(f"Experimento {k}/7")[1].split("Experimento ")[0]


def test_roda_inteiro_com_o_modelo_pequeno(inteira, gpt2_pequeno):
    r = inteira
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
                    if str(r.figuras) not in linha and str(gpt2_pequeno) not in linha]
    assert max(len(linha) for linha in sem_caminhos) <= 80      # 80 colunas
    assert (r.figuras / "07_tempo_por_token.png").stat().st_size > 10_000


def test_limites_de_arredondamento_tem_teto_fixo_na_saida(inteira):
    """Só '< 1e-3' (logits) e '< 1e-4' (chaves): nenhum limite na casa do próprio ruído."""
    limites = set(re.findall(r"< 1e-\d+", inteira.saida))
    assert limites == {"< 1e-3", "< 1e-4"}, limites
    assert "max |diferença| < 1e-3 (maior |logit|" in _secao(inteira.saida, 5)


def test_mediana_do_nucleo_e_a_mediana_de_verdade(inteira):
    """A 'mediana' dos 12 passos é a média dos dois do meio (era o de cima dos dois)."""
    secao = _secao(inteira.saida, 3)
    linhas = re.findall(r"^\s+\d+  \S+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", secao, re.M)
    assert len(linhas) == licao.PASSOS_CORTE
    nucleo = [int(c[2].replace(".", "")) for c in linhas]
    m = statistics.median(nucleo)
    assert f"(mediana {num(m, 0 if m == int(m) else 1)})" in secao, (nucleo, secao)
    assert all(int(c[0]) >= 50 for c in linhas)                 # top-k 50: 50 ou mais


def test_mediana_de_um_numero_par_de_passos():
    """Com 12 passos, a mediana é a média dos dois do meio (o script dava o de cima)."""
    assert licao.mediana([348, 349, 349, 348]) == "348,5"
    assert licao.mediana([1, 2, 3, 1000]) == "2,5"
    assert licao.mediana([5, 1, 3]) == "3"
    assert licao.mediana([1200, 1300]) == "1.250"


def test_semente_muda_o_sorteio_do_experimento_3(gpt2_pequeno, inteira):
    r = rodar_script("07_generation.py", "--so", "3", "--semente", "1", "--sem-figuras",
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida + r.erros
    assert "(T = 1, top-p 0,9, semente 1)" in r.saida
    assert "(T = 1, top-p 0,9, semente 0)" in inteira.saida

    def sorteados(saida):
        return re.findall(r"^\s+\d+  (\S+)\s+[\d.]+\s+[\d.]+\s+[\d.]+$",
                          _secao(saida, 3), re.M)
    assert sorteados(r.saida) != sorteados(inteira.saida)
    # a semente 0 com --so 3 sozinho (o modelo carregado dentro do experimento) dá o
    # mesmo sorteio que na lição inteira: o experimento fixa a semente antes de sortear
    zero = rodar_script("07_generation.py", "--so", "3", "--sem-figuras",
                        env={"LAB_MODELO": str(gpt2_pequeno)})
    assert sorteados(zero.saida) == sorteados(inteira.saida)


def test_sem_modelo_explica_uma_vez_e_roda_o_que_nao_precisa_dele(tmp_path):
    r = rodar_script("07_generation.py", "--sem-figuras",
                     env={"LAB_MODELO": str(tmp_path / "nada")})
    tudo = r.saida + r.erros
    assert r.returncode == 1, tudo
    assert "Traceback" not in tudo
    assert r.saida.count("PULADO: não há pasta") == 7
    # as 3 linhas da explicação saem uma vez só (no experimento 1); os outros apontam para lá
    corrido = " ".join(r.saida.split())                # a mensagem quebra com o caminho
    assert corrido.count("confira também a variável LAB_MODELO") == 1
    assert r.saida.count("(veja o experimento 1, acima)") == 6
    for esperado in ("uniforme: entropia ln 8 = 2,079 nats.",       # brinquedo do exp. 2
                     "  top-p 0,90: ficam 4",                          # brinquedo do exp. 3
                     "  gpt2-xl      48  1600    600 KiB"):            # tabela do exp. 6
        assert esperado in r.saida, esperado


def test_gulosa_diferente_do_generate_faz_a_licao_falhar(gpt2_pequeno, tmp_path):
    """A conferência do experimento 1 (o nosso laço contra o generate()) passa por
    licao.verificar: numa cópia em que o laço sorteia, a lição sai com 1."""
    antes = "            prox = escolher(logits)                         # (1, 1)\n"
    copia = copia_da_licao(tmp_path, "07_generation.py",
                           (antes, antes.replace("escolher(logits)", "escolher(logits, 1.0)")))
    r = rodar_copia(copia, "--so", "1", "--sem-figuras", env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 1, r.saida + r.erros
    assert "iguais -> DIFERENTES." in r.saida
    assert "FALHOU a autoverificação" in r.saida and "= generate()" in r.saida


@pytest.fixture(scope="module")
def gpt2_1024(tmp_path_factory):
    """Um GPT-2 pequeno com as 1.024 posições do de verdade (para um --texto longo)."""
    return construir_gpt2(tmp_path_factory.mktemp("gpt2_1024") / "modelo", posicoes=1024)


def test_texto_longo_cabe_em_80_colunas(gpt2_1024):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gpt2_1024)
    frase = "The cat sat on the mat, and the quick brown fox jumps over the lazy dog. "
    ids = tok(frase * 80)["input_ids"][:1001]
    texto = tok.decode(ids)
    T = len(tok(texto)["input_ids"])
    assert 1000 <= T <= 1024 - licao.NOVOS
    r = rodar_script("07_generation.py", "--so", "1,2", "--sem-figuras", "--texto", texto,
                     env={"LAB_MODELO": str(gpt2_1024)})
    assert r.returncode == 0, r.saida + r.erros
    linhas = [linha for linha in r.saida.splitlines() if str(gpt2_1024) not in linha]
    assert max(len(linha) for linha in linhas) <= 80, max(linhas, key=len)
    assert len(r.saida.splitlines()) < 120                      # a frase não sai inteira
    assert f"({inteiro(T)} tokens)" in r.saida and f"{inteiro(T)} tokens " in r.saida
    assert "No modelo carregado, depois de \"The cat sat" in r.saida


@pytest.mark.parametrize("texto, esperado, codigo", [
    ("", "o --texto está vazio", 1),
    ("a\udce7\udce3o", "não é texto em UTF-8", 2),  # bytes de outra codificação: uso errado
])
def test_texto_ruim_explica_sem_traceback(gpt2_pequeno, texto, esperado, codigo):
    r = rodar_script("07_generation.py", "--so", "1", "--sem-figuras", "--texto", texto,
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == codigo, r.saida + r.erros
    assert "Traceback" not in r.saida + r.erros
    assert esperado in " ".join((r.saida + r.erros).split())


def test_um_token_so_no_singular(gpt2_pequeno):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gpt2_pequeno)
    assert len(tok(" the")["input_ids"]) == 1
    r = rodar_script("07_generation.py", "--so", "1,6", "--sem-figuras", "--texto", " the",
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida + r.erros
    assert "(1 token)." in r.saida and "(1 tokens)" not in r.saida
    assert "com a frase (1 token):" in r.saida


@pytest.mark.parametrize("args, erro", [(("--top-p", "0"), "--top-p"),
                                        (("--temperatura", "0"), "--temperatura"),
                                        (("--top-k", "-1"), "--top-k"),
                                        (("--conversas", "0"), "--conversas"),
                                        (("--temperatura", "quente"), "não é um número")])
def test_argumentos_ruins(args, erro):
    r = rodar_script("07_generation.py", *args)
    assert r.returncode == 2
    assert erro in r.erros and "Traceback" not in r.erros


# ------------------------------------------------------------ o projetor, com modelos fundos
@pytest.fixture(scope="module", params=[24, 36], ids=lambda L: f"{L}_camadas")
def gpt2_fundo(request, tmp_path_factory):
    """gpt2-medium tem 24 camadas, gpt2-large 36: a tabela por camada do experimento 7
    passava da tela de 30 linhas antes da pausa."""
    pasta = tmp_path_factory.mktemp(f"gpt2_{request.param}") / "modelo"
    return construir_gpt2(pasta, camadas=request.param, d=32, cabecas=2), request.param


@sem_tmux
def test_tabela_por_camada_cabe_na_tela_com_pausas(gpt2_fundo, tmp_path):
    import shlex
    import sys

    pasta, camadas = gpt2_fundo
    comando = (f"LAB_MODELO={shlex.quote(str(pasta))} {shlex.quote(sys.executable)} "
               "lab/07_generation.py --so 7 --pausa --sem-figuras")
    tela = Tela(tmp_path, f"cd {shlex.quote(str(RAIZ))} && {comando}")
    vistas, camadas_vistas = 0, set()
    try:
        while True:
            linhas = tela.esperar(lambda: tela.pausas_vistas() > vistas
                                  or any(x.startswith("fim: ") for x in tela.linhas()),
                                  f"a pausa {vistas + 1} ou o fim", limite=300)
            if tela.pausas_vistas() == vistas:
                break
            vistas += 1
            quadro = "\n".join(linhas)
            assert re.match(r"(Lição 07 · |Experimento 7/7 · )", linhas[0]), (
                f"pausa {vistas}: o começo da tela rolou para fora\n{quadro}")
            camadas_vistas |= {int(m) for m in re.findall(r"^\s+(\d+)\s+< 1e-4", quadro, re.M)}
            tela.tmux("send-keys", "Enter")
        assert "fim: 0" in tela.linhas(), "\n".join(tela.linhas())
    finally:
        tela.fechar()
    assert camadas_vistas == set(range(1, camadas + 1))     # cada camada numa tela inteira
    assert vistas >= 3                                      # a tabela, mais de uma parte


# ------------------------------------------------------------ o que a apostila diz da saída
def test_a_linha_do_tempo_e_as_duas_depois_dela(inteira):
    """A saída da lição inteira e a frase da apostila que a descreve (fica aqui, e não em
    test_07_apostila, porque lê a execução inteira desta pasta)."""
    secao = _secao(inteira.saida, 1).rstrip().splitlines()
    i = next(i for i, linha in enumerate(secao) if linha.startswith("Tempo: o nosso laço"))
    depois = [linha for linha in secao[i + 1:] if not re.fullmatch(r"\([\d,]+ s\)", linha)]
    assert len(depois) == 2                                   # não é a última linha
    texto = " ".join(APOSTILA.read_text(encoding="utf-8").split())
    assert ("A linha que começa com `Tempo:` compara os tempos (as duas linhas depois dela"
            in texto)
    assert "A última linha compara os tempos" not in texto


def test_vereditos_dos_experimentos_3_e_5_seguem_os_numeros():
    """Issue 40: o experimento 3 dizia "o corte se adapta à confiança do modelo" com o
    núcleo parado (38.504 a 38.570, pesos aleatórios), e o 5 chamava de "quase parado" um
    tempo que dobrou. Agora a frase é escolhida por um limiar sobre os números dela."""
    adapta = licao.frase_do_nucleo([1, 3, 28, 9, 10])
    assert "o corte se adapta à confiança do modelo" in adapta
    assert adapta.startswith("top-p 0,9 deixou de 1 a 28 tokens (mediana 9)")
    parado = licao.frase_do_nucleo([38504, 38570, 38527, 38528])
    assert "se adapta" not in parado and "quase não mudou" in parado
    assert "quase parado" in licao.frase_dos_tempos(5.9, 1.2)
    dobrou = licao.frase_dos_tempos(5.9, 2.1)
    assert "quase parado" not in dobrou and "cresce bem mais depressa" in dobrou
    assert "não apareceu" in licao.frase_dos_tempos(3.0, 2.1)
    for frase in (adapta, parado):
        assert all(len(x) <= 79 for x in quebrar(frase).splitlines())
