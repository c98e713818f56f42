"""Apostila 07: o que o texto corrido, as respostas dos exercícios e as notas para o professor
afirmam, contra contas feitas aqui (as probabilidades do brinquedo à mão, a fórmula fechada do
cache, o GPT2LMHeadModel do transformers no meta device) e contra o que a lição imprime; a
resposta do exercício 6 roda numa cópia da lição, como o aluno faria."""
from __future__ import annotations

import math
import re

import pytest
import torch

from conftest import RAIZ, rodar_script
from copia_do_aluno import copia_da_licao, rodar_copia
from comum.console import inteiro, num, pct, tamanho
from comum import importar_licao

licao = importar_licao("07_generation")
APOSTILA = RAIZ / "apostilas" / "07_generation.md"


# ------------------------------------------------------------ números do texto corrido
def test_apostila_cita_a_conta_do_cache():
    texto = " ".join((RAIZ / "apostilas" / "07_generation.md").read_text(
        encoding="utf-8").split())
    por_token = licao.bytes_por_token(12, 768)
    assert f"2 · 12 · 768 · 4 = {inteiro(por_token)} bytes" in texto
    assert "72 KiB por token" in texto and "72 MiB" in texto


# ------------------------------------------------------------ as respostas dos exercícios
TEXTO = " ".join((RAIZ / "apostilas" / "07_generation.md").read_text(encoding="utf-8").split())


def diz(trecho: str):
    """O trecho aparece na apostila (espaços e quebras de linha normalizados)."""
    trecho = " ".join(trecho.split())
    assert trecho in TEXTO, f"a apostila deveria dizer: {trecho!r}"


@pytest.mark.cpus
def test_resposta_1_probabilidades_a_mao():
    z = list(licao.BRINQUEDO.values())
    assert z == [3.0, 2.2, 1.4, 1.4, 0.6, -0.6, -1.6, -3.0]          # os do enunciado
    e = [math.exp(x) for x in z]
    for x, ex in zip(z, e):
        diz(f"e^{num(x, 1).replace('-', '−')} = {num(ex, 2)}")
    diz(f"com soma {num(sum(e), 2)}")
    probs = [x / sum(e) for x in e]
    diz(", ".join(pct(p) for p in probs[:-1]) + f" e {pct(probs[-1])}")
    acumulada = [sum(probs[:i + 1]) for i in range(len(probs))]
    ficam = next(i for i, a in enumerate(acumulada) if a >= 0.7) + 1   # o que cruza entra
    assert ficam == licao.sobreviventes(torch.tensor(z, dtype=torch.float64), top_p=0.7)
    diz(f"no segundo token ({pct(acumulada[1])}): com top-p 0,7 ficam **{ficam}**")


@pytest.mark.cpus
def test_resposta_2_temperatura_nao_muda_o_top_k_e_muda_o_top_p():
    z = torch.tensor(list(licao.BRINQUEDO.values()), dtype=torch.float64)
    aleatorios = 3.0 * torch.randn(1, 300, generator=torch.Generator().manual_seed(3))[0]
    for t in (0.1, 0.5, 2.0, 10.0):
        for k in (1, 3, 5, 50):
            assert licao.sobreviventes(z, top_k=k, temperatura=t) == \
                licao.sobreviventes(z, top_k=k)
            assert torch.equal(licao.filtrar_top_k(aleatorios / t, k).isfinite(),
                               licao.filtrar_top_k(aleatorios, k).isfinite())
    antes, depois = (licao.sobreviventes(z, top_p=0.9, temperatura=t) for t in (0.5, 1.0))
    diz(f"*T* = 0,5 e depois top-p 0,9 deixa {antes} tokens, contra {depois} em *T* = 1")


