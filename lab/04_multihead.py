"""Lição 04 · Atenção multicabeça (leia junto: apostilas/04_multihead.md)
1. Separar e juntar as cabeças: as formas, e um erro silencioso
2. AtencaoMultiCabeca = a atenção do GPT-2 do transformers
3. Parâmetros e custo: 4d² + 4d, qualquer que seja h
4. As cabeças do GPT-2: mapas e padrões medidos
5. Cabeças de indução: o modelo copia
6. Por que várias cabeças, e não uma larga"""
from comum import Licao, importar_licao, inteiro_entre, opcao, paginas

LICAO = Licao.da_docstring(__doc__, usa_gpt2={4, 5}, opcoes=[
    opcao("--d", inteiro_entre(1, 65536, "--d 1600"), 768,
          "largura d do experimento 3 (padrão: 768, a do GPT-2 pequeno)", "D"),
    *paginas.opcoes()])
LICAO.abrir()  # só quando este arquivo é o script rodado: a primeira linha sai antes do torch
import torch
from torch import nn

L03 = importar_licao("03_attention")   # a atenção de uma cabeça e a máscara, da lição 03


# ============================================================ a peça
def separar_cabecas(x, h):
    """(B, T, C) -> (B, h, T, C/h): cada cabeça fica com uma fatia
    de C/h números."""
    B, T, C = x.shape
    return x.view(B, T, h, C // h).transpose(1, 2)             # (B, h, T, C/h)


def juntar_cabecas(y):
    """(B, h, T, C/h) -> (B, T, C): as saídas das cabeças lado a lado
    de novo."""
    B, h, T, dh = y.shape
    return y.transpose(1, 2).reshape(B, T, h * dh)             # (B, T, C)


class AtencaoMultiCabeca(nn.Module):
    """h cabeças de atenção causal; nomes dos pesos como no GPT-2
    (c_attn, c_proj)."""

    def __init__(self, d=768, h=12, causal=True):
        super().__init__()
        assert d % h == 0, "d precisa ser múltiplo de h"
        self.h, self.causal = h, causal
        self.c_attn = nn.Linear(d, 3 * d)  # Q, K e V de uma vez
        self.c_proj = nn.Linear(d, d)      # mistura as cabeças de volta em d

    def qkv(self, x):
        """q, k, v de todas as cabeças: 3 x (B, h, T, C/h)."""
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=-1)   # 3 x (B, T, C)
        return [separar_cabecas(t, self.h)
                for t in (q, k, v)]                        # 3 x (B, h, T, C/h)

    def forward(self, x):                                      # x (B, T, C)
        q, k, v = self.qkv(x)
        y, _ = L03.atencao(q, k, v, self.causal)               # (B, h, T, C/h)
        return self.c_proj(juntar_cabecas(y))                  # (B, T, C)

    def pesos(self, x):
        """Os pesos de atenção de cada cabeça: (B, h, T, T)."""
        q, k, _ = self.qkv(x)
        return L03.pesos_de_atencao(q, k, self.causal)         # (B, h, T, T)


# o que as lições seguintes podem importar daqui (com importar_licao)
__all__ = ["separar_cabecas", "juntar_cabecas", "AtencaoMultiCabeca"]


# ============================================================ os experimentos
# o encanamento que só os experimentos usam (depois da peça, para ela abrir o arquivo)
import math
import sys

from comum import (ExperimentoPulado, REGRA_DE_CARACTERES, contar, de_caracteres, dizer, figuras,
                   inteiro, limite, num, pct, quebrar, token)


