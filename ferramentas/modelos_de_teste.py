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
