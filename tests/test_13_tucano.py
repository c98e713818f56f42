"""Lição 13: o Llama inteiro com as peças da 08, contra o LlamaForCausalLM do transformers.

Os oráculos são independentes da lição: o LlamaForCausalLM (logits, generate() guloso,
contagem de parâmetros) sobre os mesmos pesos, a conta fechada e o cartão do Tucano-160m.
Os modelos são Llama de verdade, pequenos e aleatórios, gravados com save_pretrained
(ferramentas/modelos_de_teste.py) nas duas variantes: saída própria e MHA (como o Tucano),
saída amarrada e GQA (como o SmolLM2), com o tokenizador no formato do hub (tokenizer.json).
O que a apostila afirma (as contas que ela cita, a saída como ela a descreve): test_13_apostila.
"""
from __future__ import annotations

import json
import shutil

import pytest
import torch

from conftest import RAIZ, modelo_compartilhado, rodar_script
from modelos_de_teste import FORMA_TUCANO_160M, construir_llama
from comum import licao

L13 = licao.importar_licao("13_tucano")
TUCANO = "TucanoBR/Tucano-160m"
CARTAO = 162_417_408


@pytest.fixture(scope="module", params=["tucano", "smollm"])
def variante(request):
    """(nome, pasta) de cada variante pequena."""
    nome = request.param
    return nome, modelo_compartilhado(f"llama_{nome}", lambda p: construir_llama(p, nome))


@pytest.fixture(scope="module")
def llama_tucano():
    return modelo_compartilhado("llama_tucano", lambda p: construir_llama(p, "tucano"))


@pytest.fixture(scope="module")
def llama_bytes():
    """Um Llama com um BPE de bytes, como o do GPT-2 e o do SmolLM2 de verdade: 'Ġ' no
    vocabulário e nenhum <s> na frente do texto."""
    return modelo_compartilhado("llama_bytes",
                                lambda p: construir_llama(p, "smollm", tokenizador="bytes"))


def carregar(pasta):
    from transformers import AutoTokenizer, LlamaForCausalLM

    hf = LlamaForCausalLM.from_pretrained(pasta, dtype=torch.float32).eval()
    return hf, AutoTokenizer.from_pretrained(pasta)


# ---------------------------------------------------------------- a peça
def test_tucano_160m_tem_os_parametros_do_cartao():
    f = FORMA_TUCANO_160M
    forma = dict(camadas=f["camadas"], d=f["d"], h=f["cabecas"], kv=f["cabecas"],
                 largura=f["largura"], vocab=32_000)
    with torch.device("meta"):
        nosso = L13.Llama(**forma)
    assert sum(p.numel() for p in nosso.parameters()) == CARTAO
    assert L13.parametros_llama(**forma) == CARTAO
    # o oráculo: o LlamaForCausalLM do transformers na mesma forma
    from transformers import LlamaConfig, LlamaForCausalLM

    with torch.device("meta"):
        deles = LlamaForCausalLM(LlamaConfig(
            vocab_size=32_000, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
            num_attention_heads=12, num_key_value_heads=12, tie_word_embeddings=False))
    assert sum(p.numel() for p in deles.parameters()) == CARTAO


@pytest.mark.parametrize("kv, amarrada", [(4, False), (2, True), (1, False)])
def test_conta_fechada_contra_o_transformers(kv, amarrada):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=500, hidden_size=64, intermediate_size=176,
                         num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=kv,
                         tie_word_embeddings=amarrada)
    with torch.device("meta"):
        deles = LlamaForCausalLM(config)
        nosso = L13.Llama.do_config(config.to_dict())
    n = sum(p.numel() for p in deles.parameters())
    assert sum(p.numel() for p in nosso.parameters()) == n
    assert L13.parametros_llama(3, 64, 4, kv, 176, 500, amarrada) == n


def test_do_config_le_base_e_eps_dos_dois_formatos():
    antigo = dict(num_hidden_layers=1, hidden_size=8, num_attention_heads=2,
                  num_key_value_heads=1, intermediate_size=16, vocab_size=10,
                  rope_theta=500_000.0, rms_norm_eps=1e-6, tie_word_embeddings=True)
    novo = dict(antigo, rope_parameters={"rope_type": "default", "rope_theta": 1234.0})
    del novo["rope_theta"]
    a, b = L13.Llama.do_config(antigo), L13.Llama.do_config(novo)
    assert a.base == 500_000.0 and b.base == 1234.0
    assert a.norm.eps == 1e-6 and a.blocos[0].ln_2.eps == 1e-6
    assert a.lm_head is None and L13.Llama.do_config(dict(antigo, tie_word_embeddings=False)).lm_head


