"""Lição 06 · O GPT-2 inteiro, de 124 milhões a 1,5 bilhão de parâmetros.

Embeddings (wte + wpe), L cópias do Bloco da lição 05, ln_f e o desembedding
amarrado ao wte. Carrega os pesos reais nele, confere contra o transformers,
gera texto e mostra o que muda do gpt2 ao gpt2-xl. Leia junto: apostilas/06_gpt2.md.
"""
import sys
import time

import common

TEXTO_PADRAO = "The cat sat on the"
NOVOS_TOKENS = 16


def _argumentos(parser):
    parser.add_argument("--texto", default=TEXTO_PADRAO, metavar='"FRASE"',
                        help=f'frase de entrada dos experimentos 1, 2, 3 e 5 '
                        f'(padrão: "{TEXTO_PADRAO}")')


LICAO = common.Licao(
    "06", "O GPT-2 inteiro, de 124M a 1,5B de parâmetros",
    [
        (1, "Monte o GPT-2 com o Bloco: do texto à próxima palavra", True),
        (2, "Carregue os pesos reais: os mesmos logits do transformers", True),
        (3, "Gerando texto com o nosso GPT-2", True),
        (4, "Do gpt2 ao gpt2-xl: só L, d e h mudam", False),
        (5, "Um modelo maior de verdade (--modelo gpt2-medium)", True),
    ],
    proxima=("lab/07_generation.py", "apostilas/07_generation.md"),
    argumentos=_argumentos,
)
if __name__ == "__main__":
    LICAO.abrir()  # a primeira linha aparece antes do torch

import torch  # noqa: E402
from torch import nn  # noqa: E402

Bloco = common.importar_licao("05_block").Bloco  # a peça da lição 05, sem cópia

dizer, num, inteiro, pct = common.dizer, common.num, common.inteiro, common.pct
# Ponte até a 06 entrar no esqueleto novo (issue 19): o que a 09 importa daqui.
parametros_gpt2 = common.parametros_gpt2
__all__ = ["GPT2", "parametros_gpt2"]
TOLERANCIA = 1e-4
# Memória que a lição usa: UMA cópia dos pesos (o nosso GPT2 divide a do transformers), mais
# o Python com PyTorch e transformers importados e as ativações, uns 0,45 GiB em qualquer
# tamanho (ferramentas/benchmark.py --tamanhos: pico de 0,90 GiB no gpt2, 1,77 no medium,
# 3,33 no large: 1,94x, 1,34x e 1,16x os pesos).
BASE = 0.5 * 2**30
FOLGA = 1.1                                            # +10 % sobre os pesos


def necessidade(pesos: float, copias: int = 1) -> float:
    """Bytes de memória que a lição precisa para pesos de `pesos` bytes."""
    return FOLGA * copias * pesos + BASE


# ============================================================ o modelo
class GPT2(nn.Module):
    """O GPT-2 inteiro: wte + wpe, L blocos iguais, ln_f e o desembedding amarrado ao wte."""

    def __init__(self, camadas=12, d=768, h=12, vocab=50257, posicoes=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)              # um vetor por token
        self.wpe = nn.Embedding(posicoes, d)           # um vetor por posição
        self.h = nn.ModuleList(Bloco(d, h) for _ in range(camadas))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)          # o Pre-LN deixa a saída sem norma
        self.iniciar_como_gpt2()

    def iniciar_como_gpt2(self):
        """Os pesos iniciais do GPT-2 (Radford et al. 2019; o código da OpenAI): toda
        matriz e todo embedding N(0; 0,02), vieses 0, LayerNorm com ganho 1; as projeções
        que somam no fluxo residual (attn.c_proj, mlp.c_proj) com desvio 0,02/raiz(2L),
        porque 2L delas se somam. Um modelo novo começa então com perda ~ ln V (chutar
        entre V tokens); com o padrão do PyTorch (embedding N(0; 1)), começaria perto de 80."""
        residuais = 0.02 / (2 * len(self.h)) ** 0.5
        for nome, p in self.named_parameters():
            if p.dim() == 2:                           # matrizes (lineares e embeddings)
                nn.init.normal_(p, 0.0, residuais if nome.endswith("c_proj.weight") else 0.02)
            elif nome.endswith("bias"):
                nn.init.zeros_(p)                      # os ganhos dos LayerNorm ficam 1

    @classmethod
    def da_config(cls, config):
        return cls(config.n_layer, config.n_embd, config.n_head,
                   config.vocab_size, config.n_positions)

    def forward(self, ids):                            # ids: (B, T)
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(T, device=ids.device))  # (B, T, C)
        for bloco in self.h:
            x = bloco(x)                               # (B, T, C): a forma não muda
        x = self.ln_f(x)                               # (B, T, C)
        return x @ self.wte.weight.T                   # (B, T, V): a cabeça é o wte


