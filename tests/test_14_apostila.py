"""O que a apostila 14 afirma: as regras (a tabela dos campos é a do script), os números do
orçamento, os do experimento 1 e do 2 contra o que a lição imprime, as notas das inscrições de
exemplo contra os registros do lab, as respostas dos exercícios contra contas feitas aqui, os
comandos (cada um é aceito pela lição) e o fim do curso, que mora nesta apostila."""
from __future__ import annotations

import json
import math
import re
import shlex

from conftest import RAIZ
from corrida import licao_inteira
from comum import importar_licao
from comum.console import inteiro, num
from comum.licao import FIM_DO_CURSO, criar_parser

L14 = importar_licao("14_corrida")
TEXTO = (RAIZ / "apostilas" / "14_corrida.md").read_text(encoding="utf-8")
JUNTO = " ".join(TEXTO.split())


def secao(titulo: str) -> str:
    return " ".join(TEXTO.split(f"\n## {titulo}\n", 1)[1].split("\n## ", 1)[0].split())


def registros() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((RAIZ / "lab" / "dados").glob("corrida-*.json"))}


def test_a_tabela_das_regras_e_a_do_script():
    linhas = re.findall(r"^\| `(\w+)` \| .* \| (.+) \|$", TEXTO, re.M)
    campos = dict(linhas)
    assert list(campos) == list(L14.CAMPOS)
    for campo, (tipo, minimo, maximo) in L14.CAMPOS.items():
        if tipo is int and maximo is not None:
            assert campos[campo] == f"{inteiro(minimo)} a {inteiro(maximo)}", campo
    assert campos["taxa"] == "1e-6 a 0,1" and L14.CAMPOS["taxa"][1:] == (1e-6, 0.1)
    assert campos["passos"] == f"1 a {inteiro(L14.MAXIMO_DE_PASSOS)}"
    assert f"O teto de {inteiro(L14.MAXIMO_DE_PASSOS)} passos" in JUNTO


def test_os_numeros_das_regras():
    assert "**4.001.366.016**" in JUNTO and L14.ORCAMENTO_OFICIAL == 1000 * 4_001_366_016
    assert f"= {inteiro(L14.ORCAMENTO_OFICIAL)} FLOPs (4,0·10¹²)" in JUNTO
    assert L14.SEMENTES == (0, 1, 2) and "sementes 0, 1 e 2" in JUNTO
    assert L14.EMPATE == 0.01 and "a menos de 0,01 bit uma da outra **empatam**" in JUNTO
    assert L14.TOLERANCIA == 1e-4 and "**10⁻⁴ bits por caractere**" in JUNTO
    assert L14.TOLERANCIA_ENTRE_FAMILIAS == 1e-3 and "a tolerância sobe para 10⁻³" in JUNTO
    assert f"vezes ln 2 = {num(math.log(2), 3)}: 3,1 bits por caractere são " \
           f"{num(3.1 * math.log(2), 2)} nats" in JUNTO


def test_o_que_a_apostila_diz_do_experimento_1_e_do_2():
    codigo, saida, erros = licao_inteira()              # a dos blocos (test_apostilas)
    assert codigo == 0, saida[-2000:] + erros[-2000:]
    tabela = {m[0].strip(): [int(x.replace(".", "")) for x in m[1:4]] + [m[4]]
              for m in re.findall(r"^  (.{26})\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d,]+)$",
                                  saida, re.M)}
    N0, _, p0, _ = tabela["a da lição 10"]
    N, _, p, tpp = tabela["menor: 2 blocos, d = 64"]
    assert round(N0 / N) == 7 and round(p / p0) == 7 and round(float(tpp.replace(",", "."))) == 48
    assert "O modelo 7 vezes menor cabe 7 vezes mais passos e vê 48 tokens por parâmetro" in JUNTO
    assert tabela["maior: 6 blocos, d = 192"][3] == "0,09" and round(
        tabela["maior: 6 blocos, d = 192"][0] / N0) == 3 and "o 3 vezes maior vê 0,09" in JUNTO
    assert round(tabela["contexto de 256"][1] / tabela["a da lição 10"][1]) == 5
    assert tabela["Llama, 2 cabeças de K/V"][2] - p0 == 82 and "cabem 82 passos a mais" in JUNTO
    frases = " ".join(saida.split())
    b = re.search(r"Por token, o BPE parece pior \(([\d,]+) contra ([\d,]+)\).*? Por caractere, "
                  r"o mesmo texto, ele é melhor \(([\d,]+) contra ([\d,]+)\)", frases)
    assert b and f"pior que os caracteres ({b[1]} contra {b[2]} bits); por caractere, é melhor " \
                 f"({b[3]} contra {b[4]})" in JUNTO
    m = re.search(r"As minúsculas dão ([\d,]+) bits por caractere", frases)
    assert m and f"faz a régua cair ({m[1]} bits por caractere)" in JUNTO