@pytest.mark.cpus  # as contas do torch: em toda variante de CPU
def test_logits_iguais_aos_do_transformers(variante):
    nome, pasta = variante
    hf, tok = carregar(pasta)
    nosso = L13.nosso_llama(hf)
    ids = tok("A capital do Brasil é Brasília e o gato subiu no telhado",
              return_tensors="pt")["input_ids"]
    with torch.no_grad():
        deles, nossos = hf(ids).logits, nosso(ids)
    teto = 1e-4 * max(1.0, float(deles.abs().max()))
    assert float(deles.abs().max()) > 5                    # logits de um modelo de verdade
    assert (nossos - deles).abs().max() <= teto
    # os pesos são os mesmos tensores (nenhuma cópia), a saída amarrada é o embedding
    ptrs = {p.untyped_storage().data_ptr() for p in hf.parameters()}
    assert all(p.untyped_storage().data_ptr() in ptrs for p in nosso.parameters())
    assert (nosso.lm_head is None) == (nome == "smollm")
    # a conferência pode falhar: com outra base do RoPE, os logits mudam
    nosso.base = nosso.base * 3
    with torch.no_grad():
        assert (nosso(ids) - deles).abs().max() > 100 * teto


def test_nomes_cobrem_todos_os_pesos(variante):
    _, pasta = variante
    hf, _ = carregar(pasta)
    nosso = L13.nosso_llama(hf)
    usados = {L13.nome_no_transformers(n) for n in nosso.state_dict()}
    sobram = set(hf.state_dict()) - usados - ({"lm_head.weight"} if nosso.lm_head is None
                                              else set())
    assert not sobram


@pytest.mark.cpus  # as contas do torch: em toda variante de CPU
def test_gulosa_com_cache_igual_ao_generate(variante):
    """>= 32 tokens novos, token por token, também com GQA e saída amarrada."""
    from transformers import GenerationConfig

    _, pasta = variante
    hf, tok = carregar(pasta)
    nosso = L13.nosso_llama(hf)
    for frase in ("A floresta da Amazônia é conhecida por sua", "O gato"):
        ids = tok(frase, return_tensors="pt")["input_ids"]
        nossos = L13.gerar(nosso, ids, 40)
        regra = GenerationConfig(max_new_tokens=40, do_sample=False, eos_token_id=[],
                                 pad_token_id=0)          # [] = sem parar no </s>
        with torch.no_grad():
            deles = hf.generate(ids, attention_mask=torch.ones_like(ids), generation_config=regra)
        assert deles.shape == nossos.shape and torch.equal(nossos, deles)


def test_o_cache_guarda_k_girada_e_so_as_cabecas_de_kv(variante):
    _, pasta = variante
    hf, tok = carregar(pasta)
    nosso = L13.nosso_llama(hf)
    ids = tok("O gato subiu no telhado", return_tensors="pt")["input_ids"]
    T = ids.shape[1]
    cache = L13.novo_cache(nosso)
    with torch.no_grad():
        L13.passo(nosso, ids, cache)
        L13.passo(nosso, ids[:, :1], cache)                  # um token a mais, na posição T
        # o oráculo: as chaves do transformers (cache dele), já giradas
        deles = hf(torch.cat([ids, ids[:, :1]], 1), use_cache=True).past_key_values
    kv, dh = hf.config.num_key_value_heads, hf.config.hidden_size // hf.config.num_attention_heads
    for camada in range(hf.config.num_hidden_layers):
        k_deles = deles.layers[camada].keys
        assert cache.k[camada].shape == (1, kv, T + 1, dh) == k_deles.shape
        assert torch.allclose(cache.k[camada], k_deles, atol=1e-5)
        assert torch.allclose(cache.v[camada], deles.layers[camada].values, atol=1e-5)
    assert cache.bytes() == L13.bytes_do_cache_por_token(len(nosso.blocos), kv, dh) * (T + 1)


