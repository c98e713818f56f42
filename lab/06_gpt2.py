"""Lição 06 · O GPT-2 inteiro, de 124M a 1,5B de parâmetros (leia junto: apostilas/06_gpt2.md)
1. Monte o GPT-2 com o Bloco: do texto à próxima palavra
2. Carregue os pesos reais: os mesmos logits do transformers
3. Gerando texto com o nosso GPT-2
4. Do gpt2 ao gpt2-xl: só L, d e h mudam
5. Um modelo maior de verdade (--modelo gpt2-medium)"""
from comum import Licao, importar_licao, opcao, plural, texto_utf8

LICAO = Licao.da_docstring(__doc__, usa_gpt2={1, 2, 3, 5}, opcoes=[
    opcao("--texto", texto_utf8('--texto "O gato subiu no"'), "The cat sat on the",
          'frase de entrada dos experimentos 1, 2, 3 e 5 (padrão: "The cat sat on the")',
          '"FRASE"'),
    opcao("--codigo", "flag", None, "mostra o código do modelo inteiro (as peças das lições "
          "03 a 06, lidas dos arquivos, com o arquivo e a linha de cada uma) e sai"),
])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch
from torch import nn

Bloco = importar_licao("05_block").Bloco  # a peça da lição 05, sem cópia


# ============================================================ a peça
class GPT2(nn.Module):
    """O GPT-2 inteiro: wte + wpe, L blocos iguais, ln_f e a cabeça (o wte)."""

    def __init__(self, camadas=12, d=768, h=12, vocab=50257, posicoes=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)       # um vetor por token
        self.wpe = nn.Embedding(posicoes, d)    # um vetor por posição
        self.h = nn.ModuleList(Bloco(d, h) for _ in range(camadas))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)   # o Pre-LN deixa a saída crua
        if not self.wte.weight.is_meta:         # no meta, nada a sortear
            self.iniciar_como_gpt2()

    def iniciar_como_gpt2(self):
        """Os pesos iniciais do GPT-2 (Radford et al., 2019; o código da
        OpenAI): matrizes e embeddings N(0; 0,02), vieses 0, ganhos 1; as 2L
        projeções que somam no fluxo residual (attn.c_proj, mlp.c_proj) com
        desvio 0,02/raiz(2L). Um modelo novo começa com perda ~ ln V."""
        residual = 0.02 / (2 * len(self.h)) ** 0.5
        for nome, p in self.named_parameters():
            if p.dim() == 2:                    # matrizes e embeddings
                desvio = residual if nome.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, desvio)
            elif nome.endswith("bias"):
                nn.init.zeros_(p)               # os ganhos ficam 1

    @classmethod
    def da_config(cls, config):
        return cls(config.n_layer, config.n_embd, config.n_head,
                   config.vocab_size, config.n_positions)

    def forward(self, ids, so_a_ultima=False):
        T = ids.shape[1]                        # ids: (B, T)
        posicoes = torch.arange(T, device=ids.device)
        x = self.wte(ids) + self.wpe(posicoes)  # (B, T, C)
        for bloco in self.h:
            x = bloco(x)                        # (B, T, C): a forma não muda
        x = self.ln_f(x)                        # (B, T, C)
        if so_a_ultima:                         # gerar só usa a última linha
            x = x[:, -1:]                       # (B, 1, C)
        return x @ self.wte.weight.T            # (B, T, V): a cabeça é o wte


def parametros_gpt2(camadas, d, vocab=50257, posicoes=1024) -> int:
    """N = V·d + P·d + L·(12d² + 13d) + 2d: wte, wpe, os L blocos e o ln_f (a cabeça
    amarrada não soma nada). Num bloco: c_attn d·3d + 3d, attn.c_proj d·d + d,
    c_fc d·4d + 4d, mlp.c_proj 4d·d + d, ln_1 e ln_2 2d cada."""
    por_bloco = 12 * d * d + 13 * d
    return vocab * d + posicoes * d + camadas * por_bloco + 2 * d


def pesos_para_o_nosso(hf) -> dict:
    """Os pesos do GPT2LMHeadModel com os nomes e as formas do nosso GPT2, sem copiar nada.

    O transformers guarda c_attn, c_fc e os c_proj como Conv1D, em (entrada, saída);
    nn.Linear guarda (saída, entrada). .t() devolve uma VIEW transposta: o mesmo
    armazenamento, lido em outra ordem (só os passos mudam, nenhum byte é copiado).
    A conta é a de pesos_gpt2.para_o_nosso (que as lições 05 e 10 usam), escrita aqui
    por extenso porque é o conceito desta lição (o exercício 4 mexe nesta linha)."""
    from transformers.pytorch_utils import Conv1D

    pesos = {}
    for nome_modulo, modulo in hf.transformer.named_modules():
        for nome, p in modulo.named_parameters(recurse=False):
            conv = isinstance(modulo, Conv1D) and nome == "weight"
            pesos[f"{nome_modulo}.{nome}"] = p.detach().t() if conv else p.detach()
    # lm_head.weight do transformers é o próprio wte (amarrado): nada a mais.
    return pesos