def pesos_para_o_nosso(hf) -> dict:
    """Os pesos do GPT2LMHeadModel com os nomes e as formas do nosso GPT2, sem copiar nada.

    O transformers guarda c_attn, c_fc e os c_proj como Conv1D, em (entrada, saída);
    nn.Linear guarda (saída, entrada). .t() devolve uma VIEW transposta: o mesmo
    armazenamento, lido em outra ordem (só os passos mudam, nenhum byte é copiado)."""
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
            f"forma errada em {len(erradas)} peso(s) (faltou transpor?);\n"
            f"o primeiro, {n}, veio {tuple(pesos[n].shape)},\n"
            f"e o nosso GPT2 espera {tuple(formas[n].shape)}.")
    nosso.load_state_dict(pesos, strict=True, assign=True)
    return nosso


def nosso_gpt2(hf) -> GPT2:
    """O nosso GPT2 com os pesos de `hf`, sem uma segunda cópia e sem pesos aleatórios."""
    with torch.device("meta"):                         # só as formas: nenhum byte alocado
        nosso = GPT2.da_config(hf.config)
    return carregar_pesos(nosso, hf).eval()


def armazenamentos(modelo) -> dict:
    """{endereço: bytes} dos blocos de memória onde moram os parâmetros do modelo."""
    return {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes()
            for p in modelo.parameters()}


def bytes_novos(nosso, hf) -> int:
    """Bytes de parâmetros do nosso GPT2 que NÃO são memória do modelo do transformers."""
    deles = armazenamentos(hf)
    return sum(n for ptr, n in armazenamentos(nosso).items() if ptr not in deles)


def margem(nome: str) -> float:
    """A necessidade da lição em múltiplos do tamanho dos pesos (o que common.Licao.gpt2
    confere antes de carregar ou baixar)."""
    pesos = common.estimar_memoria(nome)
    return necessidade(pesos) / pesos if pesos else FOLGA


def conferir_memoria(nome: str) -> None:
    """Antes de carregar (ou baixar) `nome`: cabe a lição inteira? Se não, pula e explica."""
    pesos, livre = common.estimar_memoria(nome), common.memoria_disponivel()
    if pesos is None or livre is None or necessidade(pesos) <= livre:
        return
    menores = [n for n, (L, d, _h) in common.TAMANHOS_GPT2.items()
               if 4 * common.parametros_gpt2(L, d) < pesos
               and necessidade(4 * common.parametros_gpt2(L, d)) <= livre]
    conselho = (f"feche outros programas ou use um modelo menor (--modelo {menores[-1]})."
                if menores else "feche outros programas"
                + (": o gpt2 já é o menor GPT-2." if nome in PEQUENO else "."))
    raise common.ExperimentoPulado(
        f"com '{nome}', a lição 06 precisa de {common.tamanho(necessidade(pesos))} "
        f"({num(margem(nome), 2)}x os pesos de {common.tamanho(pesos)}: +10 % e +0,5 GiB "
        f"do PyTorch) e há {common.tamanho(livre)} livres: {conselho}")


def montar_nosso(hf) -> GPT2:
    """Nosso GPT2 sobre os pesos de `hf` (nenhuma cópia: não precisa de memória a mais)."""
    inicio = time.perf_counter()
    nosso = nosso_gpt2(hf)
    dizer(f"(nosso GPT2 montado sobre os pesos do transformers, sem cópia: "
          f"{num(time.perf_counter() - inicio, 2)} s)")
    return nosso


_MONTADOS = {}


