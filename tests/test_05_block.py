"""Lição 05: o bloco contra o GPT2Block do transformers, Pre-LN x Post-LN medido,
logit lens e normas contra contas independentes, contagens e GELU contra fatos.md."""
from __future__ import annotations

import math
import os
import types

import pytest
import torch
from transformers import GPT2Config
from transformers.models.gpt2.modeling_gpt2 import GPT2Block

from comum import console
from comum.carregar_gpt2 import carregar_gpt2
from conftest import RAIZ, rodar_script
from copia_do_aluno import copia_da_licao, rodar_copia
from comum import importar_licao
from treinos import treino_05

L05 = importar_licao("05_block")


def mascara_causal(T):
    """Máscara aditiva (1, 1, T, T): o GPT2Block sozinho não cria a sua (o modelo cria)."""
    return torch.full((T, T), float("-inf")).triu(1)[None, None]


def bloco_hf(bloco, x):
    y = bloco(x, attention_mask=mascara_causal(x.shape[1]))
    return y[0] if isinstance(y, tuple) else y


# ------------------------------------------------------------ experimento 1
@pytest.mark.parametrize("d, h, impl", [(768, 12, "eager"), (64, 4, "sdpa")])
def test_bloco_igual_ao_gpt2block(d, h, impl):
    torch.manual_seed(0)
    config = GPT2Config(n_embd=d, n_head=h, attn_implementation=impl)
    deles = GPT2Block(config, layer_idx=0).eval()
    with torch.no_grad():  # pesos não triviais em tudo, inclusive LayerNorm e vieses
        for p in deles.parameters():
            p.normal_(0, 0.05)
    nosso = L05.copiar_pesos_gpt2(L05.Bloco(d, h).eval(), deles.state_dict())
    x = torch.randn(2, 7, d)
    with torch.no_grad():
        esperado = bloco_hf(deles, x)
        diferenca = (nosso(x) - esperado).abs().max().item()
    assert diferenca <= 1e-5


def test_sem_transpor_o_conv1d_da_errado():
    """O teste acima pode falhar: sem a transposição do c_proj (quadrado) a saída muda."""
    torch.manual_seed(0)
    deles = GPT2Block(GPT2Config(n_embd=64, n_head=4), layer_idx=0).eval()
    with torch.no_grad():
        for p in deles.parameters():
            p.normal_(0, 0.05)
    nosso = L05.copiar_pesos_gpt2(L05.Bloco(64, 4).eval(), deles.state_dict())
    with torch.no_grad():
        nosso.attn.c_proj.weight.copy_(nosso.attn.c_proj.weight.t().clone())
        x = torch.randn(1, 5, 64)
        esperado = bloco_hf(deles, x)
        assert (nosso(x) - esperado).abs().max().item() > 1e-3


def test_forma_entra_igual_sai():
    bloco = L05.Bloco(48, 4)
    for pre in (True, False):
        bloco.pre_ln = pre
        assert bloco(torch.randn(3, 5, 48)).shape == (3, 5, 48)


def test_atencao_e_causal():
    torch.manual_seed(0)
    attn = L05.AtencaoMultiCabeca(32, 4).eval()
    x = torch.randn(1, 6, 32)
    y = torch.cat([x[:, :4], torch.randn(1, 2, 32)], dim=1)  # muda só o futuro
    with torch.no_grad():
        assert torch.allclose(attn(x)[:, :4], attn(y)[:, :4], atol=1e-6)


# ------------------------------------------------------------ experimento 2
@pytest.fixture(scope="module")
def corridas():
    antes = torch.get_num_threads()
    torch.set_num_threads(1)  # modelo minúsculo: um thread é mais rápido e dá o mesmo
    try:         # os mesmos treinos que test_05_apostila pede: uma vez na sessão
        return {s: (treino_05(True, s), treino_05(False, s)) for s in (0, 1, 2)}
    finally:
        torch.set_num_threads(antes)