@pytest.mark.cpus
def test_resposta_3_temperatura_baixa_e_empates():
    # T = 0,01: o segundo colocado fica com e^(-delta/T) vezes a probabilidade do primeiro
    quase = (torch.tensor([0.0, -0.01], dtype=torch.float64) / 0.01).softmax(-1)
    assert float(quase[1]) == pytest.approx(1 / (1 + math.e))
    diz(f"1/(1 + e) = {pct(float(quase[1]))}")
    longe = (torch.tensor([0.0, -0.1], dtype=torch.float64) / 0.01).softmax(-1)
    assert float(longe[1] / longe[0]) == pytest.approx(math.exp(-10))
    assert f"{math.exp(-10):.1e}" == "4.5e-05"
    diz("e^−10 ≈ 4,5 · 10⁻⁵")
    # o top-p 0,9 deixa o segundo só se o favorito tiver menos de 90 %
    for favorito, ficam in ((0.91, 1), (0.89, 2)):
        resto = (1 - favorito) / 3
        z = torch.tensor([[favorito, resto, resto, resto]]).log()
        assert int(licao.filtrar_top_p(z, 0.9).isfinite().sum()) == ficam
    diz("o segundo só sobrevive ao corte se o favorito tiver menos de 90 %")


def test_resposta_4_cache_em_float16():
    from transformers import GPT2Config, GPT2LMHeadModel

    def parametros(L, d, h):
        with torch.device("meta"):
            m = GPT2LMHeadModel(GPT2Config(n_layer=L, n_embd=d, n_head=h))
        return sum(p.numel() for p in m.parameters())       # o peso amarrado conta uma vez

    medio, xl = 2 * 24 * 1024 * 2, 2 * 48 * 1600 * 2       # bytes por token, float16
    diz(f"2 · 24 · 1.024 · 2 = {inteiro(medio)} bytes, ou {medio // 1024} KiB por token, "
        f"e **{1024 * medio // 2**20} MiB** com 1.024 tokens, contra "
        f"{tamanho(2 * parametros(24, 1024, 16))} de pesos em float16")
    diz(f"32 conversas de 1.024 tokens guardam **{tamanho(32 * 1024 * xl)}**, mais de "
        f"três vezes os {tamanho(2 * parametros(48, 1600, 25))} dos pesos")
    assert 3 < 32 * 1024 * xl / (2 * parametros(48, 1600, 25)) < 4


def test_resposta_5_o_que_cresce_com_n():
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    d = 768
    with torch.device("meta"):
        bloco = GPT2Block(GPT2Config(n_embd=d, n_head=12), layer_idx=0)
    matrizes = sum(p.numel() for p in bloco.parameters() if p.dim() == 2)
    assert matrizes == 12 * d * d                  # multiplicações por token, por camada
    diz("12*d*² multiplicações")
    for S in (256, 1024):
        atencao = 2 * S * d                        # q · K (S chaves) e pesos · V (S valores)
        assert atencao / matrizes == pytest.approx(S / (6 * d))
    diz(f"{pct(256 / (6 * d))} em *S* = 256 e {pct(1024 / (6 * d))} em "
        "*S* = 1.024")


@pytest.mark.cpus
def test_resposta_6_sobreviventes_renumerados_tem_as_mesmas_probabilidades():
    logits = 3.0 * torch.randn(1, 300, generator=torch.Generator().manual_seed(5))
    cortados = licao.filtrar_top_p(licao.filtrar_top_k(logits, 40), 0.9)
    vivos = cortados[0].isfinite().nonzero()[:, 0]
    inteiro = cortados.softmax(-1)[0]
    assert torch.allclose(inteiro[vivos], cortados[0, vivos].softmax(-1))
    assert not inteiro[~cortados[0].isfinite()].any()              # os cortados têm 0


def _textos_do_exp4(saida: str) -> tuple[dict, int]:
    """{rótulo: texto} do experimento 4 e o número da linha 'Iguais ao texto da gulosa'."""
    textos, rotulo = {}, None
    for linha in saida.splitlines():
        if linha.startswith("    ") and rotulo:
            textos[rotulo] += linha.strip()
        elif linha.startswith("  ") and linha.endswith(":"):
            rotulo = linha.strip()[:-1]
            textos[rotulo] = ""
        else:
            rotulo = None
    iguais = int(re.search(r"Iguais ao texto da gulosa, token a token: (\d) de 3 sementes\.",
                           saida).group(1))
    return textos, iguais