def modelos(licao):
    """(nosso GPT2, modelo do transformers, tokenizador), montados uma vez por execução."""
    if not _MONTADOS:                                  # antes de qualquer download
        conferir_memoria(licao.args.modelo)
    hf, tokenizador = licao.gpt2(margem=margem(licao.args.modelo))
    if id(hf) not in _MONTADOS:
        _MONTADOS[id(hf)] = montar_nosso(hf)
    return _MONTADOS[id(hf)], hf, tokenizador


def tokenizar(licao, tokenizador, posicoes, reserva=0):
    texto = licao.args.texto
    ids = tokenizador(texto, return_tensors="pt")["input_ids"]   # (1, T)
    if ids.shape[1] == 0:
        raise common.ExperimentoPulado("o --texto está vazio: escreva uma frase.")
    if ids.shape[1] + reserva > posicoes:
        raise common.ExperimentoPulado(
            f"o --texto tem {ids.shape[1]} tokens; este modelo aceita até "
            f"{posicoes - reserva} aqui. Use uma frase mais curta.")
    return texto, ids


def token(tokenizador, i) -> str:
    """Um token entre aspas, legível em qualquer console."""
    return repr(tokenizador.decode([int(i)]).replace("\ufffd", "?"))


def em_linhas(itens, recuo=2) -> str:
    """Itens separados por espaço, quebrando a linha na largura do terminal (sem cortar um)."""
    linhas = [" " * recuo]
    for item in itens:
        if len(linhas[-1]) > recuo and len(linhas[-1]) + 1 + len(item) > common.largura() - 1:
            linhas.append(" " * recuo)
        linhas[-1] += ("" if len(linhas[-1]) == recuo else " ") + item
    return "\n".join(linhas)


def forma(t) -> str:
    return str(tuple(t.shape))


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
    L = len(nosso.h)
    for i, bloco in enumerate(nosso.h):
        x = bloco(x)                                   # (1, T, C)
        if i < 2 or i == L - 1:
            etapas.append((f"bloco {i + 1}", x[0], "x + atenção, x + MLP"))
        elif i == 2:
            etapas.append(("...", None, ""))
    x = nosso.ln_f(x)                                  # (1, T, C)
    logits = x @ nosso.wte.weight.T                    # (1, T, V)
    etapas += [("ln_f", x[0], "normalização final"),
               ("x @ wte^T", logits[0], "um logit por token"),
               ("softmax(última linha)", logits[0, -1].softmax(-1),
                "o próximo token")]
    return etapas, logits


def exp_caminho(licao):
    nosso, hf, tok = modelos(licao)
    cfg = hf.config
    texto, ids = tokenizar(licao, tok, cfg.n_positions)
    T = ids.shape[1]
    dizer(f"GPT2(camadas={cfg.n_layer}, d={cfg.n_embd}, h={cfg.n_head}, "
          f"vocab={cfg.vocab_size}, posicoes={cfg.n_positions}):")
    dizer(f"wte, wpe, {cfg.n_layer} x Bloco (o da lição 05), ln_f e o desembedding,\n"
          "que é o próprio wte transposto (a cabeça de saída amarrada).\n")
    dizer(f'Texto: "{texto}"  ->  {T} tokens:')
    dizer(em_linhas([token(tok, i) for i in ids[0]]))
    dizer(em_linhas(["ids:"] + [str(i) for i in ids[0].tolist()]) + "\n")
    with torch.no_grad():
        etapas, logits = caminho(nosso, ids)
        direto = nosso(ids)
    licao.pausa("as formas, etapa por etapa")
    dizer("Formas, sem o lote (n = tokens, d = largura, V = vocabulário):")
    for nome, t, nota in etapas:
        dizer(f"  {nome:<22}{forma(t) if t is not None else '':<12}{nota}".rstrip())
    igual = licao.verificar(torch.allclose(logits, direto, atol=1e-5),
                            "etapa por etapa = nosso(ids)")
    dizer(f"\nEtapa por etapa = nosso(ids)? {'sim' if igual else 'NÃO'}.")
    dizer("Cada linha dos logits prevê o token SEGUINTE àquela posição:")
    probs = direto[0].softmax(-1)                      # (T, V)
    p, i = probs.max(-1)
    mostrar = range(T) if T <= 10 else [*range(3), None, *range(T - 6, T)]
    for t in mostrar:
        if t is None:
            dizer("  ...")
            continue
        dizer(f"  depois de {token(tok, ids[0, t]):<14} -> {token(tok, i[t]):<14} "
              f"{pct(float(p[t])):>7}")
    licao.pausa("os 5 mais prováveis na última posição")
    dizer(f"\nA distribuição que interessa para gerar é a da última posição. "
          f"Os 5 mais\nprováveis depois de \"{texto}\":")
    p5, i5 = probs[-1].topk(5)
    for pi, ii in zip(p5.tolist(), i5.tolist()):
        barra = "#" * round(40 * pi / p5[0].item())
        dizer(f"  {token(tok, ii):<14} {pct(pi):>7}  {barra}")


