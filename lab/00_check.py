"""Lição 00 · Verificação do ambiente
Antes da aula, rode uma vez com internet (na véspera): termina com "Pronto" ou com a lista
do que corrigir (e código de saída 1).
1. Versões do Python e das bibliotecas
2. A máquina: processador, memória, disco, console
3. O GPT-2 no cache (baixa se faltar e houver internet)
4. Uma passada de teste pelo GPT-2
5. O Tucano da lição 13 no cache (com --tucano, baixa)"""
import os
import platform
import re
import shutil
import sys
import textwrap
import time
from importlib import metadata
from pathlib import Path

from comum import RAIZ, ExperimentoPulado, Licao, opcao

LICAO = Licao.da_docstring(__doc__, usa_gpt2={3, 4}, rotulo="Verificação", opcoes=[
    opcao("--tucano", "flag", None, "baixa também o Tucano-160m da lição 13 (com internet; "
          "uns 325 MB), diz o disco que ele pede e confere que ele carrega"),
])
LICAO.proximo_no_resumo = False  # a lição 01 só depois do "Pronto" (no fim deste arquivo)
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch

from comum import TAMANHOS_GPT2, contar, dizer, inteiro, largura, num, quebrar, tamanho
from comum.carregar_gpt2 import PREFIXO_HUB
from comum.console import unicode_ok
from comum.hub import memoria_disponivel

AVISOS = []  # o que não impede a aula, mas vale saber


def faixa_de_pythons() -> tuple[int, int] | None:
    """(menor, maior) da linha "# Pythons do lab: 3.11 a 3.14" de requirements.txt: os
    Pythons 3.x em que todo pacote fixado tem versão (os scripts de instalação leem a mesma
    linha)."""
    arquivo = RAIZ / "requirements.txt"
    texto = arquivo.read_text(encoding="utf-8") if arquivo.exists() else ""
    achado = re.search(r"^# Pythons do lab: 3\.(\d+) a 3\.(\d+)", texto, re.MULTILINE)
    return (int(achado[1]), int(achado[2])) if achado else None


def requisitos() -> dict:
    """Versões fixadas em requirements.txt: {pacote: versão}."""
    fixadas = {}
    arquivo = RAIZ / "requirements.txt"
    if arquivo.exists():
        for linha in arquivo.read_text(encoding="utf-8").splitlines():
            linha = linha.split("#")[0].strip()
            if "==" in linha:
                nome, versao = linha.split("==")
                fixadas[nome.strip().lower()] = versao.strip()
    return fixadas


@LICAO.experimento(1)
def exp_versoes(licao):
    versao = sys.version_info
    dizer(f"  Python        {platform.python_version()} ({sys.executable})")
    faixa = faixa_de_pythons()
    if faixa:
        menor, maior = faixa
        dentro = versao.major == 3 and menor <= versao.minor <= maior
        dizer(f"  faixa do lab  Python 3.{menor} a 3.{maior}: "
              f"{'este está nela' if dentro else 'este está FORA dela'}")
        if not dentro:
            raise ExperimentoPulado(
                f"o Python {versao.major}.{versao.minor} está fora da faixa do lab (3.{menor} a "
                f"3.{maior}): os pacotes fixados não têm versão para ele.\n"
                f"Instale o Python 3.{maior} (https://www.python.org/downloads/latest/"
                f"python3.{maior}/; fica ao lado do que você já tem) e rode de novo o script "
                "de instalação (.venv-setup.ps1 no Windows, .venv-setup.sh no Linux/macOS): "
                f"ele acha o 3.{maior} sozinho e refaz a .venv.")
    fixadas = requisitos()
    faltando, diferentes = [], []
    for pacote in ("torch", "transformers", "numpy", "matplotlib", "rich", "pytest"):
        inicio = time.perf_counter()
        try:
            __import__(pacote)
            instalada = metadata.version(pacote)
        except (ImportError, metadata.PackageNotFoundError):
            faltando.append(pacote)
            dizer(f"  {pacote:<13} FALTA")
            continue
        pedida = fixadas.get(pacote)
        nota = ""
        if pedida and instalada.split("+")[0] != pedida:
            diferentes.append(f"{pacote} {instalada} (o lab fixa {pedida})")
            nota = f"  <- o lab usa {pedida}"
        segundos = time.perf_counter() - inicio
        importa = f"  (importa em {num(segundos, 1)} s)" if segundos > 0.3 else ""
        dizer(f"  {pacote:<13} {instalada}{nota}{importa}")
    if diferentes:
        AVISOS.append("versões diferentes das do lab; os números podem diferir nas "
                      "últimas casas das apostilas: " + "; ".join(diferentes))
    if faltando:
        raise ExperimentoPulado(
            f"faltam pacotes: {', '.join(faltando)}. Rode o script de instalação "
            "(.venv-setup.ps1 no Windows, .venv-setup.sh no Linux/macOS) e use o Python "
            "do .venv.")