@pytest.mark.parametrize("semente", [0, 1, 2])
def test_post_ln_colapsa_e_pre_ln_nao(corridas, semente):
    (perfil_pre, g_pre, perda_pre), (perfil_pos, g_pos, perda_pos) = corridas[semente]
    # no início, nada sumiu: na camada 1 os dois são da mesma ordem
    assert 0.3 < perfil_pos[0] / perfil_pre[0] < 3
    assert "nada sumiu" in L05.frase_inicio(perfil_pos[0] / perfil_pre[0])
    # Xiong et al.: no início o Post-LN recebe mais gradiente nas últimas camadas
    assert perfil_pos[-1] / perfil_pre[-1] > 1.5
    # treinando sem aquecimento: o gradiente da camada 1 do Post-LN cai >= 100x e fica
    assert L05.quedas(g_pos)[0] >= 100 and "colapsou" in L05.frase_gradiente("Post-LN", g_pos)
    assert L05.quedas(g_pre)[1] < 100 and "não colapsou" in L05.frase_gradiente("Pre-LN", g_pre)
    # e a perda do Post-LN fica no acaso, a do Pre-LN desce abaixo dela
    assert abs(perda_pos[-1] - math.log(16)) < 0.1 and " no acaso" in L05.frase_perda(perda_pos)
    assert perda_pre[-1] < perda_pos[-1] - 0.02


def test_exercicio_semente_4_nao_colapsa():
    """O exemplo da issue: passos=40, lr=1e-3, semente 4. O gradiente do Post-LN encolhe
    (dezenas de vezes no pior passo), mas não 100x: a frase não pode dizer "parou"."""
    antes = torch.get_num_threads()
    torch.set_num_threads(1)
    try:                             # o mesmo treino do exercício 2 em test_05_apostila
        g = treino_05(False, 4, passos=40, lr=1e-3)[1]
    finally:
        torch.set_num_threads(antes)
    fim, pior = L05.quedas(g)
    assert 2 < pior < 100 and fim < 100
    frase = L05.frase_gradiente("Post-LN", g)
    assert "encolheu, mas não colapsou" in frase and "parou de aprender" not in frase


# Os limiares, com números sintéticos: a frase segue os números, não a semente.
def test_frase_gradiente_limiar_de_colapso():
    assert L05.COLAPSO == 100
    assert "colapsou; a primeira camada parou de aprender" in L05.frase_gradiente(
        "Post-LN", [1.0, 0.5, 0.01])                       # exatamente 100x
    frase = L05.frase_gradiente("Post-LN", [1.0, 0.5, 1 / 99.9])
    assert "parou" not in frase and "não colapsou" in frase and "99,9x" in frase
    frase = L05.frase_gradiente("Post-LN", [0.9, 0.1])      # 9x
    assert "caiu no máximo 9,0x" in frase and "encolheu, mas não colapsou" in frase
    assert "caiu 5,7e6x" in L05.frase_gradiente("Post-LN", [5.7, 1e-6])


def test_frase_gradiente_diz_a_maior_queda_do_treino():
    # o menor valor está no começo: a frase antiga (início ÷ menor dos 5 últimos) diria 2x
    g = [1.0, 0.05] + [0.5] * 10
    assert L05.quedas(g) == (2.0, 20.0)
    assert "caiu no máximo 20,0x" in L05.frase_gradiente("Pre-LN", g)
    # caiu 1000x e voltou: não é colapso, e a frase diz onde terminou
    frase = L05.frase_gradiente("Post-LN", [1.0, 1e-3, 2.0])
    assert "chegou a cair 1,0e3x, mas voltou" in frase and "2,0x acima do início" in frase
    assert "não encolheu" in L05.frase_gradiente("Pre-LN", [1.0, 1.3, 0.8])
    assert "divergiu" in L05.frase_gradiente("Pre-LN", [1.0, float("nan")])


def test_frase_perda_compara_com_o_acaso():
    acaso = math.log(16)
    # a semente 3 da issue: de 2,90 a 2,75 não é "aprendendo" (está a 0,02 do acaso)
    frase = L05.frase_perda([2.90, 2.75])
    assert "aprendendo" not in frase and "no acaso" in frase
    assert "a rede está aprendendo" in L05.frase_perda([2.88, 2.50])
    assert "a rede está aprendendo" in L05.frase_perda([2.88, acaso - L05.MARGEM])
    assert "aprendendo" not in L05.frase_perda([2.88, acaso - L05.MARGEM + 1e-3])
    assert "acima do acaso" in L05.frase_perda([2.9, 3.2])
    assert "divergiu" in L05.frase_perda([2.9, float("inf")])