# ============================================================ experimento 2
def comparar_logits(nosso, hf, ids):
    """(max |nossos logits - os do transformers|, maior |logit| do transformers)."""
    with torch.no_grad():
        deles = hf(ids).logits                         # (B, T, V)
        return float((nosso(ids) - deles).abs().max()), float(deles.abs().max())


def diferenca_logits(nosso, hf, ids) -> float:
    return comparar_logits(nosso, hf, ids)[0]


def confere(delta, escala, tolerancia=TOLERANCIA) -> bool:
    """float32 guarda uns 7 algarismos: logits perto de 100 já erram na casa de 1e-5.
    Tolerância: 1e-4 vezes o maior |logit| (ou 1e-4 absoluto, se os logits forem < 1)."""
    return delta <= tolerancia * max(1.0, escala)


def veredito(delta, escala, tolerancia=TOLERANCIA, nome="logit") -> str:
    """A diferença como LIMITE quando é arredondamento (os dígitos mudam de CPU para CPU);
    o número em si quando passa do limite (aí é um erro de verdade, não ruído)."""
    limite = f"{tolerancia:.0e}".replace("e-0", "e-") + f" x o maior |{nome}|"
    if confere(delta, escala, tolerancia):
        return f"< {limite}: confere"
    return f"= {common.cientifico(delta)}, acima de {limite}: NÃO confere"


def tabela_de_pesos(nosso, hf):
    """[(nome, forma no transformers, forma no nosso, como ficou)] do bloco 0 e das bordas."""
    from transformers.pytorch_utils import Conv1D

    nossos = dict(nosso.named_parameters())
    linhas = []
    for nome, t in hf.state_dict().items():
        curto = nome.removeprefix("transformer.")
        if curto.startswith("h.") and not curto.startswith("h.0."):
            continue
        if curto == "lm_head.weight":
            mesmo = hf.lm_head.weight is hf.transformer.wte.weight
            linhas.append((curto, t, None, "é o wte" if mesmo else "NÃO amarrada"))
            continue
        if curto not in nossos:                        # buffers (máscara causal etc.)
            continue
        dono = hf.get_submodule(nome.rsplit(".", 1)[0])
        conv = isinstance(dono, Conv1D) and nome.endswith(".weight")
        esperado = t.t() if conv else t                # (entrada, saída) -> (saída, entrada)
        nosso_p = nossos[curto].detach()
        bate = (torch.equal(nosso_p, esperado)
                and nosso_p.untyped_storage().data_ptr() == t.untyped_storage().data_ptr())
        acao = ("view transposta" if conv else "o mesmo tensor") + ("" if bate else " (NÃO)")
        linhas.append((curto, t, nossos[curto], acao))
    return linhas


