"""Carregar o GPT-2: do cache do Hugging Face, do hub ou de uma pasta local.

Só safetensors, nunca código remoto, só GPT-2 (confere o tipo no config.json e que
todo peso veio do arquivo). Antes de carregar ou baixar, confere se o modelo cabe na
memória livre. O caminho até o hub (o cache primeiro, o download só com rede, os
certificados do sistema, a memória livre) é o de hub.py, o mesmo do carregar_llama. Sem
rede e sem cache, com um certificado recusado, um download corrompido, uma pasta que não é
de um GPT-2 ou um nome desconhecido: ModeloIndisponivel, com uma mensagem em português que
diz o que fazer.
"""
from __future__ import annotations

import time
from pathlib import Path

from .console import dizer, num, quebrar, tamanho
from .hub import (ModeloIndisponivel, como_refazer, do_cache_ou_do_hub, importar_transformers,
                  memoria_disponivel)
from .rede import certificado_recusado, como_resolver_certificado, hub_offline

__all__ = ["carregar_gpt2", "carregar_tokenizador", "TAMANHOS_GPT2", "PARAMETROS_GPT2",
           "PREFIXO_HUB", "estimar_memoria", "de_caracteres", "REGRA_DE_CARACTERES"]

TAMANHOS_GPT2 = {
    # nome: (camadas, d, cabeças) -- só para estimar memória antes de baixar
    "gpt2": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
    "gpt2-xl": (48, 1600, 25),
}
PREFIXO_HUB = "openai-community/"


# Parâmetros de cada tamanho (a cabeça amarrada ao wte conta uma vez), só para conferir a
# memória antes de baixar: a lição 06 os calcula (12d² + 13d por bloco...) e um teste
# confere esta tabela contra ela e contra o transformers.
PARAMETROS_GPT2 = {"gpt2": 124_439_808, "gpt2-medium": 354_823_168,
                   "gpt2-large": 774_030_080, "gpt2-xl": 1_557_611_200}


def _id_no_hub(nome: str) -> str:
    return PREFIXO_HUB + nome if nome in TAMANHOS_GPT2 else nome


def _como_baixar(nome: str) -> str:
    """O que fazer quando o modelo não está no cache. Com HF_HUB_OFFLINE=1, entrar na
    internet não resolve: a variável proíbe a rede, e é preciso tirá-la antes."""
    if hub_offline():
        return ("A variável HF_HUB_OFFLINE=1 está definida e proíbe a rede: tire-a "
                "(PowerShell: Remove-Item Env:HF_HUB_OFFLINE; Linux/macOS: unset "
                f"HF_HUB_OFFLINE) e rode {_comando_00(nome)} com internet uma vez, ou "
                "aponte --modelo para uma pasta com o modelo salvo.")
    return (f"Conecte-se à internet e rode {_comando_00(nome)} uma vez (ele baixa o "
            "modelo), ou aponte --modelo para uma pasta com o modelo salvo.")


def estimar_memoria(nome: str) -> int | None:
    """Bytes que o modelo ocupa em fp32 (pesos), ou None se o tamanho é desconhecido."""
    if nome in TAMANHOS_GPT2:
        return 4 * PARAMETROS_GPT2[nome]
    pasta = Path(nome)
    if pasta.is_dir():
        pesos = list(pasta.glob("*.safetensors"))
        if pesos:
            return sum(p.stat().st_size for p in pesos)
    return None


def _eh_hub(nome: str) -> bool:
    return not Path(nome).exists() and (nome in TAMANHOS_GPT2 or nome.startswith(PREFIXO_HUB))


def _comando_00(nome: str) -> str:
    """O comando que baixa ESTE modelo (o 00_check baixa o de --modelo, padrão gpt2)."""
    return "lab/00_check.py" if nome == "gpt2" else f"lab/00_check.py --modelo {nome}"


def _como_refazer(nome: str, hub: bool) -> str:
    return como_refazer(nome, hub, _comando_00(nome))


def _sugestao_menor(estimativa: int, margem: float, base: int, livre: int) -> str | None:
    """O maior GPT-2 do hub, menor que o pedido, que caberia na memória livre."""
    cabem = [n for n in TAMANHOS_GPT2 if estimar_memoria(n) < estimativa
             and estimar_memoria(n) * margem + base <= livre]
    return cabem[-1] if cabem else None