def carregar_pesos(nosso: GPT2, hf) -> GPT2:
    """Faz cada peso do nosso GPT2 APONTAR para o tensor do transformers (assign=True).

    Sem assign, load_state_dict copiaria os valores para dentro dos nossos tensores;
    com assign, o nosso parâmetro passa a ser o tensor (ou a view) do transformers.
    strict=True: um nome que falte ou sobre é erro, não um peso aleatório esquecido.
    Uma forma errada também é erro, dito aqui em português (o do PyTorch é longo)."""
    pesos, formas = pesos_para_o_nosso(hf), nosso.state_dict()
    erradas = [n for n, t in pesos.items() if n in formas and t.shape != formas[n].shape]
    if erradas:
        n = erradas[0]
        raise ValueError(
            f"forma errada em {plural(len(erradas), 'peso')} (faltou transpor?);\n"
            f"o primeiro, {n}, veio {tuple(pesos[n].shape)},\n"
            f"e o nosso GPT2 espera {tuple(formas[n].shape)}.")
    nosso.load_state_dict(pesos, strict=True, assign=True)
    return nosso


def nosso_gpt2(hf) -> GPT2:
    """O nosso GPT2 com os pesos de `hf`, sem uma segunda cópia e sem pesos aleatórios."""
    with torch.device("meta"):                         # só as formas: nenhum byte alocado
        nosso = GPT2.da_config(hf.config)
    return carregar_pesos(nosso, hf).eval()