def exp_pesos(licao):
    nosso, hf, tok = modelos(licao)
    cfg = hf.config
    d, h, L = cfg.n_embd, cfg.n_head, cfg.n_layer
    dizer("Cada peso do nosso GPT2 APONTA para o peso de mesmo nome do transformers:\n"
          "load_state_dict(..., assign=True) troca o nosso tensor pelo deles, sem copiar.\n"
          "O transformers guarda c_attn, c_fc e os c_proj como Conv1D, em (entrada,\n"
          "saída); nn.Linear guarda (saída, entrada): esses quatro entram como view\n"
          "transposta, .t(), que lê a mesma memória em outra ordem.\n")
    licao.pausa("a tabela dos pesos, transformers x nosso GPT2")
    dizer(f"  {'peso':<23}{'transformers':<13}{'nosso GPT2':<13}no nosso")
    linhas = tabela_de_pesos(nosso, hf)
    for nome, t_hf, t_nosso, acao in linhas:
        f_nosso = "-" if t_nosso is None else " x ".join(map(str, t_nosso.shape))
        dizer(f"  {nome:<23}{' x '.join(map(str, t_hf.shape)):<13}{f_nosso:<13}{acao}")
        if nome == "h.0.mlp.c_proj.bias" and L > 1:
            dizer(f"  h.1 a h.{L - 1}: o mesmo")
    licao.verificar(not any("NÃO" in acao for *_, acao in linhas),
                    "pesos do nosso GPT2 = os do transformers, mesma memória")
    novos = bytes_novos(nosso, hf)
    total = sum(armazenamentos(hf).values())
    dizer(f"\nMemória nova que os pesos do nosso GPT2 ocupam: {inteiro(novos)} bytes"
          f"\n(os do transformers: {common.tamanho(total)}). Dois modelos, uma cópia.")
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
    dizer(f"Q do nosso c_attn contra x @ W[:, 0:{d}] + b[0:{d}], numa entrada x\n"
          f"aleatória: max |diferença| {veredito(delta_q, escala_q, 1e-5, 'Q')}.\n")
    licao.verificar(confere(delta_q, escala_q, 1e-5), "Q do c_attn = a fatia de Q")
    _, ids = tokenizar(licao, tok, cfg.n_positions)
    delta, escala = comparar_logits(nosso, hf, ids)
    dizer(f"Logits no texto \"{licao.args.texto}\" ({ids.shape[1]} tokens x "
          f"{cfg.vocab_size} do vocabulário;\nmaior |logit| = {num(escala, 2)}):")
    dizer(common.quebrar(f"max |nosso - transformers| {veredito(delta, escala)}", recuo=2))
    if licao.verificar(confere(delta, escala), "logits do nosso GPT2 = os do transformers"):
        dizer("  (a diferença é arredondamento de float32, cujos últimos dígitos mudam de\n"
              "  processador para processador: por isso aparece como limite, não como número)")
    else:
        dizer("  (acima do limite não é arredondamento: algum peso entrou errado)")
    errado = delta_sem_transpor(nosso, hf, ids)
    dizer(f"\nE se o nosso esquecesse de transpor h.0.attn.c_proj? Ele é quadrado "
          f"({d} x {d}),\nentão carrega sem erro nenhum; só o modelo fica errado:")
    dizer(f"  max |errado - transformers| = {common.cientifico(errado)} "
          f"({num(errado / (TOLERANCIA * max(1.0, escala)), 0)}x a tolerância)")
    dizer("Por isso o teste compara os logits, e não só as formas.")


def delta_sem_transpor(nosso, hf, ids) -> float:
    """A diferença de logits com o c_proj da atenção do bloco 0 sem transpor (e desfaz).

    Troca o parâmetro por outro, o tensor do transformers como está (sem .t()): mudar o
    conteúdo no lugar mudaria também o modelo do transformers, que é a mesma memória."""
    linear = nosso.h[0].attn.c_proj
    certo = linear.weight
    deles = hf.transformer.h[0].attn.c_proj.weight.detach()       # (C, C) sem transpor
    linear.weight = nn.Parameter(deles, requires_grad=False)
    try:
        return diferenca_logits(nosso, hf, ids)
    finally:
        linear.weight = certo                          # de volta ao certo


# ============================================================ experimento 3
def gerar_guloso(modelo, ids, novos, fim=None, ao_gerar=None):
    """Sempre o token mais provável; sem cache KV: recalcula a sequência toda a cada passo."""
    with torch.no_grad():
        for _ in range(novos):
            logits = modelo(ids)[:, -1]                # (1, V): só a última posição
            proximo = logits.argmax(-1, keepdim=True)  # (1, 1)
            ids = torch.cat([ids, proximo], dim=1)     # (1, T + 1)
            if ao_gerar:
                ao_gerar(ids)
            if fim is not None and int(proximo) == fim:
                break
    return ids


def gerar_transformers(hf, ids, novos, fim=None):
    return hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=novos,
                       do_sample=False, pad_token_id=fim, eos_token_id=fim)