ARQUIVOS_TOKENIZADOR = ("tokenizer.json", ("vocab.json", "merges.txt"))


def _conferir_pasta(nome: str, pasta: Path) -> None:
    """Antes de carregar: a pasta tem um GPT-2 (config, pesos e tokenizador)?"""
    import json

    como_salvar = ("Salve o GPT-2 nessa pasta com modelo.save_pretrained(pasta) e "
                   "tokenizador.save_pretrained(pasta), ou aponte --modelo para outra.")
    if not any(pasta.glob("*.safetensors")):
        raise ModeloIndisponivel(
            f"a pasta '{nome}' não tem pesos .safetensors.\n"
            "O lab só carrega safetensors: salve o modelo com save_pretrained() "
            "ou aponte --modelo para outra pasta.")
    config = pasta / "config.json"
    if not config.is_file():
        raise ModeloIndisponivel(f"a pasta '{nome}' não tem config.json.\n" + como_salvar)
    try:
        dados = json.loads(config.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, OSError) as erro:
        raise ModeloIndisponivel(
            f"não consegui ler '{config}' ({type(erro).__name__}).\n" + como_salvar) from None
    except json.JSONDecodeError as erro:
        raise ModeloIndisponivel(
            f"'{config}' não é um JSON válido (erro na linha {erro.lineno}, coluna "
            f"{erro.colno}).\nConserte o arquivo ou salve o modelo de novo com "
            "save_pretrained().") from None
    tipo = dados.get("model_type") if isinstance(dados, dict) else None
    if tipo != "gpt2":
        raise ModeloIndisponivel(
            f"a pasta '{nome}' guarda um modelo do tipo '{tipo or 'desconhecido'}' "
            "(model_type no config.json), não um GPT-2; o lab só carrega GPT-2.\n"
            "Use --modelo gpt2 (ou gpt2-medium, gpt2-large, gpt2-xl) ou uma pasta "
            "com um GPT-2 salvo com save_pretrained().")
    if not any((pasta / a).is_file() if isinstance(a, str)
               else all((pasta / b).is_file() for b in a) for a in ARQUIVOS_TOKENIZADOR):
        raise ModeloIndisponivel(
            f"a pasta '{nome}' tem os pesos, mas não o tokenizador (tokenizer.json, ou "
            "vocab.json e merges.txt): sem ele, o texto não vira tokens.\n"
            "Salve também o tokenizador nessa pasta: tokenizador.save_pretrained(pasta).")


def _conferir_pesos(nome: str, info: dict) -> None:
    """Todo peso do GPT-2 veio do arquivo? (o transformers inicia ao acaso o que falta)"""
    faltam = sorted(info.get("missing_keys") or ())
    sobram = sorted(k for k in (info.get("unexpected_keys") or ())
                    if not k.endswith(("attn.bias", "attn.masked_bias")))  # máscaras antigas
    if not faltam and not sobram:
        return
    partes = []
    if faltam:
        partes.append(f"faltam {len(faltam)} pesos do GPT-2 (ex.: {faltam[0]})")
    if sobram:
        partes.append(f"há {len(sobram)} pesos que o GPT-2 não tem (ex.: {sobram[0]})")
    raise ModeloIndisponivel(
        f"os pesos de '{nome}' não são os de um GPT-2: {' e '.join(partes)}.\n"
        "Carregá-los daria um GPT-2 com pesos ao acaso, e os números não significariam "
        "nada. Use --modelo gpt2 ou uma pasta salva de um GPT2LMHeadModel.")


def _conferir_tokenizador(nome: str, tokenizador) -> None:
    try:
        ids = tokenizador("O gato")["input_ids"]
    except Exception:  # noqa: BLE001 - tokenizador quebrado de qualquer jeito
        ids = []
    if len(tokenizador) == 0 or not ids:
        raise ModeloIndisponivel(
            f"o tokenizador de '{nome}' está vazio: o texto não vira nenhum token.\n"
            "Salve de novo o tokenizador do GPT-2 junto dos pesos "
            "(tokenizador.save_pretrained(pasta)).")


