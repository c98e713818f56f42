"""Os pesos do GPT-2 entre o transformers e o nosso modelo.

- A transposição das Conv1D, nos dois sentidos: o transformers guarda c_attn, c_fc e os
  dois c_proj como Conv1D, com o peso em (entrada, saída); nn.Linear guarda (saída,
  entrada). para_o_nosso lê os pesos do transformers com as formas do nosso modelo (lições
  05 e 06); para_o_transformers é o inverso, para gravar o nosso como um GPT2LMHeadModel
  (lição 10).
- exportar: o inverso do carregamento, o nosso GPT2 gravado numa pasta do transformers
  (GPT2LMHeadModel em safetensors, com um tokenizador de caracteres), que carregar_gpt2 lê
  de volta (lições 04, 05, 07 e 11 com --modelo PASTA); devolve a diferença dos logits.

O nosso GPT2 montado sobre os pesos carregados, o --texto em ids, contar e conferir os
logits moram em montagem.py (valem também para o Llama da lição 13).

Nada aqui importa o torch no topo: a primeira linha de uma lição sai antes dele.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["CONV1D", "para_o_nosso", "para_o_transformers", "exportar"]

# ---------------------------------------------------------------- a transposição das Conv1D
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def para_o_nosso(estado: dict) -> dict:
    """Os pesos (nome -> tensor) do transformers com as formas do nn.Linear: cada peso de
    Conv1D transposto. .t() devolve uma VIEW transposta: o mesmo armazenamento, lido em
    outra ordem (só os passos mudam, nenhum byte é copiado)."""
    return {nome: t.t() if nome.endswith(CONV1D) else t for nome, t in estado.items()}


def para_o_transformers(estado: dict) -> dict:
    """O inverso de para_o_nosso: os nossos pesos com as formas do Conv1D (entrada, saída),
    contíguos para gravar."""
    return {nome: t.t().contiguous() if nome.endswith(CONV1D) else t
            for nome, t in estado.items()}


# ---------------------------------------------------------------- gravar o nosso no transformers
def exportar(modelo, tok, config, pasta) -> float:
    """Grava o nosso GPT2 como um GPT2LMHeadModel do transformers (safetensors) com um
    tokenizador de caracteres (tok: o Caracteres da lição 10; o último símbolo é o de 'qualquer
    outro'), os arquivos com as permissões do umask; devolve max |logits do transformers -
    os nossos| numa frase: a pasta só vale se der ~0."""
    import os

    import torch
    from tokenizers import Tokenizer, decoders, models
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()                             # gravar é rápido: sem barra
    if next(modelo.parameters()).device.type != "cpu":           # treinado numa GPU: a pasta
        import copy                                               # e a conferência, na CPU

        modelo = copy.deepcopy(modelo).cpu()
    linha, outro = tok.ids["\n"], tok.alfabeto[-1]
    hf = GPT2LMHeadModel(GPT2Config(
        vocab_size=len(tok), n_positions=config["contexto"], n_embd=config["largura"],
        n_layer=config["camadas"], n_head=config["cabecas"], bos_token_id=linha,
        eos_token_id=linha)).eval()
    pesos = {"transformer." + nome: t
             for nome, t in para_o_transformers(modelo.state_dict()).items()}
    faltam = hf.load_state_dict(pesos, strict=False)             # lm_head: amarrado ao wte
    if faltam.missing_keys != ["lm_head.weight"] or faltam.unexpected_keys:
        raise RuntimeError(f"os nomes dos pesos não batem com os do transformers: {faltam}")
    x = torch.tensor([tok.codificar("A atenção é uma média ponderada.")[:config["contexto"]]])
    with torch.no_grad():
        diferenca = float((hf(x).logits - modelo(x)).abs().max())  # (1, T, V)
    caracteres = Tokenizer(models.BPE(vocab=dict(tok.ids), merges=[], unk_token=outro))
    caracteres.decoder = decoders.Fuse()                          # sem espaço entre os tokens
    rapido = PreTrainedTokenizerFast(tokenizer_object=caracteres, unk_token=outro,
                                     bos_token="\n", eos_token="\n")
    pasta = Path(pasta)
    pasta.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(pasta, safe_serialization=True)
    rapido.save_pretrained(pasta)
    mascara = os.umask(0)
    os.umask(mascara)
    for arquivo in pasta.iterdir():              # os pesos saíam só para o dono (0600)
        if arquivo.is_file():
            os.chmod(arquivo, 0o666 & ~mascara)
    return diferenca
