"""Lição 14 · A corrida: menos bits por caractere no mesmo orçamento (leia junto: apostilas/14_corrida.md)
1. O orçamento: FLOPs contados num passo de verdade
2. A nota: bits por caractere, não por token
3. Uma inscrição em miniatura: treinar, pontuar e conferir
4. O placar: empates, a linha de base e a final"""
from comum import Licao, importar_licao, inteiro, inteiro_entre, opcao, paginas
from comum.opcoes import lista_de_inteiros

LICAO = Licao.da_docstring(__doc__, opcoes=[
    opcao("--nova-inscricao", None, None, "grava a inscrição da lição 10, para editar",
          "ARQUIVO"),
    opcao("--inscrever", None, None, "conta, treina as 3 sementes, pontua e grava", "ARQUIVO"),
    opcao("--nome", None, None, "o seu nome no placar (com --inscrever)", '"NOME"'),
    opcao("--pasta", None, None, "onde ficam os registros (padrão: a pasta corrida/)", "PASTA"),
    opcao("--conferir", None, None, "treina de novo e confere um registro", "REGISTRO"),
    opcao("--placar", None, None, "o placar da PASTA (padrão: corrida/)", "PASTA", nargs="?",
          const=""),
    opcao("--final", None, None, "o professor: os primeiros da PASTA em sementes novas", "PASTA"),
    opcao("--sementes", lista_de_inteiros("--sementes 100,101,102"), None,
          "as sementes escondidas da --final", "100,101,102"),
    opcao("--prova", None, None, "um texto só do professor, na --final (UTF-8)", "ARQUIVO"),
    opcao("--primeiros", inteiro_entre(1, 20, "--primeiros 3"), 3, "nomes na --final", "N"),
    *paginas.opcoes(),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import json
import math
import torch

L01 = importar_licao("01_tokens")        # o BPE: treinar_bpe, bpe, os bytes
L08 = importar_licao("08_since_2017")    # a largura do SwiGLU do bloco moderno
L09 = importar_licao("09_scaling")       # contar_flops
L10 = importar_licao("10_treino")        # os dados, os caracteres, o laço de treino
L13 = importar_licao("13_tucano")        # o Llama inteiro (os blocos da lição 08)
GPT2 = importar_licao("06_gpt2").GPT2    # o GPT2 da lição 06


# ============================================================ a peça: as regras da corrida
class Recusada(Exception):
    """Uma inscrição (ou um registro) fora das regras: `campo` diz o que está errado."""

    def __init__(self, campo, mensagem):
        super().__init__(f"{campo}: {mensagem}")
        self.campo = campo


# O orçamento: o treino padrão da lição 10, 1.000 passos de 4.001.366.016 FLOPs (a conta da
# lição 12). LAB_CORRIDA_ORCAMENTO troca por outro (os testes): o registro diz que não é
# oficial.
ORCAMENTO_OFICIAL = 1000 * 4_001_366_016
SEMENTES = (0, 1, 2)          # as mesmas para todos: o acaso de cada uma não escolhe o vencedor
EMPATE = 0.01                 # bits por caractere: o ruído da média de três sementes
REGRAS = 1                    # a versão destas regras (muda a conta: muda o número)
MAXIMO_DE_PASSOS = 10_000     # a corrida cabe numa aula (num modelo pequeno, o passo demora)

INSCRICAO_DA_LICAO_10 = {     # as opções padrão de lab/10_treino.py: uma inscrição válida
    "bloco": "gpt2", "camadas": 4, "largura": 128, "cabecas": 4, "cabecas_kv": 4,
    "contexto": 64, "lote": 12, "taxa": 1e-3, "aquecimento": 100, "fracao_final": 0.1,
    "decaimento": 0.1, "passos": 1000, "tokenizador": "caracteres", "fusoes": 0}

# Cada campo: (tipo, mínimo, máximo). O que os campos só dizem juntos, conferir_inscricao vê.
CAMPOS = {"bloco": (str, None, None), "camadas": (int, 1, 12), "largura": (int, 8, 512),
          "cabecas": (int, 1, 16), "cabecas_kv": (int, 1, 16), "contexto": (int, 4, 512),
          "lote": (int, 1, 256), "taxa": (float, 1e-6, 0.1), "aquecimento": (int, 0, None),
          "fracao_final": (float, 0.0, 1.0), "decaimento": (float, 0.0, 1.0),
          "passos": (int, 1, MAXIMO_DE_PASSOS), "tokenizador": (str, None, None),
          "fusoes": (int, 0, 1000)}
TIPOS = {int: "um inteiro", float: "um número", str: "um texto entre aspas"}


def conferir_inscricao(dados) -> dict:
    """A inscrição dentro das regras (os campos na ordem de CAMPOS), ou Recusada com o campo.
    Só configuração: nenhum código do aluno roda, então nada esconde compute."""
    if not isinstance(dados, dict):
        raise Recusada("inscrição", "o arquivo precisa ser um objeto JSON { ... }")
    for campo in dados:
        if campo not in CAMPOS:
            raise Recusada(campo, f"campo desconhecido (os campos: {', '.join(CAMPOS)})")
    inscricao = {}
    for campo, (tipo, minimo, maximo) in CAMPOS.items():
        if campo not in dados:
            raise Recusada(campo, "falta este campo")
        valor = dados[campo]
        if tipo is float and isinstance(valor, int) and not isinstance(valor, bool):
            valor = float(valor)                    # 1 vale 1.0 numa taxa
        if not isinstance(valor, tipo) or isinstance(valor, bool):
            raise Recusada(campo, f"{json.dumps(valor)} não é {TIPOS[tipo]}")
        if (minimo is not None and valor < minimo) or (maximo is not None and valor > maximo):
            faixa = (f"de {regra(minimo)} a {regra(maximo)}" if maximo is not None
                     else f"{regra(minimo)} ou mais")
            raise Recusada(campo, f"{json.dumps(valor)} fora das regras ({faixa})")
        inscricao[campo] = valor
    juntos(inscricao)
    return inscricao


def regra(x) -> str:
    """Um limite das regras como se escreve aqui: 10.000, 1e-6, 0,1."""
    if isinstance(x, int):
        return inteiro(x)
    return f"{x:g}".replace(".", ",").replace("e-0", "e-")


def juntos(c):
    """O que os campos só dizem juntos."""
    if c["bloco"] not in ("gpt2", "llama"):
        raise Recusada("bloco", f"{json.dumps(c['bloco'])}: use \"gpt2\" (lição 06) ou "
                       "\"llama\" (lição 08)")
    if c["tokenizador"] not in ("caracteres", "bpe"):
        raise Recusada("tokenizador", f"{json.dumps(c['tokenizador'])}: use \"caracteres\" ou "
                       "\"bpe\"")
    if (c["tokenizador"] == "bpe") != (c["fusoes"] > 0):
        raise Recusada("fusoes", "o BPE pede de 1 a 1000 fusões; os caracteres, 0")
    if c["largura"] % c["cabecas"]:
        raise Recusada("cabecas", f"{c['cabecas']} não divide a largura {c['largura']}")
    if c["cabecas"] % c["cabecas_kv"]:
        raise Recusada("cabecas_kv", f"{c['cabecas_kv']} não divide as {c['cabecas']} cabeças")
    if c["bloco"] == "gpt2" and c["cabecas_kv"] != c["cabecas"]:
        raise Recusada("cabecas_kv", "o GPT-2 não tem GQA: cabecas_kv = cabecas")
    if c["bloco"] == "llama" and (c["largura"] // c["cabecas"]) % 2:
        raise Recusada("cabecas", "o RoPE gira pares: largura / cabecas precisa ser par")
    if c["aquecimento"] > c["passos"]:
        raise Recusada("aquecimento", f"{c['aquecimento']} passos de aquecimento num treino "
                       f"de {c['passos']}")


class BPE:
    """O BPE da lição 01 (bytes, a regex do GPT-2 e as fusões de treinar_bpe), aprendido no
    texto de treino: 256 ids de bytes e um por fusão."""

    def __init__(self, fusoes):
        self.ranks = {par: posto for posto, (par, _n) in enumerate(fusoes)}
        self.vocab = {L01.BYTE_PARA_CHAR[b]: b for b in range(256)}
        for k, ((a, b), _n) in enumerate(fusoes):
            self.vocab.setdefault(a + b, 256 + k)   # duas fusões que dão o mesmo texto: um id
        self.simbolos = {i: s for s, i in self.vocab.items()}
        self.tamanho = 256 + len(fusoes)

    def __len__(self):
        return self.tamanho

    def codificar(self, texto):
        return L01.bpe(texto, self.ranks, self.vocab)

    def decodificar(self, ids):
        return b"".join(L01.para_bytes(self.simbolos[i]) for i in ids).decode("utf-8", "replace")


def tokenizador(inscricao, texto_de_treino):
    """Os caracteres da lição 10 ou um BPE de n fusões aprendido só no texto de treino."""
    if inscricao["tokenizador"] == "caracteres":
        return L10.Caracteres()
    return BPE(L01.treinar_bpe(texto_de_treino, inscricao["fusoes"]))


def ida_e_volta(tok, texto):
    """None se decodificar(codificar(texto)) == texto; senão, a posição da 1ª diferença. Um
    tokenizador que não volta ao texto mede outro texto (mais fácil): fica fora."""
    volta = tok.decodificar(tok.codificar(texto))
    if volta == texto:
        return None
    return next((i for i, (a, b) in enumerate(zip(texto, volta)) if a != b),
                min(len(texto), len(volta)))


def novo_modelo(inscricao, V, semente=None):
    """O modelo da inscrição com os pesos iniciais sorteados pela semente: o GPT2 da lição 06
    (com a inicialização do GPT-2) ou o Llama da lição 13 (os blocos da 08, a saída amarrada
    ao embedding, como no GPT2) com a mesma inicialização."""
    if semente is not None:
        torch.manual_seed(semente)
    L, d, h, T = (inscricao[k] for k in ("camadas", "largura", "cabecas", "contexto"))
    if inscricao["bloco"] == "gpt2":
        return GPT2(L, d, h, V, T)
    modelo = L13.Llama(L, d, h, inscricao["cabecas_kv"], L08.largura_swiglu(d), V,
                       amarrada=True)
    residual = 0.02 / (2 * L) ** 0.5                # as 2L projeções que somam no resíduo
    for nome, p in modelo.named_parameters():
        if p.dim() == 2:
            desvio = residual if nome.endswith(("attn.wo.weight", "mlp.w2.weight")) else 0.02
            torch.nn.init.normal_(p, 0.0, desvio)   # os ganhos das RMSNorm ficam 1
    return modelo


def flops_por_passo(inscricao, V) -> int:
    """Os FLOPs de um passo de treino (forward e backward num lote B x T) do modelo da
    inscrição, contados pelo contar_flops da lição 09, como a 12 conta. No dispositivo
    'meta' (as formas sem os números: as mesmas operações, contadas sem gastar tempo), com a
    atenção pelo caminho das contas (math): na CPU, o contador não enxerga o kernel fundido
    que o Llama chama, e a atenção sairia de graça (o experimento 1 mostra)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with torch.device("meta"), sdpa_kernel(SDPBackend.MATH):
        modelo = novo_modelo(inscricao, V)
        x = torch.zeros(inscricao["lote"], inscricao["contexto"], dtype=torch.long)  # (B, T)
        return L09.contar_flops(lambda: L10.perda(modelo, x, x).backward())


def no_orcamento(inscricao, flops, orcamento):
    """Recusada (antes de treinar) se passos x FLOPs por passo passa do orçamento: a
    mensagem diz quantos passos cabem."""
    total = inscricao["passos"] * flops
    if total > orcamento:
        raise Recusada("passos", f"{inteiro(inscricao['passos'])} passos x {inteiro(flops)} "
                       f"FLOPs = {inteiro(total)}, acima do orçamento de {inteiro(orcamento)}; "
                       f"cabem {inteiro(orcamento // flops)} passos")


def treinar(modelo, inscricao, ids, semente, ao_passo=lambda passo: None):
    """O laço da lição 10 (treinar, da peça dela) com o cronograma e o AdamW da inscrição;
    os lotes sorteados com a semente."""
    otimizador = L10.adamw(modelo, inscricao["taxa"], inscricao["decaimento"])
    gerador = torch.Generator().manual_seed(semente)
    for passo, _perda in L10.treinar(modelo, otimizador, ids, inscricao["passos"],
                                     inscricao["lote"], inscricao["contexto"], inscricao["taxa"],
                                     inscricao["aquecimento"], gerador, inscricao["fracao_final"]):
        ao_passo(passo)
    return modelo


@torch.no_grad()
def pontuar(modelo, tok, texto, T, janelas_por_lote=64):
    """(bits, caracteres, tokens): a entropia cruzada somada, em bits, de todo token do texto,
    e quantos caracteres e tokens foram previstos. Uma linha nova antes do texto é o contexto
    do 1º token: todo caractere é previsto, em qualquer tokenizador. Janelas de T tokens, uma
    atrás da outra: cada token vê os anteriores da sua janela (de 1 a T)."""
    ids = torch.tensor(tok.codificar("\n") + tok.codificar(texto))
    previstos = len(ids) - 1
    nats = torch.zeros((), dtype=torch.float64)
    inicios = list(range(0, previstos, T))
    for k in range(0, len(inicios), janelas_por_lote):
        for grupo in _mesmo_tamanho(inicios[k:k + janelas_por_lote], T, previstos):
            x = torch.stack([ids[i:i + len_] for i, len_ in grupo])            # (B, t)
            y = torch.stack([ids[i + 1:i + 1 + len_] for i, len_ in grupo])    # (B, t)
            logits = modelo(x)                                                 # (B, t, V)
            nats += torch.nn.functional.cross_entropy(
                logits.flatten(0, 1), y.flatten(), reduction="none").double().sum()
    return float(nats) / math.log(2), len(texto), previstos


def _mesmo_tamanho(inicios, T, previstos):
    """As janelas em grupos do mesmo tamanho: as inteiras e a última, mais curta."""
    inteiras = [(i, T) for i in inicios if i + T <= previstos]
    resto = [(i, previstos - i) for i in inicios if i + T > previstos]
    return [g for g in (inteiras, resto) if g]


def bits_por_caractere(modelo, tok, texto, T) -> float:
    """A nota: os bits do texto inteiro divididos pelo número de CARACTERES (nunca de tokens:
    um tokenizador que corta em pedaços maiores não ganha nota com isso)."""
    bits, caracteres, _tokens = pontuar(modelo, tok, texto, T)
    return bits / caracteres


def hash_da_inscricao(inscricao) -> str:
    """sha256 do JSON canônico (chaves em ordem, sem espaços): mudar um campo muda o hash."""
    import hashlib

    texto = json.dumps(inscricao, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(texto.encode("utf-8")).hexdigest()


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["Recusada", "ORCAMENTO_OFICIAL", "SEMENTES", "EMPATE", "REGRAS", "MAXIMO_DE_PASSOS",
           "INSCRICAO_DA_LICAO_10", "CAMPOS", "conferir_inscricao", "regra", "juntos", "BPE",
           "tokenizador", "ida_e_volta", "novo_modelo", "flops_por_passo", "no_orcamento",
           "treinar", "pontuar", "bits_por_caractere", "hash_da_inscricao"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import hashlib
import os
import platform
import sys
import threading
import time
import unicodedata
from pathlib import Path

from comum import (ExperimentoPulado, Progresso, RAIZ, cientifico, comando, contar, curto, dizer,
                   em_paralelo, inteiro, limite, num, plural, quebrar, uma_thread)
from comum.console import duracao
from comum.opcoes import uso_errado
from comum.processo import ao_interromper_durante

PASTA_PADRAO = RAIZ / "corrida"                       # os registros da turma (fora do git)
DADOS_DO_LAB = RAIZ / "lab" / "dados"                    # os registros que vêm com o lab:
LINHA_DE_BASE = DADOS_DO_LAB / "corrida-linha-de-base.json"   # a linha de base e os exemplos
REGISTROS_DO_LAB = "corrida-*.json"                      # da apostila (lab/dados/corrida-*)
TOLERANCIA = 1e-4          # bits por caractere, por semente, na mesma família de CPU
TOLERANCIA_ENTRE_FAMILIAS = 1e-3   # x86 contra ARM: não medido; bem abaixo entre sementes
# Os arquivos do lab que fazem a conta (o treino, o modelo, o BPE, a nota): o "lab" do registro
ARQUIVOS_DA_CONTA = ["01_tokens.py", "03_attention.py", "04_multihead.py", "05_block.py",
                     "06_gpt2.py", "08_since_2017.py", "09_scaling.py", "10_treino.py",
                     "13_tucano.py", "14_corrida.py", "comum/otimizador.py"]


def orcamento() -> int:
    """O orçamento desta execução: o oficial ou, para os testes, LAB_CORRIDA_ORCAMENTO (um
    registro feito com outro orçamento diz que não é oficial e fica fora do placar)."""
    texto = os.environ.get("LAB_CORRIDA_ORCAMENTO", "").strip()
    if not texto:
        return ORCAMENTO_OFICIAL
    try:
        valor = int(float(texto))
    except ValueError:
        valor = 0
    if valor <= 0:
        uso_errado(f"LAB_CORRIDA_ORCAMENTO={texto} não é um número de FLOPs (exemplo: 4e9)")
    return valor


def aviso_de_teste():
    """Uma linha, sempre que o orçamento não é o oficial."""
    if orcamento() != ORCAMENTO_OFICIAL:
        dizer(f"ORÇAMENTO DE TESTE (LAB_CORRIDA_ORCAMENTO): {inteiro(orcamento())} FLOPs. "
              "Fora da\ncorrida: os registros deste orçamento não entram no placar oficial.")


_TEXTOS = {}


def textos():
    """(treino, validação): os textos da lição 10 (lab/dados/apostilas.txt, separado como
    lá), normalizados ao alfabeto dela: todo tokenizador vê os mesmos caracteres."""
    if not _TEXTOS:
        _texto, arquivos, tok, treino, validacao = L10.dados()
        if Path(arquivos[0]).resolve() != Path(L10.CORPUS_DO_CURSO).resolve():
            raise ExperimentoPulado("a corrida usa o texto congelado do curso, e a lição 10 "
                                    f"está lendo {arquivos[0]} (o exercício 8 dela?).")
        _TEXTOS["treino"] = tok.decodificar(treino.tolist())
        _TEXTOS["validacao"] = tok.decodificar(validacao.tolist())
    return _TEXTOS["treino"], _TEXTOS["validacao"]


def hash_do_texto() -> str:
    treino, validacao = textos()
    return hashlib.sha256(f"{treino}\0{validacao}".encode("utf-8")).hexdigest()[:16]


_TOKENIZADORES = {}


def tokenizador_da(inscricao):
    """O tokenizador da inscrição (um BPE é aprendido uma vez por execução)."""
    chave = (inscricao["tokenizador"], inscricao["fusoes"])
    if chave not in _TOKENIZADORES:
        if inscricao["tokenizador"] == "bpe":
            dizer(quebrar(f"Aprendendo as {inscricao['fusoes']} fusões do BPE no texto de "
                          "treino (o treinar_bpe da lição 01)..."))
        _TOKENIZADORES[chave] = tokenizador(inscricao, textos()[0])
    return _TOKENIZADORES[chave]


def vocabulario(inscricao) -> int:
    """V sem treinar o BPE: 128 caracteres, ou 256 bytes + as fusões."""
    if inscricao["tokenizador"] == "caracteres":
        return len(L10.ALFABETO)
    return 256 + inscricao["fusoes"]


_FLOPS = {}


def flops_da(inscricao) -> int:
    """flops_por_passo, contado uma vez por inscrição em cada execução."""
    chave = hash_da_inscricao(inscricao)
    if chave not in _FLOPS:
        _FLOPS[chave] = flops_por_passo(inscricao, vocabulario(inscricao))
    return _FLOPS[chave]


def parametros_da(inscricao) -> int:
    with torch.device("meta"):
        return contar(novo_modelo(inscricao, vocabulario(inscricao)))


def resumo(c) -> str:
    """'gpt2 4x128, 4 cabeças, T 64, lote 12, 1.000 passos, caracteres' (uma linha curta)."""
    gqa = c["bloco"] == "llama" and c["cabecas_kv"] != c["cabecas"]
    kv = f" (kv {c['cabecas_kv']})" if gqa else ""
    tok = "caracteres" if c["tokenizador"] == "caracteres" else f"BPE {c['fusoes']}"
    return (f"{c['bloco']} {c['camadas']}x{c['largura']}, {c['cabecas']} cabeças{kv}, "
            f"T {c['contexto']}, lote {c['lote']}, {inteiro(c['passos'])} passos, {tok}")


def versao_do_lab() -> str:
    """Um resumo (sha256) dos arquivos do lab que fazem a conta, com as linhas no formato do
    Linux (um checkout do Windows dá o mesmo): diz se dois registros vêm do mesmo código."""
    h = hashlib.sha256()
    for nome in ARQUIVOS_DA_CONTA:
        h.update((RAIZ / "lab" / nome).read_text(encoding="utf-8").replace("\r\n", "\n")
                 .encode("utf-8"))
    return h.hexdigest()[:12]


def familia(arquitetura: str) -> str:
    a = arquitetura.lower()
    if a in ("x86_64", "amd64", "x86", "i386", "i686"):
        return "x86"
    return "arm" if a.startswith(("arm", "aarch")) else a


def ambiente() -> dict:
    from importlib import metadata

    try:
        transformers = metadata.version("transformers")
    except metadata.PackageNotFoundError:
        transformers = "não instalado"
    return {"lab": versao_do_lab(), "torch": torch.__version__, "transformers": transformers,
            "python": platform.python_version(), "cpu": torch.backends.cpu.get_cpu_capability(),
            "arquitetura": platform.machine(), "sistema": platform.system(), "threads": 1}


def para_json(x):
    """Um float que o JSON aceita (NaN e infinito, de um treino que divergiu, viram null)."""
    return x if x is not None and math.isfinite(x) else None


def media(exatos):
    """A média das notas, na ordem das sementes (None se alguma divergiu)."""
    return None if any(x is None for x in exatos) else sum(exatos) / len(exatos)


def montar_registro(nome, inscricao, notas, segundos, orcamento_):
    """O registro: a inscrição e o hash, os FLOPs contados, cada semente (6 casas e o float
    exato), a média, o texto e o ambiente. notas: {semente: bits por caractere}."""
    sementes = [{"semente": s, "bits_por_caractere": None if para_json(notas[s]) is None
                 else round(notas[s], 6), "exato": para_json(notas[s]),
                 "segundos": round(segundos[s], 1)} for s in SEMENTES if s in notas]
    flops = flops_da(inscricao)
    return {"corrida": "Lição 14 do Laboratório do Transformer", "regras": REGRAS,
            "nome": nome, "inscricao": inscricao, "hash": hash_da_inscricao(inscricao),
            "parametros": parametros_da(inscricao), "vocabulario": vocabulario(inscricao),
            "flops_por_passo": flops, "flops_total": flops * inscricao["passos"],
            "orcamento": orcamento_, "oficial": orcamento_ == ORCAMENTO_OFICIAL,
            "texto": {"sha256": hash_do_texto(), "caracteres": len(textos()[1])},
            "sementes": sementes, "media": media([x["exato"] for x in sementes])
            if len(sementes) == len(SEMENTES) else None,
            "completa": len(sementes) == len(SEMENTES), "ambiente": ambiente()}


def conferir_registro(r, orcamento_=None):
    """As contas de um registro que não pedem treino, na ordem: a inscrição, o hash, o
    texto, os FLOPs (contados de novo), o orçamento, as sementes, a média. Recusada com o
    campo que não confere (um registro editado à mão)."""
    if not isinstance(r, dict):
        raise Recusada("registro", "não é um objeto JSON")
    for campo in ("regras", "nome", "inscricao", "hash", "parametros", "vocabulario",
                  "flops_por_passo", "flops_total", "orcamento", "oficial", "texto", "sementes",
                  "media", "completa"):
        if campo not in r:
            raise Recusada(campo, "falta no registro")
    if r["regras"] != REGRAS:
        raise Recusada("regras", f"registro das regras {r['regras']}, este lab é das {REGRAS}")
    try:
        inscricao = conferir_inscricao(r["inscricao"])
    except Recusada as erro:
        raise Recusada(f"inscricao.{erro.campo}", str(erro).split(": ", 1)[1]) from None
    if r["hash"] != hash_da_inscricao(inscricao):
        raise Recusada("hash", "não é o sha256 da inscrição: a inscrição ou o hash mudou")
    if not isinstance(r["texto"], dict) or r["texto"].get("sha256") != hash_do_texto():
        raise Recusada("texto.sha256", "outro texto de treino e validação (outro lab?)")
    for campo, agora in (("vocabulario", vocabulario(inscricao)),
                         ("parametros", parametros_da(inscricao))):
        if r[campo] != agora:
            raise Recusada(campo, f"contados agora: {agora}")
    flops = flops_da(inscricao)
    if r["flops_por_passo"] != flops:
        raise Recusada("flops_por_passo", f"contados agora: {flops}")
    if r["flops_total"] != flops * inscricao["passos"]:
        raise Recusada("flops_total", f"contados agora: {flops * inscricao['passos']}")
    if r["oficial"] is not (r["orcamento"] == ORCAMENTO_OFICIAL):
        raise Recusada("oficial", "só é oficial o registro do orçamento oficial")
    if orcamento_ is not None and r["orcamento"] != orcamento_:
        raise Recusada("orcamento", f"{inteiro(r['orcamento'])}, não o desta corrida "
                       f"({inteiro(orcamento_)})")
    no_orcamento(inscricao, flops, r["orcamento"])
    sementes = r["sementes"]
    if not isinstance(sementes, list) or not all(isinstance(x, dict) for x in sementes) or [
            x.get("semente") for x in sementes] != [s for s in SEMENTES if s in {
            x.get("semente") for x in sementes}]:
        raise Recusada("sementes", f"as sementes da corrida são {list(SEMENTES)}, nessa ordem")
    for k, x in enumerate(sementes):
        exato = x.get("exato")
        if not (exato is None or isinstance(exato, float)) or x.get("bits_por_caractere") != (
                None if exato is None else round(exato, 6)):
            raise Recusada(f"sementes[{k}].bits_por_caractere", "não é o exato com 6 casas")
    if r["completa"] is not (len(sementes) == len(SEMENTES)):
        raise Recusada("completa", f"{len(sementes)} de {len(SEMENTES)} sementes")
    if r["completa"] and r["media"] != media([x["exato"] for x in sementes]):
        raise Recusada("media", "não é a média das sementes")
    return inscricao


def ler_json(caminho):
    """O conteúdo de um arquivo JSON, ou uma mensagem que diz o que está errado nele."""
    try:
        return json.loads(Path(caminho).read_text(encoding="utf-8-sig"))   # o BOM do Bloco de Notas
    except FileNotFoundError:
        raise Recusada(str(caminho), "o arquivo não existe (confira o caminho)") from None
    except UnicodeDecodeError:
        raise Recusada(str(caminho), "não está em UTF-8 (salve como UTF-8)") from None
    except json.JSONDecodeError as erro:
        raise Recusada(str(caminho), f"não é JSON válido: linha {erro.lineno}, coluna "
                       f"{erro.colno} ({erro.msg}; no JSON, o decimal é com ponto, 0.001, e "
                       "o texto vai entre aspas duplas)") from None
    except OSError as erro:
        raise Recusada(str(caminho), f"não consegui ler: {erro.strerror or erro}") from None


def gravar_json(caminho, dados):
    """Num arquivo temporário e depois troca o nome: um Ctrl+C no meio não estraga nada."""
    caminho = Path(caminho)
    caminho.parent.mkdir(parents=True, exist_ok=True)
    temporario = caminho.with_name(f"{caminho.name}.{os.getpid()}.tmp")
    temporario.write_text(json.dumps(dados, indent=2, ensure_ascii=False) + "\n",
                          encoding="utf-8", newline="\n")
    os.replace(temporario, caminho)


# ------------------------------------------------------------ treinar as sementes
def lado_a_lado(n) -> int:
    """Quantas sementes treinam ao mesmo tempo: uma por núcleo (cada uma com uma thread de
    conta, que nunca espera outra: numa máquina ocupada, nada trava), até n."""
    return max(1, min(n, os.cpu_count() or 1))


def treinar_sementes(inscricao, sementes, provas, ao_terminar=lambda s, notas, t: None):
    """Treina cada semente e pontua nos textos `provas` ({nome: texto}): {semente: {nome:
    bits por caractere}}. Os pesos iniciais são sorteados aqui, na thread principal; cada
    treino roda com uma thread de conta, lado a lado (o mesmo resultado, bit a bit, que um
    depois do outro). A barra diz os passos e o tempo que falta; ao_terminar(semente, notas,
    segundos) a cada semente que termina (o registro é gravado ali: um Ctrl+C guarda o que
    terminou)."""
    tok = tokenizador_da(inscricao)
    for nome, texto in [("treino", textos()[0]), *provas.items()]:
        erro = ida_e_volta(tok, texto)
        if erro is not None:
            raise Recusada("tokenizador", f"não volta ao texto de {nome} (posição {erro})")
    ids = torch.tensor(tok.codificar(textos()[0]))
    modelos = {s: novo_modelo(inscricao, len(tok), s) for s in sementes}
    feitos, trava, inicio = dict.fromkeys(sementes, 0), threading.Lock(), time.perf_counter()
    total = len(sementes) * inscricao["passos"]

    with uma_thread(), Progresso(total, "treinando") as barra:
        def uma(s):
            comeco = time.perf_counter()

            def ao_passo(passo):
                with trava:
                    feitos[s] = passo
                    andados = sum(feitos.values())
                    falta = (time.perf_counter() - inicio) * (total - andados) / andados
                    barra.avancar(descricao=f"sementes {', '.join(map(str, sementes))}: "
                                  f"falta {duracao(falta, '~')}")
            treinar(modelos[s], inscricao, ids, s, ao_passo)
            notas = {nome: bits_por_caractere(modelos[s], tok, texto, inscricao["contexto"])
                     for nome, texto in provas.items()}
            segundos = time.perf_counter() - comeco
            with trava:
                ao_terminar(s, notas, segundos)
            return notas

        notas = em_paralelo([lambda s=s: uma(s) for s in sementes], lado_a_lado(len(sementes)))
    return dict(zip(sementes, notas))


# ------------------------------------------------------------ --nova-inscricao e --inscrever
def nova_inscricao(arquivo) -> int:
    """--nova-inscricao: grava a inscrição da lição 10 num JSON (nunca por cima de outro)."""
    arquivo = Path(arquivo)
    if arquivo.exists():
        dizer(quebrar(f"erro: {curto(arquivo)} já existe; escolha outro nome (não gravo por "
                      "cima de uma inscrição)."))
        return 2
    gravar_json(arquivo, INSCRICAO_DA_LICAO_10)
    dizer(f"Gravei {curto(arquivo)}: a inscrição da lição 10, o treino padrão dela.")
    dizer(quebrar("Edite os números (os campos e as faixas estão na seção 1 de "
                  "apostilas/14_corrida.md) e inscreva-se:"))
    dizer(comando("14_corrida.py", "--inscrever", curto(arquivo), "--nome", "Seu Nome"))
    return 0


def nome_de_arquivo(nome: str) -> str:
    """'Ana Souza' -> 'ana-souza': o nome no arquivo do registro (sem acento nem espaço)."""
    simples = unicodedata.normalize("NFKD", nome).encode("ascii", "ignore").decode("ascii")
    return "-".join(p for p in "".join(c if c.isalnum() else " " for c in simples.lower())
                    .split()) or "sem-nome"


def ler_inscricao(arquivo):
    """A inscrição do arquivo, conferida (Recusada diz o campo)."""
    return conferir_inscricao(ler_json(arquivo))


def contar_e_dizer(inscricao, orcamento_):
    """Conta os FLOPs de um passo e diz a conta; Recusada se passar do orçamento."""
    flops = flops_da(inscricao)
    total = flops * inscricao["passos"]
    dizer(f"FLOPs de um passo, contados: {inteiro(flops)}; x {inteiro(inscricao['passos'])} "
          f"passos = {inteiro(total)}")
    dizer(f"Orçamento: {inteiro(orcamento_)} ({pct_do(total, orcamento_)} usado).")
    no_orcamento(inscricao, flops, orcamento_)
    return flops


def pct_do(total, orcamento_) -> str:
    return f"{num(100 * total / orcamento_, 1)} %"


def inscrever(args) -> int:
    """--inscrever ARQUIVO --nome NOME: confere, conta, treina as 3 sementes, pontua e grava
    o registro em --pasta (corrida/), semente a semente."""
    if not (args.nome or "").strip():
        uso_errado("--inscrever pede o seu nome no placar: --nome \"Seu Nome\"")
    nome = " ".join(args.nome.split())[:60]
    aviso_de_teste()
    orcamento_ = orcamento()
    try:
        inscricao = ler_inscricao(args.inscrever)
        dizer(quebrar(f"Inscrição de {nome}: {resumo(inscricao)}."))
        contar_e_dizer(inscricao, orcamento_)
    except Recusada as erro:
        dizer(quebrar(f"Recusada antes de treinar: {erro}."))
        return 2
    pasta = Path(args.pasta) if args.pasta else PASTA_PADRAO
    caminho = pasta / f"{nome_de_arquivo(nome)}-{hash_da_inscricao(inscricao)[:8]}.json"
    notas, segundos = ja_feitas(caminho, inscricao, orcamento_)
    if len(notas) == len(SEMENTES):
        dizer(f"Esta inscrição já está em {curto(caminho)}, completa.")
        return dizer_o_registro(ler_json(caminho), caminho)
    faltam = [s for s in SEMENTES if s not in notas]
    if notas:
        dizer(f"Continuando {curto(caminho)}: faltam as sementes {', '.join(map(str, faltam))}.")

    def ao_terminar(s, nota_, t):
        notas[s], segundos[s] = nota_["validação"], t
        gravar_json(caminho, montar_registro(nome, inscricao, notas, segundos, orcamento_))
        dizer(f"  semente {s}: {nota(nota_['validação'], 4)} bits por caractere "
              f"({num(t, 0)} s)")

    dizer("\n" + quebrar(f"Treinando as sementes {', '.join(map(str, faltam))} (uma thread de "
                         f"conta cada, {lado_a_lado(len(faltam))} ao mesmo tempo):"))
    with ao_interromper_durante(lambda: dizer_o_que_ficou(caminho, notas)):
        try:
            treinar_sementes(inscricao, faltam, {"validação": textos()[1]}, ao_terminar)
        except Recusada as erro:
            dizer(quebrar(f"Recusada antes de treinar: {erro}."))
            return 2
    return dizer_o_registro(ler_json(caminho), caminho)


def ja_feitas(caminho, inscricao, orcamento_):
    """({semente: nota}, {semente: segundos}) de um registro anterior desta mesma inscrição
    (um treino interrompido continua de onde parou); vazios se não houver."""
    try:
        r = ler_json(caminho)
        conferir_registro(r, orcamento_)
    except Recusada:
        return {}, {}
    if r["hash"] != hash_da_inscricao(inscricao):
        return {}, {}
    return ({x["semente"]: x["exato"] if x["exato"] is not None else math.nan
             for x in r["sementes"]}, {x["semente"]: x["segundos"] for x in r["sementes"]})


def dizer_o_que_ficou(caminho, notas):
    """O que o Ctrl+C diz: as sementes que terminaram estão no registro."""
    if notas:
        dizer(quebrar(f"As sementes {', '.join(map(str, sorted(notas)))} ficaram em "
                      f"{curto(caminho)}; o mesmo comando continua de onde parou."))


def dizer_o_registro(r, caminho) -> int:
    """A nota do registro, semente a semente, e o que fazer com ele."""
    dizer(f"\nRegistro: {curto(caminho)}")
    for x in r["sementes"]:
        dizer(f"  semente {x['semente']}: {nota(x['exato'], 6)}")
    dizer(f"  média: {nota(r['media'], 4)} bits por caractere "
          f"({'oficial' if r['oficial'] else 'orçamento de teste: fora do placar'})")
    dizer(quebrar("Qualquer computador confere este registro treinando de novo; o placar "
                  "junta os da turma:"))
    dizer(comando("14_corrida.py", "--conferir", curto(caminho)))
    dizer(comando("14_corrida.py", "--placar", curto(caminho.parent)))
    return 0


def nota(x, casas=3) -> str:
    return "divergiu" if x is None or not math.isfinite(x) else num(x, casas)


# ------------------------------------------------------------ --conferir
def conferir(arquivo) -> int:
    """--conferir REGISTRO: as contas sem treino (cada campo) e, se passarem, o treino de
    novo, semente a semente: a nota tem de sair a menos de TOLERANCIA da registrada."""
    aviso_de_teste()
    try:
        r = ler_json(arquivo)
    except Recusada as erro:
        dizer(quebrar(f"erro: {erro}."))
        return 2
    try:
        inscricao = conferir_registro(r)
    except Recusada as erro:
        dizer(quebrar(f"NÃO CONFERE: o campo {erro.campo} ({str(erro).split(': ', 1)[1]}). "
                      "O registro foi editado depois de gravado, ou vem de outro lab."))
        return 1
    dizer(quebrar(f"Registro de {r['nome']}: {resumo(inscricao)}."))
    dizer(f"FLOPs contados de novo: {inteiro(r['flops_por_passo'])} por passo, "
          f"{inteiro(r['flops_total'])} no total: confere.")
    if not r["oficial"]:
        dizer("Orçamento de teste: o registro não é da corrida oficial.")
    if not r["completa"]:
        dizer(f"O registro está incompleto ({len(r['sementes'])} de {len(SEMENTES)} sementes).")
    ali, aqui = r.get("ambiente", {}), ambiente()
    mesma = familia(str(ali.get("arquitetura", ""))) == familia(aqui["arquitetura"])
    teto = TOLERANCIA if mesma else TOLERANCIA_ENTRE_FAMILIAS
    dizer(quebrar(f"Gravado em {ali.get('sistema', '?')} {ali.get('arquitetura', '?')} "
                  f"(kernels {ali.get('cpu', '?')}, torch {ali.get('torch', '?')}); aqui: "
                  f"{aqui['sistema']} {aqui['arquitetura']} (kernels {aqui['cpu']}, torch "
                  f"{aqui['torch']}). Tolerância: {cientifico(teto, 0)} bits por caractere "
                  + ("por semente." if mesma else "por semente, mais larga entre famílias de "
                     "CPU (x86 e ARM), que o lab não mediu; ainda bem abaixo da distância "
                     "entre duas sementes.")))
    if ali.get("lab") != aqui["lab"]:
        dizer(quebrar(f"Outra versão do código do lab (registro {ali.get('lab')}, aqui "
                      f"{aqui['lab']}): se a conta mudou, a nota muda e o treino mostra."))
    sementes = [x["semente"] for x in r["sementes"]]
    dizer("\n" + quebrar(f"Treinando de novo as sementes {', '.join(map(str, sementes))} (uma "
                         f"thread de conta cada, {lado_a_lado(len(sementes))} ao mesmo tempo):"))

    def ao_terminar(s, nota_, segundos):
        dizer(f"  semente {s}: {nota(nota_['validação'], 4)} bits por caractere "
              f"({num(segundos, 0)} s)")
    try:
        notas = treinar_sementes(inscricao, sementes, {"validação": textos()[1]}, ao_terminar)
    except Recusada as erro:
        dizer(quebrar(f"NÃO CONFERE: {erro}."))
        return 1
    dizer(f"\n  {'semente':>7}  {'registrada':>10}  {'agora':>10}  {'diferença':>10}")
    erradas = []
    for k, x in enumerate(r["sementes"]):
        agora = para_json(notas[x["semente"]]["validação"])
        diferenca = (math.inf if (agora is None) != (x["exato"] is None) else
                     0.0 if agora is None else abs(agora - x["exato"]))
        if not diferenca <= teto:
            erradas.append(f"sementes[{k}].exato")
        dizer(f"  {x['semente']:>7}  {nota(x['exato'], 6):>10}  {nota(agora, 6):>10}  "
              f"{limite(diferenca, 1e-6):>10}")
    if erradas:
        dizer(quebrar(f"NÃO CONFERE: o campo {', '.join(erradas)} (a nota de um treino de "
                      f"verdade não é a registrada, a mais de {cientifico(teto, 0)})."))
        return 1
    dizer(quebrar(f"CONFERE: as {len(sementes)} sementes treinadas aqui dão as notas do "
                  f"registro, a menos de {cientifico(teto, 0)} bits por caractere."))
    return 0


# ------------------------------------------------------------ o placar
NOME_DA_BASE = "linha de base (lição 10)"


def registros(pasta, com_base=True, padrao="*.json"):
    """(entradas, fora) dos registros da pasta (e a linha de base do lab, sempre):
    entradas, os completos que passam nas contas sem treino, no orçamento desta corrida;
    fora, [(arquivo, motivo)] dos outros. Cada entrada: {arquivo, registro, base}."""
    arquivos = sorted(Path(pasta).glob(padrao)) if pasta and Path(pasta).is_dir() else []
    if com_base:
        arquivos = [LINHA_DE_BASE] + [a for a in arquivos if a.resolve() != LINHA_DE_BASE.resolve()]
    entradas, fora, vistos = [], [], set()
    for arquivo in arquivos:
        try:
            r = ler_json(arquivo)
            conferir_registro(r, orcamento())
        except Recusada as erro:
            fora.append((arquivo, str(erro).removeprefix(f"{arquivo}: ")))
            continue
        if not r["completa"]:
            fora.append((arquivo, f"incompleto: {len(r['sementes'])} de {len(SEMENTES)} "
                                  "sementes (o --inscrever continua de onde parou)"))
            continue
        chave = (r["nome"], r["hash"], tuple(x["exato"] for x in r["sementes"]))
        if chave in vistos:                      # o mesmo registro duas vezes na pasta
            continue
        vistos.add(chave)
        entradas.append({"arquivo": arquivo, "registro": r,
                         "base": arquivo.resolve() == LINHA_DE_BASE.resolve()})
    entradas.sort(key=lambda e: (e["registro"]["media"] is None,
                                 e["registro"]["media"] or 0.0, e["registro"]["nome"]))
    return entradas, fora


def posicoes(medias):
    """A posição de cada média: 1 + quantas ficaram pelo menos EMPATE abaixo dela (menos
    que isso é empate: o ruído da média de três sementes). None: divergiu."""
    validas = [m for m in medias if m is not None]
    return [None if m is None else 1 + sum(o <= m - EMPATE for o in validas) for m in medias]


def marcas(pos):
    """'1', '1=' (empatado com outro), '-' (divergiu)."""
    return ["-" if p is None else f"{p}{'=' if pos.count(p) > 1 else ''}" for p in pos]


def tokens_por_parametro(r) -> float:
    c = r["inscricao"]
    return c["passos"] * c["lote"] * c["contexto"] / r["parametros"]


def nome_no_placar(e) -> str:
    return NOME_DA_BASE if e["base"] else e["registro"]["nome"]


def mostrar_placar(entradas, recuo=""):
    """A tabela do placar, duas linhas por inscrição, em 80 colunas."""
    pos = marcas(posicoes([e["registro"]["media"] for e in entradas]))
    dizer(f"{recuo}{'pos':<4} {'nome':<24} {'média':>6}   {'sementes 0, 1, 2':<19}"
          f" {'parâmetros':>10} {'tok/par':>7}")
    for p, e in zip(pos, entradas):
        r = e["registro"]
        sementes = " ".join(f"{nota(x['exato'], 3):>5}" for x in r["sementes"])
        dizer(f"{recuo}{p:<4} {nome_no_placar(e)[:24]:<24} {nota(r['media'], 3):>6}   "
              f"{sementes:<19} {inteiro(r['parametros']):>10} "
              f"{num(tokens_por_parametro(r), 1):>7}")
        dizer(f"{recuo}     {resumo(r['inscricao'])}")


def placar(args) -> int:
    """--placar [PASTA]: os registros da pasta e a linha de base, por média; empates a
    menos de EMPATE; com --html, a página."""
    aviso_de_teste()
    pasta = Path(args.placar or args.pasta or PASTA_PADRAO)
    entradas, fora = registros(pasta)
    turma = [e for e in entradas if not e["base"]]
    dizer(quebrar(f"Placar de {curto(pasta)}: {plural(len(turma), 'inscrição', 'inscrições')}"
                  f" e a linha de base, no orçamento de {inteiro(orcamento())} FLOPs. Nota: "
                  "bits por caractere na validação, a média das sementes 0, 1 e 2 (menos é "
                  "melhor)."))
    if not pasta.is_dir():
        dizer(f"(a pasta {curto(pasta)} ainda não existe: ninguém se inscreveu)")
    dizer()
    mostrar_placar(entradas)
    dizer("\n" + quebrar(f"= : empate, a menos de {num(EMPATE, 2)} bits (o ruído da média de "
                         "três sementes). tok/par: tokens de treino por parâmetro (o Chinchilla "
                         "usou cerca de 20)."))
    for arquivo, motivo in fora:
        dizer(quebrar(f"Fora do placar: {curto(arquivo)}: {motivo}"))
    if paginas.pedida(args):
        return paginas.gravar(LICAO, lambda: pagina(f"{rotulo_da_pasta(pasta)}/", entradas, fora),
                              "14_corrida.html")
    return 0


# ------------------------------------------------------------ a final
def final(args) -> int:
    """--final PASTA --sementes A,B,C [--prova ARQUIVO]: os --primeiros nomes do placar (o
    melhor registro de cada um), treinados de novo em sementes que ninguém conhecia e
    pontuados na validação e, se houver, num texto que ninguém viu."""
    sementes = args.sementes or []
    if not sementes or set(sementes) & set(SEMENTES) or len(set(sementes)) != len(sementes):
        uso_errado("a --final pede --sementes escondidas, diferentes entre si e de 0, 1 e 2 "
                   "(exemplo: --sementes 100,101,102)")
    provas = {"validação": textos()[1]}
    if args.prova:
        try:
            bruto = Path(args.prova).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as erro:
            uso_errado(f"--prova {args.prova}: não consegui ler o texto em UTF-8 ({erro})")
        caracteres = L10.Caracteres()
        provas["prova"] = caracteres.decodificar(caracteres.codificar(bruto))
        if len(provas["prova"]) < 100:
            uso_errado(f"--prova {args.prova}: texto curto demais ({len(provas['prova'])} "
                       "caracteres; use pelo menos 100)")
    aviso_de_teste()
    entradas, fora = registros(args.final, com_base=False)
    finalistas, nomes = [], set()
    for e in entradas:
        if e["registro"]["media"] is not None and e["registro"]["nome"] not in nomes:
            nomes.add(e["registro"]["nome"])
            finalistas.append(e)
    finalistas = finalistas[:args.primeiros]
    for arquivo, motivo in fora:
        dizer(quebrar(f"Fora da final: {curto(arquivo)}: {motivo}"))
    if not finalistas:
        dizer(f"Nenhum registro completo em {curto(args.final)}: não há final.")
        return 1
    dizer(quebrar(f"A final: os {len(finalistas)} primeiros nomes do placar de "
                  f"{curto(args.final)}, treinados nas sementes "
                  f"{', '.join(map(str, sementes))}"
                  + (f" e pontuados também em {curto(args.prova)} "
                     f"({inteiro(len(provas['prova']))} caracteres)." if args.prova else ".")))
    resultados = []
    for e in finalistas:
        r = e["registro"]
        dizer(f"\n{r['nome']}: {resumo(r['inscricao'])}")
        notas = treinar_sementes(r["inscricao"], sementes, provas)
        resultados.append({nome: sum(n[nome] for n in notas.values()) / len(notas)
                           for nome in provas})
    chave = "prova" if args.prova else "validação"
    ordem = sorted(range(len(finalistas)), key=lambda k: resultados[k][chave])
    pos = marcas(posicoes([resultados[k][chave] for k in ordem]))
    dizer(f"\n{'pos':<4} {'nome':<22} {'placar':>7} {'sementes novas':>15}"
          + (f" {'prova':>7}" if args.prova else ""))
    for p, k in zip(pos, ordem):
        r = finalistas[k]["registro"]
        dizer(f"{p:<4} {r['nome'][:22]:<22} {nota(r['media'], 3):>7} "
              f"{nota(resultados[k]['validação'], 3):>15}"
              + (f" {nota(resultados[k]['prova'], 3):>7}" if args.prova else ""))
    ordem = "do texto da prova" if args.prova else "das sementes novas"
    dizer(quebrar(f"A ordem da final é a {ordem}; = : empate, a menos de {num(EMPATE, 2)} bits."))
    return 0


# ------------------------------------------------------------ a página do placar
# O placar num arquivo que abre com um duplo clique (comum/paginas.py): --placar PASTA --html
# grava o da turma; --html sozinho, o dos registros do lab (lab/dados/corrida-*.json: a linha
# de base e os exemplos da apostila), que também mora em apostilas/paginas/.
# tests/test_14_paginas.py confere a página contra os registros, num navegador de verdade.
def rotulo_da_pasta(pasta) -> str:
    try:
        return Path(pasta).resolve().relative_to(RAIZ).as_posix()
    except ValueError:
        return Path(pasta).name


def pagina(rotulo, entradas, fora) -> str:
    """A página do placar: `rotulo` diz de onde vêm os registros ('turma/')."""
    dados = {"pasta": rotulo, "orcamento": orcamento(),
             "oficial": orcamento() == ORCAMENTO_OFICIAL, "empate": EMPATE,
             "entradas": [{"nome": nome_no_placar(e), "base": e["base"],
                           "media": e["registro"]["media"],
                           "sementes": [x["exato"] for x in e["registro"]["sementes"]],
                           "parametros": e["registro"]["parametros"],
                           "flops_por_passo": e["registro"]["flops_por_passo"],
                           "passos": e["registro"]["inscricao"]["passos"],
                           "tokens": round(tokens_por_parametro(e["registro"])
                                           * e["registro"]["parametros"]),
                           "modelo": resumo(e["registro"]["inscricao"]),
                           "arquivo": Path(e["arquivo"]).name} for e in entradas],
             "fora": [[Path(a).name, motivo] for a, motivo in fora]}
    corpo, script, estilo = (paginas.fonte(f"14_corrida.{e}") for e in ("html", "js", "css"))
    return paginas.documento(f"Lição {LICAO.numero} · O placar da corrida", corpo, script,
                             dados, estilo, "O placar da corrida: bits por caractere no "
                             "mesmo orçamento de FLOPs")


def pagina_do_lab(args) -> int:
    """--html sem --placar: a página do placar dos registros do lab."""
    entradas, fora = registros(DADOS_DO_LAB, padrao=REGISTROS_DO_LAB)
    return paginas.gravar(LICAO, lambda: pagina("lab/dados/corrida-*.json", entradas, fora),
                          "14_corrida.html")


# ============================================================ experimento 1
def com(**mudancas):
    """A inscrição da lição 10 com alguns campos trocados."""
    return {**INSCRICAO_DA_LICAO_10, **mudancas}


EXEMPLOS = [("a da lição 10", com()),
            ("menor: 2 blocos, d = 64", com(camadas=2, largura=64)),
            ("maior: 6 blocos, d = 192", com(camadas=6, largura=192, cabecas=6, cabecas_kv=6)),
            ("contexto de 256", com(contexto=256)),
            ("Llama, 2 cabeças de K/V", com(bloco="llama", cabecas_kv=2)),
            ("BPE de 500 fusões", com(tokenizador="bpe", fusoes=500))]


@LICAO.experimento(1)
def exp_orcamento(licao):
    base = INSCRICAO_DA_LICAO_10
    flops = flops_da(base)
    total = flops * base["passos"]
    dizer(quebrar(f"A inscrição da lição 10, o treino padrão dela: {resumo(base)}."))
    dizer(f"  FLOPs de um passo (forward e backward), pelo contar_flops da lição 09:\n"
          f"  {inteiro(flops):>30}\n  x {inteiro(base['passos'])} passos: "
          f"{inteiro(total):>23}")
    igual = licao.verificar(total == ORCAMENTO_OFICIAL, "a lição 10 = o orçamento")
    dizer(quebrar(f"O orçamento da corrida é esse: {inteiro(ORCAMENTO_OFICIAL)} FLOPs "
                  f"({cientifico(ORCAMENTO_OFICIAL, 1)}); "
                  + ("a lição 10 é uma inscrição válida, que gasta o orçamento inteiro."
                     if igual else "a lição 10 NÃO dá o orçamento (a conta mudou?).")))
    dizer("\nO mesmo orçamento em outros modelos (os FLOPs contados num passo de cada um):")
    dizer(f"  {'a da lição 10, mudando':<26}{'N':>10}{'FLOPs por passo':>17}{'passos':>8}"
          f"{'tok/par':>9}")
    for rotulo, c in EXEMPLOS:
        f = flops_da(c)
        passos = ORCAMENTO_OFICIAL // f
        N = parametros_da(c)
        dizer(f"  {rotulo:<26}{inteiro(N):>10}{inteiro(f):>17}{inteiro(passos):>8}"
              f"{num(passos * c['lote'] * c['contexto'] / N, 2):>9}")
    dizer(quebrar("passos: quantos cabem no orçamento; tok/par: tokens de treino por "
                  "parâmetro (lição 12; o Chinchilla usou cerca de 20). No BPE, um token vale "
                  "mais de um caractere (o experimento 2 mede), e a cabeça de saída, maior, "
                  "custa mais por token."))
    licao.pausa("um passo a mais e o ponto cego do contador")
    try:
        no_orcamento(com(passos=base["passos"] + 1), flops, ORCAMENTO_OFICIAL)
        recusada = None
    except Recusada as erro:
        recusada = erro
    licao.verificar(recusada is not None, "1.001 passos recusados")
    dizer("\n" + quebrar(f"A da lição 10 com {inteiro(base['passos'] + 1)} passos: "
                  + (f"recusada antes de treinar ({recusada})." if recusada else
                     "ACEITA (o orçamento não foi conferido?).")))
    ponto_cego(licao)


def ponto_cego(licao):
    """O Llama contado pela atenção fundida (o contador não a vê) e pelo caminho das contas."""
    c = com(bloco="llama", cabecas_kv=2)
    modelo = novo_modelo(c, vocabulario(c))              # na CPU, como o treino roda
    x = torch.zeros(c["lote"], c["contexto"], dtype=torch.long)          # (B, T)
    fundida = L09.contar_flops(lambda: L10.perda(modelo, x, x).backward())
    contada = flops_da(c)
    L, d, T, tokens = c["camadas"], c["largura"], c["contexto"], c["lote"] * c["contexto"]
    atencao = 3 * 4 * L * T * d * tokens                 # QK e pesos x V, ida e volta
    bate = licao.verificar(contada - fundida == atencao, "a atenção que o contador não vê")
    dizer("\n" + quebrar("Um contador tem pontos cegos. O Llama da lição 13 chama a atenção "
                  "fundida do PyTorch (scaled_dot_product_attention), que o contar_flops não "
                  "enxerga na CPU. No Llama de 2 cabeças de K/V acima:"))
    dizer(f"  {'contado como ele roda (atenção fundida)':<40}{inteiro(fundida):>15}\n"
          f"  {'contado pelo caminho das contas (math)':<40}{inteiro(contada):>15}\n"
          f"  {'a diferença, a atenção':<40}{inteiro(contada - fundida):>15}  "
          + ("= 3 x 4LTd x tokens" if bate else "NÃO é 3 x 4LTd x tokens"))
    dizer(quebrar("A corrida conta pelo caminho das contas, e só aceita configuração: nenhum "
                  "código do aluno roda, então nada esconde compute num canto que o contador "
                  "não vê."))


# ============================================================ experimento 2
FUSOES_DO_EXEMPLO = 100    # o BPE do experimento 2 (aprender 100 fusões leva ~1 s)


class Minusculas(L10.Caracteres):
    """Um tokenizador trapaceiro: tudo em minúsculas (um texto mais fácil de prever). Ele não
    volta ao texto: a corrida o recusa."""

    def codificar(self, texto):
        return super().codificar(texto.lower())


def bits_pela_frequencia(treino, prova, V, alfa=0.1) -> float:
    """Os bits de `prova` (ids) por um modelo que só conhece a frequência de cada token no
    treino (suavizada com alfa): a régua sem rede neural, que ignora o contexto. Em Python
    puro, com a soma exata (fsum): o mesmo número em qualquer CPU."""
    import collections

    contas = collections.Counter(treino)
    total = len(treino) + alfa * V
    return math.fsum(-math.log2((contas[i] + alfa) / total) for i in prova)


@LICAO.experimento(2)
def exp_nota(licao):
    treino, validacao = textos()
    dizer(quebrar(f"O texto da nota: a validação da lição 10 (um pedaço de 1.000 caracteres a "
                  f"cada 10 das apostilas, que nenhum treino vê), com os caracteres do "
                  f"alfabeto dela: {inteiro(len(validacao))} caracteres. A nota é a entropia "
                  "cruzada do texto inteiro, em bits, dividida pelo número de caracteres."))
    bpe = tokenizador_da(com(tokenizador="bpe", fusoes=FUSOES_DO_EXEMPLO))
    linhas = []
    for rotulo, tok in (("caracteres", L10.Caracteres()),
                        (f"BPE de {FUSOES_DO_EXEMPLO} fusões", bpe),
                        ("minúsculas (trapaça)", Minusculas())):
        ids = tok.codificar(validacao)
        linhas.append((rotulo, tok, len(ids),
                       bits_pela_frequencia(tok.codificar(treino), ids, len(tok))))
    dizer("\nUma régua sem rede neural, a frequência de cada token no texto de treino:")
    dizer(f"  {'tokenizador':<24}{'V':>5}{'tokens':>9}{'bits/token':>12}{'bits/caractere':>16}")
    for rotulo, tok, n, bits in linhas:
        dizer(f"  {rotulo:<24}{len(tok):>5}{inteiro(n):>9}{num(bits / n, 2):>12}"
              f"{num(bits / len(validacao), 2):>16}")
    (_, _, n_c, b_c), (_, _, n_b, b_b), (_, trapaca, _, b_m) = linhas
    pior_por_token = b_b / n_b > b_c / n_c
    melhor_por_caractere = b_b < b_c
    dizer("\n" + quebrar(f"Por token, o BPE parece {'pior' if pior_por_token else 'melhor'} "
                  f"({num(b_b / n_b, 2)} contra {num(b_c / n_c, 2)}): cada token dele carrega "
                  f"{num(len(validacao) / n_b, 2)} caracteres, e acertar um pedaço maior custa "
                  f"mais bits. Por caractere, o mesmo texto, ele é "
                  f"{'melhor' if melhor_por_caractere else 'pior'} ({num(b_b / len(validacao), 2)}"
                  f" contra {num(b_c / len(validacao), 2)}). Só a nota por caractere compara "
                  "tokenizadores: dividir por tokens premia quem corta em pedaços pequenos."))
    erro = ida_e_volta(trapaca, validacao)
    recusado = licao.verificar(erro is not None, "as minúsculas não voltam ao texto")
    volta = trapaca.decodificar(trapaca.codificar(validacao))
    dizer("\n" + quebrar(f"As minúsculas dão {num(b_m / len(validacao), 2)} bits por caractere, "
                  "menos que os caracteres: o texto ficou mais fácil, não o modelo melhor. "
                  + (f"Na ida e volta, a posição {erro} era {validacao[erro]!r} e voltou "
                     f"{volta[erro]!r}: a corrida recusa o tokenizador que não devolve o "
                     "texto, caractere por caractere." if recusado else
                     "Ele voltou ao texto: a conferência da ida e volta FALHOU.")))
    volta_bpe = licao.verificar(ida_e_volta(bpe, validacao) is None, "o BPE volta ao texto")
    dizer(quebrar(f"O BPE (da lição 01, de bytes) {'volta' if volta_bpe else 'NÃO volta'} ao "
                  "texto, caractere por caractere."))


# ============================================================ experimento 3
MINI = com(camadas=1, largura=32, cabecas=2, cabecas_kv=2, contexto=32, lote=8, taxa=3e-3,
           aquecimento=10)
ORCAMENTO_MINI = ORCAMENTO_OFICIAL // 1000


@LICAO.experimento(3)
def exp_miniatura(licao):
    flops = flops_da(MINI)
    mini = {**MINI, "passos": ORCAMENTO_MINI // flops}
    dizer(quebrar(f"Uma inscrição minúscula num orçamento de 1/1.000 do da corrida "
                  f"({inteiro(ORCAMENTO_MINI)} FLOPs): {resumo(mini)}, "
                  f"{inteiro(flops)} FLOPs por passo."))
    dizer(f"\nTreinando as sementes 0, 1 e 2 (uma thread de conta cada, "
          f"{lado_a_lado(3)} ao mesmo tempo):")
    notas = {s: n["validação"] for s, n in
             treinar_sementes(mini, SEMENTES, {"validação": textos()[1]}).items()}
    for s in SEMENTES:
        dizer(f"  semente {s}: {nota(notas[s], 2)} bits por caractere")
    r = montar_registro("exemplo", mini, notas, dict.fromkeys(SEMENTES, 0.0), ORCAMENTO_MINI)
    espalha = max(notas.values()) - min(notas.values())
    dizer(quebrar(f"  média {nota(r['media'], 2)}; da melhor semente à pior, "
                  f"{num(espalha, 2)} bits: é por isso que as três contam."))
    dizer("\n" + quebrar(f"O registro guarda a inscrição e o hash dela ({r['hash'][:12]}...), os "
                  f"FLOPs contados ({inteiro(r['flops_total'])}), cada nota com 6 casas e o "
                  "float exato, a média, o texto e a máquina. Conferir é treinar de novo:"))
    licao.pausa("conferir o registro")
    conferir_registro(r, ORCAMENTO_MINI)
    de_novo = treinar_sementes(mini, [0], {"validação": textos()[1]})[0]["validação"]
    diferenca = abs(de_novo - notas[0])
    igual = licao.verificar(diferenca < 1e-6, "a mesma semente, a mesma nota")
    dizer(f"  a semente 0 de novo: diferença {limite(diferenca, 1e-6)}, "
          + ("confere (os mesmos bits)." if igual else "NÃO confere."))
    dizer("\nTrês registros editados à mão, conferidos sem treinar:")
    editados = [("a média", lambda x: x.update(media=x["media"] - 0.05)),
                ("os FLOPs", lambda x: x.update(flops_total=x["flops_total"] // 2)),
                ("os passos", lambda x: x["inscricao"].update(
                    passos=x["inscricao"]["passos"] // 2))]
    for rotulo, editar in editados:
        copia = json.loads(json.dumps(r))
        editar(copia)
        try:
            conferir_registro(copia, ORCAMENTO_MINI)
            campo = None
        except Recusada as erro:
            campo = erro.campo
        licao.verificar(campo is not None, f"editar {rotulo} é pego")
        dizer(f"  {('editei ' + rotulo + ':'):<20}"
              + (f"NÃO confere, o campo {campo}" if campo else "passou (ERRADO)"))
    dizer(quebrar("Uma nota editada junto com a média passa nessas contas, mas não no treino "
                  "de novo: só a máquina de quem confere diz a nota. É o --conferir."))


# ============================================================ experimento 4
@LICAO.experimento(4)
def exp_placar(licao):
    entradas, fora = registros(DADOS_DO_LAB, padrao=REGISTROS_DO_LAB)
    licao.verificar(not fora and entradas, "os registros do lab")
    dizer(quebrar("O placar dos registros que vêm com o lab (lab/dados/corrida-*.json): a "
                  "linha de base e as inscrições da apostila, cada uma com as três "
                  "sementes treinadas no orçamento inteiro (confira qualquer uma com "
                  "--conferir). A nota é a média; empate, a menos de "
                  f"{num(EMPATE, 2)} bits.") + "\n")
    mostrar_placar(entradas)
    medias = [e for e in entradas if e["registro"]["media"] is not None]
    melhor, base = medias[0], next(e for e in entradas if e["base"])
    rm, rb = melhor["registro"], base["registro"]
    if melhor is not base and rm["parametros"] < rb["parametros"]:
        frase = (f"O primeiro tem {num(rb['parametros'] / rm['parametros'], 1)} vezes menos "
                 f"parâmetros que a linha de base e viu {num(tokens_por_parametro(rm), 1)} "
                 f"tokens por parâmetro (ela, {num(tokens_por_parametro(rb), 2)}): no mesmo "
                 "orçamento, um modelo menor treinado por mais passos chegou mais baixo. É o "
                 "Chinchilla (lição 09), aprendido correndo.")
    elif melhor is base:
        frase = "A linha de base ficou em primeiro: nenhuma inscrição a passou."
    else:
        frase = (f"O primeiro tem mais parâmetros que a linha de base "
                 f"({inteiro(rm['parametros'])}): aqui, crescer rendeu mais que treinar mais.")
    dizer("\n" + quebrar(frase))
    licao.pausa("a corrida na aula")
    dizer("\n" + quebrar("Na aula: cada um grava a sua inscrição, treina e manda o registro (o "
                  "arquivo .json de corrida/); o professor junta todos numa pasta e mostra o "
                  "placar (--placar PASTA, e --html para a página). No fim, a final: os "
                  "primeiros treinados de novo em sementes que ninguém conhecia (--final PASTA "
                  "--sementes ...), e, se o professor quiser, pontuados num texto que ninguém "
                  "viu (--prova). Os comandos estão na apostila."))


# ============================================================ a linha de comando
MODOS = ("nova_inscricao", "inscrever", "conferir", "placar", "final")


def rodar_modo(args):
    """Um dos comandos da corrida (--inscrever, --conferir...), ou None: a lição."""
    pedidos = [m for m in MODOS if getattr(args, m) is not None]
    if len(pedidos) > 1:
        uso_errado(f"um comando por vez ({', '.join('--' + m.replace('_', '-') for m in pedidos)})")
    if args.nome is not None and pedidos != ["inscrever"]:
        uso_errado("--nome vai com --inscrever ARQUIVO")
    if args.sementes is not None and pedidos != ["final"]:
        uso_errado("--sementes vai com --final PASTA: as da corrida são sempre 0, 1 e 2")
    if not pedidos:
        return pagina_do_lab(args) if paginas.pedida(args) else None
    modo = pedidos[0]
    if modo == "nova_inscricao":
        return nova_inscricao(args.nova_inscricao)
    try:
        return {"inscrever": inscrever, "conferir": lambda a: conferir(a.conferir),
                "placar": placar, "final": final}[modo](args)
    except ExperimentoPulado as motivo:
        dizer(quebrar(f"Não deu: {motivo}"))
        return 1


if __name__ == "__main__":
    codigo = rodar_modo(LICAO.args)
    sys.exit(LICAO.rodar() if codigo is None else codigo)
