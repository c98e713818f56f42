"""Lição 04: a AtencaoMultiCabeca contra a GPT2Attention do transformers (mesmos pesos),
separar/juntar contra fatias explícitas, contagens contra o transformers e o FlopCounterMode,
notas de indução contra uma extração independente, e a saída do script. O que a apostila
afirma (o texto, as respostas, as notas para o professor): test_04_apostila."""
from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
from transformers import GPT2Config
from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

from conftest import RAIZ, pasta_da_sessao, rodar_script
from comum import importar_licao

L04 = importar_licao("04_multihead")


def gpt2attention(d, h, impl, semente=0):
    torch.manual_seed(semente)
    deles = GPT2Attention(GPT2Config(n_embd=d, n_head=h, attn_implementation=impl),
                          layer_idx=0).eval()
    with torch.no_grad():
        for p in deles.parameters():
            p.normal_(0, 0.05)
    return deles


# ------------------------------------------------------------ a classe
@pytest.mark.parametrize("d, h, impl", [(768, 12, "eager"), (64, 4, "sdpa"), (48, 3, "eager")])
def test_igual_a_gpt2attention(d, h, impl):
    deles = gpt2attention(d, h, impl)
    nossa = L04.copiar_de_gpt2attention(L04.AtencaoMultiCabeca(d, h), deles).eval()
    x = torch.randn(2, 9, d)
    with torch.no_grad():
        esperado = deles(x, attention_mask=L04.mascara_aditiva(9))[0]
        assert (nossa(x) - esperado).abs().max() < 1e-5
        # os pesos de cada cabeça também (a eager os devolve)
        if impl == "eager":
            pesos = deles(x, attention_mask=L04.mascara_aditiva(9))[1]
            assert (nossa.pesos(x) - pesos).abs().max() < 1e-6


def test_sem_transpor_da_errado():
    deles = gpt2attention(64, 4, "eager")
    nossa = L04.copiar_de_gpt2attention(L04.AtencaoMultiCabeca(64, 4), deles)
    with torch.no_grad():
        nossa.c_proj.weight.copy_(nossa.c_proj.weight.t().clone())
        x = torch.randn(1, 5, 64)
        assert (nossa(x) - deles(x, attention_mask=L04.mascara_aditiva(5))[0]).abs().max() > 1e-3


def test_eager_sozinha_nao_e_causal_e_sdpa_e():
    """O que o experimento 2 afirma sobre o transformers instalado."""
    x = torch.randn(1, 6, 64)
    with torch.no_grad():
        eager, sdpa = gpt2attention(64, 4, "eager"), gpt2attention(64, 4, "sdpa")
        com_mascara = eager(x, attention_mask=L04.mascara_aditiva(6))[0]
        assert (eager(x)[0] - com_mascara).abs().max() > 1e-3
        assert (sdpa(x)[0] - com_mascara).abs().max() < 1e-5


def test_separar_e_juntar_contra_fatias():
    x = torch.randn(2, 5, 12)
    partes = L04.separar_cabecas(x, 3)
    assert partes.shape == (2, 3, 5, 4)
    for i in range(3):
        assert torch.equal(partes[:, i], x[..., 4 * i:4 * (i + 1)])
    assert torch.equal(L04.juntar_cabecas(partes), x)


def test_cabeca_a_cabeca_e_oraculo_independente():
    """A definição por fatias (sem reshape) bate com o transformers; a versão errada não."""
    deles = gpt2attention(64, 4, "eager")
    nossa = L04.copiar_de_gpt2attention(L04.AtencaoMultiCabeca(64, 4), deles).eval()
    errada = L04.AtencaoComViewErrado(64, 4).eval()
    errada.load_state_dict(nossa.state_dict())
    x = torch.randn(2, 10, 64)
    with torch.no_grad():
        esperado = deles(x, attention_mask=L04.mascara_aditiva(10))[0]
        assert (L04.cabeca_a_cabeca(nossa, x) - esperado).abs().max() < 1e-5
        assert errada(x).shape == esperado.shape
        assert (errada(x) - esperado).abs().max() > 1e-2