def test_respostas_3_e_6_na_saida_e_numa_copia(gpt2_pequeno, tmp_path):
    """O exercício 6 feito numa cópia (a troca de linhas da resposta), rodada como o aluno
    a rodaria, contra o original; e a linha da gulosa do experimento 4 (exercício 3)."""
    original = (RAIZ / "lab" / "07_generation.py").read_text(encoding="utf-8")
    antes = ("    if geradores is None:\n"
             "        return torch.multinomial(probs, num_samples=1)\n")
    depois = re.search(r"```python\n(    if geradores is None:\n.*?)```",
                       (RAIZ / "apostilas" / "07_generation.md").read_text(encoding="utf-8")
                       .split("## Respostas dos exercícios")[1], re.S).group(1)
    assert original.count(antes) == 1 and "vivos" in depois
    diz(antes)                                    # o enunciado mostra as linhas do script
    copia = copia_da_licao(tmp_path, "07_generation.py", (antes, depois))
    env = {"LAB_MODELO": str(gpt2_pequeno)}
    saidas = {}
    for nome in ("original", "copia"):
        for args in (("--top-k", "40"), ("--top-k", "1"), ("--temperatura", "0.01")):
            if nome == "copia" and args[0] == "--temperatura":
                continue
            argumentos = ("--so", "4", "--sem-figuras", *args)
            r = (rodar_script("07_generation.py", *argumentos, env=env) if nome == "original"
                 else rodar_copia(copia, *argumentos, env=env))
            saidas[nome, args[1]] = r.saida
            assert r.returncode == 0, r.saida + r.erros
    gulosa = "gulosa (sem sorteio, para comparar)"
    for chave, saida in saidas.items():
        textos, iguais = _textos_do_exp4(saida)
        sorteados = [t for r, t in textos.items() if r.startswith("semente")]
        assert len(sorteados) == 3 and gulosa in textos, saida
        assert iguais == sum(t == textos[gulosa] for t in sorteados), saida
        assert "Semente 0 de novo: o mesmo texto, token a token." in saida
        if chave[1] == "1":                            # top-k 1: sobra um token só
            assert iguais == 3, saida
    diz('rode-a com `--so 4 --top-k 1`: com um sobrevivente só, a última linha tem de dizer '
        '"3 de 3 sementes", como no original')
    # mesma semente, mesmas regras, outro jeito de gastar o número aleatório: outro texto
    originais, copias = (_textos_do_exp4(saidas[n, "40"])[0] for n in ("original", "copia"))
    assert [originais[f"semente {s}"] for s in range(3)] != \
        [copias[f"semente {s}"] for s in range(3)]
    assert originais[gulosa] == copias[gulosa]
    diz("Os textos da cópia saem **outros** que os do original com as mesmas sementes")


def _bloco_python(texto: str, comeca: str) -> str:
    """O primeiro bloco ```python do texto que começa com `comeca`, sem o recuo da lista."""
    import textwrap

    for bloco in re.findall(r"```python\n(.*?)```", texto, re.S):
        bloco = textwrap.dedent(bloco)
        if bloco.startswith(comeca):
            return bloco
    raise AssertionError(f"a apostila não tem um bloco python que começa com {comeca!r}")