def test_gerar_a_partir_da_frase_ja_no_cache(variante):
    """gerar(..., prefixo=(cache, logits)) de um passo() com a frase dá os mesmos tokens
    que passar a frase de novo (gulosa e sorteada), e o cache de fora fica só com a frase."""
    _, pasta = variante
    hf, tok = carregar(pasta)
    nosso = L13.nosso_llama(hf)
    ids = tok("A floresta da Amazônia é conhecida por sua", return_tensors="pt")["input_ids"]
    cache = L13.novo_cache(nosso)
    with torch.no_grad():
        logits = L13.passo(nosso, ids, cache)
    chaves = [k.clone() for k in cache.k]
    for regras in ({}, dict(temperatura=1.0, top_k=50, top_p=0.95)):
        def sortear(**prefixo):
            geradores = [torch.Generator().manual_seed(3)] if regras else None
            return L13.gerar(nosso, ids, 33, geradores=geradores, **regras, **prefixo)
        assert torch.equal(sortear(prefixo=(cache, logits)), sortear())
        assert sortear().shape == (1, ids.shape[1] + 33)
    assert [k.shape[2] for k in cache.k] == [ids.shape[1]] * len(nosso.blocos)
    assert all(torch.equal(a, b) for a, b in zip(cache.k, chaves))


@pytest.mark.cpus  # as contas do torch: em toda variante de CPU
def test_pesos_de_atencao_iguais_aos_do_transformers(variante):
    """O forward bloco a bloco do experimento 6: os pesos de atenção de cada cabeça são os
    do LlamaForCausalLM com a atenção à mão (eager, output_attentions) e os logits, os dele."""
    _, pasta = variante
    hf, tok = carregar(pasta)
    nosso = L13.nosso_llama(hf)
    ids = tok(["O gato subiu no telhado e a floresta da Amazônia"],
              return_tensors="pt")["input_ids"]
    pesos, logits = L13.pesos_de_atencao(nosso, ids)               # (L, 1, h, T, T), (1, T, V)
    hf.set_attn_implementation("eager")
    with torch.no_grad():
        deles = hf(ids, output_attentions=True)
    L, h = hf.config.num_hidden_layers, hf.config.num_attention_heads
    assert pesos.shape == (L, 1, h, ids.shape[1], ids.shape[1])
    assert torch.allclose(pesos, torch.stack(deles.attentions), atol=1e-5)
    assert (logits - deles.logits).abs().max() <= 1e-4 * max(1.0, float(deles.logits.abs().max()))
    assert float(pesos[:, 0, :, 3, 4:].abs().max()) == 0      # causal: nada do futuro


def test_sorteio_com_semente_repete(llama_tucano):
    """As regras de sorteio da 07 sobre o nosso cache: a mesma semente, o mesmo texto; outra
    semente, outro."""
    hf, tok = carregar(llama_tucano)
    nosso = L13.nosso_llama(hf)
    ids = tok("O gato", return_tensors="pt")["input_ids"]

    def sortear(semente):
        return L13.gerar(nosso, ids, 24, temperatura=1.0, top_k=50, top_p=0.95,
                         geradores=[torch.Generator().manual_seed(semente)])

    assert torch.equal(sortear(0), sortear(0))
    assert not torch.equal(sortear(0), sortear(1))


# ---------------------------------------------------------------- a lição rodando
def rodar(pasta, gpt2, *args, env=None):
    return rodar_script("13_tucano.py", "--modelo", str(pasta), "--gpt2", str(gpt2),
                        "--sem-figuras", *args, env=env)