def test_mesma_conta_da_versao_antiga_da_licao_05():
    """A classe veio da lição 05: a conta nova (separar/juntar + atencao da 03) é a mesma,
    bit a bit, da antiga (view em (B, T, 3, h, C/h) + permute), inclusive o gradiente."""
    nova = L04.AtencaoMultiCabeca(32, 4)
    x = torch.randn(3, 7, 32, requires_grad=True)
    B, T, C = x.shape
    qkv = nova.c_attn(x).view(B, T, 3, 4, C // 4).permute(2, 0, 3, 1, 4)
    q, k, v = qkv
    notas = q @ k.transpose(-2, -1) / math.sqrt(C // 4)
    notas = notas.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    antiga = nova.c_proj((notas.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C))
    assert torch.equal(nova(x), antiga)
    g1 = torch.autograd.grad(nova(x).square().sum(), x)[0]
    g2 = torch.autograd.grad(antiga.square().sum(), x)[0]
    assert torch.equal(g1, g2)


# ------------------------------------------------------------ experimento 3
@pytest.mark.parametrize("d, h", [(768, 12), (768, 1), (64, 4)])
def test_parametros_como_no_transformers(d, h):
    with torch.device("meta"):
        nossa = sum(p.numel() for p in L04.AtencaoMultiCabeca(d, h).parameters())
        deles = sum(p.numel() for p in GPT2Attention(GPT2Config(n_embd=d, n_head=h),
                                                      layer_idx=0).parameters())
    assert nossa == deles == 4 * d * d + 4 * d


def contar_flops(attn, *args, **kwargs):
    """FLOPs de matmul contados pelo PyTorch num forward de verdade."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as contador, torch.no_grad():
        attn(*args, **kwargs)
    return contador.get_total_flops()


@pytest.mark.parametrize("d, T", [(64, 10), (768, 16)])
def test_flops_contra_o_contador_do_pytorch(d, T):
    esperado = T * sum(L04.flops_por_token(d, T))
    x = torch.randn(1, T, d)
    deles = gpt2attention(d, 4, "eager")
    assert contar_flops(deles, x, attention_mask=L04.mascara_aditiva(T)) == esperado
    for h in (1, 4):                                   # não depende de h
        assert contar_flops(L04.AtencaoMultiCabeca(d, h, causal=False), x) == esperado
    x6 = L04.entrada_construida(torch.zeros(L04.T6, 2, dtype=torch.float64))
    assert contar_flops(L04.montar(1), x6) == contar_flops(L04.montar(2), x6) == \
        L04.T6 * sum(L04.flops_por_token(16, L04.T6))


# ------------------------------------------------------------ experimentos 4 e 5
def test_notas_de_inducao_numa_atencao_construida():
    n, L, h = 7, 2, 3
    T = 1 + 2 * n
    pesos = torch.tril(torch.ones(T, T))
    pesos = (pesos / pesos.sum(-1, keepdim=True)).expand(L, h, T, T).clone()  # uniforme
    inducao = torch.zeros(T, T)
    inducao[torch.arange(T), torch.arange(T)] = 1
    for i in range(1 + n, T):
        inducao[i] = 0
        inducao[i, i - n + 1] = 1                         # o token depois da 1ª ocorrência
    pesos[1, 2] = inducao
    notas = L04.notas_de_inducao(pesos, n)
    assert notas[1, 2] == 1
    acaso = sum(1 / (i + 1) for i in range(1 + n, T)) / n
    assert torch.allclose(notas[0, 0], torch.tensor(acaso))


@pytest.fixture(scope="module")
def pequeno(gpt2_pequeno):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    modelo = GPT2LMHeadModel.from_pretrained(gpt2_pequeno, attn_implementation="eager").eval()
    return modelo, AutoTokenizer.from_pretrained(gpt2_pequeno)


def test_inducao_e_perdas_contra_o_transformers(pequeno):
    """Notas pela diagonal dos output_attentions (eager) e perdas pelo loss do próprio
    modelo: dois caminhos independentes da lição."""
    modelo, tok = pequeno
    n = 20
    r = torch.randint(0, modelo.config.vocab_size - 1, (n,), generator=torch.Generator()
                      .manual_seed(0))
    ids = torch.cat([torch.tensor([tok.eos_token_id]), r, r])[None]
    with torch.no_grad():
        saida = modelo(ids, output_attentions=True)
    atencoes = torch.cat(saida.attentions)                       # (L, h, T, T)
    diagonal = atencoes.diagonal(offset=-(n - 1), dim1=-2, dim2=-1)  # (L, h, T - n + 1)
    esperado = diagonal[..., -n:].mean(-1)
    pares, logits = L04.entradas_e_saidas(modelo, ids, logits=True)
    assert torch.allclose(logits, saida.logits, atol=1e-6)      # o mesmo forward, com ganchos
    assert (L04.notas_de_inducao(L04.pesos_do_gpt2(modelo, pares), n) - esperado).abs().max() \
        < 1e-5
    p1, p2 = L04.perdas_por_copia(saida.logits, ids, n)
    with torch.no_grad():
        rotulos = torch.full_like(ids, -100)
        rotulos[0, 2:n + 1] = ids[0, 2:n + 1]
        assert p1 == pytest.approx(float(modelo(ids, labels=rotulos).loss), rel=1e-5)
        rotulos = torch.full_like(ids, -100)
        rotulos[0, n + 2:] = ids[0, n + 2:]
        assert p2 == pytest.approx(float(modelo(ids, labels=rotulos).loss), rel=1e-5)


# ------------------------------------------------------------ experimento 6
def test_duas_cabecas_separam_e_uma_faz_a_media():
    conteudo = torch.randn(L04.T6, 2, dtype=torch.float64)
    x = L04.entrada_construida(conteudo)
    with torch.no_grad():
        y2, y1 = L04.montar(2)(x)[0], L04.montar(1)(x)[0]
    for t in range(2, L04.T6):                                  # t = 1: t-1 é o próprio 0
        assert torch.allclose(y2[t, :4], torch.cat([conteudo[t - 1], conteudo[0]]), atol=1e-9)
        assert torch.allclose(y1[t, :2], (conteudo[t - 1] + conteudo[0]) / 2, atol=1e-9)


# ------------------------------------------------------------ a lição inteira
@pytest.fixture(scope="module")
def inteira(gpt2_pequeno, tmp_path_factory):
    pasta = pasta_da_sessao("figuras04")
    return rodar_script("04_multihead.py", "--figuras", str(pasta),
                        env={"LAB_MODELO": str(gpt2_pequeno)}), pasta


def test_licao_inteira_com_modelo(inteira, gpt2_pequeno):
    r, pasta = inteira
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    assert "Traceback" not in r.saida + r.erros
    for k in range(1, 7):
        assert f"Experimento {k}/6 · " in r.saida
    assert "6 de 6 experimentos rodaram" in r.saida
    assert sorted(p.name for p in pasta.glob("*.png")) == ["04_cabecas_camada.png",
                                                           "04_inducao.png"]
    assert "Próximo passo: lab/05_block.py" in r.saida
    sem_caminhos = [linha for linha in r.saida.splitlines() if "pytest-" not in linha]
    assert max(len(linha) for linha in sem_caminhos) <= 80     # caminhos longos à parte
    s = r.saida
    assert (f"Num forward do próprio modelo ({gpt2_pequeno.name}), capturo a entrada e a saída da "
            "atenção de cada uma das 3 camadas") in " ".join(s.split())
    assert "as 12 cabeças (3 camadas x 4)" in s
    # pesos aleatórios: a lição diz que este modelo não copia (veredito calculado)
    assert "este modelo não aprendeu a copiar" in s


def test_sem_modelo_explica_e_segue(tmp_path):
    r = rodar_script("04_multihead.py", "--sem-figuras",
                     env={"LAB_MODELO": str(tmp_path / "nada"), "COLUMNS": "60"})
    assert r.returncode == 1
    assert "Traceback" not in r.saida + r.erros
    assert r.saida.count("PULADO: não há pasta") == 2
    assert "comparo com uma GPT2Attention de pesos aleatórios" in " ".join(r.saida.split())
    assert "4 de 6 experimentos rodaram" in r.saida


def test_importar_a_04_e_barato_e_nao_roda_nada():
    """05, 06 e 08 importam a 04: ela não pode rodar nada nem puxar transformers/matplotlib."""
    codigo = ("import sys; from comum.licao import importar_licao; "
              "m = importar_licao('04_multihead'); "
              "print([k for k in ('transformers', 'matplotlib') if k in sys.modules]); "
              "print(hasattr(m, 'AtencaoMultiCabeca'))")
    r = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ / "lab", capture_output=True)
    assert r.stdout.decode().splitlines() == ["[]", "True"], r.stdout + r.stderr


def test_primeira_linha_antes_do_torch():
    r = subprocess.run([sys.executable, "-X", "importtime", "lab/04_multihead.py", "--so", "3",
                        "--sem-figuras"], cwd=RAIZ, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env={"PATH": "", "PYTHONUNBUFFERED": "1",
                                                      "PYTHONIOENCODING": "utf-8"})
    linhas = r.stdout.decode("utf-8", "replace").splitlines()
    titulo = next(i for i, linha in enumerate(linhas) if linha.startswith("Lição 04"))
    torch_import = next(i for i, linha in enumerate(linhas) if linha.rstrip().endswith("| torch"))
    assert titulo < torch_import


def test_opcao_d_ruim_explica():
    r = rodar_script("04_multihead.py", "--d", "0")
    assert r.returncode == 2 and "fora do intervalo" in r.erros and "Traceback" not in r.erros


# ------------------------------------------------------------ issue 19 e 22
def test_pesos_do_gpt2_pela_nossa_classe_iguais_aos_do_transformers(pequeno):
    """A 04 mede as cabeças com a própria AtencaoMultiCabeca (não com o ajudante da 03):
    os pesos são os output_attentions da GPT2Attention eager."""
    modelo, tok = pequeno
    ids = L04.ids_do_texto(tok, modelo.config)
    nossos = L04.pesos_do_gpt2(modelo, L04.entradas_e_saidas(modelo, ids))
    with torch.no_grad():
        deles = torch.cat(modelo(ids, output_attentions=True).attentions)  # (L, h, T, T)
    assert nossos.shape == deles.shape and (nossos - deles).abs().max() < 1e-5


def test_a_04_so_importa_da_03_o_que_ela_exporta():
    import ast

    arvore = ast.parse((RAIZ / "lab" / "04_multihead.py").read_text(encoding="utf-8"))
    usados = {no.attr for no in ast.walk(arvore) if isinstance(no, ast.Attribute)
              and isinstance(no.value, ast.Name) and no.value.id == "L03"}
    assert usados <= set(L04.L03.__all__) and usados, usados
    assert not usados & {"abaixo", "fmt", "padroes", "FRASE", "nome_token", "mapa_ascii"}


def test_experimento_2_cabe_em_80_colunas_com_um_caminho_longo(gpt2_pequeno, tmp_path):
    """A frase do experimento 2 quebrava antes de o caminho do modelo entrar (88 colunas)."""
    import shutil

    pasta = tmp_path / ("uma_pasta_de_modelos_com_nome_comprido_" * 3) / "meu_gpt2_de_teste"
    shutil.copytree(gpt2_pequeno, pasta)
    r = rodar_script("04_multihead.py", "--so", "2", "--sem-figuras",
                     env={"LAB_MODELO": str(pasta)})
    assert r.returncode == 0, r.saida + r.erros
    assert "Num forward do próprio modelo (meu_gpt2_de_teste), capturo" in r.saida
    longas = [linha for linha in r.saida.splitlines() if len(linha) > 80]
    assert not longas, longas


def test_erro_de_uso_do_d_cabe_em_80_colunas():
    r = rodar_script("04_multihead.py", "--d", "100000")
    assert r.returncode == 2 and "Traceback" not in r.erros
    assert "use um inteiro de 1 a 65536 (exemplo: --d 1600)" in " ".join(r.erros.split())
    assert all(len(linha) <= 80 for linha in r.erros.splitlines()), r.erros


def _figuras_dos_experimentos(gpt2, tmp_path, monkeypatch, ks):
    """Roda os experimentos ks no próprio processo e devolve as figuras que salvariam."""
    from comum import licao as encanamento

    salvas = {}
    licao = L04.LICAO
    parser = encanamento.criar_parser("x", "x", licao.titulos, licao.opcoes)
    monkeypatch.setattr(licao, "args", parser.parse_args(["--modelo", str(gpt2)]))
    monkeypatch.setattr(licao, "_modelo", None)
    monkeypatch.setattr(licao, "salvar_figura", lambda fig, nome: salvas.setdefault(nome, fig))
    for k in ks:
        licao.funcoes[k](licao)
    return salvas


def test_figuras_nome_curto_barra_de_cor_e_todos_os_rotulos(gpt2_pequeno, tmp_path,
                                                            monkeypatch):
    import shutil

    pasta = tmp_path / ("pasta_comprida_" * 6) / "meu_gpt2"
    shutil.copytree(gpt2_pequeno, pasta)
    salvas = _figuras_dos_experimentos(pasta, tmp_path, monkeypatch, (4, 5))
    camada = salvas["04_cabecas_camada.png"]
    assert camada._suptitle.get_text().startswith("meu_gpt2: as 4 cabeças da camada 2")
    barras = [ax for ax in camada.axes if ax.get_ylabel() == "peso de atenção"]
    assert len(barras) == 1
    inducao = salvas["04_inducao.png"]
    principal = inducao.axes[0]
    assert principal.get_title() == "Cabeças de indução: meu_gpt2"
    assert list(principal.get_xticks()) == [0, 1, 2, 3]            # todas as cabeças
    assert list(principal.get_yticks()) == [0, 1, 2]               # todas as camadas
    assert inducao.axes[1].get_ylabel() == "nota de indução"