def test_frase_profundidade_e_inicio():
    r = math.sqrt(10 / 40)                                  # 1/raiz(L) exato: x0,50
    assert L05.frase_profundidade(r, 10, 40) == "encolhe como 1/raiz(L)."
    assert "mais devagar" in L05.frase_profundidade(0.74, 10, 40)
    assert "mais depressa" in L05.frase_profundidade(0.2, 10, 40)
    assert L05.frase_profundidade(1.9, 10, 40) == "não encolhe."
    assert "nada sumiu" in L05.frase_inicio(0.96)
    assert "muito menos" in L05.frase_inicio(0.1) and "muito mais" in L05.frase_inicio(5)


def test_barra_conta_os_passos_pedidos(monkeypatch):
    """O total da barra sai do número de passos (o exercício 2 o muda), não de 2 * 21."""
    registro = {"total": None, "avancos": 0}

    class Barra:
        def __init__(self, total, _texto):
            registro["total"] = total

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

        def avancar(self):
            registro["avancos"] += 1

    monkeypatch.setattr(L05, "Progresso", Barra)
    monkeypatch.setattr(L05, "dizer", lambda *_: None)
    args = types.SimpleNamespace(semente=0, passos=3, taxa=1e-3, aquecimento=0,
                                 inicializacao="pytorch")
    L05.exp_pre_post(types.SimpleNamespace(args=args, quer_figuras=False,
                                          pausa=lambda *_: None))
    assert registro["total"] == registro["avancos"] == 2 * (3 + 1) + 2


def test_passos_e_taxa_pela_linha_de_comando():
    r = rodar_script("05_block.py", "--so", "2", "--passos", "2", "--taxa", "1e-3",
                     "--sem-figuras")
    assert r.returncode == 0, r.saida + r.erros
    assert "Adam, taxa 1e-3, SEM aquecimento;" in r.saida and "2 passos de treino" in r.saida
    linhas = r.saida.splitlines()
    inicio = next(i for i, linha in enumerate(linhas) if linha.split()[:1] == ["passo"]) + 1
    tabela = linhas[inicio:linhas.index("", inicio)]
    assert [int(linha.split()[0]) for linha in tabela] == [0, 1, 2]
    for ruim in ("0", "-3", "x"):
        r = rodar_script("05_block.py", "--passos", ruim)
        assert r.returncode == 2 and "Traceback" not in r.erros and "--passos" in r.erros
    for ruim in ("0", "2", "abc", "nan"):
        r = rodar_script("05_block.py", "--taxa", ruim)
        assert r.returncode == 2 and "Traceback" not in r.erros and "--taxa" in r.erros
    for opcao, ruim in (("--aquecimento", "-1"), ("--aquecimento", "x"),
                        ("--inicializacao", "xavier")):
        r = rodar_script("05_block.py", opcao, ruim)
        assert r.returncode == 2 and "Traceback" not in r.erros and opcao in r.erros


def test_ctrl_c_no_treino_para_ja():
    """Ctrl+C (duas vezes) no meio do treino, num terminal de verdade (pty, com a barra
    de progresso): sai com 130, uma linha, sem abortar (com duas threads de treino, o
    processo abortava: "terminate called without an active exception"). Com 100.000
    passos, esperar o treino acabar levaria horas; o teste exige que pare antes de 60 s
    (esta máquina é lenta para sair: só importar o torch e sair pode levar segundos)."""
    pytest.importorskip("pty")
    import signal

    from terminal import Pty

    with Pty([RAIZ / "lab" / "05_block.py", "--so", "2", "--sem-figuras", "--passos", "100000"],
             RAIZ) as t:
        t.esperar(rb" [1-9][0-9]*/200004")            # o treino já deu passos
        t.sinal(signal.SIGINT)
        t.ler(0.1)
        t.sinal(signal.SIGINT)                        # o aluno impaciente aperta de novo
        t.ler(60)
        codigo = t.codigo()
    texto = t.texto
    # 130; ou, se o 2º Ctrl+C cai na finalização do torch (segundos nesta máquina), o
    # processo morre pelo próprio SIGINT, que o terminal também mostra como 130
    assert codigo in (130, -signal.SIGINT), texto[-800:]
    assert texto.count("Interrompido (Ctrl+C).") == 1
    assert "terminate called" not in texto and "Traceback" not in texto
    assert "Resumo" not in texto