@LICAO.experimento(2)
def exp_maquina(licao):
    import torch

    dizer(f"  sistema       {platform.system()} {platform.release()} ({platform.machine()})")
    n = torch.get_num_threads()
    dizer(f"  núcleos       {os.cpu_count()}; o PyTorch usa {n} thread{'s' if n > 1 else ''}")
    from comum.dispositivo import escolher, nome_legivel

    nome, motivo = escolher("auto", torch)     # o que as lições 10 a 12 usariam, e por quê
    dizer(textwrap.fill(f"o treino das lições 10 a 12 usaria: {nome_legivel(nome, torch)} "
                        f"(--dispositivo auto), porque {motivo}. As lições 01 a 09 rodam "
                        "sempre na CPU.", width=largura() - 1,
                        initial_indent="  dispositivo   ", subsequent_indent=" " * 16))
    livre = memoria_disponivel()
    if livre is None:
        dizer("  memória       não consegui medir")
    else:
        dizer(f"  memória       {tamanho(livre)} livres")
        if livre < 1.5 * 2**30:
            AVISOS.append("menos de 1,5 GiB de memória livre: feche programas antes da aula")
    cache = Path(os.environ.get("HF_HUB_CACHE") or os.environ.get("HF_HOME", "")
                 or Path.home() / ".cache" / "huggingface")
    alvo = cache if cache.exists() else Path.home()
    disco = shutil.disk_usage(alvo).free
    dizer(f"  disco         {tamanho(disco)} livres em {alvo}")
    if disco < 2**30:
        AVISOS.append(f"pouco disco em {alvo}: o GPT-2 pequeno ocupa cerca de 0,5 GiB")
    codificacao = getattr(sys.stdout, "encoding", "?")
    dizer(f"  console       codificação {codificacao}, {largura()} colunas")
    if not unicode_ok():
        AVISOS.append(f"o console usa {codificacao}: alguns símbolos aparecem como '?'. "
                      "No Windows, use o Windows Terminal ou rode 'chcp 65001' antes")
    try:
        from comum import figuras

        fig, ax = figuras.figura(2, 2)
        ax.plot([0, 1], [0, 1])
        import tempfile

        with tempfile.TemporaryDirectory() as pasta:
            fig.savefig(Path(pasta) / "teste.png")
        dizer("  figuras       matplotlib grava PNG sem janela: ok")
    except Exception as erro:  # noqa: BLE001 - qualquer falha aqui vira aviso
        AVISOS.append(f"o matplotlib não conseguiu gravar uma figura ({erro})")


@LICAO.experimento(3)
def exp_cache(licao):
    nome = licao.args.modelo
    if not Path(nome).exists() and nome in TAMANHOS_GPT2:
        from huggingface_hub import try_to_load_from_cache
        from huggingface_hub.constants import HF_HUB_CACHE

        arquivo = try_to_load_from_cache(PREFIXO_HUB + nome, "model.safetensors")
        no_cache = isinstance(arquivo, str)
        dizer(f"  cache do Hugging Face: {HF_HUB_CACHE}")
        dizer(f"  {nome}: {'já está no cache' if no_cache else 'ainda não está no cache'}")
    inicio = time.perf_counter()
    modelo, _ = licao.gpt2()
    n = contar(modelo)  # a cabeça amarrada ao wte conta uma vez
    dizer(f"  {inteiro(n)} parâmetros, {modelo.config.n_layer} blocos, "
          f"d = {modelo.config.n_embd}; pronto em {num(time.perf_counter() - inicio, 1)} s.")


