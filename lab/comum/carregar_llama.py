"""Carregar um modelo da família Llama (o Tucano da lição 13): do cache, do hub ou de uma pasta.

As mesmas regras do carregar_gpt2, pelo mesmo caminho até o hub (hub.py): só safetensors,
nunca código remoto, primeiro o cache (sem rede), só baixa com rede; confere o tipo no
config.json (model_type 'llama') e que todo peso veio do arquivo. Os pesos entram em
float32, como os do GPT-2 nas lições 06 e 07. Um GPT-2 ou outra arquitetura, sem rede e sem
cache, um download estragado: ModeloIndisponivel, com uma mensagem em português que diz o
que fazer (e qual lição serve para aquele modelo).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from .carregar_gpt2 import PREFIXO_HUB, TAMANHOS_GPT2
from .console import dizer, num, quebrar, tamanho
from .hub import (ModeloIndisponivel, como_refazer, do_cache_ou_do_hub, importar_transformers,
                  memoria_disponivel)
from .rede import certificado_recusado, como_resolver_certificado, hub_offline

__all__ = ["carregar_llama", "ler_config", "conferir_config", "TUCANO", "parametros_do_config"]

TUCANO = "TucanoBR/Tucano-160m"
LICAO_13 = "lab/13_tucano.py"
# Tipos de modelo que outra lição do lab carrega: a mensagem diz qual.
OUTRAS_LICOES = {"gpt2": "o GPT-2 é das lições 04 a 07 (ex.: lab/06_gpt2.py --modelo PASTA)"}


def _comando(nome: str) -> str:
    return LICAO_13 if nome == TUCANO else f"{LICAO_13} --modelo {nome}"


def _como_baixar(nome: str, baixar_com: str | None) -> str:
    """O que fazer quando o modelo não está no cache. Na lição 13: rodá-la com internet, ou
    dar ao --modelo dela uma pasta com o modelo. De outro script (baixar_com: o comando que
    baixa, como o 'lab/00_check.py --tucano'): rodá-lo com internet; uma pasta só a lição 13
    lê (o --modelo dos outros é o do GPT-2). Com HF_HUB_OFFLINE=1, entrar na internet não
    resolve: a variável proíbe a rede, e é preciso tirá-la antes."""
    if baixar_com is None:
        comando, pasta = _comando(nome), ", ou aponte --modelo para uma pasta com o modelo salvo."
    else:
        comando, pasta = baixar_com, (". Com o modelo salvo numa pasta, é a lição 13 que o "
                                      f"lê: rode {LICAO_13} --modelo PASTA.")
    if hub_offline():
        return ("A variável HF_HUB_OFFLINE=1 está definida e proíbe a rede: tire-a "
                "(PowerShell: Remove-Item Env:HF_HUB_OFFLINE; Linux/macOS: unset "
                f"HF_HUB_OFFLINE) e rode {comando} com internet uma vez (ele baixa o "
                f"modelo para o cache){pasta}")
    return (f"Conecte-se à internet e rode {comando} uma vez (ele baixa o modelo "
            f"para o cache){pasta}")


def _eh_hub(nome: str) -> bool:
    """Um id do hub ('dono/nome') que não é uma pasta deste computador."""
    return not Path(nome).exists() and nome.count("/") == 1 and not nome.startswith((".", "/"))


def parametros_do_config(c: dict) -> int:
    """Os parâmetros de um config.json Llama, contados pelo próprio transformers num modelo
    em "meta" (só as formas, nenhum byte; a conta fechada é a da lição 08, que a 13 usa)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    with torch.device("meta"):
        modelo = LlamaForCausalLM(LlamaConfig.from_dict(c))
    return sum(p.numel() for p in modelo.parameters())