def gerar_guloso(modelo, ids, novos, fim=None, ao_gerar=None):
    """Sempre o token mais provável; sem cache KV: recalcula a sequência toda a cada passo."""
    with torch.no_grad():
        for _ in range(novos):
            logits = modelo(ids, so_a_ultima=True)[:, -1]  # (B, V): só a última posição
            proximo = logits.argmax(-1, keepdim=True)      # (B, 1)
            ids = torch.cat([ids, proximo], dim=1)         # (B, T + 1)
            if ao_gerar:
                ao_gerar(ids)
            if fim is not None and int(proximo) == fim:
                break
    return ids


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["GPT2", "parametros_gpt2", "pesos_para_o_nosso", "carregar_pesos", "nosso_gpt2",
           "gerar_guloso"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import sys
import time

from comum import (TAMANHOS_GPT2, cientifico, comando, dizer, em_linhas, figuras, inteiro, num,
                   pct, quebrar, tamanho, token)
from comum.carregar_gpt2 import PREFIXO_HUB, estimar_memoria
from comum.console import citar, escritor
from comum.hub import memoria_disponivel
# o nosso GPT2 sobre os pesos carregados, contar, a tolerância (a 07 usa os mesmos)
from comum.montagem import BASE, FOLGA, TOLERANCIA, confere, contar, modelos, tokenizar

NOVOS_TOKENS = 16
PEQUENO = ("gpt2", PREFIXO_HUB + "gpt2")


def necessidade(pesos: float, copias: int = 1) -> float:
    """Bytes de memória que a lição precisa para pesos de `pesos` bytes (o que Licao.gpt2
    confere antes de carregar ou baixar, com margem=FOLGA e base=BASE)."""
    return FOLGA * copias * pesos + BASE


# ============================================================ experimento 1
def caminho(nosso: GPT2, ids):
    """O forward do GPT2 etapa por etapa, sem o lote: [(etapa, tensor, nota)] e os logits."""
    T = ids.shape[1]
    etapas = [("ids", ids[0], "um número por token")]
    e_tok = nosso.wte(ids)[0]                          # (T, C)
    e_pos = nosso.wpe(torch.arange(T))                 # (T, C)
    x = (e_tok + e_pos)[None]                          # (1, T, C)
    etapas += [("wte[ids]", e_tok, "embedding do token"),
               (f"wpe[0..{T - 1}]", e_pos, "embedding da posição"),
               ("x = wte[ids] + wpe", x[0], "o fluxo residual")]
    for i, bloco in enumerate(nosso.h):
        x = bloco(x)                                   # (1, T, C)
        if i < 2 or i == len(nosso.h) - 1:
            etapas.append((f"bloco {i + 1}", x[0], "x + atenção, x + MLP"))
        elif i == 2:
            etapas.append(("...", None, ""))
    x = nosso.ln_f(x)                                  # (1, T, C)
    logits = x @ nosso.wte.weight.T                    # (1, T, V)
    etapas += [("ln_f", x[0], "normalização final"),
               ("x @ wte^T", logits[0], "um logit por token"),
               ("softmax(última linha)", logits[0, -1].softmax(-1), "o próximo token")]
    return etapas, logits


@LICAO.experimento(1)
def exp_caminho(licao):
    nosso, hf, tok = modelos(licao, nosso_gpt2)
    cfg = hf.config
    texto, ids = tokenizar(licao, tok, cfg.n_positions)
    T = ids.shape[1]
    dizer(f"GPT2(camadas={cfg.n_layer}, d={cfg.n_embd}, h={cfg.n_head}, "
          f"vocab={cfg.vocab_size}, posicoes={cfg.n_positions}):")
    dizer(f"wte, wpe, {cfg.n_layer} x Bloco (o da lição 05), ln_f e o desembedding,\n"
          "que é o próprio wte transposto (a cabeça de saída amarrada).\n")
    fim = f"  ->  {plural(T, 'token')}:"
    dizer(f"Texto: {citar(texto, len('Texto: ') + len(fim))}{fim}")
    dizer(em_linhas([token(tok, i) for i in ids[0]]))
    dizer(em_linhas(["ids:"] + [str(i) for i in ids[0].tolist()]) + "\n")
    with torch.no_grad():
        etapas, logits = caminho(nosso, ids)
        direto = nosso(ids)
    licao.pausa("as formas, etapa por etapa")
    dizer("Formas, sem o lote (n = tokens, d = largura, V = vocabulário):")
    for nome, t, nota in etapas:
        dizer(f"  {nome:<22}{str(tuple(t.shape)) if t is not None else '':<12}{nota}".rstrip())
    igual = licao.verificar(torch.allclose(logits, direto, atol=1e-5),
                            "etapa por etapa = nosso(ids)")
    dizer(f"\nEtapa por etapa = nosso(ids)? {'sim' if igual else 'NÃO'}.")
    dizer("Cada linha dos logits prevê o token SEGUINTE àquela posição:")
    probs = direto[0].softmax(-1)                      # (T, V)
    p, i = probs.max(-1)
    for t in range(T) if T <= 10 else [*range(3), None, *range(T - 6, T)]:
        if t is None:
            dizer("  ...")
            continue
        dizer(f"  depois de {token(tok, ids[0, t]):<14} -> {token(tok, i[t]):<14} "
              f"{pct(float(p[t])):>7}")
    licao.pausa("os 5 mais prováveis na última posição")
    dizer("\nA distribuição que interessa para gerar é a da última posição. Os 5 mais")
    dizer(f"prováveis depois de {citar(texto, len('prováveis depois de :'))}:")
    p5, i5 = probs[-1].topk(5)
    for pi, ii in zip(p5.tolist(), i5.tolist()):
        barra = "#" * round(40 * pi / p5[0].item())
        dizer(f"  {token(tok, ii):<14} {pct(pi):>7}  {barra}")


# ============================================================ experimento 2
def logits_do_transformers(hf, ids):
    with torch.no_grad():
        return hf(ids).logits                          # (B, T, V)


def comparar_logits(nosso, hf, ids, deles=None):
    """(max |nossos logits - os do transformers|, maior |logit| do transformers);
    `deles`: os logits do transformers em `ids`, se já calculados."""
    deles = logits_do_transformers(hf, ids) if deles is None else deles
    with torch.no_grad():
        return float((nosso(ids) - deles).abs().max()), float(deles.abs().max())


def diferenca_logits(nosso, hf, ids, deles=None) -> float:
    return comparar_logits(nosso, hf, ids, deles)[0]


def frase_da_diferenca(delta, ok, tolerancia=TOLERANCIA, nome="logit") -> str:
    """A diferença como LIMITE quando confere (é arredondamento: os dígitos mudam de CPU
    para CPU); o número em si quando passa do limite (aí é um erro, não ruído).
    `ok` é o que licao.verificar devolveu para confere(delta, ...)."""
    teto = f"{cientifico(tolerancia, 0)} x o maior |{nome}|"
    return f"< {teto}: confere" if ok else f"= {cientifico(delta)}, acima de {teto}: NÃO confere"


def tabela_de_pesos(nosso, hf):
    """[(nome, tensor do transformers, o nosso (ou None), como ficou no nosso, confere)] das
    bordas e do bloco 0; confere: o valor e a memória são os do transformers (a cabeça:
    amarrada ao wte)."""
    from transformers.pytorch_utils import Conv1D

    linhas = []
    for nome, t in hf.transformer.named_parameters():
        if nome.startswith("h.") and not nome.startswith("h.0."):
            continue
        dono = hf.transformer.get_submodule(nome.rsplit(".", 1)[0])
        conv = isinstance(dono, Conv1D) and nome.endswith(".weight")
        esperado = t.t() if conv else t                # (entrada, saída) -> (saída, entrada)
        nosso_p = nosso.get_parameter(nome).detach()
        bate = (torch.equal(nosso_p, esperado)
                and nosso_p.untyped_storage().data_ptr() == t.untyped_storage().data_ptr())
        linhas.append((nome, t, nosso_p, "view transposta" if conv else "o mesmo tensor", bate))
    linhas.append(("lm_head.weight", hf.lm_head.weight, None, "amarrada",
                   hf.lm_head.weight is hf.transformer.wte.weight))
    return linhas


def armazenamentos(modelo) -> dict:
    """{endereço: bytes} dos blocos de memória onde moram os parâmetros do modelo."""
    return {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes()
            for p in modelo.parameters()}


def bytes_novos(nosso, hf) -> int:
    """Bytes de parâmetros do nosso GPT2 que NÃO são memória do modelo do transformers."""
    deles = armazenamentos(hf)
    return sum(n for ptr, n in armazenamentos(nosso).items() if ptr not in deles)


@LICAO.experimento(2)
def exp_pesos(licao):
    nosso, hf, tok = modelos(licao, nosso_gpt2)
    cfg = hf.config
    d, h, L = cfg.n_embd, cfg.n_head, cfg.n_layer
    dizer("Cada peso do nosso GPT2 APONTA para o peso de mesmo nome do transformers:\n"
          "load_state_dict(..., assign=True) troca o nosso tensor pelo deles, sem copiar.\n"
          "O transformers guarda c_attn, c_fc e os c_proj como Conv1D, em (entrada,\n"
          "saída); nn.Linear guarda (saída, entrada): esses quatro entram como view\n"
          "transposta, .t(), que lê a mesma memória em outra ordem.\n")
    licao.pausa("a tabela dos pesos, transformers x nosso GPT2")
    dizer(f"  {'peso':<23}{'transformers':<13}{'nosso GPT2':<13}no nosso")
    for nome, t_hf, t_nosso, tipo, bate in tabela_de_pesos(nosso, hf):
        ok = licao.verificar(bate, f"{nome} do nosso GPT2 = o do transformers, mesma memória")
        if tipo == "amarrada":
            acao = "é o wte" if ok else "NÃO amarrada"
        else:
            acao = tipo + ("" if ok else " (NÃO)")
        f_nosso = "-" if t_nosso is None else " x ".join(map(str, t_nosso.shape))
        dizer(f"  {nome:<23}{' x '.join(map(str, t_hf.shape)):<13}{f_nosso:<13}{acao}")
        if nome == "h.0.mlp.c_proj.bias" and L > 1:
            dizer(f"  h.1 a h.{L - 1}: o mesmo")
    novos = bytes_novos(nosso, hf)
    dizer(f"\nMemória nova que os pesos do nosso GPT2 ocupam: {inteiro(novos)} bytes\n(os do "
          f"transformers: {tamanho(sum(armazenamentos(hf).values()))}). Dois modelos, uma cópia.")
    licao.verificar(novos == 0, "o nosso GPT2 não aloca pesos próprios")
    licao.pausa("Q, K e V dentro do c_attn e a prova pelos logits")
    dizer(f"\nc_attn é a fusão de três matrizes: no transformers, colunas 0 a {d - 1} dão Q,\n"
          f"{d} a {2 * d - 1} dão K e {2 * d} a {3 * d - 1} dão V; cada uma com {h} cabeças de "
          f"{d // h}.\nA AtencaoMultiCabeca da lição 04 corta na mesma ordem: split em Q, K e V,\n"
          f"depois view (B, T, {h}, {d // h}) e transpose: a cabeça j fica com as colunas\n"
          f"j*{d // h} a j*{d // h}+{d // h - 1} de cada um.")
    bloco, bloco_hf = nosso.h[0], hf.transformer.h[0]
    x = torch.randn(1, 3, d)                           # (B, T, C)
    with torch.no_grad():
        q_nosso = bloco.attn.c_attn(x)[..., :d]        # (B, T, C)
        q_fatia = x @ bloco_hf.attn.c_attn.weight[:, :d] + bloco_hf.attn.c_attn.bias[:d]
    delta_q, escala_q = float((q_nosso - q_fatia).abs().max()), float(q_fatia.abs().max())
    ok_q = licao.verificar(confere(delta_q, escala_q, 1e-5), "Q do c_attn = a fatia de Q")
    dizer(f"Q do nosso c_attn contra x @ W[:, 0:{d}] + b[0:{d}], numa entrada x\n"
          f"aleatória: max |diferença| {frase_da_diferenca(delta_q, ok_q, 1e-5, 'Q')}.\n")
    texto, ids = tokenizar(licao, tok, cfg.n_positions)
    deles = logits_do_transformers(hf, ids)            # uma vez: a prova e o erro de propósito
    delta, escala = comparar_logits(nosso, hf, ids, deles)
    ok = licao.verificar(confere(delta, escala), "logits do nosso GPT2 = os do transformers")
    resto = f" ({ids.shape[1]} tokens x {cfg.vocab_size} do vocabulário;"
    dizer(f"Logits no texto {citar(texto, len('Logits no texto ') + len(resto))}{resto}\n"
          f"maior |logit| = {num(escala, 2)}):")
    dizer(quebrar(f"max |nosso - transformers| {frase_da_diferenca(delta, ok)}", recuo=2))
    dizer("  (a diferença é arredondamento de float32, cujos últimos dígitos mudam de\n"
          "  processador para processador: por isso aparece como limite, não como número)"
          if ok else "  (acima do limite não é arredondamento: algum peso entrou errado)")
    errado = delta_sem_transpor(nosso, hf, ids, deles)
    dizer(f"\nE se o nosso esquecesse de transpor h.0.attn.c_proj? Ele é quadrado "
          f"({d} x {d}),\nentão carrega sem erro nenhum; só o modelo fica errado:")
    dizer(f"  max |errado - transformers| = {cientifico(errado)} "
          f"({num(errado / (TOLERANCIA * max(1.0, escala)), 0)}x a tolerância)")
    dizer("Por isso o teste compara os logits, e não só as formas.")


def delta_sem_transpor(nosso, hf, ids, deles=None) -> float:
    """A diferença de logits com o c_proj da atenção do bloco 0 sem transpor (e desfaz).

    Troca o parâmetro por outro, o tensor do transformers como está (sem .t()): mudar o
    conteúdo no lugar mudaria também o modelo do transformers, que é a mesma memória."""
    linear = nosso.h[0].attn.c_proj
    certo = linear.weight
    cru = hf.transformer.h[0].attn.c_proj.weight.detach()         # (C, C) sem transpor
    linear.weight = nn.Parameter(cru, requires_grad=False)
    try:
        return diferenca_logits(nosso, hf, ids, deles)
    finally:
        linear.weight = certo                          # de volta ao certo


# ============================================================ experimento 3
def gerar_transformers(hf, ids, novos, fim=None):
    return hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=novos,
                       do_sample=False, pad_token_id=fim, eos_token_id=fim)


