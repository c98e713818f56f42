"""Os pesos do GPT-2 entre o transformers e o nosso modelo, e o que as lições fazem com eles.

- A transposição das Conv1D, nos dois sentidos: o transformers guarda c_attn, c_fc e os
  dois c_proj como Conv1D, com o peso em (entrada, saída); nn.Linear guarda (saída,
  entrada). para_o_nosso lê os pesos do transformers com as formas do nosso modelo (lições
  05 e 06); para_o_transformers é o inverso, para gravar o nosso como um GPT2LMHeadModel
  (lição 10).
- exportar: o inverso do carregamento, o nosso GPT2 gravado numa pasta do transformers
  (GPT2LMHeadModel em safetensors, com um tokenizador de caracteres), que carregar_gpt2 lê
  de volta (lições 04, 05, 07 e 11 com --modelo PASTA); devolve a diferença dos logits.
- contar(modulo): os parâmetros distintos (o peso amarrado conta uma vez só).
- O nosso GPT2 montado sobre os pesos carregados, uma vez por execução (modelos), o --texto
  em ids (tokenizar) e a tolerância do float32 ao comparar logits (confere): as lições 06
  e 07 usam os três.

Nada aqui importa o torch no topo: a primeira linha de uma lição sai antes dele.
"""
from __future__ import annotations

import time
from pathlib import Path

from .console import dizer, num
from .erros import ExperimentoPulado

__all__ = ["CONV1D", "para_o_nosso", "para_o_transformers", "exportar", "contar", "modelos",
           "montar_nosso", "tokenizar", "confere", "TOLERANCIA", "FOLGA", "BASE"]

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


# ---------------------------------------------------------------- contar parâmetros
def contar(modulo) -> int:
    """Parâmetros distintos: parameters() já conta o peso amarrado uma vez só."""
    return sum(p.numel() for p in modulo.parameters())


# ---------------------------------------------------------------- o nosso GPT2 sobre o GPT-2
TOLERANCIA = 1e-4
# Memória que a lição usa: UMA cópia dos pesos (o nosso GPT2 divide a do transformers), mais
# o Python com PyTorch e transformers importados e as ativações, uns 0,45 GiB em qualquer
# tamanho (ferramentas/benchmark.py --tamanhos: pico de 0,90 GiB no gpt2, 1,77 no medium,
# 3,33 no large: 1,94x, 1,34x e 1,16x os pesos).
BASE = 2**29                                           # 0,5 GiB
FOLGA = 1.1                                            # +10 % sobre os pesos


def montar_nosso(hf, nosso_gpt2):
    """Nosso GPT2 sobre os pesos de `hf` (nenhuma cópia: não precisa de memória a mais);
    nosso_gpt2 é a peça da lição 06 que o monta."""
    inicio = time.perf_counter()
    nosso = nosso_gpt2(hf)
    dizer(f"(nosso GPT2 montado sobre os pesos do transformers, sem cópia: "
          f"{num(time.perf_counter() - inicio, 2)} s)")
    return nosso


def modelos(licao, nosso_gpt2):
    """(nosso GPT2, modelo do transformers, tokenizador), montados uma vez por execução."""
    hf, tokenizador = licao.gpt2(margem=FOLGA, base=BASE)
    return licao.uma_vez("nosso GPT2", lambda: montar_nosso(hf, nosso_gpt2)), hf, tokenizador


def tokenizar(licao, tokenizador, posicoes, reserva=0):
    """(--texto, ids (1, T)); um '<|endoftext|>' digitado é texto (7 tokens comuns, como no
    codificador da OpenAI e na lição 01), não o token especial que só o programa põe."""
    texto = licao.args.texto
    ids = tokenizador(texto, return_tensors="pt", split_special_tokens=True)["input_ids"]  # (1, T)
    if ids.shape[1] == 0:
        raise ExperimentoPulado("o --texto está vazio: escreva uma frase.")
    if ids.shape[1] + reserva > posicoes:
        raise ExperimentoPulado(
            f"o --texto tem {ids.shape[1]} tokens; este modelo aceita até "
            f"{posicoes - reserva} aqui. Use uma frase mais curta.")
    return texto, ids


def confere(delta, escala, tolerancia=TOLERANCIA) -> bool:
    """float32 guarda uns 7 algarismos: logits perto de 100 já erram na casa de 1e-5.
    Tolerância: 1e-4 vezes o maior |logit| (ou 1e-4 absoluto, se os logits forem < 1)."""
    return delta <= tolerancia * max(1.0, escala)