def _conferir_nome(nome: str) -> tuple[bool, Path]:
    """(é do hub?, pasta). Nem pasta nem nome de GPT-2 conhecido: ModeloIndisponivel."""
    hub = _eh_hub(nome)
    pasta = Path(nome)
    if not hub and not pasta.is_dir():
        raise ModeloIndisponivel(
            f"não há pasta '{nome}', e esse não é um nome de GPT-2 que eu conheça.\n"
            "Use --modelo gpt2 (ou gpt2-medium, gpt2-large, gpt2-xl) ou o caminho de "
            "uma pasta salva com save_pretrained(); confira também a variável LAB_MODELO.")
    return hub, pasta


def carregar_tokenizador(nome: str):
    """Só o tokenizador do GPT-2 (sem os pesos): do cache, de uma pasta ou do hub.

    Como carregar_gpt2: primeiro o cache (sem rede); só baixa se faltar e houver
    rede. Sem ele: ModeloIndisponivel com o que fazer. Os quatro tamanhos do
    GPT-2 usam o mesmo tokenizador.
    """
    hub, pasta = _conferir_nome(nome)
    transformers, _ = importar_transformers()
    origem = _id_no_hub(nome) if hub else str(pasta)

    def carregar(so_local: bool):
        return transformers.AutoTokenizer.from_pretrained(
            origem, local_files_only=so_local, trust_remote_code=False)

    try:
        tokenizador = do_cache_ou_do_hub(
            carregar, nome, hub, f"Baixando o tokenizador de '{nome}' (só na primeira vez)...")
    except ModeloIndisponivel:
        raise
    except Exception as erro:  # pasta sem os arquivos, cache incompleto, sem rede
        if hub and certificado_recusado(erro):
            raise ModeloIndisponivel(como_resolver_certificado(nome)) from None
        if hub:
            raise ModeloIndisponivel(
                f"o tokenizador do GPT-2 '{nome}' não está no cache deste computador e "
                f"não há acesso ao Hugging Face agora.\n{_como_baixar(nome)}") from None
        raise ModeloIndisponivel(
            f"não consegui carregar o tokenizador da pasta '{nome}' "
            f"({type(erro).__name__}).\nA pasta precisa dos arquivos do tokenizador "
            "(tokenizer.json ou vocab.json e merges.txt, como save_pretrained() grava).") from None
    dizer(f"Tokenizador carregado de {origem}.")
    return tokenizador


