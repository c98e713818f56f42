"""Lição 13 · Um Llama que fala português: o Tucano (leia junto: apostilas/13_tucano.md)
1. O modelo inteiro com as peças da lição 08
2. Os pesos de verdade: os mesmos logits do transformers
3. Português em tokens: o BPE do GPT-2 e o do modelo
4. Gerando com o cache KV da lição 07, com RoPE e GQA
5. Por dentro: a norma do fluxo residual e o logit lens
6. Cabeças de indução num modelo que leu quase só português"""
from comum import Licao, importar_licao, inteiro_entre, opcao, opcao_dispositivo, texto_utf8
LICAO = Licao.da_docstring(__doc__, modelo_padrao="TucanoBR/Tucano-160m", opcoes=[
    opcao("--texto", texto_utf8('--texto "O Carnaval do Rio de Janeiro é"'),
          "A floresta da Amazônia é conhecida por sua", "a frase dos experimentos 2 a 5",
          '"FRASE"'),
    opcao("--novos", inteiro_entre(1, 1000, "--novos 64"), 32, "tokens gerados no "
          "experimento 4", "N"),
    opcao("--gpt2", texto_utf8("--gpt2 gpt2"), "gpt2", "o GPT-2 (nome ou pasta) cujo BPE o "
          "experimento 3 compara", "NOME_OU_PASTA"),
    opcao_dispositivo("onde rodar o modelo (experimentos 2, 4, 5 e 6): auto escolhe CUDA, "
                      "depois MPS, depois a CPU"),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch
import torch.nn.functional as F
from torch import nn

L08 = importar_licao("08_since_2017")   # o bloco de hoje, a RMSNorm e o RoPE
L07 = importar_licao("07_generation")   # o cache KV e as regras de sorteio


# ============================================================ a peça: o Llama inteiro
class Llama(nn.Module):
    """O modelo inteiro: embedding, L blocos de hoje (o BlocoConfiguravel da lição 08:
    Pre-LN, RMSNorm, GQA, SwiGLU, sem vieses), a RMSNorm final e a saída. Nenhuma
    posição somada na entrada: o RoPE gira Q e K dentro de cada atenção."""

    def __init__(self, camadas, d, h, kv, largura, vocab, base=10_000.0, eps=1e-5,
                 amarrada=False):
        super().__init__()
        sorteio = torch.empty(vocab, d).uniform_(-0.05, 0.05)   # o normal_ padrão custa 1 s
        self.embed = nn.Embedding(vocab, d, _weight=sorteio)   # de importações no 'meta'
        self.blocos = nn.ModuleList(L08.BlocoConfiguravel(d, h, kv, largura)
                                    for _ in range(camadas))
        self.norm = L08.normalizador("rmsnorm", d, False)
        for norma in [self.norm, *(n for b in self.blocos for n in (b.ln_1, b.ln_2))]:
            norma.eps = eps                              # o eps do config.json
        self.lm_head = None if amarrada else nn.Linear(d, vocab, bias=False)
        self.base, self.dh = base, d // h

    @classmethod
    def do_config(cls, c: dict):
        """Do config.json de um Llama (o dicionário): MHA ou GQA, amarrada ou não, a base do
        RoPE e o eps da RMSNorm. A base mora em rope_parameters (transformers 5) ou em
        rope_theta (os arquivos mais antigos, como o do Tucano)."""
        rope = c.get("rope_parameters") or {}
        return cls(c["num_hidden_layers"], c["hidden_size"], c["num_attention_heads"],
                   c.get("num_key_value_heads") or c["num_attention_heads"],
                   c["intermediate_size"], c["vocab_size"],
                   rope.get("rope_theta", c.get("rope_theta", 10_000.0)),
                   c.get("rms_norm_eps", 1e-6), bool(c.get("tie_word_embeddings", False)))

    def rotacao(self, inicio, T):
        """cos e sin do RoPE para as posições inicio .. inicio + T - 1, onde os pesos estão."""
        cos, sin = L08.tabela_rope(range(inicio, inicio + T), self.dh, self.base)  # 2 x (T, dh)
        return cos.to(self.embed.weight.device), sin.to(self.embed.weight.device)

    def cabeca(self, x):
        """A saída: a própria matriz (Tucano) ou o embedding transposto (amarrada)."""
        peso = self.embed.weight if self.lm_head is None else self.lm_head.weight
        return x @ peso.T                                # (B, T, V)

    def forward(self, ids, residuos=None):
        x = self.embed(ids)                              # (B, T, C)
        rot = self.rotacao(0, ids.shape[1])              # 2 x (T, dh)
        for bloco in self.blocos:
            x = bloco(x, rot)                            # (B, T, C)
            if residuos is not None:                     # o fluxo residual, bloco a bloco
                residuos.append(x)
        return self.cabeca(self.norm(x))                 # (B, T, V)


# A conta fechada da lição 08: por bloco, 2d² + 2d·kv·dh (atenção), 3d·largura (SwiGLU) e
# 2d (as normas); mais o embedding, a saída (se não for amarrada) e a norma final.
parametros_llama = L08.parametros_llama


# Os nomes do transformers (LlamaForCausalLM) para os nossos: o carregamento é esta tabela,
# a de um bloco vinda da lição 08 (a mesma que ela usa contra o LlamaDecoderLayer).
NOMES_BLOCO = L08.NOMES_LLAMA
NOMES_BORDA = {"embed.weight": "model.embed_tokens.weight", "norm.weight": "model.norm.weight",
               "lm_head.weight": "lm_head.weight"}


def nome_no_transformers(nome):
    """'blocos.3.attn.wq.weight' -> 'model.layers.3.self_attn.q_proj.weight'."""
    if nome.startswith("blocos."):
        _, i, resto = nome.split(".", 2)
        return f"model.layers.{i}.{NOMES_BLOCO[resto]}"
    return NOMES_BORDA[nome]


def nosso_llama(hf):
    """O nosso Llama com os pesos do LlamaForCausalLM `hf`, nome por nome, sem cópia:
    montado no 'meta' (só as formas) e cada parâmetro trocado pelo tensor de lá
    (assign=True); strict=True: um nome que falte ou sobre é erro."""
    with torch.device("meta"):
        nosso = Llama.do_config(hf.config.to_dict())
    deles = hf.state_dict()
    pesos = {nome: deles[nome_no_transformers(nome)] for nome in nosso.state_dict()}
    nosso.load_state_dict(pesos, strict=True, assign=True)
    return nosso.eval()


# ------------------------------------------------------------ o cache KV com RoPE e GQA
def atencao_com_cache(attn, x, rot, cache, camada):
    """A Atencao da lição 08 para os T tokens novos de x: Q e K girados na posição de
    cada um; o cache guarda K JÁ GIRADA (a rotação depende só da posição do token, que
    não muda) e só as kv cabeças de K/V: cada uma serve h/kv consultas (GQA)."""
    B, T, C = x.shape                                               # (B, T, C)
    q = attn.wq(x).view(B, T, attn.h, attn.dh).transpose(1, 2)      # (B, h, T, dh)
    k = attn.wk(x).view(B, T, attn.kv, attn.dh).transpose(1, 2)     # (B, kv, T, dh)
    v = attn.wv(x).view(B, T, attn.kv, attn.dh).transpose(1, 2)     # (B, kv, T, dh)
    q, k = L08.aplicar_rope(q, *rot), L08.aplicar_rope(k, *rot)
    if cache.k[camada] is not None:                                 # o passado, sem refazer
        k = torch.cat([cache.k[camada], k], dim=2)                  # (B, kv, S, dh)
        v = torch.cat([cache.v[camada], v], dim=2)                  # (B, kv, S, dh)
    cache.k[camada], cache.v[camada] = k, v
    S = k.shape[2]
    # o token novo i está na posição S - T + i: vê as chaves 0 .. S - T + i
    mascara = None if T == 1 else torch.ones(T, S, dtype=torch.bool,
                                             device=x.device).tril(S - T)  # (T, S)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mascara, enable_gqa=True)
    return attn.wo(y.transpose(1, 2).reshape(B, T, C))              # (B, T, C)


def passo(modelo, ids, cache):
    """Só os tokens novos `ids` (B, T) pelo modelo, nas posições que continuam o cache;
    devolve os logits da última posição, (B, V)."""
    x = modelo.embed(ids)                                           # (B, T, C)
    rot = modelo.rotacao(cache.tamanho, ids.shape[1])               # posições que continuam
    for i, bloco in enumerate(modelo.blocos):
        x = x + atencao_com_cache(bloco.attn, bloco.ln_1(x), rot, cache, i)
        x = x + bloco.mlp(bloco.ln_2(x))                            # (B, T, C)
    return modelo.cabeca(modelo.norm(x[:, -1]))                     # (B, V)


def novo_cache(modelo):
    """O CacheKV da lição 07, com uma cabeça por cabeça de K/V (não por consulta)."""
    return L07.CacheKV(len(modelo.blocos), modelo.blocos[0].attn.kv)


def gerar(modelo, ids, novos, prefixo=None, **amostragem):
    """O laço da lição 07 com o nosso cache: a frase inteira uma vez, depois um token por
    passo. prefixo: (cache, logits) de um passo() que já passou a frase, para não passá-la
    de novo. amostragem: temperatura, top_k, top_p, geradores (o escolher da 07)."""
    cache, logits = novo_cache(modelo), None
    if prefixo is not None:    # as mesmas chaves e valores (vistas): o cache de fora não cresce
        cache, logits = prefixo[0].primeiros(prefixo[0].tamanho), prefixo[1]
    with torch.no_grad():
        if logits is None:
            logits = passo(modelo, ids, cache)                      # (B, V)
        for i in range(novos):
            proximo = L07.escolher(logits, **amostragem)            # (B, 1)
            ids = torch.cat([ids, proximo], dim=1)                  # (B, T + 1)
            if i + 1 < novos:
                logits = passo(modelo, proximo, cache)              # só o token novo
    return ids


def bytes_do_cache_por_token(camadas, kv, dh, bytes_por_valor=4):
    """K e V de cada camada, só as cabeças de K/V: 2 x L x kv x dh x bytes."""
    return 2 * camadas * kv * dh * bytes_por_valor


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["Llama", "parametros_llama", "NOMES_BLOCO", "NOMES_BORDA", "nome_no_transformers",
           "nosso_llama", "atencao_com_cache", "passo", "novo_cache", "gerar",
           "bytes_do_cache_por_token"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import math
import re
import sys
import time

from comum import (ExperimentoPulado, ModeloIndisponivel, carregar_llama, confere, contar, dizer,
                   em_linhas, em_paralelo, inteiro, legivel, limite, montagem, num, pct, plural,
                   quebrar, tamanho, uma_thread)
from comum.carregar_gpt2 import carregar_tokenizador
from comum.dispositivo import anuncio, ou_sair

L01 = importar_licao("01_tokens")      # os parágrafos em português e inglês e o codificar
L11 = importar_licao("11_inducao")     # a tarefa de cópia e a busca pelas cabeças que copiam

TUCANO = carregar_llama.TUCANO
# A forma do Tucano-160m: o config.json do hub (Corrêa et al., 2025) e o cartão do modelo.
FORMA_160M = dict(camadas=12, d=768, h=12, kv=12, largura=3072, vocab=32_000, amarrada=False)
NO_CARTAO = 162_417_408               # "Size: 162,417,408 parameters" (o cartão do modelo)
TETO_K = 1e-5                         # as chaves do cache contra as giradas à mão
SORTEIO = dict(temperatura=0.8, top_k=40, top_p=0.9)   # as regras da lição 07
SORTEADOS = 16                        # tokens do texto sorteado (o guloso tem --novos)
BUSCA = dict(n=8, T=48, periodos=(8, 20))              # a tarefa da lição 11
MARGEM = 0.1                          # experimento 3: o imposto "cai" se a razão descer isto
# Os campos do config.json que dão a forma do modelo (sem um deles, o transformers poria um
# padrão dele, que pode não ser o dos pesos).
FORMA_NO_CONFIG = {"num_hidden_layers": "L, os blocos", "hidden_size": "d, a largura",
                   "num_attention_heads": "h, as cabeças", "vocab_size": "V, o vocabulário",
                   "intermediate_size": "a largura do SwiGLU"}


def preparar(args):
    """Antes dos experimentos: de onde veio o --modelo e onde rodar (--dispositivo).

    O LAB_MODELO das lições do GPT-2 não vale aqui quando aponta um GPT-2: a
    lição fica com o Tucano e diz por quê; outro LAB_MODELO vale, e a lição diz que o
    --modelo veio dele. Numa GPU, o float32 fica float32 de verdade (sem o TF32 da NVIDIA,
    que guarda só 10 bits da mantissa): a conferência dos logits é a mesma da CPU."""
    ambiente = getattr(args, "modelo_do_ambiente", None)
    if ambiente and ambiente[1]:
        dizer(quebrar(f"(A variável LAB_MODELO, {ambiente[0]}, aponta um GPT-2, o modelo das "
                      f"outras lições: aqui ela não vale, e esta usa o {args.modelo}. Para "
                      "outro Llama, use --modelo.)"))
    elif ambiente and args.modelo == ambiente[0]:
        dizer(quebrar(f"(O --modelo veio da variável LAB_MODELO: {ambiente[0]}.)"))
    args.dispositivo, motivo = ou_sair(args.dispositivo, "lab/13_tucano.py", torch)
    linha = anuncio(args.dispositivo, motivo, torch)
    if linha:
        dizer(linha)
    if args.dispositivo == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


def modelos(licao):
    """(nosso Llama, LlamaForCausalLM, tokenizador), carregados uma vez por execução, pelo
    caminho do nosso GPT2 nas lições 06 e 07 (comum/montagem.py); os pesos do transformers
    vão para o --dispositivo antes de o nosso Llama apontar para eles."""
    dispositivo = getattr(licao.args, "dispositivo", "cpu")
    return montagem.modelos(licao, lambda hf: nosso_llama(hf.to(dispositivo)),
                            carregar_llama.carregar_llama, "o nosso Llama")


def esperar_a_gpu(dispositivo):
    """Uma GPU faz a conta enquanto o Python segue: antes de ler o relógio, espera por ela."""
    if dispositivo.type == "cuda":
        torch.cuda.synchronize()
    elif dispositivo.type == "mps":
        torch.mps.synchronize()


def passada(licao, nosso, ids):
    """A frase inteira pelo nosso Llama, sem cache: (logits (1, T, V), o fluxo residual
    [embedding, bloco 1, ..., bloco L], cada um (1, T, C)). Os experimentos 2, 4 e 5 leem
    a mesma passada (feita uma vez por execução)."""
    def passar():
        residuos = []
        with torch.no_grad():
            logits = nosso(ids, residuos)                             # (1, T, V)
            return logits, [nosso.embed(ids)] + residuos              # L + 1 x (1, T, C)

    return licao.uma_vez(("passada", licao.args.texto), passar)


def frase(licao, tok, hf, reserva=0, minimo=1):
    """(--texto, ids (1, T)) com o <s> que o tokenizador do modelo põe na frente (se põe),
    no dispositivo do modelo (as guardas do texto vazio e do longo demais são as das lições
    06 e 07). minimo: os tokens de que o experimento precisa."""
    texto, ids = montagem.tokenizar(licao, tok, hf.config.max_position_embeddings, reserva)
    T = ids.shape[1]                                                          # (1, T)
    if T < minimo:
        raise ExperimentoPulado(
            f"o --texto \"{texto}\" dá {plural(T, 'token')}"
            + (f", com o {tok.bos_token}" if com_bos(tok, ids) else "")
            + f": este experimento compara a primeira posição com as outras e precisa de "
            f"{minimo} ou mais. Use uma frase mais longa.")
    return texto, ids.to(hf.device)


def com_bos(tok, ids) -> bool:
    """A frase começa com o token de começo (o <s>) do tokenizador? O do Tucano o põe; um
    BPE de bytes como o do GPT-2, não."""
    return tok.bos_token_id is not None and int(ids[0, 0]) == tok.bos_token_id


# ------------------------------------------------------------ um token na tela
def de_bytes(tok) -> bool:
    """O tokenizador é um BPE de bytes, como o do GPT-2 (o espaço vira 'Ġ', um 'é' vira
    'Ã©' no vocabulário)? O decodificador do tokenizer.json diz: ByteLevel."""
    decodificador = getattr(getattr(tok, "backend_tokenizer", None), "decoder", None)
    return decodificador is not None and b'"ByteLevel"' in decodificador.__getstate__()


def bytes_da_peca(tok, i) -> bytes | None:
    """Os bytes que o token i escreve no texto (None: um id além do tokenizador, só num
    modelo de teste). Três formatos de vocabulário:
    - BPE de bytes (GPT-2, SmolLM2...): cada caractere da peça é um byte, pela tabela da
      lição 01 (bytes_do_token: 'Ġda' -> b' da');
    - o do Llama e do Tucano (sentencepiece): '▁' é o espaço, e '<0xC3>' é o byte C3 (o
      "byte fallback", para o que não está no vocabulário);
    - um token especial (<s>, </s>) aparece como ele é."""
    peca_ = tok.convert_ids_to_tokens(int(i))
    if peca_ is None:
        return None
    if int(i) in tok.all_special_ids:
        return peca_.encode("utf-8")
    if de_bytes(tok):
        try:
            return L01.bytes_do_token(tok, i)
        except KeyError:                 # um token acrescentado, fora da tabela de bytes
            return peca_.encode("utf-8")
    byte = re.fullmatch(r"<0x([0-9A-Fa-f]{2})>", peca_)
    if byte:
        return bytes([int(byte[1], 16)])
    return peca_.replace("\u2581", " ").encode("utf-8")


def peca(tok, i, limite_=14) -> str:
    """O token i como a lição 01 mostra um token: o espaço como '·', um pedaço de caractere
    (meio 'ç') como \\xNN. Todo token que a lição põe na tela passa por aqui."""
    bruto = bytes_da_peca(tok, i)
    return f"<{int(i)}>" if bruto is None else legivel(bruto, limite_)


# ------------------------------------------------------------ a forma, em palavras
def tipo_de_atencao(h, kv) -> str:
    """MHA (uma cabeça de K/V por consulta), MQA (uma só para todas) ou GQA (grupos)."""
    return "MHA" if kv == h else "MQA" if kv == 1 else "GQA"


def quem_serve_quem(h, kv) -> str:
    tipo = tipo_de_atencao(h, kv)
    return (f"{plural(kv, 'cabeça')} de K/V para {h} de consulta ({tipo}: "
            + {"MHA": "uma por consulta).", "MQA": f"uma só serve as {h}).",
               "GQA": f"cada uma serve {h // kv})."}[tipo])


def descrever(c: dict) -> str:
    h, kv = c["num_attention_heads"], c.get("num_key_value_heads") or c["num_attention_heads"]
    rope = (c.get("rope_parameters") or {}).get("rope_theta", c.get("rope_theta", 10_000.0))
    return (f"L = {c['num_hidden_layers']}, d = {c['hidden_size']}, h = {h}, K/V = {kv} "
            f"({tipo_de_atencao(h, kv)}), SwiGLU {inteiro(c['intermediate_size'])},\nV = "
            f"{inteiro(c['vocab_size'])}, saída "
            f"{'amarrada ao embedding' if c.get('tie_word_embeddings') else 'própria'}, "
            f"base do RoPE {inteiro(rope)}, eps {c.get('rms_norm_eps', 1e-6):g}")


def contagem_por_parte(modelo) -> list[tuple[str, int]]:
    partes = {"embedding": 0, "atenção": 0, "SwiGLU": 0, "normas": 0, "saída": 0}
    for nome, p in modelo.named_parameters():
        parte = ("embedding" if nome.startswith("embed.") else "saída"
                 if nome.startswith("lm_head.") else "atenção" if ".attn." in nome
                 else "SwiGLU" if ".mlp." in nome else "normas")
        partes[parte] += p.numel()
    return list(partes.items())


# ============================================================ experimento 1
@LICAO.experimento(1)
def exp_modelo(licao):
    f = FORMA_160M
    dizer("Llama(camadas, d, h, kv, largura, vocab): embedding, L x BlocoConfiguravel\n"
          "(o da lição 08), a RMSNorm final e a saída. O Tucano-160m, no config.json\n"
          "do hub:")
    dizer(f"  Llama({f['camadas']}, {f['d']}, {f['h']}, {f['kv']}, {f['largura']}, "
          f"{f['vocab']}), saída própria\n")
    with torch.device("meta"):                          # só as formas: nenhum byte
        tucano = Llama(**f)
    dizer(f"  {'parte':<11}{'parâmetros':>13}")
    for parte, n in contagem_por_parte(tucano):
        dizer(f"  {parte:<11}{inteiro(n):>13}")
    contados = contar(tucano)
    fechada = parametros_llama(**f)
    dizer(f"  {'total':<11}{inteiro(contados):>13}  (contados no nosso Llama)")
    dizer(f"  {'':<11}{inteiro(fechada):>13}  (a conta da lição 08)")
    dizer(f"  {'':<11}{inteiro(NO_CARTAO):>13}  (o cartão do modelo no hub)")
    igual = licao.verificar(contados == fechada == NO_CARTAO, "Tucano-160m: três contas")
    dizer("As três contas dão o mesmo número." if igual else "As contas NÃO batem.")
    config = carregar_llama.ler_config(licao.args.modelo)
    if licao.args.modelo == TUCANO and config is None:
        dizer("\n(O config.json do Tucano ainda não está neste computador: o experimento 2\n"
              "diz como baixar o modelo.)")
        return
    if config is None:
        raise ExperimentoPulado(f"não achei o config.json de '{licao.args.modelo}' (nem "
                                "numa pasta, nem no cache do Hugging Face).")
    try:
        carregar_llama.conferir_config(licao.args.modelo, config)
    except ModeloIndisponivel as erro:
        raise ExperimentoPulado(str(erro)) from None
    faltam = [f"{campo} ({papel})" for campo, papel in FORMA_NO_CONFIG.items()
              if campo not in config]
    if faltam:
        raise ExperimentoPulado(
            f"o config.json de '{licao.args.modelo}' não diz {' nem '.join(faltam)}: a forma "
            "do modelo não está no arquivo (o transformers poria um padrão dele, que pode não "
            "ser o dos pesos). Grave o config.json de novo com save_pretrained().")
    dizer(f"\nO --modelo, {licao.modelo_curto}, lido do config.json dele:")
    dizer("  " + descrever(config).replace("\n", "\n  "))
    from transformers import LlamaConfig, LlamaForCausalLM

    with torch.device("meta"):
        nosso = Llama.do_config(config)
        deles = LlamaForCausalLM(LlamaConfig.from_dict(config))
    n_nosso, n_deles = contar(nosso), contar(deles)
    c = config
    n_fechada = parametros_llama(
        c["num_hidden_layers"], c["hidden_size"], c["num_attention_heads"],
        c.get("num_key_value_heads") or c["num_attention_heads"], c["intermediate_size"],
        c["vocab_size"], bool(c.get("tie_word_embeddings", False)))
    dizer(f"  nosso Llama {inteiro(n_nosso)}, conta da 08 {inteiro(n_fechada)}, "
          f"LlamaForCausalLM {inteiro(n_deles)}")
    ok = licao.verificar(n_nosso == n_fechada == n_deles, "parâmetros do --modelo")
    dizer("  As três contas dão o mesmo número." if ok else "  As contas NÃO batem.")


# ============================================================ experimento 2
def tabela_de_pesos(nosso, hf):
    """[(nosso nome, nome no transformers, forma, é o mesmo tensor?)] das bordas e do
    bloco 0; uma saída amarrada aponta para o embedding."""
    deles = hf.state_dict()
    linhas = []
    for nome, p in nosso.state_dict().items():
        if nome.startswith("blocos.") and not nome.startswith("blocos.0."):
            continue
        t = deles[nome_no_transformers(nome)]
        mesmo = p.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() \
            and torch.equal(p, t)
        linhas.append((nome, nome_no_transformers(nome), tuple(p.shape), mesmo))
    return linhas


def os_outros_blocos(L) -> str:
    """O que a tabela diz dos blocos que ela não mostra (ela mostra só o 0)."""
    return "" if L == 1 else "; o bloco 1: o mesmo" if L == 2 else \
        f"; os blocos 1 a {L - 1}: o mesmo"


@LICAO.experimento(2)
def exp_pesos(licao):
    nosso, hf, tok = modelos(licao)
    L = len(nosso.blocos)
    dizer("Cada peso do nosso Llama APONTA para o tensor de mesmo papel no\n"
          "LlamaForCausalLM (load_state_dict com assign=True): nenhuma cópia, nenhum\n"
          "transposto (o nn.Linear dos dois guarda (saída, entrada)).\n")
    licao.pausa("a tabela dos nomes")
    dizer(f"  {'nosso':<22}{'no transformers':<35}forma")
    for nome, deles, forma, mesmo in tabela_de_pesos(nosso, hf):
        ok = licao.verificar(mesmo, f"{nome} = {deles}, mesma memória")
        deles = deles.replace("model.layers.0.", "…0.")
        dizer(f"  {nome.replace('blocos.0.', '…0.'):<22}{deles:<35}"
              f"{' x '.join(map(str, forma))}{'' if ok else '  (NÃO)'}")
    dizer(f"  (…0. = blocos.0. e model.layers.0.{os_outros_blocos(L)})")
    usados = {nome_no_transformers(n) for n in nosso.state_dict()}
    sobram = [n for n in hf.state_dict() if n not in usados
              and not (n == "lm_head.weight" and nosso.lm_head is None)]
    amarrada = nosso.lm_head is None
    licao.verificar(not sobram, "todo peso do transformers entrou no nosso Llama")
    dizer(f"Pesos do transformers que ficaram de fora: {len(sobram)}."
          + ("\n(A saída amarrada é o próprio embedding: nenhum lm_head a mais.)"
             if amarrada else ""))
    enderecos = {q.untyped_storage().data_ptr() for q in hf.parameters()}
    novos = sum(p.untyped_storage().nbytes() for p in nosso.parameters()
                if p.untyped_storage().data_ptr() not in enderecos)
    licao.verificar(novos == 0, "o nosso Llama não aloca pesos próprios")
    pesos = sum(p.numel() * p.element_size() for p in hf.parameters())
    dizer(f"Memória nova dos nossos pesos: {inteiro(novos)} bytes (os do transformers: "
          f"{tamanho(pesos)}).\n")
    texto, ids = frase(licao, tok, hf)
    with torch.no_grad():
        deles = hf(ids).logits                                  # (1, T, V)
    nossos, _ = passada(licao, nosso, ids)                      # (1, T, V)
    delta, escala = float((nossos - deles).abs().max()), float(deles.abs().max())
    ok = licao.verificar(confere(delta, escala), "logits = os do LlamaForCausalLM")
    dizer(quebrar(f"A frase \"{texto}\": {plural(ids.shape[1], 'token')}"
                  + (f" (com o {tok.bos_token} do começo)." if com_bos(tok, ids) else ".")))
    dizer(f"Maior |logit| do transformers: {num(escala, 1)}. Maior |diferença| para os "
          f"nossos:\n{limite(delta, 1e-4 * max(1.0, escala))} (o teto: 1e-4 x o maior |logit|"
          f", o arredondamento do float32): {'confere' if ok else 'NÃO confere'}.")
    p, i = nossos[0, -1].softmax(-1).topk(3)
    dizer("Os 3 mais prováveis depois da frase: " + ", ".join(
        f"{peca(tok, j)} {pct(float(q))}" for q, j in zip(p, i)))


# ============================================================ experimento 3
def palavras_e_tokens(codificar, textos):
    """(palavras, tokens) do texto: os parágrafos unidos por uma quebra de linha, como no
    experimento 5 da lição 01."""
    texto = "\n".join(textos)
    return len(texto.split()), len(codificar(texto))


def veredito_do_imposto(r_gpt2, r_mod) -> str:
    """O que a razão de tokens português/inglês do modelo diz contra a do GPT-2: cai (pelo
    menos MARGEM abaixo), se inverte (cai e passa para baixo de 1, onde a do GPT-2 estava
    acima: o inglês é que sai mais caro) ou não cai."""
    if r_mod < r_gpt2 - MARGEM and r_mod < 1 <= r_gpt2:
        return (f"o imposto de {num(r_gpt2, 2)}x do GPT-2 se inverte: com este tokenizador, o "
                f"português sai mais barato que o inglês ({num(r_mod, 2)}x).")
    if r_mod < r_gpt2 - MARGEM:
        return f"o imposto do português cai de {num(r_gpt2, 2)}x para {num(r_mod, 2)}x."
    return (f"o imposto do português não cai ({num(r_gpt2, 2)}x no GPT-2, {num(r_mod, 2)}x "
            f"aqui; para cair, {num(MARGEM, 1)} ou mais): este tokenizador não aprendeu "
            "português melhor.")


@LICAO.experimento(3)
def exp_tokens(licao):
    try:
        gpt2 = carregar_tokenizador(licao.args.gpt2)
    except ModeloIndisponivel as erro:
        gpt2 = None
        falta_gpt2 = str(erro)
    try:
        _, _, tok = modelos(licao)
    except ExperimentoPulado:
        if gpt2 is None:
            raise
        tok = None
    tokenizadores = []                   # (nome, tokenizador, texto -> ids sem especiais)
    if gpt2 is not None:
        tokenizadores.append(("GPT-2 (BPE)", gpt2, lambda t: L01.codificar(gpt2, t)))
    if tok is not None:
        tokenizadores.append((licao.modelo_curto[:14], tok,
                              lambda t: tok(t, add_special_tokens=False)["input_ids"]))
    dizer("Os três parágrafos da lição 01, em português e em inglês (só os tokens do\n"
          "texto, sem os especiais):\n")
    dizer(f"  {'tokenizador':<15}{'língua':<11}{'palavras':>8}{'tokens':>8}"
          f"{'tokens/palavra':>16}")
    tokens, por_palavra = {}, {}
    for nome, _, codificar in tokenizadores:
        for lingua, textos in (("português", L01.PORTUGUES), ("inglês", L01.INGLES)):
            palavras, n = palavras_e_tokens(codificar, textos)
            tokens[nome, lingua], por_palavra[nome, lingua] = n, n / palavras
            dizer(f"  {nome:<15}{lingua:<11}{palavras:>8}{n:>8}{num(n / palavras, 2):>16}")
    # o imposto da lição 01: tokens do texto em português / tokens da tradução em inglês
    razoes = {nome: tokens[nome, "português"] / tokens[nome, "inglês"]
              for nome, _, _ in tokenizadores}
    dizer()
    dizer(quebrar("Razão de tokens português/inglês (o imposto, como a lição 01 o mede): "
                  + "; ".join(f"{nome} {num(r, 2)}" for nome, r in razoes.items()) + "."))
    if len(tokenizadores) < 2:
        falta = falta_gpt2 if gpt2 is None else "o modelo não carregou"
        raise ExperimentoPulado("falta um dos tokenizadores para a comparação: "
                                + falta.splitlines()[0])
    (n_gpt2, r_gpt2), (n_mod, r_mod) = razoes.items()
    pt_gpt2, pt_mod = por_palavra[n_gpt2, "português"], por_palavra[n_mod, "português"]
    dizer(quebrar(f"Em português, {num(pt_mod, 2)} tokens por palavra aqui contra "
                  f"{num(pt_gpt2, 2)} no GPT-2. Pela razão de tokens, "
                  f"{veredito_do_imposto(r_gpt2, r_mod)}"))
    amostra = licao.args.texto
    palavras = len(amostra.split())
    for nome, tokenizador, codificar in tokenizadores if palavras else []:
        ids = codificar(amostra)
        dizer(f"\n{nome}, {plural(len(ids), 'token')} ({plural(palavras, 'palavra')}, "
              f"{num(len(ids) / palavras, 2)} por palavra):")
        dizer(em_linhas([peca(tokenizador, i) for i in ids]))


# ============================================================ experimento 4
@LICAO.experimento(4)
def exp_geracao(licao):
    nosso, hf, tok = modelos(licao)
    with uma_thread():
        geracao(licao, nosso, hf, tok)


def geracao(licao, nosso, hf, tok):
    n = licao.args.novos
    texto, ids = frase(licao, tok, hf, reserva=n)
    T = ids.shape[1]
    a = nosso.blocos[0].attn
    cache = novo_cache(nosso)
    inicio = time.perf_counter()
    with torch.no_grad():
        logits = passo(nosso, ids, cache)                             # (1, V)
        esperar_a_gpu(ids.device)
        t_frase = time.perf_counter() - inicio
        x = nosso.blocos[0].ln_1(nosso.embed(ids))                    # (1, T, C)
        k_crua = a.wk(x).view(1, T, a.kv, a.dh).transpose(1, 2)       # (1, kv, T, dh)
        k_girada = L08.aplicar_rope(k_crua, *nosso.rotacao(0, T))
    inteiro_sem_cache = passada(licao, nosso, ids)[0][:, -1]          # (1, V)
    dizer(quebrar(f"A frase \"{texto}\" ({plural(T, 'token')}) passa uma vez; o cache "
                  "guarda, por camada:"))
    dizer(f"  K e V de forma {tuple(cache.k[0].shape)} = (B, cabeças de K/V, tokens, d_h):\n"
          f"  {quem_serve_quem(a.h, a.kv)}")
    girada = float((cache.k[0] - k_girada).abs().max())
    crua = float((cache.k[0] - k_crua).abs().max())
    licao.verificar(girada < TETO_K, "o cache guarda K já girada")
    separa = crua > 100 * TETO_K        # a chave crua bem longe: a conferência distingue
    dizer(quebrar(f"Bloco 1, K do cache contra K girada à mão: {limite(girada, TETO_K)}; "
                  f"contra K sem girar: {num(crua, 3) if separa else limite(crua, TETO_K)}. "
                  + ("O cache guarda a chave JÁ GIRADA pela posição dela." if separa else
                     "Aqui as duas quase não diferem (na posição 0 o ângulo é 0, e girar não "
                     "muda nada): esta conferência não as separa. Use uma frase de 2 tokens "
                     "ou mais.")))
    delta = float((logits - inteiro_sem_cache).abs().max())
    ok = licao.verificar(confere(delta, float(inteiro_sem_cache.abs().max())),
                         "logits com cache = sem cache")
    dizer(f"Logits do último token, com cache contra a frase inteira de novo: "
          f"{limite(delta, 1e-4 * max(1.0, float(inteiro_sem_cache.abs().max())))}"
          f"{'' if ok else ' (NÃO confere)'}.\n")
    licao.pausa(f"{n} tokens gulosos, nós contra o generate()")
    from transformers import GenerationConfig

    regra = GenerationConfig(max_new_tokens=n, do_sample=False, eos_token_id=[],
                             pad_token_id=0)              # [] = não para no </s>, como o nosso
    # Só a regra acima: o generate() preencheria o que ela deixa vazio com o
    # generation_config.json da pasta do modelo (o do Tucano pede repetition_penalty 1,2,
    # top_k e top_p), e a gulosa dele deixaria de ser a nossa. Um GenerationConfig novo no
    # modelo não traz nada da pasta.
    hf.generation_config = GenerationConfig()
    # o sorteio com um gerador no dispositivo dos logits (o torch.multinomial pede os dois
    # no mesmo lugar): na GPU, o texto sorteado é outro que na CPU, com a mesma semente
    gerador = torch.Generator(device=ids.device).manual_seed(licao.args.semente)

    def nossa_gulosa():        # a partir da frase já no cache (o tempo dela entra na conta)
        inicio = time.perf_counter()
        ids_ = gerar(nosso, ids, n, prefixo=(cache, logits))
        esperar_a_gpu(ids.device)
        return ids_[0, T:], t_frase + time.perf_counter() - inicio

    def a_do_generate():
        inicio = time.perf_counter()
        with torch.no_grad():
            ids_ = hf.generate(ids, attention_mask=torch.ones_like(ids), generation_config=regra)
        esperar_a_gpu(ids.device)
        return ids_[0, T:], time.perf_counter() - inicio

    def sorteada():
        return gerar(nosso, ids, min(n, SORTEADOS), prefixo=(cache, logits),
                     geradores=[gerador], **SORTEIO)[0, T:]

    geracoes = [nossa_gulosa, a_do_generate, sorteada]
    if ids.device.type == "cpu":
        # as três ao mesmo tempo, cada uma com uma thread de conta (um passo de um token é
        # pequeno demais para repartir): o sistema divide os núcleos entre elas, e os dois
        # tempos impressos, medidos lado a lado, continuam comparáveis
        (nossos, t_nosso), (deles, t_deles), sorteados = em_paralelo(geracoes, threads=3)
    else:      # numa GPU, uma de cada vez: a placa é uma só, e cada tempo é só o dela
        (nossos, t_nosso), (deles, t_deles), sorteados = [g() for g in geracoes]
    iguais = int((nossos[:len(deles)] == deles[:len(nossos)]).sum())
    ok = licao.verificar(len(deles) == n and torch.equal(nossos, deles),
                         "gulosa com o nosso cache = generate()")
    dizer(f"Gulosa, {n} tokens novos com o nosso cache ({num(t_nosso, 1)} s) e com o "
          f"generate()\ndo transformers ({num(t_deles, 1)} s): {iguais} de {n} iguais, na "
          f"ordem: {'os mesmos tokens' if ok else 'NÃO são os mesmos'}.")
    dizer("Os tokens gerados:")
    dizer(em_linhas([peca(tok, i) for i in nossos]))
    dizer(f"\nSorteado como na lição 07 (temperatura {num(SORTEIO['temperatura'], 1)}, "
          f"top-k {SORTEIO['top_k']}, top-p {num(SORTEIO['top_p'], 1)}, semente "
          f"{licao.args.semente}):")
    dizer(em_linhas([peca(tok, i) for i in sorteados]))
    licao.pausa("o cache por token: GPT-2, este modelo e o Llama 3 8B")
    medido = cache.bytes() / T
    L, kv, dh = len(nosso.blocos), a.kv, a.dh
    linhas = [("GPT-2 (124M)", 12, 12, 64, 4), (licao.modelo_curto[:14], L, kv, dh, 4),
              ("Llama 3 8B", 32, 8, 128, 2)]
    dizer(f"\nO cache por token: 2 (K e V) x L x cabeças de K/V x d_h x bytes por número.")
    dizer(f"  {'modelo':<15}{'L':>4}{'K/V':>5}{'d_h':>5}{'bytes':>6}{'por token':>14}")
    for nome, l_, k_, d_, b_ in linhas:
        por_token = bytes_do_cache_por_token(l_, k_, d_, b_)
        dizer(f"  {nome:<15}{l_:>4}{k_:>5}{d_:>5}{b_:>6}{inteiro(por_token):>14}")
    conta = bytes_do_cache_por_token(L, kv, dh, 4)
    ok = licao.verificar(medido == conta, "bytes do cache por token = a conta")
    dizer(f"O cache deste modelo, medido depois da frase: {inteiro(int(medido))} bytes por "
          f"token:\n{'a conta' if ok else 'NÃO é a conta'}. O GPT-2 em float32, como aqui; o "
          "Llama 3 8B em fp16,\ncomo na lição 08 (GQA: 8 cabeças de K/V para 32 de consulta).")


# ============================================================ experimento 5
@LICAO.experimento(5)
def exp_dentro(licao):
    nosso, hf, tok = modelos(licao)
    texto, ids = frase(licao, tok, hf, minimo=2)
    logits, estados = passada(licao, nosso, ids)                      # L + 1 x (1, T, C)
    final = logits[0, -1]                                             # (V,)
    with torch.no_grad():
        normas = [s[0].norm(dim=-1) for s in estados]                 # L + 1 x (T,)
        lente = [nosso.cabeca(nosso.norm(s[0, -1])).softmax(-1) for s in estados]  # (V,)
    alvo = int(final.argmax())
    primeira = (f"o {tok.bos_token} do começo" if com_bos(tok, ids) else
                f"o token {peca(tok, ids[0, 0])}, o primeiro da frase")
    dizer(quebrar(f"A frase \"{texto}\", {plural(ids.shape[1], 'token')}. Depois de cada "
                  "bloco: a norma do fluxo residual (a média nas posições, fora a primeira, e "
                  f"na primeira, {primeira}) e o logit lens (a RMSNorm final e a saída "
                  "aplicadas ali, na última posição).") + "\n")
    licao.pausa("a tabela, bloco a bloco")
    dizer(f"  {'depois de':<11}{'norma':>9}{'na 1ª':>9}  {'lens: top-1':<16}{'prob.':>7}"
          f"  {'final: posto':>12}")
    for i, (n, p) in enumerate(zip(normas, lente)):
        rotulo = "embedding" if i == 0 else f"bloco {i}"
        posto = int((p > p[alvo]).sum()) + 1
        dizer(f"  {rotulo:<11}{num(float(n[1:].mean()), 1):>9}{num(float(n[0]), 1):>9}  "
              f"{peca(tok, int(p.argmax())):<16}{pct(float(p.max())):>7}  {posto:>12}")
    cresce = float(normas[-1][1:].mean() / normas[0][1:].mean())
    dizer()
    dizer(quebrar(f"A norma vai de {num(float(normas[0][1:].mean()), 1)} no embedding a "
                  f"{num(float(normas[-1][1:].mean()), 1)} no último bloco: "
                  + (f"cresce {num(cresce, 1)} vezes, como no GPT-2 da lição 05 (o Pre-LN só "
                     "soma no fluxo)." if cresce > 1.5 else
                     f"x {num(cresce, 2)}, quase parada: os blocos deste modelo somam pouco.")))
    chegou = next((i for i in range(len(lente)) if all(int(p.argmax()) == alvo
                                                       for p in lente[i:])), len(lente) - 1)
    if chegou == 0:
        fim = "desde o embedding: os blocos não mudam o primeiro lugar."
    elif chegou < len(lente) - 1:
        fim = f"desde o bloco {chegou} e não sai mais: a resposta se forma no caminho."
    else:
        fim = f"só no bloco {chegou}, o último: a resposta aparece no fim."
    dizer(quebrar(f"O token final, {peca(tok, alvo)}, é o top-1 da lente {fim}"))


# ============================================================ experimento 6
@torch.no_grad()
def pesos_de_atencao(modelo, ids):
    """(pesos de atenção de todas as cabeças (L, B, h, T, T), logits (B, T, V)) numa passada:
    o forward do Llama, bloco a bloco, refazendo Q e K da entrada de cada atenção (a RMSNorm
    do bloco e a rotação)."""
    x = modelo.embed(ids)                                             # (B, T, C)
    B, T, _ = x.shape
    rot = modelo.rotacao(0, T)                                        # 2 x (T, dh)
    futuro = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)   # (T, T)
    pesos = []
    for bloco in modelo.blocos:
        attn, entrada = bloco.attn, bloco.ln_1(x)                     # (B, T, C)
        q = attn.wq(entrada).view(B, T, attn.h, attn.dh).transpose(1, 2)    # (B, h, T, dh)
        k = attn.wk(entrada).view(B, T, attn.kv, attn.dh).transpose(1, 2)   # (B, kv, T, dh)
        q, k = L08.aplicar_rope(q, *rot), L08.aplicar_rope(k, *rot)
        k = k.repeat_interleave(attn.h // attn.kv, dim=1)             # (B, h, T, dh)
        notas = q @ k.transpose(-2, -1) / math.sqrt(attn.dh)          # (B, h, T, T)
        pesos.append(notas.masked_fill(futuro, float("-inf")).softmax(-1))
        x = bloco(x, rot)                                             # (B, T, C)
    return torch.stack(pesos), modelo.cabeca(modelo.norm(x))          # (L, B, h, T, T), (B, T, V)


def tokens_comuns(tok, V):
    """Os ids que não são especiais (<s>, <unk>...) nem bytes soltos (<0x41>)."""
    return torch.tensor(sorted(i for t, i in tok.get_vocab().items()
                               if i < V and not (t.startswith("<") and t.endswith(">"))))


@LICAO.experimento(6)
def exp_inducao(licao):
    nosso, _, tok = modelos(licao)
    with uma_thread():
        busca_de_cabecas(nosso, tok, licao.args.semente)


def busca_de_cabecas(nosso, tok, semente):
    comuns = tokens_comuns(tok, nosso.embed.num_embeddings)
    n, T, periodos = BUSCA["n"], BUSCA["T"], BUSCA["periodos"]
    gerador = torch.Generator().manual_seed(semente + 5)
    indices, p = L11.sequencias(n, gerador, periodos, T, len(comuns))          # (n, T)
    onde = nosso.embed.weight.device
    ids, p = comuns[indices].to(onde), p.to(onde)                             # (n, T), (n,)
    dizer(quebrar(f"A tarefa da lição 11: {n} sequências de {T} tokens, um prefixo de "
                  f"{periodos[0]} a {periodos[1]} tokens sorteados entre os "
                  f"{inteiro(len(comuns))} tokens comuns do vocabulário, repetido até o fim. "
                  "Pedaços de palavras ao acaso: nenhum texto que o modelo tenha lido.\n"))

    def sequencia(x, q):       # (1, T) de período q: as notas das cabeças e a perda
        pesos, logits = pesos_de_atencao(nosso, x)           # (L, 1, h, T, T), (1, T, V)
        return (L11.notas_de_inducao(pesos, q), L11.notas_de_token_anterior(pesos),  # (L, h)
                F.cross_entropy(logits[0, :-1], x[0, 1:], reduction="none"))        # (T - 1,)

    # uma sequência por vez (os logits de todas juntas, com V = 32.000, passam de 90 MB), duas
    # ao mesmo tempo, uma thread de conta cada; as somas, na ordem das sequências
    feitas = em_paralelo([lambda x=x, q=q: sequencia(x, q)
                          for x, q in zip(ids.split(1), p.split(1))])
    notas, anteriores, cada = 0, 0, []
    for (inducao, anterior, perda), q in zip(feitas, p.split(1)):
        notas = notas + inducao * float(T - q) / float((T - p).sum())        # (L, h)
        anteriores = anteriores + anterior / n                                # (L, h)
        cada.append(perda)                                                    # (T - 1,)
    aleatoria, repetida = L11.perdas_por_parte(nosso, ids, p, torch.stack(cada))  # (n, T-1)
    L, h = notas.shape
    # a conclusão da busca é a da lição 11: as maiores notas, quantas passam, se copia
    maiores_i, maiores_a, fortes, copia = L11.quem_copia(notas, anteriores, aleatoria, repetida)
    for titulo, maiores in (("indução", maiores_i), ("token anterior", maiores_a)):
        dizer(f"Nota de {titulo}, as maiores (bloco.cabeça, como na lição 11):")
        dizer("  " + "  ".join(f"{i}.{j} {num(nota, 2)}" for i, j, nota in maiores))
    dizer(f"Cabeças com nota de indução > {num(L11.SUBIU, 1)}: {fortes} de {L * h}.")
    V = nosso.embed.num_embeddings
    dizer(f"Perda: parte ao acaso {num(aleatoria, 2)}, parte repetida {num(repetida, 2)} "
          f"(ln V = {num(math.log(V), 2)}).")
    dizer(quebrar("Na parte repetida a perda cai a menos da metade: o modelo copia, como "
                  "as cabeças de indução da lição 11 fazem, num modelo que leu quase só "
                  "português." if copia else "A perda repetida não cai à metade da outra: "
                  "este modelo não copia sequências ao acaso."))


if __name__ == "__main__":
    preparar(LICAO.args)
    sys.exit(LICAO.rodar())