@LICAO.experimento(3)
def exp_gerar(licao):
    nosso, hf, tok = modelos(licao, nosso_gpt2)
    _, ids = tokenizar(licao, tok, hf.config.n_positions, reserva=NOVOS_TOKENS)
    fim = tok.eos_token_id
    T = ids.shape[1]
    dizer(f"Gulosa: a cada passo, o token mais provável; {NOVOS_TOKENS} tokens novos.\n")
    dizer("Nosso GPT2 (roda a sequência inteira de novo a cada token):")
    escrever = escritor(tok)
    escrever(ids)                                      # o texto de entrada
    inicio = time.perf_counter()
    nossos = gerar_guloso(nosso, ids, NOVOS_TOKENS, fim, escrever)
    dizer(f"\n  ({num(time.perf_counter() - inicio, 2)} s)")
    dizer("transformers, generate(do_sample=False) (guarda um cache KV):")
    inicio = time.perf_counter()
    deles = gerar_transformers(hf, ids, NOVOS_TOKENS, fim)
    t_deles = time.perf_counter() - inicio
    escrever = escritor(tok)                           # mesma quebra do nosso
    for k in range(T, deles.shape[1] + 1):
        escrever(deles[:, :k])
    dizer(f"\n  ({num(t_deles, 2)} s)\n")
    a, b = nossos[0, T:].tolist(), deles[0, T:].tolist()
    iguais = sum(x == y for x, y in zip(a, b))
    mesmos = licao.verificar(a == b, "gulosa do nosso GPT2 = generate() do transformers")
    dizer(f"Mesmos tokens? {'sim' if mesmos else 'NÃO'}: {iguais} de "
          f"{max(len(a), len(b))} ids gerados iguais.")
    dizer("O nosso recalcula tudo a cada token; o cache KV evita isso (lição 07).")