def carregar_gpt2(nome: str, margem: float = 1.3, base: int = 0):
    """Carrega (modelo, tokenizador) de um id do hub ou de uma pasta local.

    Só safetensors, nunca código remoto, só GPT-2 (confere o tipo no config.json e
    que todo peso veio do arquivo). Primeiro tenta o cache (sem rede); só baixa se
    faltar e houver rede. Sem rede e sem cache, com download corrompido, pasta que
    não é de um GPT-2 ou nome desconhecido: ModeloIndisponivel com o que fazer.
    margem, base: a memória que a lição precisa é margem x os pesos + base bytes.
    """
    hub, pasta = _conferir_nome(nome)
    if not hub:
        _conferir_pasta(nome, pasta)
    estimativa = estimar_memoria(nome)
    livre = memoria_disponivel()
    if estimativa:
        dizer(quebrar(f"Modelo '{nome}': pesos de {tamanho(estimativa)} em fp32."))
        precisa = estimativa * margem + base
        if livre is not None and precisa > livre:
            menor = _sugestao_menor(estimativa, margem, base, livre)
            if menor:
                conselho = f" ou use um modelo menor, que caberia: --modelo {menor}."
            elif _id_no_hub(nome) == _id_no_hub("gpt2"):
                conselho = ": o gpt2 já é o menor GPT-2."
            else:
                conselho = "."
            com_base = f", mais {tamanho(base)} do Python com o PyTorch" if base else ""
            raise ModeloIndisponivel(
                f"'{nome}' precisa de cerca de {num(precisa / 2**30, 1)} GiB de memória "
                f"(os pesos, {tamanho(estimativa)}, vezes {num(margem, 1)}, a margem desta "
                f"lição{com_base}) e há {num(livre / 2**30, 1)} GiB livres.\n"
                f"Feche outros programas{conselho}")
    transformers, hf_logging = importar_transformers()
    hf_logging.disable_progress_bar()  # carregar do disco é rápido: sem barra
    origem = _id_no_hub(nome) if hub else str(pasta)

    def carregar(so_local: bool):
        if not so_local:
            hf_logging.enable_progress_bar()  # o download, sim, mostra o progresso
        modelo, info = transformers.GPT2LMHeadModel.from_pretrained(
            origem, use_safetensors=True, trust_remote_code=False,
            local_files_only=so_local, output_loading_info=True)
        _conferir_pesos(nome, info)
        tokenizador = transformers.AutoTokenizer.from_pretrained(
            origem, local_files_only=so_local, trust_remote_code=False)
        return modelo, tokenizador

    inicio = time.perf_counter()
    try:
        modelo, tokenizador = do_cache_ou_do_hub(
            carregar, nome, hub,
            f"Baixando '{nome}' do Hugging Face (só na primeira vez)...")
    except ModeloIndisponivel:
        raise
    except (OSError, ValueError) as erro:
        raise ModeloIndisponivel(_explicar_falha(nome, hub, erro)) from None
    except Exception as erro:  # safetensors corrompido levanta tipos variados
        if "mismatched_sizes" in str(erro) or "size mismatch" in str(erro):
            raise ModeloIndisponivel(
                f"os pesos de '{nome}' não têm as formas que o config.json pede (arquivos "
                "de modelos diferentes na mesma pasta?).\n" + _como_refazer(nome, hub)
            ) from None
        raise ModeloIndisponivel(
            f"os arquivos de '{nome}' parecem corrompidos ou incompletos "
            f"({type(erro).__name__}).\n" + _como_refazer(nome, hub)) from None
    if getattr(modelo.config, "model_type", None) != "gpt2":
        raise ModeloIndisponivel(
            f"'{nome}' não é um GPT-2 (model_type '{modelo.config.model_type}').")
    _conferir_tokenizador(nome, tokenizador)
    modelo.eval()
    dizer(quebrar(f"GPT-2 carregado de {origem} em "
                  f"{num(time.perf_counter() - inicio, 1)} s."))
    return modelo, tokenizador


# Como as lições 04, 05 e 07 sabem que o modelo é como o da lição 10 (e escolhem textos em
# português para ele): a regra, dita na tela e nas apostilas.
REGRA_DE_CARACTERES = "todo token do vocabulário, fora os especiais, é um caractere só"


def de_caracteres(tokenizador) -> bool:
    """O tokenizador é de caracteres, como o que a lição 10 exporta (128 símbolos)?
    A regra é REGRA_DE_CARACTERES; o BPE do GPT-2 tem dezenas de milhares de tokens de
    vários caracteres (" the", "ção"), então não é."""
    especiais = set(tokenizador.all_special_tokens)
    return all(len(t) == 1 for t in tokenizador.get_vocab() if t not in especiais)


def _explicar_falha(nome: str, hub: bool, erro: Exception) -> str:
    texto = str(erro)
    if hub and certificado_recusado(erro):
        return como_resolver_certificado(nome)
    if "safetensors" in texto.lower() and ("incomplete" in texto.lower()
                                            or "header" in texto.lower()):
        return (f"os pesos de '{nome}' estão incompletos ou corrompidos.\n"
                + _como_refazer(nome, hub))
    if not hub:
        return (f"não consegui carregar o GPT-2 da pasta '{nome}' ({type(erro).__name__}).\n"
                "A pasta precisa de config.json, model.safetensors e os arquivos do "
                "tokenizador (como os que save_pretrained() grava). "
                + _como_refazer(nome, hub))
    if "safetensors" in texto.lower() and "not" in texto.lower():
        return (f"'{nome}' não tem pesos em safetensors no hub; o lab só carrega "
                "safetensors.")
    return (f"o GPT-2 '{nome}' não está no cache deste computador e não há acesso "
            "ao Hugging Face agora.\n"
            f"{_como_baixar(nome)}")