def test_o_parameter_golf_como_os_autores_contaram():
    """fatos.md: 157.319.833 bytes na tabela contra 151.073.604 no texto decodificado."""
    assert f"{(157_319_833 / 151_073_604 - 1) * 100:.2f}".replace(".", ",") == "4,13"
    assert "achou o denominador com 4,13 % de bytes a mais" in JUNTO
    assert "#1271 e #1289" in JUNTO


def test_a_resposta_do_exercicio_1():
    c = {**L14.INSCRICAO_DA_LICAO_10, "camadas": 3}
    flops, N = L14.flops_por_passo(c, 128), L14.parametros_da(c)
    passos = L14.ORCAMENTO_OFICIAL // flops
    respostas = secao("Respostas dos exercícios")
    assert f"{inteiro(flops)} FLOPs por passo" in respostas
    assert f"cabem {inteiro(passos)} passos" in respostas
    assert f"N = {inteiro(N)}" in respostas
    assert f"{num(passos * 12 * 64 / N, 2)} tokens por parâmetro" in respostas
    base = registros()["corrida-linha-de-base.json"]["media"]
    assert f"{num(base, 3)} × ln 2 = {num(base * math.log(2), 2)} nats" in respostas


def test_os_comandos_da_apostila_sao_aceitos_pela_licao():
    p = criar_parser("x", "x", L14.LICAO.titulos, L14.LICAO.opcoes)
    comandos = re.findall(r"^\.venv/bin/python lab/14_corrida\.py(.*)$", TEXTO, re.M)
    assert len(comandos) >= 6
    for args in comandos:
        p.parse_args(shlex.split(args))
    assert ".venv\\Scripts\\python.exe lab\\14_corrida.py --nova-inscricao minha.json" in TEXTO


def test_o_fim_do_curso_mora_aqui_e_conta_todas_as_licoes():
    """A 14 é a última lição do disco: o fim da lição manda para esta seção
    (test_licao), que tem uma linha por lição de lab/."""
    assert TEXTO.rstrip().split("\n## ")[-1].startswith(FIM_DO_CURSO)
    fim = TEXTO.split(f"\n## {FIM_DO_CURSO}\n", 1)[1]
    linhas = re.findall(r"^\| (\d\d) \|", fim, re.M)
    assert linhas == sorted(p.name[:2] for p in (RAIZ / "lab").glob("[0-9][0-9]_*.py"))
    assert "Da lição 00 à 14" in fim


def test_a_tabela_do_que_move_e_a_dos_registros():
    """Cada linha da tabela da seção 4: N, passos, tokens por parâmetro, a faixa das três
    sementes e a média, do registro que vem com o lab (o nome dele está na linha)."""
    tabela = re.findall(r"^\| (.+?) \| ([\d.]+) \| ([\d.]+) \| ([\d,]+) \| ([\d,]+) a ([\d,]+) \| "
                        r"([\d,]+) \|$", TEXTO, re.M)
    regs = registros()
    assert len(tabela) == len(regs) == 5
    vistos = set()
    for rotulo, N, passos, tpp, menor, maior, media in tabela:
        nome, r = next((n, r) for n, r in regs.items() if f"`{n}`" in rotulo)
        vistos.add(nome)
        c, exatos = r["inscricao"], [x["exato"] for x in r["sementes"]]
        assert (N, passos) == (inteiro(r["parametros"]), inteiro(c["passos"]))
        assert tpp == num(c["passos"] * c["lote"] * c["contexto"] / r["parametros"], 1)
        assert (menor, maior, media) == (num(min(exatos), 3), num(max(exatos), 3),
                                         num(r["media"], 3)), nome
    assert vistos == set(regs)
    medias = sorted(r["media"] for r in regs.values())        # "muito menos que a distância"
    assert min(b - a for a, b in zip(medias, medias[1:])) > 100 * L14.TOLERANCIA