def conferir_config(nome: str, c) -> None:
    """O config.json é de um Llama que as peças da lição 08 montam? Senão, ModeloIndisponivel
    com o que não cabe (e a lição que serve, se houver uma)."""
    tipo = c.get("model_type") if isinstance(c, dict) else None
    if tipo != "llama":
        outra = OUTRAS_LICOES.get(tipo)
        raise ModeloIndisponivel(
            f"'{nome}' guarda um modelo do tipo '{tipo or 'desconhecido'}' (model_type no "
            "config.json); esta lição monta a família Llama (model_type 'llama', como o "
            f"Tucano).\n" + (f"Para esse modelo: {outra}. " if outra else "")
            + f"Aqui, use --modelo {TUCANO} ou outra pasta ou id de um Llama.")
    problemas = []
    rope = c.get("rope_parameters") or c.get("rope_scaling") or {}
    if (rope.get("rope_type") or rope.get("type") or "default") != "default":
        problemas.append(f"RoPE do tipo '{rope.get('rope_type') or rope.get('type')}'")
    d, h = c.get("hidden_size", 0), c.get("num_attention_heads", 1)
    if c.get("head_dim") not in (None, d // h) or d % h:
        problemas.append(f"head_dim {c.get('head_dim')} diferente de d/h = {d}/{h}")
    if c.get("attention_bias") or c.get("mlp_bias"):
        problemas.append("vieses nas camadas lineares")
    if c.get("hidden_act", "silu") != "silu":
        problemas.append(f"ativação {c.get('hidden_act')} (a do SwiGLU é a silu)")
    if problemas:
        raise ModeloIndisponivel(
            f"'{nome}' é um Llama, mas com {', '.join(problemas)}: as peças da lição 08 "
            f"não têm isso.\nUse --modelo {TUCANO} ou outro Llama sem essas variações.")


def ler_config(nome: str) -> dict | None:
    """O config.json de uma pasta ou do cache do hub (sem rede), ou None se não há."""
    pasta = Path(nome)
    if pasta.is_dir():
        arquivo = pasta / "config.json"
    elif _eh_hub(nome):
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            return None
        achado = try_to_load_from_cache(nome, "config.json")
        if not isinstance(achado, str):
            return None
        arquivo = Path(achado)
    else:
        return None
    if not arquivo.is_file():
        return None
    try:
        dados = json.loads(arquivo.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return dados if isinstance(dados, dict) else None


def _conferir_nome(nome: str) -> bool:
    """É do hub? Um nome de GPT-2 ('gpt2') ou uma pasta que não existe: ModeloIndisponivel."""
    if nome in TAMANHOS_GPT2 or nome.startswith(PREFIXO_HUB):
        raise ModeloIndisponivel(
            f"'{nome}' é um GPT-2, e {OUTRAS_LICOES['gpt2']}.\nEsta lição monta a família "
            f"Llama: use --modelo {TUCANO} (o padrão) ou outro Llama.")
    hub = _eh_hub(nome)
    if not hub and not Path(nome).is_dir():
        raise ModeloIndisponivel(
            f"não há pasta '{nome}', e esse não é um id do hub ('dono/nome').\nUse --modelo "
            f"{TUCANO} (o padrão) ou o caminho de uma pasta salva com save_pretrained(); "
            "confira também a variável LAB_MODELO.")
    return hub


def _conferir_pasta(nome: str, pasta: Path) -> None:
    if not any(pasta.glob("*.safetensors")):
        raise ModeloIndisponivel(
            f"a pasta '{nome}' não tem pesos .safetensors.\nO lab só carrega safetensors: "
            "salve o modelo com save_pretrained() ou aponte --modelo para outra pasta.")
    if not (pasta / "config.json").is_file():
        raise ModeloIndisponivel(f"a pasta '{nome}' não tem config.json.\nSalve o modelo "
                                 "nela com save_pretrained(), ou aponte --modelo para outra.")
    dados = ler_config(str(pasta))
    if dados is None:
        raise ModeloIndisponivel(f"não consegui ler '{pasta / 'config.json'}' (não é um JSON "
                                 "válido?).\nSalve o modelo de novo com save_pretrained().")
    conferir_config(nome, dados)
    if not (pasta / "tokenizer.json").is_file():
        raise ModeloIndisponivel(
            f"a pasta '{nome}' tem os pesos, mas não o tokenizer.json: sem ele, o texto não "
            "vira tokens.\nSalve também o tokenizador: tokenizador.save_pretrained(pasta).")


def _refazer(nome: str, hub: bool, baixar_com: str | None = None) -> str:
    return como_refazer(nome, hub, baixar_com or _comando(nome))


def carregar_llama(nome: str, margem: float = 1.3, base: int = 0, baixar_com: str | None = None):
    """(LlamaForCausalLM em float32, tokenizador) de um id do hub ou de uma pasta.

    margem, base: a memória que a lição precisa é margem x os pesos em float32 + base bytes
    (conferida antes de carregar ou baixar, quando o config.json já está aqui). baixar_com:
    o comando que a mensagem manda rodar com internet para baixar o modelo, quando quem
    carrega não é a lição 13 (o 00_check: 'lab/00_check.py --tucano')."""
    hub = _conferir_nome(nome)
    refazer = _refazer(nome, hub, baixar_com)        # o conselho para arquivos estragados
    if not hub:
        _conferir_pasta(nome, Path(nome))
    config = ler_config(nome)
    if config is not None:
        conferir_config(nome, config)
        try:
            pesos = 4 * parametros_do_config(config)
        except (ImportError, KeyError, TypeError, ValueError, ZeroDivisionError):
            pesos = None
        livre = memoria_disponivel()
        if pesos:
            dizer(quebrar(f"Modelo '{nome}': pesos de {tamanho(pesos)} em float32."))
            if livre is not None and pesos * margem + base > livre:
                raise ModeloIndisponivel(
                    f"'{nome}' precisa de cerca de {num((pesos * margem + base) / 2**30, 1)} "
                    f"GiB de memória e há {num(livre / 2**30, 1)} GiB livres.\nFeche outros "
                    "programas e rode de novo.")
    transformers, hf_logging = importar_transformers()
    hf_logging.disable_progress_bar()
    import torch

    def carregar(so_local: bool):
        if not so_local:
            hf_logging.enable_progress_bar()              # o download mostra o progresso
        modelo, info = transformers.LlamaForCausalLM.from_pretrained(
            nome, use_safetensors=True, trust_remote_code=False, local_files_only=so_local,
            output_loading_info=True, dtype=torch.float32)
        faltam = sorted(info.get("missing_keys") or ())
        sobram = sorted(info.get("unexpected_keys") or ())
        if faltam or sobram:
            exemplo = (faltam or sobram)[0]
            raise ModeloIndisponivel(
                f"os pesos de '{nome}' não são os que o config.json descreve (ex.: "
                f"{exemplo} {'falta' if faltam else 'sobra'}).\nCarregá-los daria pesos ao "
                "acaso. " + refazer)
        tokenizador = transformers.AutoTokenizer.from_pretrained(
            nome, local_files_only=so_local, trust_remote_code=False)
        return modelo, tokenizador

    inicio = time.perf_counter()
    try:
        modelo, tokenizador = do_cache_ou_do_hub(
            carregar, nome, hub, f"Baixando '{nome}' do Hugging Face (só na primeira vez)...")
    except ModeloIndisponivel:
        raise
    except (OSError, ValueError) as erro:
        texto = str(erro).lower()
        if "safetensors" in texto and ("incomplete" in texto or "header" in texto):
            raise ModeloIndisponivel(f"os pesos de '{nome}' estão incompletos ou corrompidos."
                                     f"\n{refazer}") from None
        if hub and certificado_recusado(erro):
            raise ModeloIndisponivel(como_resolver_certificado(nome)) from None
        if hub:
            raise ModeloIndisponivel(f"o modelo '{nome}' não está no cache deste computador e "
                                     f"não há acesso ao Hugging Face agora.\n"
                                     f"{_como_baixar(nome, baixar_com)}") from None
        raise ModeloIndisponivel(f"não consegui carregar o modelo da pasta '{nome}' "
                                 f"({type(erro).__name__}).\n{refazer}") from None
    except Exception as erro:  # noqa: BLE001 - safetensors estragado levanta tipos variados
        raise ModeloIndisponivel(f"os arquivos de '{nome}' parecem corrompidos ou incompletos "
                                 f"({type(erro).__name__}).\n{refazer}") from None
    conferir_config(nome, modelo.config.to_dict())
    modelo.eval()
    dizer(quebrar(f"Llama carregado de {nome} em {num(time.perf_counter() - inicio, 1)} s."))
    return modelo, tokenizador