def _escritor(tokenizador, recuo=2):
    """Escreve o texto gerado conforme sai, quebrando a linha antes de passar da largura.
    Espera quando o último token é meio caractere (o BPE corta bytes de um 'ç')."""
    estado = {"escrito": 0, "coluna": recuo}

    def escrever(ids):
        texto = tokenizador.decode(ids[0]).replace("\n", " ")
        if texto.endswith("\ufffd"):                   # meio caractere: espera o resto
            return
        pedaco = texto[estado["escrito"]:]
        estado["escrito"] = len(texto)
        if estado["coluna"] + len(pedaco) > common.largura() - 1 and pedaco.startswith(" "):
            print("\n" + " " * recuo, end="")
            pedaco, estado["coluna"] = pedaco[1:], recuo
        print(pedaco, end="", flush=True)
        estado["coluna"] += len(pedaco)
    return escrever


def exp_gerar(licao):
    nosso, hf, tok = modelos(licao)
    _, ids = tokenizar(licao, tok, hf.config.n_positions, reserva=NOVOS_TOKENS)
    fim = tok.eos_token_id
    T = ids.shape[1]
    dizer(f"Gulosa: a cada passo, o token mais provável; {NOVOS_TOKENS} tokens novos.\n")
    dizer("Nosso GPT2 (roda a sequência inteira de novo a cada token):")
    escrever = _escritor(tok)
    print("  ", end="")
    escrever(ids)                                      # o texto de entrada
    inicio = time.perf_counter()
    nossos = gerar_guloso(nosso, ids, NOVOS_TOKENS, fim, escrever)
    t_nosso = time.perf_counter() - inicio
    dizer(f"\n  ({num(t_nosso, 2)} s)")
    dizer("transformers, generate(do_sample=False) (guarda um cache KV):")
    inicio = time.perf_counter()
    deles = gerar_transformers(hf, ids, NOVOS_TOKENS, fim)
    t_deles = time.perf_counter() - inicio
    escrever = _escritor(tok)                          # mesma quebra do nosso
    print("  ", end="")
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

    linhas = []
    for nome, (L, d, h) in common.TAMANHOS_GPT2.items():
        cfg = GPT2Config(n_layer=L, n_embd=d, n_head=h)
        with torch.device("meta"):                     # só as formas, nenhum byte de peso
            nosso = GPT2.da_config(cfg)
            deles = GPT2LMHeadModel(cfg)
        contar = common.contar_parametros
        pecas = {
            "embeddings": contar(nosso.wte) + contar(nosso.wpe),
            "atenção": sum(contar(b.attn) for b in nosso.h),
            "MLP": sum(contar(b.mlp) for b in nosso.h),
            "normas": sum(contar(b.ln_1) + contar(b.ln_2) for b in nosso.h) + contar(nosso.ln_f),
        }
        linhas.append({
            "nome": nome, "L": L, "d": d, "h": h, "vocab": cfg.vocab_size,
            "posicoes": cfg.n_positions, "bloco": contar(nosso.h[0]),
            "total": contar(nosso), "transformers": contar(deles),
            "formula": common.parametros_gpt2(L, d, cfg.vocab_size, cfg.n_positions),
            "pecas": pecas,
        })
    return linhas


def vocabulario_gpt1() -> int:
    from transformers import OpenAIGPTConfig

    return OpenAIGPTConfig().vocab_size