# ============================================================ experimento 4
ARTIGO_MILHOES = {"gpt2": 117, "gpt2-medium": 345, "gpt2-large": 762, "gpt2-xl": 1542}


def tamanhos():
    """Para os quatro tamanhos: config do transformers e as contagens, sem memória (meta)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.initialization import no_init_weights

    linhas = []
    for nome, (L, d, h) in TAMANHOS_GPT2.items():
        cfg = GPT2Config(n_layer=L, n_embd=d, n_head=h)
        # meta: só as formas, nenhum byte; no_init_weights: nenhum sorteio para jogar fora
        # (ele pula também o amarrar do lm_head ao wte: o tie_weights do transformers o faz)
        with torch.device("meta"), no_init_weights():
            nosso = GPT2.da_config(cfg)
            deles = GPT2LMHeadModel(cfg)
        deles.tie_weights()
        pecas = {"embeddings": contar(nosso.wte) + contar(nosso.wpe),
                 "atenção": sum(contar(b.attn) for b in nosso.h),
                 "MLP": sum(contar(b.mlp) for b in nosso.h),
                 "normas": sum(contar(b.ln_1) + contar(b.ln_2) for b in nosso.h)
                           + contar(nosso.ln_f)}
        total = contar(nosso)
        linhas.append({
            "nome": nome, "L": L, "d": d, "h": h, "vocab": cfg.vocab_size,
            "posicoes": cfg.n_positions, "bloco": contar(nosso.h[0]),
            "total": total, "transformers": contar(deles),
            "formula": parametros_gpt2(L, d, cfg.vocab_size, cfg.n_positions),
            "pecas": pecas, "fatias": {k: v / total for k, v in pecas.items()}})
    return linhas


def vocabulario_gpt1() -> int:
    from transformers import OpenAIGPTConfig

    return OpenAIGPTConfig().vocab_size


@LICAO.experimento(4)
def exp_tamanhos(licao):
    linhas = tamanhos()
    dizer("Os quatro GPT-2 montados com a MESMA classe GPT2 e o MESMO Bloco;\n"
          "só mudam três números da configuração (no meta device: sem memória).\n")
    dizer(f"  {'modelo':<12}{'L':>3}{'d':>6}{'h':>4}{'d/h':>5}{'por bloco':>13}{'total exato':>16}")
    for m in linhas:
        dizer(f"  {m['nome']:<12}{m['L']:>3}{m['d']:>6}{m['h']:>4}{m['d'] // m['h']:>5}"
              f"{inteiro(m['bloco']):>13}{inteiro(m['total']):>16}")
    bate = licao.verificar(
        all(m["total"] == m["transformers"] == m["formula"] for m in linhas),
        "contagem do nosso GPT2 = transformers = fórmula")
    por_bloco = licao.verificar(
        all(m["bloco"] == 12 * m["d"] ** 2 + 13 * m["d"] for m in linhas),
        "parâmetros por bloco = 12d² + 13d")
    dizer(f"\nNosso GPT2 = GPT2LMHeadModel do transformers = fórmula, nos quatro: "
          f"{'sim' if bate else 'NÃO'}.")
    dizer(f"Por bloco = 12d² + 13d, nos quatro: {'sim' if por_bloco else 'NÃO'}. "
          f"Cada cabeça de atenção tem d/h = "
          f"{' ou '.join(sorted({str(m['d'] // m['h']) for m in linhas}))}.\n")

    dizer(f"  {'modelo':<12}{'fp32':>11}{'fp16':>11}{'FLOPs/token':>13}"
          f"{'arredondado':>13}{'artigo':>8}")
    for m in linhas:
        N = m["total"]
        dizer(f"  {m['nome']:<12}{tamanho(4 * N):>11}{tamanho(2 * N):>11}"
              f"{cientifico(2 * N):>13}{str(round(N / 1e6)) + 'M':>13}"
              f"{str(ARTIGO_MILHOES[m['nome']]) + 'M':>8}")
    dizer("\nMemória = 4 bytes (fp32) ou 2 bytes (fp16) por parâmetro, só os pesos.\n"
          "FLOPs por token no forward ~ 2N: uma multiplicação e uma soma por peso.")
    extra = [m["L"] * m["posicoes"] * m["d"] / m["total"] for m in linhas]  # 2LnD / 2N
    cheio = inteiro(linhas[0]["posicoes"])
    dizer(f"Fora do 2N ficam Q x K e pesos x V da atenção: ~2 x L x n x d por token\n"
          f"(Kaplan et al., 2020); com o contexto cheio, n = {cheio}, somam "
          f"+{pct(extra[0])} no gpt2\ne +{pct(extra[-1])} no gpt2-xl.")
    licao.pausa("os números do artigo de 2019")
    v1 = vocabulario_gpt1()
    com_v1 = [parametros_gpt2(m["L"], m["d"], v1, m["posicoes"]) for m in linhas]
    artigo = [ARTIGO_MILHOES[m["nome"]] for m in linhas]
    dizer(f"\nO artigo do GPT-2 (2019) imprimiu {', '.join(f'{a}M' for a in artigo)}. "
          "Refazendo as\ncontas com o vocabulário do GPT-1 "
          f"({inteiro(v1)} tokens) no lugar de {inteiro(linhas[0]['vocab'])}:")
    for m, n, a in zip(linhas, com_v1, artigo):
        dizer(f"  {m['nome']:<12}{inteiro(n):>16}  ->  {str(round(n / 1e6)) + 'M':>6}"
              f"   (artigo: {a}M)")
    batem = [round(n / 1e6) for n in com_v1] == artigo
    dizer("Os quatro batem: o artigo parece ter contado com o vocabulário antigo." if batem
          else "Não batem: o vocabulário antigo não explica os números do artigo.")

    licao.pausa("onde moram os parâmetros")
    dizer("\nOnde moram os parâmetros (E = embeddings, A = atenção, M = MLP):")
    for m in linhas:                                   # 40 caracteres: o resto é do MLP
        f = m["fatias"]
        barra = "E" * round(40 * f["embeddings"]) + "A" * round(40 * f["atenção"])
        dizer(f"  {m['nome']:<12}|{barra.ljust(40, 'M')}|")
    dizer(f"\n  {'modelo':<12}{'embeddings':>11}{'atenção':>9}{'MLP':>8}{'normas':>8}")
    for m in linhas:
        f = [m["fatias"][k] for k in ("embeddings", "atenção", "MLP", "normas")]
        dizer(f"  {m['nome']:<12}{pct(f[0]):>11}{pct(f[1]):>9}{pct(f[2]):>8}{pct(f[3], 2):>8}")
    primeiro, ultimo = linhas[0], linhas[-1]
    dizer(f"\nOs embeddings crescem com d (V x d); os blocos, com L x d². Por isso a fatia\n"
          f"dos embeddings cai de {pct(primeiro['fatias']['embeddings'])} no {primeiro['nome']} "
          f"para {pct(ultimo['fatias']['embeddings'])} no {ultimo['nome']}.")
    if licao.quer_figuras:                             # poupa o import do matplotlib
        _figura_tamanhos(licao, linhas)


def _figura_tamanhos(licao, linhas):
    """As fatias em barras, em letra de projetor: milhões de parâmetros e % do total."""
    from matplotlib.ticker import FuncFormatter

    fig, (ax1, ax2) = figuras.figura(10, 4.4, margens=(1.75, 0.4, 1.2, 0.5), ncols=2,
                                     ajuste={"wspace": 0.06})
    nomes = [m["nome"] for m in linhas]
    normas = max(m["fatias"]["normas"] for m in linhas)
    rotulos = {"embeddings": "embeddings", "atenção": "atenção", "MLP": "MLP",
               "normas": f"normas (até {pct(normas, 2)})"}  # finas demais para ver
    for ax, chave, escala, eixo_x, titulo in (
            (ax1, "pecas", 1e-6, "milhões de parâmetros", "Parâmetros por peça"),
            (ax2, "fatias", 100, "% do total", "Fatia de cada peça")):
        base = [0.0] * len(linhas)                     # onde cada barra começa
        for peca, rotulo in rotulos.items():
            valores = [escala * m[chave][peca] for m in linhas]
            ax.barh(nomes, valores, left=base, label=rotulo)
            base = [a + b for a, b in zip(base, valores)]
        ax.set_xlabel(eixo_x, fontsize=13)
        ax.set_title(titulo, fontsize=15)
        ax.tick_params(labelsize=13)
        ax.invert_yaxis()
        ax.grid(alpha=0.3, axis="x")
    ax1.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: inteiro(x)))  # 1.600
    ax2.set_xlim(0, 100)
    ax2.tick_params(labelleft=False)                   # os nomes já estão à esquerda
    fig.legend(*ax1.get_legend_handles_labels(), loc="lower center", ncol=4,
               frameon=False, fontsize=13)
    licao.salvar_figura(fig, "06_tamanhos.png")


# ============================================================ experimento 5
def _como_ir_ao_maior(licao, carregado):
    escolhidos = [k for k in (1, 2, 3) if not licao.args.so or k in licao.args.so]
    pulados_ou_falhos = {k for k, *_ in licao.pulados + licao.falhos}
    nao = [k for k in escolhidos if k in pulados_ou_falhos]     # não rodaram nesta execução
    dizer("\nO modelo escolhido " + ("tem o tamanho do gpt2 (124M)." if carregado
                                     else "é o gpt2 (124M), o menor."))
    if len(nao) == 1:
        dizer(f"Nesta execução, o experimento {nao[0]} não rodou (o motivo está acima).")
    elif nao:
        dizer(f"Nesta execução, os experimentos {', '.join(map(str, nao))} não rodaram "
              "(o motivo está acima).")
    elif escolhidos == [1, 2, 3]:
        dizer("Os experimentos 1 a 3 acabaram de rodar nele.")
    dizer("Para rodar os experimentos 1 a 3 num maior, o MESMO código, outro --modelo:\n"
          + comando("06_gpt2.py", "--modelo", "gpt2-medium", "--so", "1,2,3,5"))
    N = parametros_gpt2(*TAMANHOS_GPT2["gpt2-medium"][:2])
    dizer(f"Antes de carregar (e, na primeira vez, baixar) os {tamanho(4 * N)} do "
          f"medium,\no lab confere se há {tamanho(necessidade(4 * N))} livres e, se "
          "não houver, avisa em vez\nde travar.")


def crescimento(cfg) -> str:
    """Quantas vezes L, d e h cresceram em relação ao gpt2."""
    L0, d0, h0 = TAMANHOS_GPT2["gpt2"]
    return (f"  L = {cfg.n_layer} ({num(cfg.n_layer / L0, 2)}x o gpt2), d = {inteiro(cfg.n_embd)} "
            f"({num(cfg.n_embd / d0, 2)}x), h = {cfg.n_head} ({num(cfg.n_head / h0, 2)}x);\n"
            "  a classe Bloco é a mesma.")


@LICAO.experimento(5)
def exp_maior(licao):
    nome = licao.args.modelo
    dizer("Memória para os experimentos 1 a 3: UMA cópia dos pesos em fp32 (4 bytes\n"
          "por parâmetro), que o nosso GPT2 e o do transformers dividem, mais 10 %, e\n"
          "0,5 GiB para o Python com o PyTorch e o transformers. Se o nosso GPT2\n"
          "copiasse os pesos, seriam duas cópias (a última coluna).\n")
    dizer(f"  {'modelo':<12}{'parâmetros':>15}{'pesos fp32':>12}{'precisa':>12}{'copiando':>12}")
    for nome_t, (L, d, _h) in TAMANHOS_GPT2.items():
        pesos = 4 * parametros_gpt2(L, d)
        dizer(f"  {nome_t:<12}{inteiro(pesos // 4):>15}{tamanho(pesos):>12}"
              f"{tamanho(necessidade(pesos)):>12}{tamanho(necessidade(pesos, copias=2)):>12}")
    livre = memoria_disponivel()
    if livre is not None:
        cabem = [n for n in TAMANHOS_GPT2 if necessidade(estimar_memoria(n)) <= livre]
        dizer("\n" + quebrar(
            f"Neste computador há {tamanho(livre)} livres: "
            + (f"cabe{'m' if len(cabem) > 1 else ''} {', '.join(cabem)}." if cabem
               else "nenhum cabe com folga.")))
    if nome in PEQUENO:
        return _como_ir_ao_maior(licao, carregado=False)
    licao.pausa("o modelo escolhido: nosso GPT2 contra o transformers")
    dizer("\n" + quebrar(f"Modelo escolhido: {nome}"))
    nosso, hf, tok = modelos(licao, nosso_gpt2)
    cfg = hf.config
    if (cfg.n_layer, cfg.n_embd, cfg.n_head) == TAMANHOS_GPT2["gpt2"]:
        return _como_ir_ao_maior(licao, carregado=True)
    _, ids = tokenizar(licao, tok, cfg.n_positions, reserva=10)
    dizer(crescimento(cfg))
    N = contar(nosso)
    formula = parametros_gpt2(cfg.n_layer, cfg.n_embd, cfg.vocab_size, cfg.n_positions)
    bate = licao.verificar(N == formula, "parâmetros do nosso GPT2 = fórmula")
    dizer(f"  parâmetros do nosso GPT2: {inteiro(N)} "
          f"({'= fórmula' if bate else 'a fórmula dá ' + inteiro(formula)})")
    delta, escala = comparar_logits(nosso, hf, ids)
    ok = licao.verificar(confere(delta, escala), "logits do nosso GPT2 = os do transformers")
    dizer(quebrar(f"logits: max |nosso - transformers| {frase_da_diferenca(delta, ok)}", recuo=2))
    a = gerar_guloso(nosso, ids, 10, tok.eos_token_id)[0, ids.shape[1]:].tolist()
    b = gerar_transformers(hf, ids, 10, tok.eos_token_id)[0, ids.shape[1]:].tolist()
    mesmos = licao.verificar(a == b, "10 tokens gulosos do nosso = os do transformers")
    dizer(f"  10 tokens gulosos, nosso = transformers? {'sim' if mesmos else 'NÃO'}:")
    dizer(quebrar(repr(tok.decode(a)), recuo=4))
    dizer(f"  2N = {cientifico(2 * N)} FLOPs por token no forward.")


# ============================================================ --codigo: o modelo inteiro
def pecas_do_modelo():
    """[(lição, objeto)]: o que as lições 03 a 06 montam, na ordem em que o aluno monta."""
    L03 = importar_licao("03_attention")
    L04 = importar_licao("04_multihead")
    L05 = importar_licao("05_block")
    return [("03", L03.futuro), ("03", L03.pesos_de_atencao), ("03", L03.atencao),
            ("04", L04.separar_cabecas), ("04", L04.juntar_cabecas),
            ("04", L04.AtencaoMultiCabeca), ("05", L05.MLP), ("05", L05.Bloco),
            ("06", GPT2)]


if __name__ == "__main__":
    if LICAO.args.codigo:  # o modelo inteiro na tela, peça a peça (comum/codigo.py)
        from comum import codigo

        sys.exit(codigo.mostrar(pecas_do_modelo(), "as lições 03 a 06"))
    sys.exit(LICAO.rodar())