def tamanho_no_hub(repo: str, arquivo: str) -> int | None:
    """O tamanho de um arquivo no hub, em bytes (uma pergunta só, sem baixar nada), ou None
    sem rede."""
    from comum.rede import confiar_nos_certificados_do_sistema, hub_offline, rede_disponivel

    if hub_offline() or not rede_disponivel():
        return None
    confiar_nos_certificados_do_sistema()
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_url

        return get_hf_file_metadata(hf_hub_url(repo, arquivo)).size
    except Exception:  # noqa: BLE001 - sem a resposta, o download diz o que houve
        return None


@LICAO.experimento(5)
def exp_tucano(licao):
    """Sem --tucano, só diz se o Tucano da lição 13 está no cache. Com --tucano: o disco que
    ele pede, o download (com a barra do hub) e o carregamento conferido, pelo mesmo
    caminho da lição 13."""
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.constants import HF_HUB_CACHE

    from comum import ModeloIndisponivel
    from comum.carregar_llama import TUCANO, carregar_llama

    no_cache = isinstance(try_to_load_from_cache(TUCANO, "model.safetensors"), str)
    if not licao.args.tucano:
        dizer(quebrar(f"{TUCANO}: " + (
            "já está no cache" if no_cache else "ainda não está no cache; a lição 13 o baixa "
            "na primeira vez que roda com internet, ou rode esta verificação com --tucano "
            "(uns 325 MB)") + ".", recuo=2))
        return
    if not no_cache:
        precisa = tamanho_no_hub(TUCANO, "model.safetensors")
        pasta = Path(HF_HUB_CACHE)
        while not pasta.exists() and pasta != pasta.parent:
            pasta = pasta.parent
        livre = shutil.disk_usage(pasta).free
        if precisa:
            dizer(quebrar(f"{TUCANO}: {tamanho(precisa)} para baixar; {tamanho(livre)} livres "
                          f"em {pasta}.", recuo=2))
            if livre < 1.2 * precisa:
                raise ExperimentoPulado(
                    f"falta disco para o {TUCANO}: ele pede {tamanho(precisa)} e há "
                    f"{tamanho(livre)} livres em {pasta}.\nLibere espaço, ou ponha o cache do "
                    "Hugging Face em outro disco (HF_HOME; README, \"Disco cheio\").")
    inicio = time.perf_counter()
    try:
        modelo, _ = carregar_llama(TUCANO, baixar_com="lab/00_check.py --tucano")
    except ModeloIndisponivel as erro:
        raise ExperimentoPulado(str(erro)) from None
    dizer(f"  {TUCANO}: {inteiro(contar(modelo))} parâmetros; pronto para a lição 13 em "
          f"{num(time.perf_counter() - inicio, 1)} s.")


@LICAO.experimento(4)
def exp_passada(licao):
    import torch

    modelo, tokenizador = licao.gpt2()
    texto = "O Transformer é uma arquitetura de"
    ids = tokenizador(texto, return_tensors="pt")["input_ids"]
    inicio = time.perf_counter()
    with torch.no_grad():
        logits = modelo(ids).logits                        # (1, T, V)
    segundos = time.perf_counter() - inicio
    proximo = int(logits[0, -1].argmax())
    dizer(f"  texto: \"{texto}\" ({ids.shape[1]} tokens)")
    dizer(f"  saída: logits de forma {tuple(logits.shape)} em {num(segundos, 2)} s")
    dizer(f"  token mais provável a seguir: \"{tokenizador.decode([proximo])}\"")
    if not torch.isfinite(logits).all():
        raise ExperimentoPulado("a saída tem NaN ou infinito: baixe o modelo de novo")


if __name__ == "__main__":
    codigo = LICAO.rodar()
    if codigo == 130:
        sys.exit(codigo)
    dizer()
    for aviso in AVISOS:
        dizer(quebrar(f"Aviso: {aviso}."))
    if codigo == 0:
        dizer("Pronto: este computador está preparado para o lab.")
        LICAO.dizer_o_proximo_passo()
    else:
        dizer("Ainda não está pronto. O que corrigir:")
        motivos = dict.fromkeys(m for _k, _t, m in LICAO.pulados + LICAO.falhos)
        for motivo in motivos:  # o motivo inteiro: a segunda linha diz o que fazer
            primeira, *resto = motivo.split("\n")
            dizer(textwrap.fill(primeira, width=largura() - 1,
                                initial_indent="  - ", subsequent_indent="    "))
            for linha in resto:
                dizer(quebrar(linha, recuo=4))
    sys.exit(codigo)