def exp_tamanhos(licao):
    linhas = tamanhos()
    dizer("Os quatro GPT-2 montados com a MESMA classe GPT2 e o MESMO Bloco;\n"
          "só mudam três números da configuração (no meta device: sem memória).\n")
    dizer(f"  {'modelo':<12}{'L':>3}{'d':>6}{'h':>4}{'d/h':>5}{'por bloco':>13}"
          f"{'total exato':>16}")
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
        dizer(f"  {m['nome']:<12}{common.tamanho(4 * N):>11}{common.tamanho(2 * N):>11}"
              f"{common.cientifico(2 * N):>13}{str(round(N / 1e6)) + 'M':>13}"
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
    com_v1 = [common.parametros_gpt2(m["L"], m["d"], v1, m["posicoes"]) for m in linhas]
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
    largura_barra = 40
    for m in linhas:
        fracao = {k: v / m["total"] for k, v in m["pecas"].items()}
        barra = ("E" * round(largura_barra * fracao["embeddings"])
                 + "A" * round(largura_barra * fracao["atenção"]))
        barra += "M" * (largura_barra - len(barra))
        dizer(f"  {m['nome']:<12}|{barra}|")
    dizer(f"\n  {'modelo':<12}{'embeddings':>11}{'atenção':>9}{'MLP':>8}{'normas':>8}")
    for m in linhas:
        f = [m["pecas"][k] / m["total"] for k in ("embeddings", "atenção", "MLP", "normas")]
        dizer(f"  {m['nome']:<12}{pct(f[0]):>11}{pct(f[1]):>9}{pct(f[2]):>8}{pct(f[3], 2):>8}")
    primeiro, ultimo = linhas[0], linhas[-1]
    dizer(f"\nOs embeddings crescem com d (V x d); os blocos, com L x d². Por isso a fatia\n"
          f"dos embeddings cai de {pct(primeiro['pecas']['embeddings'] / primeiro['total'])} "
          f"no {primeiro['nome']} para {pct(ultimo['pecas']['embeddings'] / ultimo['total'])} "
          f"no {ultimo['nome']}.")
    if not licao.args.sem_figuras:                     # poupa o import do matplotlib
        _figura_tamanhos(licao, linhas)


def _figura_tamanhos(licao, linhas):
    fig, (ax1, ax2) = common.figura(11, 4, ncols=2)
    nomes = [m["nome"] for m in linhas]
    pecas = ("embeddings", "atenção", "MLP", "normas")
    base_abs, base_rel = [0.0] * len(linhas), [0.0] * len(linhas)
    for peca in pecas:
        absoluto = [m["pecas"][peca] / 1e6 for m in linhas]
        relativo = [100 * m["pecas"][peca] / m["total"] for m in linhas]
        ax1.barh(nomes, absoluto, left=base_abs, label=peca)
        ax2.barh(nomes, relativo, left=base_rel, label=peca)
        base_abs = [a + b for a, b in zip(base_abs, absoluto)]
        base_rel = [a + b for a, b in zip(base_rel, relativo)]
    ax1.set(xlabel="milhões de parâmetros", title="Parâmetros por peça")
    ax2.set(xlabel="% do total", title="Fatia de cada peça", xlim=(0, 100))
    ax2.tick_params(labelleft=False)                   # os nomes já estão à esquerda
    for ax in (ax1, ax2):
        ax.invert_yaxis()
        ax.grid(alpha=0.3, axis="x")
    fig.legend(*ax1.get_legend_handles_labels(), loc="outside lower center", ncol=4,
               frameon=False)
    licao.salvar_figura(fig, "06_tamanhos.png")


# ============================================================ experimento 5
PEQUENO = ("gpt2", common.PREFIXO_HUB + "gpt2")


def _rodaram(licao, ks=(1, 2, 3)):
    """Dos experimentos ks: (os que rodaram nesta execução, os pulados ou que falharam)."""
    escolhidos = [k for k in ks if not licao.args.so or k in licao.args.so]
    nao = {k for k, *_ in licao.pulados + licao.falhos}
    return ([k for k in escolhidos if k not in nao], [k for k in escolhidos if k in nao])


def _como_ir_ao_maior(licao, carregado):
    rodaram, nao = _rodaram(licao)
    if carregado:
        dizer("\nO modelo escolhido tem o tamanho do gpt2 (124M).")
    else:
        dizer("\nO modelo escolhido é o gpt2 (124M), o menor.")
    if len(nao) == 1:
        dizer(f"Nesta execução, o experimento {nao[0]} não rodou (o motivo está acima).")
    elif nao:
        dizer(f"Nesta execução, os experimentos {', '.join(map(str, nao))} não rodaram "
              "(o motivo está acima).")
    elif rodaram == [1, 2, 3]:
        dizer("Os experimentos 1 a 3 acabaram de rodar nele.")
    dizer("Para rodar os experimentos 1 a 3 num maior, o MESMO código, outro --modelo:\n"
          "  lab/06_gpt2.py --modelo gpt2-medium --so 1,2,3,5")
    N = common.parametros_gpt2(*common.TAMANHOS_GPT2["gpt2-medium"][:2])
    dizer(f"Antes de carregar (e, na primeira vez, baixar) os {common.tamanho(4 * N)} do "
          f"medium,\no lab confere se há {common.tamanho(necessidade(4 * N))} livres e, se "
          "não houver, avisa em vez\nde travar.")


def crescimento(cfg) -> str:
    """Quantas vezes L, d e h cresceram em relação ao gpt2."""
    L0, d0, h0 = common.TAMANHOS_GPT2["gpt2"]
    return (f"  L = {cfg.n_layer} ({num(cfg.n_layer / L0, 2)}x o gpt2), d = {inteiro(cfg.n_embd)} "
            f"({num(cfg.n_embd / d0, 2)}x), h = {cfg.n_head} ({num(cfg.n_head / h0, 2)}x);\n"
            "  a classe Bloco é a mesma.")


def exp_maior(licao):
    nome = licao.args.modelo
    dizer("Memória para os experimentos 1 a 3: UMA cópia dos pesos em fp32 (4 bytes\n"
          "por parâmetro), que o nosso GPT2 e o do transformers dividem, mais 10 %, e\n"
          "0,5 GiB para o Python com o PyTorch e o transformers. Se o nosso GPT2\n"
          "copiasse os pesos, seriam duas cópias (a última coluna).\n")
    dizer(f"  {'modelo':<12}{'parâmetros':>15}{'pesos fp32':>12}{'precisa':>12}"
          f"{'copiando':>12}")
    for nome_t, (L, d, _h) in common.TAMANHOS_GPT2.items():
        pesos = 4 * common.parametros_gpt2(L, d)
        dizer(f"  {nome_t:<12}{inteiro(pesos // 4):>15}{common.tamanho(pesos):>12}"
              f"{common.tamanho(necessidade(pesos)):>12}"
              f"{common.tamanho(necessidade(pesos, copias=2)):>12}")
    livre = common.memoria_disponivel()
    if livre is not None:
        cabem = [n for n, (L, d, _h) in common.TAMANHOS_GPT2.items()
                 if necessidade(4 * common.parametros_gpt2(L, d)) <= livre]
        dizer("\n" + common.quebrar(
            f"Neste computador há {common.tamanho(livre)} livres: "
            + (f"cabe{'m' if len(cabem) > 1 else ''} {', '.join(cabem)}." if cabem
               else "nenhum cabe com folga.")))
    if nome in PEQUENO:
        return _como_ir_ao_maior(licao, carregado=False)
    licao.pausa("o modelo escolhido: nosso GPT2 contra o transformers")
    dizer()
    dizer(common.quebrar(f"Modelo escolhido: {nome}"))
    nosso, hf, tok = modelos(licao)
    cfg = hf.config
    if (cfg.n_layer, cfg.n_embd, cfg.n_head) == common.TAMANHOS_GPT2["gpt2"]:
        return _como_ir_ao_maior(licao, carregado=True)
    _, ids = tokenizar(licao, tok, cfg.n_positions, reserva=10)
    dizer(crescimento(cfg))
    N = common.contar_parametros(nosso)
    formula = common.parametros_gpt2(cfg.n_layer, cfg.n_embd, cfg.vocab_size, cfg.n_positions)
    bate = licao.verificar(N == formula, "parâmetros do nosso GPT2 = fórmula")
    dizer(f"  parâmetros do nosso GPT2: {inteiro(N)} "
          f"({'= fórmula' if bate else 'a fórmula dá ' + inteiro(formula)})")
    delta, escala = comparar_logits(nosso, hf, ids)
    licao.verificar(confere(delta, escala), "logits do nosso GPT2 = os do transformers")
    dizer(common.quebrar(f"logits: max |nosso - transformers| {veredito(delta, escala)}",
                         recuo=2))
    a = gerar_guloso(nosso, ids, 10, tok.eos_token_id)[0, ids.shape[1]:].tolist()
    b = gerar_transformers(hf, ids, 10, tok.eos_token_id)[0, ids.shape[1]:].tolist()
    mesmos = licao.verificar(a == b, "10 tokens gulosos do nosso = os do transformers")
    dizer(f"  10 tokens gulosos, nosso = transformers? {'sim' if mesmos else 'NÃO'}:")
    dizer(common.quebrar(repr(tok.decode(a)), recuo=4))
    dizer(f"  2N = {common.cientifico(2 * N)} FLOPs por token no forward.")


EXPERIMENTOS = {1: exp_caminho, 2: exp_pesos, 3: exp_gerar, 4: exp_tamanhos, 5: exp_maior}

if __name__ == "__main__":
    sys.exit(LICAO.rodar(EXPERIMENTOS))