def test_o_que_a_secao_4_diz_sai_dos_registros():
    regs = {n.removeprefix("corrida-").removesuffix(".json"): r for n, r in registros().items()}
    base, menor = regs["linha-de-base"], regs["menor"]
    texto = secao("4. O que move a nota")
    assert round(base["parametros"] / menor["parametros"]) == 7
    assert round(menor["inscricao"]["passos"] / base["inscricao"]["passos"]) == 7
    assert f"desce de {num(base['media'], 3)} para {num(menor['media'], 3)} bits" in texto
    assert f"{inteiro(base['parametros'])} parâmetros, 0,94 token por parâmetro" in texto
    treino = len(importar_licao("14_corrida").textos()[0])
    c = menor["inscricao"]
    assert f"leem o texto de treino {round(c['passos'] * c['lote'] * c['contexto'] / treino)} " \
           "vezes" in texto
    assert f"desce de {num(base['media'], 3)} para {num(regs['taxa']['media'], 3)}" in texto
    ctx = regs["menor-contexto"]
    assert ctx["inscricao"]["contexto"] == 2 * c["contexto"]
    assert (f"faz {inteiro(ctx['inscricao']['passos'])} passos em vez de {inteiro(c['passos'])}"
            in texto and f"a nota sobe de {num(menor['media'], 3)} para "
            f"{num(ctx['media'], 3)}, com a mesma taxa" in texto)
    assert ctx["media"] > menor["media"] and ctx["inscricao"]["taxa"] == c["taxa"]
    melhor = min(regs.values(), key=lambda r: r["media"])
    assert melhor is regs["menor-taxa"]
    assert f"chega a {num(melhor['media'], 3)}, a melhor das cinco" in texto
    # o acaso: a maior distância entre as sementes e o desvio da média de três
    import statistics

    espalha = max(max(x["exato"] for x in r["sementes"]) - min(x["exato"] for x in r["sementes"])
                  for r in regs.values())
    desvios = [statistics.stdev([x["exato"] for x in r["sementes"]]) / math.sqrt(3)
               for r in regs.values()]
    assert f"ficam a até {num(espalha, 3)} bits umas das outras" in texto
    assert f"fica entre {num(min(desvios), 3)} e {num(max(desvios), 3)}" in texto
    mais = max(regs, key=lambda n: statistics.stdev([x["exato"] for x in regs[n]["sementes"]]))
    assert mais == "menor-contexto" and "a mais espalhada é a de contexto 128" in texto
    assert min(desvios) < L14.EMPATE < max(desvios)     # 0,01: o ruído das mais estáveis


def test_a_resposta_do_exercicio_5_e_o_registro_do_lab():
    respostas = TEXTO.split("\n## Respostas dos exercícios\n", 1)[1]
    inscricao = json.loads(respostas.split("```json\n", 1)[1].split("```", 1)[0])
    r = registros()["corrida-menor-taxa.json"]
    assert L14.conferir_inscricao(inscricao) == r["inscricao"]
    dez_mil = {**inscricao, "passos": 10_000}
    cabem = L14.ORCAMENTO_OFICIAL // L14.flops_por_passo(dez_mil, 128)
    assert cabem == inscricao["passos"] and f"`cabem {inteiro(cabem)} passos`" in respostas
    exatos = [x["exato"] for x in r["sementes"]]
    base = registros()["corrida-linha-de-base.json"]["media"]
    assert (f"{num(r['media'], 3)} bits por caractere (de {num(min(exatos), 3)} a "
            f"{num(max(exatos), 3)} nas três sementes), contra {num(base, 3)} da linha de base"
            ) in " ".join(respostas.split())