def test_sem_o_residual_o_passo_a_passo_nao_confere_e_sai_com_1(tmp_path):
    """Issue 19: a conferência do experimento 1 conta. Sem a soma do residual no forward
    do Bloco (numa cópia), a linha diz NÃO, o experimento falha e a execução sai com 1
    (antes saía 0, com 'Passo a passo = bloco(x)? NÃO.' na tela)."""
    copia = copia_da_licao(tmp_path, "05_block.py", ("x = x + self.mlp(self.ln_2(x))    # computação",
                                                     "x = self.mlp(self.ln_2(x))    # computação"))
    r = rodar_copia(copia, "--so", "1")
    codigo, saida = r.returncode, r.saida
    assert codigo == 1, saida
    assert "Passo a passo = bloco(x)? NÃO." in saida
    assert "FALHOU a autoverificação: não confere: passo a passo = bloco(x)" in saida
    assert "falhou: 1. Monte o bloco e veja as formas" in saida and "Próximo passo" not in saida


def test_um_erro_na_copia_do_aluno_diz_arquivo_e_linha(tmp_path):
    """Issue 19: nn.Linear(4 * d, d) trocado por nn.Linear(d, d) numa cópia: o erro sai em
    português com o arquivo e a linha do aluno, e os outros experimentos rodam."""
    copia = copia_da_licao(tmp_path, "05_block.py", ("self.c_proj = nn.Linear(4 * d, d)",
                                                     "self.c_proj = nn.Linear(d, d)"))
    r = rodar_copia(copia, "--so", "1,6", "--sem-figuras")
    codigo, saida = r.returncode, r.saida
    assert codigo == 1 and "Traceback" not in saida, saida
    linha = next(n for n, x in enumerate(copia.read_text(encoding="utf-8").splitlines(), 1)
                 if "m = bloco.mlp.c_proj(m)" in x)       # o experimento 1 chama c_proj
    assert f"meu_05.py:{linha}, na função exp_formas:" in saida, saida
    assert "FALHOU: RuntimeError: mat1 and mat2 shapes cannot be multiplied" in saida
    assert "Experimento 6/6" in saida and "1 de 2 experimentos rodou." in saida


def test_tarefa_do_token_anterior():
    ids, alvo = L05.lote_token_anterior(torch.Generator().manual_seed(0))
    assert (alvo[:, 0] == -100).all() and torch.equal(alvo[:, 1:], ids[:, :-1])


# ------------------------------------------------------------ experimentos 3 e 4
@pytest.fixture(scope="module")
def pequeno(gpt2_pequeno):
    return carregar_gpt2(str(gpt2_pequeno))


def _estados_na_mao(modelo, ids):
    """Fluxo residual passo a passo, sem output_hidden_states: wte + wpe, depois cada bloco."""
    t = modelo.transformer
    x = t.wte(ids) + t.wpe(torch.arange(ids.shape[1]))[None]
    estados = [x]
    for bloco in t.h:
        x = bloco_hf(bloco, x)
        estados.append(x)
    return estados