@pytest.mark.parametrize("versao, esperado", [
    ("resposta", "probs_dos_vivos: confere com a referência nas 3 entradas."),
    ("sem o corte", "a forma difere"),
])
def test_resposta_6_conferir_as_probabilidades(tmp_path, versao, esperado):
    """O trecho do exercício 6, com a função da resposta (ou a errada que a resposta cita),
    rodado como o aluno roda, da pasta raiz do lab."""
    import subprocess
    import sys

    texto = APOSTILA.read_text(encoding="utf-8")
    exercicio, respostas = texto.split("## Respostas dos exercícios")
    trecho = _bloco_python(exercicio.split("## 9. Exercícios")[1], "import sys")
    funcao = _bloco_python(respostas, "def probs_dos_vivos")
    if versao == "sem o corte":
        funcao = "def probs_dos_vivos(logits):\n    return logits.softmax(-1)\n"
    antes = "def probs_dos_vivos(logits):\n    ...  # a sua função\n"
    assert antes in trecho
    script = tmp_path / "confere_07.py"
    script.write_text(trecho.replace(antes, funcao), encoding="utf-8")
    r = subprocess.run([sys.executable, str(script)], cwd=RAIZ, capture_output=True,
                       timeout=300)
    saida = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0, saida + r.stderr.decode("utf-8", "replace")
    assert esperado in " ".join(saida.split()), saida
    if versao == "resposta":
        diz(f"```text\n{esperado}\n```")


# ------------------------------------------------------------ o que a apostila diz da saída
def test_brinquedo_a_100_graus_vai_de_12_1_a_12_8():
    z = torch.tensor(list(licao.BRINQUEDO.values()), dtype=torch.float64)
    p = (z / 100).softmax(-1)
    menor, maior = pct(float(p.min())), pct(float(p.max()))
    assert (menor, maior) == ("12,1 %", "12,8 %")
    diz(f"cada token fica entre {menor} e {maior}, perto de 1/8 = {pct(1 / 8)}")
    assert "12,8 % para cada" not in TEXTO                    # eram 12,1 a 12,8 %


def test_apostila_diz_que_a_semente_muda_o_experimento_3():
    diz("`--semente N` muda as sementes do experimento 4 (ele usa *N*, *N* + 1 e *N* + 2) e o "
        "sorteio do experimento 3 (que usa *N*)")
    diz("com `torch.manual_seed(N)` antes: `--semente N` muda o sorteio")


def test_apostila_cita_os_limites_que_o_script_imprime():
    diz(f"como limite, `< {licao.TETO_LOGITS:.0e}`".replace("e-0", "e-"))
    diz(f"(`< {licao.TETO_K:.0e}`) em todas as camadas".replace("e-0", "e-"))
    assert "< 1e-5" not in TEXTO


def test_resultados_publicados_com_referencia():
    """Os números do GPT-2 de verdade citados (Holtzman et al., 2019, tabela 1; von Platen,
    2020) estão marcados como publicados e a referência completa está na apostila."""
    assert TEXTO.count("**No GPT-2 de verdade (resultado publicado).**") == 4   # exp. 1 a 4
    for numero in ("73,66 %", "0,28 %", "0,36 %", "13,13", "12,38", "6,88"):
        assert numero in TEXTO, numero
    diz('Ari Holtzman, Jan Buys, Li Du, Maxwell Forbes, Yejin Choi (2019), "The Curious Case of '
        'Neural Text Degeneration", arXiv:1904.09751; ICLR 2020.')
    diz('Patrick von Platen (2020), "How to generate text: using different decoding methods for '
        'language generation with Transformers", blog do Hugging Face')


def test_notas_para_o_professor_sem_os_tempos_de_maquina_sobrecarregada():
    notas = TEXTO.split("## Notas para o professor")[1].split("## Respostas")[0]
    assert "7 minutos" not in notas and "124 s" not in notas
    assert "90 minutos" in notas and "| 85–90 min |" in notas
    # os passos que as notas contam são os que o script faz
    assert licao.NOVOS == 16 and licao.PASSOS_CORTE == licao.NOVOS_SORTEIO == 12
    diz("o experimento 1 dá 16 passos (a frase e mais 15 tokens) e o `generate()` outros 16")
    diz(f"o 4, {3 * (licao.NOVOS_SORTEIO - 1)} (três textos de 12 tokens")
    diz("passadas sem cache de " + ", ".join(str(n + 1) for n in licao.COMPRIMENTOS[:-1])
        + f" e {licao.COMPRIMENTOS[-1] + 1} tokens e {2 * len(licao.COMPRIMENTOS)} passos")
