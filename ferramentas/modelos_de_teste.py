"""Os GPT-2 pequenos e aleatórios dos testes (e do benchmark), salvos com save_pretrained.

Nenhum teste usa a rede. O modelo é de verdade (transformers' GPT2LMHeadModel), só que
pequeno e com pesos aleatórios; o tokenizador é um BPE de bytes, como o do GPT-2,
treinado aqui num texto curto. Quem usa: tests/conftest.py (as pastas de sessão dos
testes) e ferramentas/benchmark.py (o GPT-2 de 124M aleatório de .bench/).
"""
from __future__ import annotations

from pathlib import Path

TEXTO_TREINO = [
    "O gato subiu no telhado e a chuva caiu sobre a cidade de São Paulo.",
    "A atenção move informação entre posições; o MLP processa cada posição.",
    "The cat sat on the mat, and the quick brown fox jumps over the lazy dog.",
    "A capital do Brasil é Brasília. The capital of France is Paris.",
    "Transformers empilham blocos: atenção, MLP, conexões residuais e LayerNorm.",
    "1 2 3 4 5 6 7 8 9 10 100 1000 2026 ção ões ã õ é ê í ó ú ç",
]


def construir_tokenizador(pasta: Path, vocab: int = 400, textos=()):
    """BPE de bytes (como o do GPT-2) treinado em TEXTO_TREINO (+ textos), salvo em pasta."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    treinador = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator((TEXTO_TREINO + list(textos)) * 20, trainer=treinador)
    rapido = GPT2TokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                               eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    rapido.save_pretrained(pasta)
    return rapido


def construir_gpt2(pasta: Path, camadas=3, d=64, cabecas=4, posicoes=64, semente=0):
    """Pasta save_pretrained com um GPT-2 aleatório (padrão: 3 camadas, d = 64, 4 cabeças)
    e o tokenizador de construir_tokenizador."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    pasta = Path(pasta)
    pasta.mkdir(parents=True, exist_ok=True)
    tok = construir_tokenizador(pasta)
    torch.manual_seed(semente)
    config = GPT2Config(vocab_size=len(tok), n_positions=posicoes, n_embd=d,
                        n_layer=camadas, n_head=cabecas,
                        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)
    modelo = GPT2LMHeadModel(config).eval()
    modelo.save_pretrained(pasta, safe_serialization=True)
    return pasta


# ---------------------------------------------------------------- a família Llama (lição 13)
def construir_tokenizador_llama(pasta: Path, vocab: int = 400, textos=()):
    """O formato dos tokenizadores Llama do hub (um tokenizer.json só, como o do Tucano):
    BPE com o '▁' no lugar do espaço, <unk> = 0, <s> = 1, </s> = 2 e o <s> na frente de
    todo texto. Treinado em TEXTO_TREINO (+ textos) com o `tokenizers`, salvo em pasta."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first")
    treinador = trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<unk>", "<s>", "</s>"],
                                    show_progress=False)
    tok.train_from_iterator((TEXTO_TREINO + list(textos)) * 20, trainer=treinador)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    rapido = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                     unk_token="<unk>")
    rapido.save_pretrained(pasta)
    return rapido


# As duas variantes pequenas: sem amarrar e MHA, como o Tucano; amarrada e GQA, como o SmolLM2.
VARIANTES_LLAMA = {
    "tucano": dict(amarrada=False, kv=None, theta=10_000.0),
    "smollm": dict(amarrada=True, kv=2, theta=100_000.0),
}


def construir_llama(pasta: Path, variante="tucano", camadas=3, d=64, cabecas=4, largura=176,
                    posicoes=256, semente=0, vocab_tokenizador=400, kv=None,
                    tokenizador="llama"):
    """Pasta save_pretrained com um LlamaForCausalLM aleatório (padrão: 3 camadas, d = 64,
    4 cabeças) e o tokenizador de construir_tokenizador_llama. variante: 'tucano' (saída
    própria, 4 cabeças de K/V = MHA) ou 'smollm' (saída amarrada ao embedding, GQA 2 de K/V);
    a base do RoPE e o eps da RMSNorm saem do config.json, como nos modelos do hub. kv: outro
    número de cabeças de K/V (1: MQA). tokenizador='bytes': um BPE de bytes como o do GPT-2
    e o do SmolLM2 de verdade (construir_tokenizador: 'Ġ' no lugar do espaço; este não põe
    nenhum <s> na frente)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    pasta = Path(pasta)
    pasta.mkdir(parents=True, exist_ok=True)
    v = VARIANTES_LLAMA[variante]
    tok = (construir_tokenizador(pasta, vocab=vocab_tokenizador) if tokenizador == "bytes"
           else construir_tokenizador_llama(pasta, vocab=vocab_tokenizador))
    torch.manual_seed(semente)
    kv = kv or v["kv"] or cabecas            # None: uma cabeça de K/V por consulta (MHA)
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=d, intermediate_size=largura, num_hidden_layers=camadas,
        num_attention_heads=cabecas, num_key_value_heads=kv, max_position_embeddings=posicoes,
        rms_norm_eps=1e-5, tie_word_embeddings=v["amarrada"], bos_token_id=1, eos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": v["theta"]},
        initializer_range=0.2)     # pesos 10x os de um treino novo: logits de ordem 10, como
    modelo = LlamaForCausalLM(config).eval()   # num modelo treinado (e um erro aparece neles)
    with torch.no_grad():                 # ganhos diferentes de 1: a RMSNorm tem o que fazer
        for nome, p in modelo.named_parameters():
            if nome.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
    modelo.save_pretrained(pasta, safe_serialization=True)
    return pasta


# A forma do Tucano-160m (o config.json do hub): V = 32.000, d = 768, 12 blocos de 12
# cabeças (12 de K/V), SwiGLU de 3.072, saída sem amarrar, contexto de 2.048.
FORMA_TUCANO_160M = dict(camadas=12, d=768, cabecas=12, largura=3072, posicoes=2048)


def construir_tucano_aleatorio(pasta: Path, semente=0, vocab=32_000, textos=()):
    """O Tucano-160m no tamanho real (162.417.408 parâmetros), com pesos aleatórios, em
    float32, para o benchmark e a contagem: o tokenizador pequeno de teste, com o vocabulário
    do config em 32.000 (os ids além dele nunca aparecem)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    pasta = Path(pasta)
    pasta.mkdir(parents=True, exist_ok=True)
    construir_tokenizador_llama(pasta, vocab=2000, textos=textos)
    torch.manual_seed(semente)
    f = FORMA_TUCANO_160M
    config = LlamaConfig(
        vocab_size=vocab, hidden_size=f["d"], intermediate_size=f["largura"],
        num_hidden_layers=f["camadas"], num_attention_heads=f["cabecas"],
        num_key_value_heads=f["cabecas"], max_position_embeddings=f["posicoes"],
        rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10_000.0})
    LlamaForCausalLM(config).eval().save_pretrained(pasta, safe_serialization=True)
    return pasta