@pytest.mark.cpus  # as contas do torch: em toda variante de CPU
def test_a_licao_inteira_roda_e_fecha_o_curso(variante, gpt2_pequeno):
    nome, pasta = variante
    r = rodar(pasta, gpt2_pequeno)
    assert r.returncode == 0, r.saida[-3000:] + r.erros[-2000:]
    assert "Traceback" not in r.saida + r.erros
    assert not [l for l in r.saida.splitlines() if len(l) > 80]
    assert "6 de 6 experimentos rodaram." in r.saida
    assert "32 de 32 iguais, na ordem: os mesmos tokens." in " ".join(r.saida.split())
    assert "confere." in r.saida and "NÃO" not in r.saida
    assert r.saida.count("(carregando o transformers...)") == 1   # dois tokenizadores, um aviso
    assert "na primeira, o <s> do começo)" in " ".join(r.saida.split())    # o tokenizador o põe
    assert "Memória nova dos nossos pesos: 0 bytes" in r.saida
    assert ("(GQA: cada uma serve 2)." if nome == "smollm" else "(MHA: uma por consulta).") \
        in r.saida
    fim = r.saida.split("6 de 6 experimentos rodaram.")[1]   # a 14 (opcional) fecha o curso
    assert "Próximo passo: lab/14_corrida.py (leia apostilas/14_corrida.md)." in " ".join(
        fim.split())
    assert "Fim do curso" not in fim


def test_sem_gpt2_o_experimento_3_diz_o_que_falta(llama_tucano, tmp_path):
    r = rodar(llama_tucano, tmp_path / "nao_existe", "--so", "3")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "tucano" in r.saida and "falta um dos tokenizadores" in " ".join(r.saida.split())


def test_config_do_tucano_160m_numa_pasta(tmp_path, gpt2_pequeno):
    """O experimento 1 lê o config.json de uma pasta (sem os pesos) e confere a contagem
    na forma do Tucano-160m: os três números são o do cartão."""
    from transformers import LlamaConfig

    f = FORMA_TUCANO_160M
    LlamaConfig(vocab_size=32_000, hidden_size=f["d"], intermediate_size=f["largura"],
                num_hidden_layers=f["camadas"], num_attention_heads=f["cabecas"],
                num_key_value_heads=f["cabecas"], tie_word_embeddings=False,
                rms_norm_eps=1e-5).save_pretrained(tmp_path)
    r = rodar(tmp_path, gpt2_pequeno, "--so", "1")
    assert r.returncode == 0, r.saida
    assert ("nosso Llama 162.417.408, conta da 08 162.417.408, LlamaForCausalLM "
            "162.417.408") in r.saida


# ---------------------------------------------------------------- condições hostis
def test_pasta_de_gpt2_diz_qual_licao_serve(gpt2_pequeno):
    r = rodar(gpt2_pequeno, gpt2_pequeno)
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    texto = " ".join(r.saida.split())
    assert "do tipo 'gpt2'" in texto and "lab/06_gpt2.py" in texto
    assert "162.417.408  (o cartão do modelo no hub)" in r.saida     # o experimento 1 roda


def test_nome_de_gpt2_do_hub_tambem(gpt2_pequeno):
    r = rodar("gpt2", gpt2_pequeno, "--so", "2")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "é um GPT-2" in r.saida and "lab/06_gpt2.py" in " ".join(r.saida.split())


def test_sem_rede_e_sem_cache(tmp_path):
    """O padrão (o Tucano do hub) sem cache e offline: o experimento 1 roda; os outros
    dizem como baixar; saída 1, nenhum traceback."""
    r = rodar_script("13_tucano.py", "--sem-figuras",
                     env={"HF_HOME": str(tmp_path / "hf"), "LAB_MODELO": ""})
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    texto = " ".join(r.saida.split())
    assert "1 de 6 experimentos rodou." in texto
    assert "HF_HUB_OFFLINE=1" in texto and "lab/13_tucano.py com internet" in texto
    assert "As três contas dão o mesmo número." in texto
    # a 14 (opcional) fecha o curso; a 13 manda para ela mesmo com experimentos pulados
    assert "Próximo passo: lab/14_corrida.py" in texto and "Fim do curso" not in texto
    assert not [l for l in r.saida.splitlines() if len(l) > 80]