def test_normas_residuais_conferem(pequeno):
    modelo, tok = pequeno
    texto = L05.TEXTOS[0]
    normas = L05.normas_residuais(modelo, tok, texto)
    ids = tok(texto, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        esperado = torch.stack([e[0].norm(dim=-1) for e in _estados_na_mao(modelo, ids)])
    assert torch.allclose(normas, esperado, atol=1e-5)


def test_logit_lens_confere(pequeno):
    modelo, tok = pequeno
    ids = tok(L05.LENTE[0], return_tensors="pt")["input_ids"]
    p, i = L05.logit_lens(modelo, ids)
    with torch.no_grad():
        estados = _estados_na_mao(modelo, ids)
        t = modelo.transformer
        for c, e in enumerate(estados):
            probs = (t.ln_f(e) @ t.wte.weight.T)[0].softmax(-1)  # ln_f uma única vez
            assert torch.equal(i[c], probs.argmax(-1))
            assert torch.allclose(p[c], probs.max(-1).values, atol=1e-5)
        # a última linha é o próprio modelo
        assert torch.equal(i[-1], modelo(ids).logits[0].argmax(-1))


# ------------------------------------------------------------ experimentos 5 e 6
def test_parametros_sem_modelo_batem_com_fatos(tmp_path):
    r = rodar_script("05_block.py", "--so", "5", env={"LAB_MODELO": str(tmp_path / "nada")})
    assert r.returncode == 0, r.saida + r.erros
    s = r.saida
    for figura in ("1.769.472", "2.304", "589.824", "2.359.296", "3.072", "7.087.872",
                   "38.597.376", "786.432", "124.439.808", "163.037.184", "66,6 %"):
        assert figura in s, figura
    assert "configuração" in s and "confere com a contagem" in s


def test_parametros_do_modelo_carregado(gpt2_pequeno):
    r = rodar_script("05_block.py", "--so", "5", env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0
    d = 64
    assert console.inteiro(12 * d * d + 13 * d) in r.saida and "modelo carregado" in r.saida


def test_gelu_bate_com_fatos():
    r = rodar_script("05_block.py", "--so", "6", "--sem-figuras")
    assert r.returncode == 0
    for figura in ("4,73e-4 em x = 2,70", "-0,16997 em x = -0,7518", "GELU(1) = 0,8413",
                   "GELU 0,50"):
        assert figura in r.saida, figura
    x = torch.linspace(-4, 4, 101, dtype=torch.float64)
    assert torch.allclose(L05.gelu_exata(x), torch.nn.functional.gelu(x), atol=1e-12)
    assert torch.allclose(L05.gelu_tanh(x), torch.nn.functional.gelu(x, approximate="tanh"),
                          atol=1e-12)


def test_ln_f_duas_vezes_medido_no_modelo_carregado(pequeno):
    """Issue 40: a apostila citava "cerca de 12 %" sem fonte. Agora o experimento 4 conta,
    no modelo carregado, as posições em que o ln_f aplicado duas vezes mudaria o token mais
    provável, contra uma conta independente (o LayerNorm à mão sobre o último estado)."""
    import copy

    modelo, tok = pequeno
    ids = tok(L05.LENTE[1], return_tensors="pt")["input_ids"]
    torto = copy.deepcopy(modelo)          # um ln_f longe da identidade: muda tokens
    gerador = torch.Generator().manual_seed(0)
    with torch.no_grad():
        ln = torto.transformer.ln_f
        ln.weight.copy_(torch.randn(ln.weight.shape, generator=gerador) * 3)
        ln.bias.copy_(torch.randn(ln.bias.shape, generator=gerador))
    contagens = []
    for m in (modelo, torto):
        with torch.no_grad():
            saida = m(ids, output_hidden_states=True)
            ln = m.transformer.ln_f
            h = saida.hidden_states[-1][0].double()                  # (T, C), já normalizado
            media, var = h.mean(-1, keepdim=True), h.var(-1, unbiased=False, keepdim=True)
            de_novo = ((h - media) / torch.sqrt(var + ln.eps) * ln.weight.double()
                       + ln.bias.double())                           # (T, C)
            logits = de_novo @ m.lm_head.weight.double().T           # (T, V)
        esperado = int((logits.argmax(-1) != saida.logits[0].argmax(-1)).sum())
        assert L05.ln_f_duas_vezes(m, ids) == (esperado, ids.shape[1])
        contagens.append(esperado)
    assert contagens[1] > 0, contagens
    assert L05.frase_ln_f_duas_vezes(3, 25).startswith(
        "Com o ln_f aplicado duas vezes no último estado, o token mais provável mudaria em 3 "
        "de 25 posições (12 %)")
    assert "nenhuma das 25 posições" in L05.frase_ln_f_duas_vezes(0, 25)


# ------------------------------------------------------------ de ponta a ponta
def _linhas_largas(texto, limite=80):
    return [linha for linha in texto.splitlines() if len(linha) > limite]


@pytest.mark.parametrize("colunas", ["80", "60"])
def test_logit_lens_mostra_os_tokens_inteiros(pequeno, gpt2_pequeno, colunas):
    """Em 80 (e 60) colunas, nenhum token da tabela é cortado: a tabela sai em partes de
    colunas consecutivas. Cada linha (camada) das partes, juntas, tem exatamente os
    tokens que a lente calcula (antes, o rich cortava a última coluna em 3 caracteres)."""
    r = rodar_script("05_block.py", "--so", "4", "--sem-figuras",
                     env={"LAB_MODELO": str(gpt2_pequeno), "COLUMNS": colunas})
    assert r.returncode == 0, r.saida + r.erros
    if colunas == "80":  # em 60, o texto corrido passa; as tabelas, não (conferidas abaixo)
        assert not _linhas_largas(r.saida)
    modelo, tok = pequeno
    regioes = r.saida.split('\nDepois de "')          # uma por frase, antes do veredito
    for texto, regiao in zip(L05.LENTE, regioes):
        ids = tok(texto, return_tensors="pt")["input_ids"]
        _, i = L05.logit_lens(modelo, ids)
        celulas = [linha.replace("|", " ").split() for linha in regiao.splitlines()]
        for c in range(i.shape[0]):
            rotulo = "emb" if c == 0 else str(c)
            esperado = "".join(console.token(tok, x, 7, espaco="_", marca=True) for x in i[c])
            esperado = esperado.encode("cp1252", "replace").decode("cp1252")
            achado = "".join("".join(cs[1:]) for cs in celulas if cs[:1] == [rotulo]
                             and len(cs) > 1)
            assert achado == esperado, (texto, rotulo)


def test_frase_da_aposta_nao_separa_o_numero_do_porcento(monkeypatch):
    """Issue 22: em 80 colunas, a frase do fim do experimento 4 quebrava entre '(0,0' e '%)'.
    Com a segunda frase da lente e o final " Paris", a quebra cairia justo ali."""
    import shutil

    monkeypatch.setattr(shutil, "get_terminal_size", lambda *_: os.terminal_size((80, 24)))
    texto = L05.LENTE[1]
    frase = L05.frase_da_aposta(texto, " Paris", 0.0001)
    linhas = frase.splitlines()
    assert " ".join(linhas) == (f'Depois de "{texto}" o modelo aposta em " Paris" (0,0 %).')
    assert all(len(x) <= 79 for x in linhas) and not any(x.endswith("(0,0") for x in linhas)
    assert any(x.startswith("(0,0 %)") for x in linhas), linhas
    ingenua = console.quebrar(" ".join(linhas))        # a frase antiga: quebrava no meio
    assert any(x.endswith("(0,0") for x in ingenua.splitlines()), ingenua


def test_licao_inteira_com_modelo(gpt2_pequeno, tmp_path):
    r = rodar_script("05_block.py", "--figuras", str(tmp_path),
                     env={"LAB_MODELO": str(gpt2_pequeno)})
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    # COLUMNS=80. "Figura salva: <pasta>" é de figuras.salvar e traz
    # o caminho que o aluno escolheu: fica de fora aqui (veja o relatório da lição 05)
    largas = [x for x in _linhas_largas(r.saida) if not x.startswith("Figura salva: ")]
    assert not largas, largas
    assert "Traceback" not in r.saida + r.erros
    for k in range(1, 7):
        assert f"Experimento {k}/6 · " in r.saida
    assert "6 de 6 experimentos rodaram" in r.saida
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "05_gelu_relu.png", "05_logit_lens.png", "05_norma_residual.png", "05_pre_post_ln.png"]


def test_licao_sem_modelo_explica_e_segue(tmp_path):
    r = rodar_script("05_block.py", "--sem-figuras", "--so", "3,4,5",
                     env={"LAB_MODELO": str(tmp_path / "sem-modelo"), "COLUMNS": "60"})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert r.saida.count("PULADO: não há pasta") == 2
    assert "Contagem da configuração do gpt2 (sem baixar pesos)" in r.saida
    assert "1 de 3 experimentos rodou" in r.saida


def test_caminho_longo_do_modelo_cabe_em_80_colunas(gpt2_pequeno, tmp_path):
    longo = tmp_path / ("uma-pasta-com-um-nome-bem-comprido-de-aluno" * 2) / "gpt2-pequeno"
    longo.parent.mkdir()
    longo.symlink_to(gpt2_pequeno, target_is_directory=True)
    r = rodar_script("05_block.py", "--so", "3,4,5", "--sem-figuras", "--modelo", str(longo))
    assert r.returncode == 0, r.saida + r.erros
    assert len(str(longo)) > 80
    assert not _linhas_largas(r.saida), _linhas_largas(r.saida)