# ============================================================ experimento 1
class AtencaoComViewErrado(AtencaoMultiCabeca):
    """O erro clássico: reshape direto para (B, h, T, C/h), sem o transpose. Roda
    sem erro e devolve a forma certa; só a conta está errada."""

    def qkv(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=-1)               # 3 x (B, T, C)
        return [t.reshape(B, self.h, T, C // self.h) for t in (q, k, v)]  # ERRADO

    def forward(self, x):
        q, k, v = self.qkv(x)
        y, _ = L03.atencao(q, k, v, self.causal)               # (B, h, T, C/h)
        return self.c_proj(y.reshape(x.shape))                  # ERRADO: (B, T, C)


def cabeca_a_cabeca(attn, x):
    """A definição, sem reshape nenhum: fatia Q, K e V cabeça a cabeça, roda a atenção
    da lição 03 em cada uma e concatena. Oráculo independente das formas."""
    C, h = x.shape[-1], attn.h
    Q, K, V = attn.c_attn(x).split(C, dim=-1)                   # 3 x (B, T, C)
    fatias = [slice(i * C // h, (i + 1) * C // h) for i in range(h)]
    saidas = [L03.atencao(Q[..., s], K[..., s], V[..., s], attn.causal)[0] for s in fatias]
    return attn.c_proj(torch.cat(saidas, dim=-1))              # (B, T, C)


@LICAO.experimento(1)
def exp_formas(licao):
    B, T, C, h = 1, 3, 8, 2
    x = torch.arange(B * T * C, dtype=torch.float32).view(B, T, C)  # (B, T, C)
    dizer(f"x com B = {B}, T = {T} tokens, C = {C}; os números dizem de onde veio cada um:")
    for t in range(T):
        dizer(f"  token {t}: {x[0, t].int().tolist()}")
    certo = separar_cabecas(x, h)                              # (B, h, T, C/h)
    errado = x.reshape(B, h, T, C // h)                        # (B, h, T, C/h), ERRADO
    dizer(f"\nseparar_cabecas: view(B, T, h, C/h) e transpose(1, 2) -> {tuple(certo.shape)}")
    for i in range(h):
        dizer(f"  cabeça {i}: " + "  ".join(str(r) for r in certo[0, i].int().tolist()))
    dizer(f"\nreshape(B, h, T, C/h) direto, sem transpose -> {tuple(errado.shape)}, "
          "a mesma forma:")
    for i in range(h):
        dizer(f"  cabeça {i}: " + "  ".join(str(r) for r in errado[0, i].int().tolist()))
    dizer("Na versão certa, cada linha de uma cabeça é UM token (uma fatia dele). Na\n"
          "errada, a 'linha 1 da cabeça 0' é a segunda metade do token 0: as\n"
          "posições se embaralham, e nada avisa.")
    volta = licao.verificar(torch.equal(juntar_cabecas(certo), x), "juntar desfaz separar")
    dizer(f"juntar_cabecas(separar_cabecas(x)) == x? {'sim' if volta else 'NÃO'}\n")
    licao.pausa("a certa contra a errada, com os mesmos pesos")
    torch.manual_seed(licao.args.semente)
    boa = AtencaoMultiCabeca(64, 4).eval()
    ruim = AtencaoComViewErrado(64, 4).eval()
    ruim.load_state_dict(boa.state_dict())                     # os mesmos pesos
    x = torch.randn(2, 10, 64)                                 # (B, T, C)
    x2 = x.clone()
    x2[:, -1] = torch.randn(2, 64)                             # muda só o último token
    with torch.no_grad():
        ref = cabeca_a_cabeca(boa, x)
        d_boa = float((boa(x) - ref).abs().max())
        d_ruim = float((ruim(x) - ref).abs().max())
        vaza_boa = float((boa(x2) - boa(x))[:, :-1].abs().max())
        vaza_ruim = float((ruim(x2) - ruim(x))[:, :-1].abs().max())
    dizer("Duas AtencaoMultiCabeca(64, 4) com os mesmos pesos, x de forma (2, 10, 64);\n"
          "as duas devolvem (2, 10, 64). Dois testes:")
    licao.verificar(d_boa < 1e-5, "a certa = cabeça a cabeça")
    licao.verificar(vaza_boa == 0, "a certa não deixa o futuro vazar")
    licao.verificar(d_ruim > 1e-3, "a comparação pega a errada")
    certa = limite(d_boa, 1e-5) if d_boa < 1e-5 else num(d_boa, 3)   # errada no mesmo formato
    dizer(f"  1. max |diferença| contra cabeça a cabeça (fatiar e concatenar, sem reshape):\n"
          f"     certa: {certa}; errada: {num(d_ruim, 3)}")
    dizer(f"  2. muda o último token: quanto mudam as posições anteriores?\n"
          f"     certa: {'0' if vaza_boa == 0 else num(vaza_boa, 3)}; "
          f"errada: {'0' if vaza_ruim == 0 else num(vaza_ruim, 3)}")
    if vaza_ruim == 0:
        dizer("A errada passa até no teste de causalidade: o embaralhamento segue a\n"
              "ordem da memória e nunca traz o futuro para trás.")
    dizer("O erro não muda nenhuma forma: só um teste contra os NÚMEROS o pega.")


# ============================================================ experimento 2
def copiar_de_gpt2attention(nossa, deles):
    """Pesos de uma GPT2Attention (Conv1D, peso em (entrada, saída)) na nossa (nn.Linear,
    (saída, entrada)): os dois pesos são transpostos, os vieses vão como estão."""
    with torch.no_grad():
        for nome in ("c_attn", "c_proj"):
            getattr(nossa, nome).weight.copy_(getattr(deles, nome).weight.t())  # (saída, entrada)
            getattr(nossa, nome).bias.copy_(getattr(deles, nome).bias)
    return nossa


def nossa_camada(attn, cfg):
    """Uma AtencaoMultiCabeca com os pesos de uma GPT2Attention (criada nas formas, sem
    sortear pesos que a cópia jogaria fora)."""
    with torch.device("meta"):
        nossa = AtencaoMultiCabeca(cfg.n_embd, cfg.n_head)
    return copiar_de_gpt2attention(nossa.to_empty(device="cpu"), attn).eval()


def mascara_aditiva(T):
    """(1, 1, T, T): 0 onde pode olhar, -inf no futuro (o que o GPT2Model monta e passa)."""
    return torch.zeros(T, T).masked_fill(L03.futuro(T, torch.device("cpu")),
                                         float("-inf"))[None, None]


def entradas_e_saidas(modelo, ids, logits=False):
    """Entrada e saída de cada camada de atenção num forward normal do modelo. Com
    logits=True, também os logits desse forward; sem, ele para antes da cabeça de saída
    (que faria 50.257 produtos escalares por token à toa)."""
    pares = []

    def gancho(_m, args, kwargs, saida):
        entrada = args[0] if args else kwargs["hidden_states"]
        pares.append((entrada, saida[0] if isinstance(saida, tuple) else saida))

    ganchos = [b.attn.register_forward_hook(gancho, with_kwargs=True)
               for b in modelo.transformer.h]
    try:
        with torch.no_grad():
            saida = modelo(ids) if logits else modelo.transformer(ids)
    finally:
        for g in ganchos:
            g.remove()
    return (pares, saida.logits) if logits else pares          # logits (1, T, V)


def pesos_do_gpt2(modelo, pares):
    """Pesos de atenção de todas as camadas e cabeças do GPT-2, (L, h, T, T): a nossa
    AtencaoMultiCabeca com os pesos de cada camada, na entrada que cada camada recebeu
    (pares = entradas_e_saidas(modelo, ids))."""
    cfg = modelo.config
    with torch.no_grad():
        return torch.stack([nossa_camada(bloco.attn, cfg).pesos(x)[0]      # (h, T, T)
                            for bloco, (x, _) in zip(modelo.transformer.h, pares)])


TEXTO = ("The quick brown fox jumps over the lazy dog. Alice went to the market to buy "
         "apples, and then she walked home along the river while the sun was setting.")
# Num modelo de caracteres (o da lição 10, treinado nas apostilas): português, e cabe
# inteiro nas 64 posições dele.
TEXTO_CARACTERES = "A atenção é uma média ponderada: cada token olha os anteriores."


def ids_do_texto(tok, cfg, texto=None):
    """Os ids do texto (padrão: TEXTO, ou TEXTO_CARACTERES num modelo de caracteres),
    cortados nas posições do modelo: (1, T)."""
    if texto is None:
        texto = TEXTO_CARACTERES if de_caracteres(tok) else TEXTO
    return tok(texto, return_tensors="pt")["input_ids"][:, :cfg.n_positions]


@LICAO.experimento(2)
def exp_igual_gpt2(licao):
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

    try:
        modelo, tok = licao.gpt2()
        cfg = modelo.config
        pares = entradas_e_saidas(modelo, ids_do_texto(tok, cfg))
        dizer(quebrar(f"Num forward do próprio modelo ({licao.modelo_curto}), capturo a "
                      f"entrada e a saída da atenção de cada uma das {cfg.n_layer} camadas e "
                      "passo a mesma entrada na nossa."))
        piores = []
        for bloco, (x, y) in zip(modelo.transformer.h, pares):
            with torch.no_grad():
                nossa = nossa_camada(bloco.attn, cfg)
                piores.append(float((nossa(x) - y).abs().max() / y.abs().max()))
        pior = max(piores)
        licao.verificar(pior < 1e-5, "igual à atenção do modelo carregado")
        dizer(f"  pior camada: max |nossa - GPT2Attention| / max |GPT2Attention| "
              f"{limite(pior, 1e-5, 2)}")
        deles = bloco.attn
    except ExperimentoPulado as motivo:
        dizer(quebrar(f"Sem o modelo ({str(motivo).splitlines()[0].rstrip('.')}): comparo com "
                      "uma GPT2Attention de pesos aleatórios, d = 768, 12 cabeças."))
        cfg = GPT2Config(n_embd=768, n_head=12)
        torch.manual_seed(licao.args.semente)
        deles = GPT2Attention(cfg, layer_idx=0).eval()
        with torch.no_grad():
            for p in deles.parameters():
                p.normal_(0, 0.02)
    d, h = cfg.n_embd, cfg.n_head
    dizer(f"\nc_attn do transformers: peso {' x '.join(map(str, deles.c_attn.weight.shape))} "
          f"(entrada x saída, Conv1D);\no nosso nn.Linear guarda {3 * d} x {d} (saída x "
          "entrada):\ncopiar_de_gpt2attention transpõe.")
    nossa = nossa_camada(deles, cfg)
    eager = GPT2Attention(GPT2Config(n_embd=d, n_head=h, attn_implementation="eager"),
                          layer_idx=0).eval()
    eager.load_state_dict(deles.state_dict())
    x = torch.randn(1, 7, d, generator=torch.Generator().manual_seed(licao.args.semente))
    with torch.no_grad():
        sem = float((nossa(x) - eager(x)[0]).abs().max())
        com = float((nossa(x) - eager(x, attention_mask=mascara_aditiva(7))[0]).abs().max())
    dizer("\nArmadilha: chamada SOZINHA, a GPT2Attention 'eager' não aplica máscara\n"
          "nenhuma (quem monta a máscara causal é o GPT2Model e a passa para a camada):")
    dizer(f"  sem attention_mask: max |diferença| = {num(sem, 4)}")
    dizer(f"  com a máscara aditiva (0 / -inf): max |diferença| {limite(com, 1e-5, 2)}")
    licao.verificar(com < 1e-5, "igual com a máscara")


# ============================================================ experimento 3
def flops_por_token(d, T):
    """FLOPs (multiplicação + soma = 2) por token num forward, sem máscara:
    projeções 2*d*3d + 2*d*d = 8d²; notas e mistura 2*T*d + 2*T*d = 4Td."""
    return 8 * d * d, 4 * T * d


@LICAO.experimento(3)
def exp_custo(licao):
    d = licao.args.d
    dizer(f"d = {inteiro(d)}: parâmetros da AtencaoMultiCabeca para vários h "
          "(c_attn + c_proj).\n")
    dizer(f"  {'h':>3} {'C/h':>5} {'parâmetros':>15}")
    formula = 4 * d * d + 4 * d
    contagens = []
    alturas = [h for h in (1, 2, 4, 6, 12, 24) if d % h == 0]
    if d % 64 == 0 and d // 64 not in alturas:                # cabeças de 64, como no GPT-2
        alturas.append(d // 64)
    for h in alturas:
        with torch.device("meta"):                             # só as formas, sem memória
            n = contar(AtencaoMultiCabeca(d, h))
        contagens.append(n)
        dizer(f"  {h:>3} {inteiro(d // h):>5} {inteiro(n):>15}")
    igual = licao.verificar(all(n == formula for n in contagens), "4d² + 4d")
    dizer(f"4d² + 4d com d = {inteiro(d)}: {inteiro(formula)} "
          f"({'confere em todos' if igual else 'NÃO confere'}).\nh só decide como os C "
          "números se cortam entre as cabeças.\n")
    dizer(f"FLOPs por token (uma multiplicação-e-soma = 2), d = {inteiro(d)}:")
    dizer(f"  {'T':>6} {'projeções 8d²':>16} {'notas+mistura 4Td':>18} {'parte de T':>11}")
    for T in sorted({128, 512, 1024, 2 * d, 4096}):
        proj, atn = flops_por_token(d, T)
        dizer(f"  {inteiro(T):>6} {inteiro(proj):>16} {inteiro(atn):>18} "
              f"{pct(atn / (proj + atn)):>11}")
    dizer(f"As duas partes empatam em T = 2d = {inteiro(2 * d)}: antes disso pesam as projeções;\n"
          "depois, a parte que cresce com T (e a sua memória, T x T por cabeça).")
    dizer("(tests/test_04_multihead.py confere a fórmula contra o contador de FLOPs do\n"
          "PyTorch, torch.utils.flop_counter, na nossa atenção e na do transformers.)")


# ============================================================ experimento 4
SIMBOLOS = {"no token anterior": "A", "no primeiro token": "I", "no próprio token": "D"}


@LICAO.experimento(4)
def exp_cabecas(licao):
    modelo, tok = licao.gpt2()
    cfg = modelo.config
    ids = ids_do_texto(tok, cfg)
    pesos = pesos_do_gpt2(modelo, entradas_e_saidas(modelo, ids))  # (L, h, T, T)
    L, h, T = pesos.shape[0], pesos.shape[1], ids.shape[1]
    notas = L03.notas_de_padrao(pesos)                         # 3 x (L, h)
    if de_caracteres(tok):                                     # o modelo da lição 10
        dizer(quebrar(f"Um modelo de caracteres ({REGRA_DE_CARACTERES}): o texto é "
                      f"\"{TEXTO_CARACTERES}\", {T} tokens, um por caractere."))
    dizer(f"{T} tokens de texto; as {L * h} cabeças ({L} camadas x {h}). Para cada uma, o\n"
          "peso médio (posições >= 1) em três alvos simples:\n")
    for nome, valores in notas.items():
        plano = valores.flatten()
        top = plano.argsort(descending=True)[:5].tolist()
        lista = "  ".join(f"{i // h}.{i % h} ({num(float(plano[i]), 2)})" for i in top)
        dizer(f"  [{SIMBOLOS[nome]}] {nome}, as 5 maiores:\n      {lista}")
    licao.pausa("o mapa camada x cabeça")
    dizer("\nMapa camada x cabeça: a letra do alvo que leva mais da metade do peso\n"
          "(A anterior, I início = primeiro token, D diagonal = o próprio; . nenhum):\n")
    dizer("  cabeça " + "".join(f"{j % 10:>2}" for j in range(h)))
    contagem = {s: 0 for s in [*SIMBOLOS.values(), "."]}
    for camada in range(L):
        linha = ""
        for j in range(h):
            valores = {nome: float(v[camada, j]) for nome, v in notas.items()}
            melhor = max(valores, key=valores.get)
            s = SIMBOLOS[melhor] if valores[melhor] > 0.5 else "."
            contagem[s] += 1
            linha += f" {s}"
        dizer(f"  {camada:>6} {linha}")
    dizer("\n  " + "   ".join(f"{s}: {n}" for s, n in contagem.items()) + " cabeças")
    if not licao.quer_figuras:
        return
    camada = min(5, L - 1)
    lado = math.ceil(math.sqrt(h))
    largura = 2.2 * lado + 1                                   # + 1 polegada: a barra de cor
    fig, eixos = figuras.figura(largura, 2.3 * math.ceil(h / lado), nrows=math.ceil(h / lado),
                                ncols=lado, squeeze=False, margens=(0.2, 1.3, 0.2, 0.9),
                                ajuste={"wspace": 0.15, "hspace": 0.3})  # sem o layout automático
    for j, ax in enumerate(eixos.flat):
        ax.set_axis_off()
        if j < h:
            imagem = ax.imshow(pesos[camada, j].numpy(), cmap="viridis", vmin=0, vmax=1)
            ax.set_title(f"{camada}.{j}", fontsize=11)
    barra = fig.add_axes([1 - 0.9 / largura, 0.15, 0.2 / largura, 0.65])
    fig.colorbar(imagem, cax=barra, label="peso de atenção")
    fig.suptitle(f"{licao.modelo_curto}: as {h} cabeças da camada {camada}\n"
                 "(linha = quem olha, coluna = para quem)")
    licao.salvar_figura(fig, "04_cabecas_camada.png")


# ============================================================ experimento 5
def notas_de_inducao(pesos, n):
    """pesos (L, h, T, T) numa sequência [início] + r + r (r com n tokens): média, na
    segunda cópia, do peso que a posição i dá a i - n + 1, o token que veio DEPOIS da
    primeira ocorrência do token atual."""
    i = torch.arange(1 + n, 1 + 2 * n)                         # posições da 2ª cópia
    return pesos[..., i, i - n + 1].mean(-1)                   # (L, h)


def perdas_por_copia(logits, ids, n):
    """Perda média (entropia cruzada) ao prever os tokens da 1ª e da 2ª cópia de r."""
    perdas = torch.nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:], reduction="none")
    # perdas[p] = prever ids[p + 1]; a 1ª cópia ocupa 1..n, a 2ª, n+1..2n
    return float(perdas[1:n].mean()), float(perdas[n + 1:2 * n].mean())


def sequencia_repetida(licao, cfg, tok):
    """(n, ids): n tokens sorteados (semente --semente), repetidos duas vezes, depois do
    <|endoftext|> (num modelo de caracteres, a linha nova; sem ela e sem o "qualquer
    outro" entre os sorteados)."""
    n = min(50, (cfg.n_positions - 1) // 2)
    g = torch.Generator().manual_seed(licao.args.semente)
    if de_caracteres(tok):     # o da lição 10: sem a linha nova e o "qualquer outro"
        comuns = torch.tensor([i for i in range(cfg.vocab_size)
                               if i not in tok.all_special_ids])
        r = comuns[torch.randint(0, len(comuns), (n,), generator=g)]
    else:
        r = torch.randint(0, cfg.vocab_size - 1, (n,), generator=g)  # sem o <|endoftext|>
    ids = torch.cat([torch.tensor([tok.eos_token_id]), r, r])[None]  # (1, 1 + 2n)
    return n, ids


@LICAO.experimento(5)
def exp_inducao(licao):
    modelo, tok = licao.gpt2()
    cfg = modelo.config
    n, ids = sequencia_repetida(licao, cfg, tok)                # (1, 1 + 2n)
    if de_caracteres(tok):
        dizer(f"{n} caracteres sorteados, repetidos duas vezes, depois de uma linha nova\n"
              f"(o começo de um texto para o modelo da lição 10): {1 + 2 * n} tokens ao "
              "todo.\n")
    else:
        dizer(f"{n} tokens sorteados, repetidos duas vezes, depois de um <|endoftext|>\n"
              f"(como um início de documento): {1 + 2 * n} tokens ao todo.\n")
    pares, logits = entradas_e_saidas(modelo, ids, logits=True)  # um forward: (1, T, V)
    pesos = pesos_do_gpt2(modelo, pares)                       # (L, h, T, T)
    notas = notas_de_inducao(pesos, n)                         # (L, h)
    L, h = notas.shape
    plano = notas.flatten()
    dizer("Nota de indução de cada cabeça: o peso médio que cada token da 2ª cópia\n"
          "dá ao token que veio depois dele na 1ª cópia. As 5 maiores:")
    for i in plano.argsort(descending=True)[:5].tolist():
        dizer(f"  camada.cabeça {i // h}.{i % h}: {num(float(plano[i]), 2)}")
    # olhar por igual para as i + 1 posições visíveis daria 1/(i + 1) ao alvo
    acaso = float(torch.arange(n + 2, 2 * n + 2, dtype=torch.float64).reciprocal().mean())
    fortes = int((plano > 0.4).sum())
    dizer(f"Cabeças com nota > 0,4: {fortes} de {L * h} (olhar ao acaso daria cerca de "
          f"{num(acaso, 2)}).\n")
    p1, p2 = perdas_por_copia(logits, ids, n)
    dizer(f"Perda média ao prever a 1ª cópia: {num(p1, 2)} (ln do vocabulário = "
          f"{num(math.log(cfg.vocab_size), 2)});\nna 2ª cópia: {num(p2, 2)}.")
    if p2 < 0.5 * p1:
        dizer("Na segunda vez o modelo acerta: ele copia o que veio depois da primeira\n"
              "ocorrência. É o trabalho das cabeças de indução.")
    elif de_caracteres(tok):
        dizer("A perda não cai à metade na 2ª cópia: este modelo não aprendeu a copiar\n"
              "(pouco treino? As cabeças de indução não nascem com o modelo: aparecem\n"
              "de repente, num ponto do treino; Olsson et al., 2022).")
    else:
        dizer("A perda não cai à metade na 2ª cópia: este modelo não aprendeu a copiar\n"
              "(pesos aleatórios ou pequenos demais?).")
    if not licao.quer_figuras:
        return
    largura, altura = 7 + 0.2 * max(0, h - 12), 5 + 0.12 * max(0, L - 12)  # gpt2-xl: 48 x 25
    fig, ax = figuras.figura(largura, altura, margens=(0.8, 0.3, 0.6, 0.4))
    imagem = ax.imshow(notas.numpy(), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    fig.colorbar(imagem, ax=ax, label="nota de indução")
    ax.set(xlabel="cabeça", ylabel="camada", title=f"Cabeças de indução: {licao.modelo_curto}")
    ax.set_xticks(range(h))                                    # todas as cabeças e camadas
    ax.set_yticks(range(L))
    ax.tick_params(labelsize=9 if max(L, h) <= 24 else 7)
    licao.salvar_figura(fig, "04_inducao.png")


# ============================================================ experimento 6
T6, BETA = 6, 40.0


def entrada_construida(conteudo):
    """x_t = [posição t em um-quente (T6 números), conteúdo de t (2 números)], d = 16."""
    x = torch.zeros(1, T6, 16, dtype=torch.float64)            # (B, T, C)
    x[0, :, :T6] = torch.eye(T6, dtype=torch.float64)
    x[0, :, T6:T6 + 2] = conteudo
    return x


def montar(h):
    """Pesos à mão, d = 16. h = 2: a cabeça 0 olha o token anterior, a 1 o primeiro, e
    c_proj põe [conteúdo de t-1, conteúdo de 0] na saída. h = 1, com o mesmo orçamento:
    a única cabeça tem de olhar para os dois ao mesmo tempo."""
    attn = AtencaoMultiCabeca(16, h).double()
    dh = 16 // h
    escala = BETA * math.sqrt(dh)                              # notas de BETA após / raiz(dh)
    recuo = torch.diag(torch.ones(T6 - 1, dtype=torch.float64), 1)  # e_t -> e_(t-1)
    with torch.no_grad():
        W, b = attn.c_attn.weight, attn.c_attn.bias           # (3C, C), (3C,)
        W.zero_(), b.zero_()
        Q, K, V = slice(0, 16), slice(16, 32), slice(32, 48)   # linhas de Q, K e V
        for cab in range(h):
            base = cab * dh
            W[K.start + base:K.start + base + T6, :T6] = torch.eye(T6)  # k_j = e_j
            W[V.start + base:V.start + base + 2, T6:T6 + 2] = torch.eye(2)  # v_j = conteúdo
        if h == 2:
            W[0:T6, :T6] = escala * recuo                      # cabeça 0: q_t = e_(t-1)
            b[dh] = escala                                     # cabeça 1: q = e_0, sempre
        else:
            W[0:T6, :T6] = escala * recuo                      # a única: e_(t-1) + e_0
            b[0] = escala
        P = attn.c_proj.weight                                 # (C, C)
        P.zero_(), attn.c_proj.bias.zero_()
        P[0:2, 0:2] = torch.eye(2)                             # saída 0-1 <- cabeça 0
        if h == 2:
            P[2:4, dh:dh + 2] = torch.eye(2)                   # saída 2-3 <- cabeça 1
    return attn


@LICAO.experimento(6)
def exp_por_que(licao):
    g = torch.Generator().manual_seed(licao.args.semente)
    conteudo = torch.randn(T6, 2, generator=g, dtype=torch.float64).round(decimals=1)
    x = entrada_construida(conteudo)
    duas, uma = montar(2), montar(1)
    dizer(f"{T6} tokens, d = 16: posição em um-quente + um conteúdo de 2 números.\n"
          "Tarefa: cada token t >= 1 quer trazer DUAS coisas, o conteúdo do token\n"
          "anterior e o do primeiro token. Pesos montados à mão (veja montar()).\n")
    n2, n1 = contar(duas), contar(uma)
    flops = T6 * sum(flops_por_token(16, T6))                  # a fórmula não tem h
    dizer(f"  parâmetros: h = 2 -> {inteiro(n2)}; h = 1 -> {inteiro(n1)}")
    dizer(f"  FLOPs de um forward (experimento 3): {inteiro(flops)} com h = 2 ou h = 1")
    licao.verificar(n1 == n2, "mesmo orçamento")
    t = 3
    with torch.no_grad():
        y2, y1 = duas(x)[0], uma(x)[0]                          # (T, C)
        p2, p1 = duas.pesos(x)[0, :, t], uma.pesos(x)[0, :, t]  # (h, T)
    dizer(f"\nToken t = {t}: conteúdo de t-1 = [{num(conteudo[t - 1, 0].item(), 1)}; "
          f"{num(conteudo[t - 1, 1].item(), 1)}], do primeiro = "
          f"[{num(conteudo[0, 0].item(), 1)}; {num(conteudo[0, 1].item(), 1)}]")
    for nome, p in (("h = 2, cabeça 0", p2[0]), ("h = 2, cabeça 1", p2[1]),
                    ("h = 1", p1[0])):
        dizer(f"  pesos de {nome:<16} [{'; '.join(num(v) for v in p.tolist())}]")
    dizer(f"  saída h = 2, dims 0-3: [{'; '.join(num(v) for v in y2[t, :4].tolist())}]")
    media = (conteudo[t - 1] + conteudo[0]) / 2
    eh_media = bool((y1[t, :2] - media).abs().max() < 1e-6)
    dizer(f"  saída h = 1, dims 0-1: [{'; '.join(num(v) for v in y1[t, :2].tolist())}]"
          + ("  = a média dos dois" if eh_media else ""))
    erro2 = float((y2[1:, :4] - torch.cat([conteudo[:-1], conteudo[:1].expand(T6 - 1, 2)],
                                          dim=1)).abs().max())
    ok = licao.verificar(erro2 < 1e-6, "duas cabeças entregam os dois conteúdos")
    dizer(f"\nCom 2 cabeças, todo token t >= 1 recebe os dois conteúdos separados\n"
          f"(erro {limite(erro2, 1e-6, 2)}).")
    dizer("Com 1 cabeça há UMA distribuição de pesos por token, e o conteúdo chega como\n"
          "uma única média ponderada: somados num mesmo vetor, os dois conteúdos não\n"
          "se separam mais, escolha os pesos que escolher. Mesmo custo; o que muda é\n"
          "quantos padrões de 'quem olha para quem' cabem numa camada." if ok else
          "As duas cabeças NÃO entregaram os conteúdos: confira montar().")


# ============================================================ a página (--html)
# Onde cada token olha, em qualquer cabeça do GPT-2 carregado, num arquivo que abre com um
# duplo clique (comum/paginas.py): os pesos do experimento 4 (o TEXTO) de todas as cabeças, em
# float32 (só o triângulo de baixo: o resto é a máscara), e as notas de indução do experimento
# 5, o mapa camada x cabeça que escolhe a cabeça. tests/test_04_paginas.py confere contra as
# atenções do transformers e contra o que os experimentos 4 e 5 imprimem. O HTML, o CSS e o
# JavaScript moram em lab/html/04_multihead.* (e em lab/html/atencao.js, com a página da 03).
def pagina() -> str:
    """A página da lição (--html): a cabeça escolhida (camada e cabeça, ou um clique no
    mapa das notas de indução) e, para o token apontado, os pesos que ele dá a cada um."""
    import base64

    modelo, tok = LICAO.gpt2()
    cfg = modelo.config
    ids = ids_do_texto(tok, cfg)                                   # (1, T)
    pesos = pesos_do_gpt2(modelo, entradas_e_saidas(modelo, ids))  # (L, h, T, T)
    L, h, T = pesos.shape[0], pesos.shape[1], ids.shape[1]
    baixo = torch.tril_indices(T, T)                               # (2, T(T+1)/2), linha a linha
    triangulos = pesos[..., baixo[0], baixo[1]].float().contiguous()  # (L, h, T(T+1)/2)
    n, repetida = sequencia_repetida(LICAO, cfg, tok)
    inducao = notas_de_inducao(pesos_do_gpt2(modelo, entradas_e_saidas(modelo, repetida)), n)
    dados = {"texto": TEXTO, "modelo": LICAO.modelo_curto, "L": L, "h": h, "n": n,
             "semente": LICAO.args.semente,
             "tokens": [token(tok, i, 12, espaco="·") for i in ids[0]],
             "pesos": base64.b64encode(triangulos.numpy().astype("<f4").tobytes()).decode(),
             "inducao": [[float(x) for x in linha] for linha in inducao]}
    corpo, script, estilo = (paginas.fonte(f"04_multihead.{e}") for e in ("html", "js", "css"))
    script = paginas.fonte("atencao.js") + script          # com a página da 03
    estilo = paginas.fonte("03_attention.css") + estilo
    return paginas.documento(f"Lição {LICAO.numero} · Onde cada token olha", corpo, script,
                             dados, estilo, "Os pesos de atenção de todas as cabeças do GPT-2")


if __name__ == "__main__":
    if paginas.pedida(LICAO.args):                  # --html [PASTA] / --abrir: só a página
        sys.exit(paginas.gravar(LICAO, pagina, "04_multihead.html"))
    sys.exit(LICAO.rodar())