def test_pesos_truncados(llama_tucano, tmp_path, gpt2_pequeno):
    pasta = tmp_path / "estragado"
    shutil.copytree(llama_tucano, pasta)
    pesos = pasta / "model.safetensors"
    pesos.write_bytes(pesos.read_bytes()[: pesos.stat().st_size // 2])
    r = rodar(pasta, gpt2_pequeno, "--so", "2")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "corrompidos" in r.saida or "incompletos" in r.saida


def test_outra_arquitetura(llama_tucano, tmp_path, gpt2_pequeno):
    pasta = tmp_path / "outro"
    shutil.copytree(llama_tucano, pasta)
    config = json.loads((pasta / "config.json").read_text(encoding="utf-8"))
    config["model_type"] = "mistral"
    (pasta / "config.json").write_text(json.dumps(config), encoding="utf-8")
    r = rodar(pasta, gpt2_pequeno, "--so", "2")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "do tipo 'mistral'" in r.saida and "família Llama" in " ".join(r.saida.split())


def test_pasta_que_nao_existe(tmp_path, gpt2_pequeno):
    r = rodar(tmp_path / "nada", gpt2_pequeno, "--so", "2")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "não há pasta" in r.saida


def test_cp1252_e_60_colunas(llama_tucano, gpt2_pequeno):
    r = rodar(llama_tucano, gpt2_pequeno, env={"COLUMNS": "60"})
    assert r.returncode == 0 and "Traceback" not in r.saida + r.erros
    assert "\ufffd" not in r.saida


def test_a_verificacao_00_diz_se_o_tucano_esta_no_cache(tmp_path):
    r = rodar_script("00_check.py", "--so", "5",
                     env={"HF_HUB_CACHE": str(tmp_path), "HF_HOME": str(tmp_path)})
    assert r.returncode == 0, r.saida
    texto = " ".join(r.saida.split())
    assert "TucanoBR/Tucano-160m: ainda não está no cache; a lição 13 o baixa" in texto
    assert "rode esta verificação com --tucano" in texto
    assert "Traceback" not in r.saida + r.erros
    assert not [l for l in r.saida.splitlines() if "Tucano" in l and len(l) > 80]


@pytest.fixture(scope="module")
def llama_12_camadas():
    """Um Llama de teste com 12 blocos, como o Tucano-160m: as tabelas por bloco do tamanho
    das da aula."""
    return modelo_compartilhado("llama_12_camadas",
                                lambda p: construir_llama(p, "tucano", camadas=12))


def test_pausas_cabem_na_tela(llama_12_camadas, gpt2_pequeno, tmp_path):
    """--pausa num terminal de verdade de 80 x 30 (tmux), como em test_pausa_todas: cada
    pausa diz o que vem, e nada rolou para fora antes do Enter."""
    import re
    import shlex
    import sys

    from terminal import COLUNAS, Tela, sem_tmux  # noqa: F401

    if shutil.which("tmux") is None:
        pytest.skip("sem tmux")
    aviso_ok = re.compile(r"\[Enter\] (\d+/\d+ · \S|\d+/\d+, a seguir: \S|Resumo)")
    cabecalho = re.compile(r"(Lição \d\d · |Experimento \d+/\d+ · )")
    comando = (f"{shlex.quote(sys.executable)} lab/13_tucano.py --pausa --sem-figuras "
               f"--modelo {shlex.quote(str(llama_12_camadas))} "
               f"--gpt2 {shlex.quote(str(gpt2_pequeno))}")
    tela = Tela(tmp_path, f"cd {shlex.quote(str(RAIZ))} && {comando}")
    avisos = []
    try:
        for vistas, linhas, aviso in tela.pausas():
            quadro = "\n".join(linhas)
            assert aviso_ok.match(aviso) and len(aviso) < COLUNAS, quadro
            assert cabecalho.match(linhas[0]), f"pausa {vistas}: rolou para fora\n{quadro}"
            avisos.append(aviso)
        assert "fim: 0" in tela.linhas(), "\n".join(tela.linhas())
        entre = [a for a in avisos if re.match(r"\[Enter\] (\d+/\d+ · |Resumo)", a)]
        assert len(entre) == 6 and len(avisos) > 6, avisos
    finally:
        tela.fechar()


# Os campos que a família Tucano põe no generation_config.json (lidos no do Tucano-1b1; o
# cartão do 160m usa a mesma penalidade nos parâmetros de inferência): o generate() do
# transformers 5 preenche com eles tudo o que a regra passada deixa vazio.
GERACAO_DO_TUCANO = {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 3, "do_sample": True,
                     "repetition_penalty": 1.2, "temperature": 0.2, "top_k": 20, "top_p": 0.2,
                     "renormalize_logits": True, "max_new_tokens": 150}


def test_a_gulosa_nao_le_o_generation_config_da_pasta(llama_tucano, tmp_path, gpt2_pequeno):
    """Uma pasta com o generation_config.json da família Tucano e uma frase cuja gulosa repete
    um token: a penalidade de repetição da pasta mudaria a gulosa do generate() (o teste
    confere que muda, senão não provaria nada); a lição compara com a gulosa pura e diz
    "os mesmos tokens", saída 0."""
    from transformers import GenerationConfig

    pasta = tmp_path / "com_geracao"
    shutil.copytree(llama_tucano, pasta)
    (pasta / "generation_config.json").write_text(json.dumps(GERACAO_DO_TUCANO),
                                                  encoding="utf-8")
    hf, tok = carregar(pasta)
    frase = "A floresta da Amazônia é conhecida por sua"
    ids = tok(frase, return_tensors="pt")["input_ids"]
    nossos = L13.gerar(L13.nosso_llama(hf), ids, 32)[0, ids.shape[1]:]
    assert len(set(nossos.tolist())) < len(nossos), "a gulosa não repete: o teste não prova nada"
    regra = GenerationConfig(max_new_tokens=32, do_sample=False, eos_token_id=[], pad_token_id=0)
    with torch.no_grad():
        com_a_pasta = hf.generate(ids, attention_mask=torch.ones_like(ids),
                                  generation_config=regra)[0, ids.shape[1]:]
    assert not torch.equal(com_a_pasta, nossos), "a pasta não muda o generate(): sem prova"
    r = rodar(pasta, gpt2_pequeno, "--so", "4", "--texto", frase)
    assert r.returncode == 0, r.saida[-3000:]
    assert "32 de 32 iguais, na ordem: os mesmos tokens." in " ".join(r.saida.split())


def test_texto_longo_demais_para_as_posicoes(llama_tucano, gpt2_pequeno):
    r = rodar(llama_tucano, gpt2_pequeno, "--so", "4", "--novos", "1000")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "posições deste modelo" in " ".join(r.saida.split())


# ---------------------------------------------------------------- um token na tela (item 2)
TEXTO_DE_BYTES = "A atenção é São Paulo e o gato subiu"


def test_pecas_de_um_bpe_de_bytes_saem_como_texto(llama_bytes, llama_tucano):
    """Todo token passa por peca(): num BPE de bytes, 'Ġatenção' (guardado como 'ĠatenÃ§Ã£o')
    sai '·atenção'; no formato do Llama, '▁' vira '·'. O oráculo: os bytes das peças, juntos,
    são o texto (com o espaço que o '▁' do começo põe)."""
    from transformers import AutoTokenizer

    bytes_ = AutoTokenizer.from_pretrained(llama_bytes)
    assert L13.de_bytes(bytes_)
    ids = bytes_(TEXTO_DE_BYTES, add_special_tokens=False)["input_ids"]
    assert b"".join(L13.bytes_da_peca(bytes_, i) for i in ids) == TEXTO_DE_BYTES.encode()
    vocabulario = bytes_.convert_ids_to_tokens(ids)
    assert any("Ã" in v for v in vocabulario) and any("Ġ" in v for v in vocabulario)
    pecas = [L13.peca(bytes_, i) for i in ids]
    assert "·atenção" in pecas and not any("Ã" in p or "Ġ" in p for p in pecas)
    llama = AutoTokenizer.from_pretrained(llama_tucano)
    assert not L13.de_bytes(llama)
    ids = llama(TEXTO_DE_BYTES, add_special_tokens=False)["input_ids"]
    assert b"".join(L13.bytes_da_peca(llama, i) for i in ids) == f" {TEXTO_DE_BYTES}".encode()
    assert L13.peca(llama, llama.bos_token_id) == "<s>"


def test_bytes_do_formato_do_llama_com_byte_fallback():
    """O tokenizador do Tucano guarda um caractere fora do vocabulário nos seus bytes, em
    peças '<0xC3>' (byte fallback): peca() os mostra como a lição 01 mostra meio caractere."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3, "a": 4,
             **{f"<0x{b:02X}>": 5 + b for b in range(256)}}
    cru = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True))
    cru.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    tok = PreTrainedTokenizerFast(tokenizer_object=cru, bos_token="<s>", eos_token="</s>",
                                  unk_token="<unk>")
    ids = tok("a é", add_special_tokens=False)["input_ids"]
    assert tok.convert_ids_to_tokens(ids) == ["\u2581", "a", "\u2581", "<0xC3>", "<0xA9>"]
    assert b"".join(L13.bytes_da_peca(tok, i) for i in ids) == " a é".encode()
    assert [L13.peca(tok, i) for i in ids][-2:] == ["\\xc3", "\\xa9"]


def test_a_licao_com_um_bpe_de_bytes_mostra_texto(llama_bytes, gpt2_pequeno):
    """A lição com um tokenizador de bytes (o do exercício 1): nenhum 'Ġ' nem 'Ã' na tela, e a
    primeira posição, que não é um <s>, não é chamada de <s>."""
    r = rodar(llama_bytes, gpt2_pequeno, "--so", "2,3,5", "--texto", TEXTO_DE_BYTES)
    assert r.returncode == 0, r.saida[-3000:]
    assert "Ġ" not in r.saida and "Ã" not in r.saida
    linhas = r.saida.splitlines()
    modelo = linhas[linhas.index(next(l for l in linhas if l.startswith("llama_bytes, "))) + 1]
    assert modelo.split()[1] in ("·atenção", "_atenção")     # '_' num console cp1252
    texto = " ".join(r.saida.split())
    assert f'A frase "{TEXTO_DE_BYTES}": 13 tokens.' in texto               # sem "(com o <s>"
    assert "na primeira, o token A, o primeiro da frase)" in texto
    assert "<s>" not in r.saida.split("Experimento 5/6")[1]


# ---------------------------------------------------------------- um token só (item 3)
def test_um_token_so_nao_ganha_veredito(llama_bytes, gpt2_pequeno):
    """--texto "A" num tokenizador sem <s>: 1 token. O experimento 4 não diz que o cache guarda
    a chave girada (na posição 0, girar não muda nada) e diz por quê; o 5, que compara a
    primeira posição com as outras, recusa a frase. (E --dispositivo cpu, o caminho da CPU.)"""
    r = rodar(llama_bytes, gpt2_pequeno, "--so", "4,5", "--texto", "A", "--dispositivo", "cpu")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    quarto, quinto = r.saida.split("Experimento 5/6")
    quarto = " ".join(quarto.split())
    assert '"A" (1 token)' in quarto and "contra K sem girar: < 1e-5" in quarto
    assert "não as separa" in quarto and "JÁ GIRADA" not in quarto
    assert "32 de 32 iguais" in quarto                    # a geração, essa, roda
    quinto = " ".join(quinto.split())
    assert "precisa de 2 ou mais" in quinto and "quase parada" not in quinto
    assert "depois de" not in quinto                      # nenhuma tabela


def test_texto_vazio(llama_tucano, gpt2_pequeno):
    """--texto "": o <s> sozinho não é uma frase."""
    r = rodar(llama_tucano, gpt2_pequeno, "--so", "5", "--texto", "")
    assert r.returncode == 1 and "o --texto está vazio" in r.saida


# ---------------------------------------------------------------- a forma, em palavras (item 5)
def test_mha_mqa_e_gqa_nos_experimentos_1_e_4():
    assert L13.quem_serve_quem(4, 4) == "4 cabeças de K/V para 4 de consulta (MHA: uma por consulta)."
    assert L13.quem_serve_quem(4, 1) == "1 cabeça de K/V para 4 de consulta (MQA: uma só serve as 4)."
    assert L13.quem_serve_quem(4, 2) == "2 cabeças de K/V para 4 de consulta (GQA: cada uma serve 2)."
    config = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                  num_key_value_heads=1, intermediate_size=176, vocab_size=100)
    assert "K/V = 1 (MQA)" in L13.descrever(config)
    assert [L13.os_outros_blocos(L) for L in (1, 2, 12)] == [
        "", "; o bloco 1: o mesmo", "; os blocos 1 a 11: o mesmo"]


def test_config_sem_intermediate_size(llama_tucano, tmp_path, gpt2_pequeno):
    config = json.loads((llama_tucano / "config.json").read_text(encoding="utf-8"))
    del config["intermediate_size"]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    r = rodar(tmp_path, gpt2_pequeno, "--so", "1")
    assert r.returncode == 1 and "Traceback" not in r.saida + r.erros
    assert "KeyError" not in r.saida
    assert "não diz intermediate_size (a largura do SwiGLU)" in " ".join(r.saida.split())


# ---------------------------------------------------------------- o imposto (item 4)
def test_veredito_do_imposto():
    """Cai com pelo menos MARGEM; se inverte só se havia imposto (a razão do --gpt2 >= 1)."""
    m = L13.MARGEM
    assert m == 0.1
    assert "se inverte" in L13.veredito_do_imposto(2.03, 0.95)
    assert "cai de 2,03x para 1,50x" in L13.veredito_do_imposto(2.03, 1.5)
    assert "não cai" in L13.veredito_do_imposto(2.03, 2.03 - m / 2)
    assert "não cai" in L13.veredito_do_imposto(0.9, 0.85)
    assert "se inverte" not in L13.veredito_do_imposto(0.95, 0.5)   # sem imposto a inverter


# ---------------------------------------------------------------- --dispositivo (item 6)
def test_a_peca_roda_no_dispositivo_dos_pesos():
    """Nada da peça nasce na CPU quando os pesos estão em outro lugar: o RoPE, a máscara do
    cache e a do experimento 6 seguem os pesos. Sem GPU aqui, o 'meta' faz o papel de outro
    dispositivo: misturar um tensor dele com um da CPU é erro, como misturar um da GPU."""
    with torch.device("meta"):
        modelo = L13.Llama(2, 16, 4, 2, 32, 50)
    ids = torch.zeros(1, 5, dtype=torch.long, device="meta")
    assert L13.gerar(modelo, ids, 3).device.type == "meta"            # o cache: passo() por passo
    pesos, logits = L13.pesos_de_atencao(modelo, ids)
    assert pesos.device.type == logits.device.type == "meta" and pesos.shape == (2, 1, 4, 5, 5)
    with pytest.raises(RuntimeError):                                 # o oráculo do teste
        torch.ones(3, device="meta") * torch.ones(3)


def test_dispositivo_que_nao_existe(capsys):
    """O começo da lição (preparar, antes dos experimentos) com um --dispositivo que esta
    máquina não tem: uso errado, a mensagem em português e a saída 2; cpu e auto (sem GPU)
    ficam na CPU, sem nenhuma linha a mais."""
    from argparse import Namespace

    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("há uma GPU aqui")
    args = Namespace(dispositivo="cuda", modelo=TUCANO, modelo_do_ambiente=None)
    with pytest.raises(SystemExit) as saida:
        L13.preparar(args)
    assert saida.value.code == 2
    assert "--dispositivo cuda: não há GPU CUDA aqui" in " ".join(capsys.readouterr().err.split())
    for pedido in ("cpu", "auto"):
        args = Namespace(dispositivo=pedido, modelo=TUCANO, modelo_do_ambiente=None)
        L13.preparar(args)
        assert args.dispositivo == "cpu" and capsys.readouterr().out == ""


# ---------------------------------------------------------------- LAB_MODELO (W7)
def test_lab_modelo_de_gpt2_nao_troca_o_tucano(gpt2_pequeno, llama_tucano):
    """LAB_MODELO, das lições do GPT-2, apontando um GPT-2: a lição fica com o Tucano e diz
    por quê (o experimento 1 roda); apontando um Llama, vale, e a lição diz de onde veio."""
    r = rodar_script("13_tucano.py", "--sem-figuras", "--so", "1",
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida
    texto, junto = " ".join(r.saida.split()), "".join(r.saida.split())   # o caminho quebra
    assert f"(AvariávelLAB_MODELO,{gpt2_pequeno},apontaumGPT-2" in junto
    assert f"esta usa o {TUCANO}" in texto and "As três contas dão o mesmo número." in texto
    r = rodar_script("13_tucano.py", "--sem-figuras", "--so", "1",
                     env={"LAB_MODELO": str(llama_tucano)})
    assert r.returncode == 0, r.saida
    texto, junto = " ".join(r.saida.split()), "".join(r.saida.split())
    assert f"(O--modeloveiodavariávelLAB_MODELO:{llama_tucano}.)" in junto
    assert "O --modelo, llama_tucano, lido do config.json dele" in texto
