"""Os desafios (lab/desafios/): o catálogo de cada um diagnostica a si mesmo e só a si mesmo.

Para todo desafio da pasta, sem lista a manter:
- a versão do catálogo sem defeito é a referência (a peça da lição) em todas as sondas;
- cada defeito, escrito num arquivo de aluno, sai 1 e imprime a SUA mensagem;
- nenhum par de entradas do catálogo (defeitos sozinhos e os pares) tem a mesma impressão
  digital, nem a referência;
- as outras versões certas de cada desafio (SDPA, einsum, float32...) passam sem diagnóstico,
  e uma errada qualquer (a saída x 1,01) ganha a mensagem genérica, nunca a de um defeito;
- as sondas são float64, com B, T, h e d diferentes.
O caminho inteiro de um aluno (o arquivo escrito, a leitura, o erro com arquivo e linha, o
prazo, --dica, --mostrar-defeito, --com-o-seu) roda em processos de verdade, no fim.
"""
from __future__ import annotations

import argparse
import inspect
import math
import re
import shlex

import pytest
import torch

import desafios
from conftest import RAIZ, rodar_script
from desafios import aluno, linha_de_comando, motor

CHAVES = desafios.chaves()
ENTRADAS = [(c, d.nome) for c in CHAVES for d in desafios.carregar(c).defeitos]


def test_ha_desafios_e_defeitos_bastantes():
    assert len(CHAVES) >= 1
    for chave in CHAVES:
        d = desafios.carregar(chave)
        assert d.chave == chave and len(d.defeitos) >= 3 and len(d.dicas) >= 2, chave
        assert len({x.nome for x in d.defeitos}) == len(d.defeitos), chave
        assert d.modelo.__doc__ and len(d.alternativas) >= 2, chave


@pytest.mark.parametrize("chave", CHAVES)
def test_a_versao_sem_defeito_e_a_referencia(chave):
    d = desafios.carregar(chave)
    sem_defeito = motor.saidas(d, lambda *a, **k: d.versao({}, *a, **k), "sem defeito")
    for sonda, x, y in zip(d.sondas(), sem_defeito, motor.esperadas(d)):
        assert y is not None, f"a referência quebra na sonda {sonda.descricao}"
        assert motor.diferenca(x, y) is None, sonda.descricao


def _tensores(x):
    """Os tensores de um argumento de sonda: ele mesmo, os pesos de um módulo (um passo de
    treino recebe o modelo), os itens de uma lista (os pedaços de uma frase) ou de um
    dicionário, e o que um objeto guarda (o CacheKV da lição 07)."""
    if torch.is_tensor(x):
        yield x
    elif isinstance(x, torch.nn.Module):
        yield from x.parameters()
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from _tensores(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _tensores(y)
    elif hasattr(x, "__dict__") and not callable(x):
        yield from _tensores(vars(x))


@pytest.mark.parametrize("chave", CHAVES)
def test_sondas_em_float64_com_os_eixos_diferentes(chave):
    d = desafios.carregar(chave)
    sondas = d.sondas()
    assert {s.estagio for s in sondas} == {1, 2, 3}, "os três estágios"
    for s in sondas:
        for x in _tensores([*s.args, *s.kwargs.values()]):
            if x.is_floating_point():
                assert x.dtype == torch.float64, s.descricao
        for x in [*s.args, *s.kwargs.values()]:
            if isinstance(x, torch.nn.Module):
                for nome, p in x.named_parameters():
                    assert p.dtype == torch.float64, (s.descricao, nome)
                    assert not torch.all(p == p.flatten()[0]), ("um parâmetro constante",
                                                                 s.descricao, nome)
    forma = next(s for s in sondas if s.estagio == 1)
    tensores = [x for a in forma.args for x in _tensores(a)]
    dims = [n for x in tensores for n in x.shape]
    if tensores:          # a 01 não usa o torch: as sondas dela são listas de str
        assert len(set(dims)) >= 3, dims


@pytest.mark.cpus  # o veredito é o mesmo em toda variante de CPU
@pytest.mark.parametrize("chave", CHAVES)
def test_cada_defeito_so_bate_consigo_mesmo(chave):
    d = desafios.carregar(chave)
    for defeito in d.defeitos:
        diag = motor.diagnosticar(d, motor.versao_de(d, (defeito,)))
        assert not diag.passou and diag.defeitos == (defeito,), (defeito.nome, diag.motivo,
                                                                 [x.nome for x in diag.defeitos])


@pytest.mark.parametrize("chave", CHAVES)
def test_nenhuma_impressao_digital_repetida(chave):
    """Defeitos sozinhos e pares: cada um difere da referência e de todos os outros em
    alguma sonda (senão um diagnóstico seria um palpite)."""
    d = desafios.carregar(chave)
    combinacoes = motor.catalogo(d)
    digitais = {c: motor.impressao(d, c) for c in combinacoes}
    certas = motor.esperadas(d)

    def iguais(a, b):
        return all(x is not None and y is not None and motor.diferenca(x, y) is None
                   for x, y in zip(a, b))

    for c, x in digitais.items():
        assert not iguais(x, certas), f"{[y.nome for y in c]} é igual à referência"
    lista = list(digitais.items())
    for i, (a, x) in enumerate(lista):
        for b, y in lista[i + 1:]:
            assert not iguais(x, y), f"{[z.nome for z in a]} = {[z.nome for z in b]}"


@pytest.mark.cpus
@pytest.mark.parametrize("chave", CHAVES)
def test_versoes_certas_passam_sem_diagnostico(chave):
    d = desafios.carregar(chave)
    for nome, funcao in d.alternativas.items():
        diag = motor.diagnosticar(d, funcao)
        assert diag.passou, (nome, diag.motivo, [x for x in diag.diferencas if x])


@pytest.mark.parametrize("chave", CHAVES)
def test_uma_errada_qualquer_ganha_a_mensagem_generica(chave):
    d = desafios.carregar(chave)

    def vezes(x):
        if torch.is_tensor(x) and x.is_floating_point():
            return x * 1.01
        if isinstance(x, str):                      # os símbolos da 01
            return x + "x"
        if isinstance(x, (tuple, list)):
            return type(x)(vezes(y) for y in x)
        return x

    diag = motor.diagnosticar(d, lambda *a, **k: vezes(d.referencia(*a, **k)), vigiar=False)
    assert not diag.passou and not diag.defeitos and diag.motivo == "valores"
    texto = "\n".join(linha_de_comando.frase_do_diagnostico(d, diag))
    assert "Não é nenhum defeito do catálogo" in " ".join(texto.split())


# ---------------------------------------------------------------- o arquivo do aluno
def _args(**kw):
    base = dict(desafio="todos", dica=False, mostrar_defeito=None, pausa=False)
    return argparse.Namespace(**(base | kw))


def _arquivo_com(d, corpo: str) -> str:
    """O modelo do aluno com o raise trocado por `corpo`."""
    texto = aluno.modelo(d)
    raise_ = f'    raise NotImplementedError("{motor.AINDA_NAO}")\n'
    assert texto.endswith(raise_)
    return texto[: -len(raise_)] + corpo


@pytest.fixture
def meus_desafios(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_DESAFIOS", str(tmp_path / "meus_desafios"))
    return tmp_path / "meus_desafios"


@pytest.mark.parametrize("chave, defeito", ENTRADAS, ids=[f"{c}-{d}" for c, d in ENTRADAS])
def test_o_defeito_num_arquivo_de_aluno_sai_1_com_a_sua_mensagem(chave, defeito, meus_desafios,
                                                                  capsys):
    import inspect

    d = desafios.carregar(chave)
    entrada = d.defeito(defeito)
    parametros = list(inspect.signature(d.modelo).parameters)
    chamada = ", ".join(parametros)
    corpo = (f"    from desafios import carregar\n"
             f"    return carregar({chave!r}).versao({entrada.ajustes!r}, {chamada})\n")
    meus_desafios.mkdir()
    aluno.arquivo(d).write_text(_arquivo_com(d, corpo), encoding="utf-8")
    assert linha_de_comando.conferir_um(d, _args(desafio=d.nome)) == 1
    saida = " ".join(capsys.readouterr().out.split())
    assert f"Diagnóstico: {' '.join(entrada.mensagem.split())}" in saida
    outras = [x for x in d.defeitos if x.nome != defeito]
    assert not [x.nome for x in outras if " ".join(x.mensagem.split()) in saida]
    assert aluno.registro()[chave]["diagnostico"] == defeito


def test_o_modelo_do_aluno_nao_traz_a_resposta(meus_desafios):
    """O arquivo novo: a assinatura e a docstring, um corpo que só levanta 'ainda não
    escrita'; ele compila, e a primeira conferência diz que falta escrever."""
    for chave in CHAVES:
        d = desafios.carregar(chave)
        texto = aluno.modelo(d)
        compile(texto, "modelo", "exec")
        corpo = texto.split(f"def {d.funcao}", 1)[1]
        assert corpo.rstrip().endswith(f'raise NotImplementedError("{motor.AINDA_NAO}")')
        assert not [l for l in texto.splitlines() if len(l) > 99], chave
        assert "return" not in corpo.split('"""')[-1], chave


def test_so_chamar_a_peca_da_licao_nao_passa(meus_desafios, capsys):
    d = desafios.carregar(CHAVES[0])
    import inspect

    (dono, nome), = d.proibidas[:1]
    chamada = ", ".join(inspect.signature(d.modelo).parameters)
    corpo = (f"    import sys\n    dono = sys.modules[{dono.__name__!r}]\n"
             f"    saida = getattr(dono, {nome!r})({chamada})\n"
             "    return saida[0] if isinstance(saida, tuple) else saida\n")
    meus_desafios.mkdir()
    aluno.arquivo(d).write_text(_arquivo_com(d, corpo), encoding="utf-8")
    assert linha_de_comando.conferir_um(d, _args(desafio=d.nome)) == 1
    assert "chama a própria peça da lição" in " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------------- as apostilas
def _titulos(apostila) -> set[str]:
    """Os títulos de seção da apostila, como o aluno os lê ($\\sqrt{d_k}$ vira √d_k)."""
    import re

    texto = (RAIZ / apostila).read_text(encoding="utf-8")
    titulos = set()
    for linha in texto.splitlines():
        m = re.match(r"#{2,4} (.+?)\s*$", linha)
        if m:
            titulos.add(re.sub(r"\\sqrt\{([^}]*)\}", r"√\1", m[1]).replace("$", ""))
    return titulos


def _secao(texto: str) -> tuple[str, str]:
    import re

    m = re.fullmatch(r'(apostilas/\d\d_\w+\.md), seção "(.+)"', texto)
    assert m, f"seção fora do formato 'apostilas/NN_x.md, seção \"título\"': {texto}"
    return m[1], m[2]


@pytest.mark.parametrize("chave", CHAVES)
def test_as_secoes_citadas_existem_na_apostila(chave):
    d = desafios.carregar(chave)
    for texto in [d.secao, *(x.secao for x in d.defeitos)]:
        apostila, titulo = _secao(texto)
        assert apostila.startswith(f"apostilas/{d.licao}_") or d.secao != texto, texto
        assert titulo in _titulos(apostila), f"{apostila} não tem a seção {titulo!r}"


@pytest.mark.parametrize("chave", CHAVES)
def test_a_secao_do_desafio_diz_o_que_escrever_e_como_conferir(chave):
    """A seção "Desafio" da apostila: o arquivo do aluno e os dois comandos."""
    import re

    d = desafios.carregar(chave)
    apostila, titulo = _secao(d.secao)
    texto = (RAIZ / apostila).read_text(encoding="utf-8")
    inicio = next(m.end() for m in re.finditer(r"^#{2,4} (.+?)\s*$", texto, re.M)
                  if titulo in m[1])
    fim = re.compile(r"^#{2,3} ", re.M).search(texto, inicio)
    secao = texto[inicio:fim.start() if fim else len(texto)]
    script = next((RAIZ / "lab").glob(f"{d.licao}_*.py")).name
    assert f"meus_desafios/{chave}.py" in secao
    assert f".venv\\Scripts\\python.exe lab\\{script} --desafio" in secao
    assert f".venv/bin/python lab/{script} --desafio" in secao
    assert f"{d.funcao}(" in secao
    quantos = re.search(r"catálogo (?:de|tem) (\w+) erros", " ".join(secao.split()))
    if quantos:                    # o número de erros que a seção cita é o do catálogo
        assert NUMEROS.get(quantos[1], quantos[1]) == str(len(d.defeitos)), quantos[0]


NUMEROS = {n: str(i) for i, n in enumerate(
    "zero um dois três quatro cinco seis sete oito nove dez onze doze".split())}


# ---------------------------------------------------------------- a lição rodando
MARCA = re.compile(r"<!--\s*desafio:(.*?)-->\s*\n```text\n(.*?)\n```", re.S)


def _blocos():
    for apostila in sorted((RAIZ / "apostilas").glob("[0-9][0-9]_*.md")):
        for i, (args, bloco) in enumerate(MARCA.findall(apostila.read_text(encoding="utf-8"))):
            yield pytest.param(apostila, args.strip(), bloco, id=f"{apostila.stem}-{i}")


def pasta_com_certo(raiz, chave) -> str:
    """Uma pasta meus_desafios/ com um arquivo certo (a primeira versão certa do catálogo)."""
    import inspect

    d = desafios.carregar(chave)
    nome = next(iter(d.alternativas))
    chamada = ", ".join(inspect.signature(d.modelo).parameters)
    corpo = (f"    from desafios import carregar\n"
             f"    return carregar({chave!r}).alternativas[{nome!r}]({chamada})\n")
    pasta = raiz / f"certo_{chave}"
    pasta.mkdir(exist_ok=True)
    (pasta / f"{chave}.py").write_text(_arquivo_com(d, corpo), encoding="utf-8")
    return str(pasta)


@pytest.mark.parametrize("apostila, args, bloco", list(_blocos()))
def test_blocos_de_desafio_das_apostilas_sao_reais(apostila, args, bloco, tmp_path_factory):
    """Um bloco `<!-- desafio: ARGS -->` é a saída da lição com ARGS: com --mostrar-defeito,
    como está; sem, com um arquivo certo na pasta do aluno (o que um aluno que acertou vê)."""
    partes = shlex.split(args)
    licao = apostila.stem[:2]
    nome = partes[partes.index("--desafio") + 1]
    env = {}
    if "--mostrar-defeito" not in partes:
        env["LAB_DESAFIOS"] = pasta_com_certo(tmp_path_factory.mktemp("aluno"),
                                              f"{licao}_{nome}")
    r = rodar_script(apostila.stem + ".py", *partes, env=env)
    saida = [l.rstrip() for l in r.saida.splitlines()]
    posicao = 0
    for linha in (l.rstrip() for l in bloco.splitlines()):
        if linha.strip() in ("", "...", "\u2026"):
            continue
        assert linha in saida[posicao:], f"{apostila.name}: {linha!r} não aparece:\n{r.saida}"
        posicao = saida.index(linha, posicao) + 1


def _lembrar(chave, corpo_extra=""):
    """Um corpo de função que chama a versão certa do catálogo (o aluno que acertou)."""
    d = desafios.carregar(chave)
    chamada = ", ".join(inspect.signature(d.modelo).parameters)
    return (f"{corpo_extra}    from desafios import carregar\n"
            f"    return carregar({chave!r}).alternativas[{next(iter(d.alternativas))!r}]"
            f"({chamada})\n")


@pytest.mark.parametrize("corpo, esperado", [
    ("    return (\n", "erro de sintaxe em"),
    ("    return 1 / 0\n", "ZeroDivisionError: division by zero em"),
    ("    import torch\n    return torch.full((1,), float('nan'))\n", "a forma difere"),
    ("    return None\n", "a sua devolve NoneType"),
], ids=["sintaxe", "excecao", "forma", "nada"])
def test_o_arquivo_do_aluno_com_erro_diz_arquivo_linha_ou_o_que_difere(corpo, esperado,
                                                                       meus_desafios, capsys):
    d = desafios.carregar("03_atencao")          # um desafio de tensores ("a forma difere")
    meus_desafios.mkdir()
    aluno.arquivo(d).write_text(_arquivo_com(d, corpo), encoding="utf-8")
    assert linha_de_comando.conferir_um(d, _args(desafio=d.nome)) == 1
    saida = " ".join(capsys.readouterr().out.split())
    assert esperado in saida, saida
    if "em" in esperado.split():
        assert f"{d.chave}.py:" in saida          # o arquivo e a linha do aluno


def test_nan_e_entrada_mudada_tem_mensagem_propria(meus_desafios, capsys):
    d = desafios.carregar("03_atencao")
    meus_desafios.mkdir()
    casos = {
        "    saida = atencao_certa(q, k, v, causal)\n    saida[..., 0, :] = float('nan')\n"
        "    return saida\n": "tem NaN (não é um número)",
        "    q *= 2\n    return atencao_certa(q / 2, k, v, causal)\n": "muda a entrada q no lugar",
    }
    for corpo, esperado in casos.items():
        corpo = ("    from desafios import carregar\n"
                 "    atencao_certa = carregar('03_atencao').alternativas['einsum']\n" + corpo)
        aluno.arquivo(d).write_text(_arquivo_com(d, corpo), encoding="utf-8")
        assert linha_de_comando.conferir_um(d, _args(desafio=d.nome)) == 1
        assert esperado in " ".join(capsys.readouterr().out.split()), corpo


def test_dicas_uma_a_mais_a_cada_vez(meus_desafios, capsys):
    d = desafios.carregar(CHAVES[0])
    vistas = []
    for _ in range(len(d.dicas) + 1):
        assert linha_de_comando.dar_dica([d.chave]) == 0
        vistas.append(" ".join(capsys.readouterr().out.split()))
    for n, texto in enumerate(vistas[:-1], 1):
        assert f"Dica {n} de {len(d.dicas)}" in texto
        assert " ".join(d.dicas[n - 1].split()) in texto
    assert f"Dica {len(d.dicas)} de" in vistas[-1]          # depois da última, a última


def test_o_aluno_num_processo_de_verdade(tmp_path):
    """Pela lição, num processo: o arquivo escrito na primeira vez (saída 1, a primeira linha
    antes do torch), um laço sem fim (o prazo: "demorou demais", saída 1) e, certo, saída 0;
    cp1252, 80 colunas, nenhum traceback."""
    from conftest import ambiente_de_aluno
    from sessao import rodar_sem_guardar

    d = desafios.carregar(CHAVES[0])
    pasta = tmp_path / "meus_desafios"
    ambiente = ambiente_de_aluno({"LAB_DESAFIOS": str(pasta), "LAB_PRAZO_DO_DESAFIO": "1"})
    script = f"lab/{next((RAIZ / 'lab').glob(f'{d.licao}_*.py')).name}"

    def rodar():
        codigo, saida, erros = rodar_sem_guardar([script, "--desafio", d.nome], ambiente, RAIZ)
        saida, erros = saida.decode("cp1252"), erros.decode("cp1252")
        assert "Traceback" not in saida + erros, saida + erros
        assert not [l for l in saida.splitlines() if len(l) > 80], saida
        return codigo, " ".join(saida.split())

    codigo, saida = rodar()
    assert codigo == 1 and "Escrevi" in saida and aluno.modelo(d) == (
        pasta / f"{d.chave}.py").read_text(encoding="utf-8")
    (pasta / f"{d.chave}.py").write_text(_arquivo_com(d, "    while True:\n        pass\n"),
                                         encoding="utf-8")
    codigo, saida = rodar()
    assert codigo == 1 and "demorou demais (mais de 1 s)" in saida
    (pasta / f"{d.chave}.py").write_text(_arquivo_com(d, _lembrar(d.chave)), encoding="utf-8")
    codigo, saida = rodar()
    assert codigo == 0 and "Passou" in saida


# A primeira lição em que cada peça roda; as que treinam (a 11 e a 12 com o passo de treino
# da 10) têm o seu teste, com um treino curto (test_10_desafio).
TREINAM = {"11_inducao.py", "12_escala.py"}
COM_O_SEU = [(c, desafios.carregar(c).com_o_seu[0]) for c in CHAVES
             if desafios.carregar(c).com_o_seu
             and desafios.carregar(c).com_o_seu[0][0] not in TREINAM]


@pytest.mark.parametrize("chave, alvo", COM_O_SEU, ids=[f"{c}-{x[0][:2]}" for c, x in COM_O_SEU])
def test_a_licao_seguinte_com_a_peca_do_aluno(chave, alvo, tmp_path_factory, gpt2_pequeno):
    """--com-o-seu: com a peça certa, a lição seguinte diz que ela confere e roda como sempre
    (saída 0); com um defeito do catálogo, diz numa linha que não confere, e os números
    dela mudam (a peça do aluno roda ali; a autoverificação, quando pega, sai 1)."""
    from conftest import modelo_compartilhado
    from modelos_de_teste import construir_llama

    d = desafios.carregar(chave)
    script, _olhar, *extra = alvo
    modelo = (modelo_compartilhado("llama_tucano", lambda p: construir_llama(p, "tucano"))
              if script.startswith("13") else gpt2_pequeno)
    certo = pasta_com_certo(tmp_path_factory.mktemp("certo"), chave)
    r = rodar_script(script, "--com-o-seu", d.licao, *extra, "--modelo", str(modelo),
                     "--sem-figuras", env={"LAB_DESAFIOS": certo})
    assert r.returncode == 0, r.saida[-2000:]
    texto = " ".join(r.saida.split())
    assert f"Com o seu {d.funcao}()" in texto and "confere com a referência" in texto
    certa = r.saida
    errado = tmp_path_factory.mktemp("errado")
    defeito = o_mais_visivel(d)
    chamada = ", ".join(inspect.signature(d.modelo).parameters)
    (errado / f"{chave}.py").write_text(_arquivo_com(d, (
        f"    from desafios import carregar\n"
        f"    return carregar({chave!r}).versao({defeito.ajustes!r}, {chamada})\n")),
        encoding="utf-8")
    r = rodar_script(script, "--com-o-seu", d.licao, *extra, "--modelo", str(modelo),
                     "--sem-figuras", env={"LAB_DESAFIOS": str(errado)})
    assert "ainda NÃO confere" in " ".join(r.saida.split()), r.saida[-2000:]
    assert r.returncode in (0, 1) and "Traceback" not in r.saida + r.erros, r.saida[-2000:]
    assert _numeros(r.saida) != _numeros(certa), "a peça do aluno não mudou nada na lição"


def _desvio(x, y) -> float:
    """O maior desvio relativo entre duas saídas (tensores, listas, dicionários)."""
    if x is None:                     # o defeito quebra nesta sonda
        return math.inf
    if isinstance(y, dict):
        return max((_desvio(x[k], y[k]) for k in y), default=0.0)
    if isinstance(y, (list, tuple)):
        return max((_desvio(a, b) for a, b in zip(x, y)), default=0.0)
    if torch.is_tensor(y) and y.is_floating_point():
        a, b = x.detach().double(), y.detach().double()
        if a.shape != b.shape:
            return math.inf
        finitos = torch.isfinite(a) & torch.isfinite(b)
        if not torch.equal(torch.isfinite(a), torch.isfinite(b)):
            return math.inf
        escala = float(b[finitos].abs().max()) if finitos.any() else 1.0
        return float((a - b)[finitos].abs().max()) / (escala or 1.0) if finitos.any() else 0.0
    return 0.0 if x == y else 1.0


def o_mais_visivel(d):
    """O defeito do catálogo que muda a saída de mais sondas, e mais: o que a lição seguinte
    mostra com certeza (uma GELU erf muda os logits do GPT-2 de teste abaixo das casas
    impressas; um defeito só do Post-LN não aparece no GPT-2, que é Pre-LN)."""
    certas = motor.esperadas(d)

    def quanto(defeito):
        desvios = [min(_desvio(x, y), 10.0)
                   for x, y in zip(motor.impressao(d, (defeito,)), certas)]
        return sum(v > 1e-3 for v in desvios), sum(desvios)
    return max(d.defeitos, key=quanto)


def _numeros(saida: str) -> list[str]:
    """As linhas da lição, sem o veredito do --com-o-seu e sem os tempos medidos: o que
    muda quando a peça do aluno roda nela."""
    corpo = saida.split("(carregando o PyTorch...)", 1)[-1]
    return [l for l in corpo.splitlines() if not re.search(r"\d+,\d+ ?m?s\b|\d s\)", l)]


# ---------------------------------------------------------------- o quadro e a turma
def test_o_quadro_lista_todos_os_desafios_e_o_estado_de_cada(meus_desafios, capsys):
    from desafios import painel

    d = desafios.carregar(CHAVES[0])
    meus_desafios.mkdir()
    aluno.arquivo(d).write_text(_arquivo_com(d, _lembrar(d.chave)), encoding="utf-8")
    assert painel.main([]) == 0
    antes = capsys.readouterr().out
    assert "escrito, ainda não conferido" in antes
    assert linha_de_comando.conferir_um(d, _args(desafio=d.nome)) == 0
    capsys.readouterr()
    assert painel.main([]) == 0
    saida = capsys.readouterr().out
    for chave in CHAVES:
        assert f"{chave[:2]}     {chave[3:]}" in saida
    assert f"{d.nome}" in saida and "confere (" in saida
    assert f"Os desafios do laboratório: {len(CHAVES)}," in saida
    with open(aluno.arquivo(d), "a", encoding="utf-8") as f:
        f.write("# mexi\n")
    painel.main([])
    assert "editado depois da última conferência" in capsys.readouterr().out


def test_a_turma_num_processo_por_licao_e_o_csv(tmp_path, capsys):
    """Dois alunos: um certo, um com um defeito do catálogo; a pasta deles não muda."""
    import csv

    from desafios import painel

    d = desafios.carregar(CHAVES[0])
    chamada = ", ".join(inspect.signature(d.modelo).parameters)
    defeito = d.defeitos[0]
    (tmp_path / "ana").mkdir()
    (tmp_path / "bia" / "meus_desafios").mkdir(parents=True)
    (tmp_path / "ana" / f"{d.chave}.py").write_text(_arquivo_com(d, _lembrar(d.chave)),
                                                    encoding="utf-8")
    (tmp_path / "bia" / "meus_desafios" / f"{d.chave}.py").write_text(_arquivo_com(d, (
        f"    from desafios import carregar\n"
        f"    return carregar({d.chave!r}).versao({defeito.ajustes!r}, {chamada})\n")),
        encoding="utf-8")
    antes = sorted(p.name for p in tmp_path.rglob("*"))
    assert painel.main(["--turma", str(tmp_path)]) == 0
    saida = " ".join(capsys.readouterr().out.split())
    assert "ana: 1 de 1 escritos conferem." in saida
    assert f"bia: 0 de 1 escritos conferem; não: {d.chave} ({defeito.nome})." in saida
    assert "roda o código dos alunos" in saida
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(antes + ["turma.csv"])
    linhas = list(csv.DictReader(open(tmp_path / "turma.csv", encoding="utf-8")))
    assert [(l["aluno"], l["confere"], l["diagnostico"]) for l in linhas] == [
        ("ana", "sim", "passou"), ("bia", "não", defeito.nome)]
    assert all(len(l["hash_do_arquivo"]) == 16 and l["versao_do_lab"] for l in linhas)


def test_mostrar_defeito_com_pausa_no_terminal(tmp_path):
    """O professor no projetor (tmux 80 x 30): --pausa para antes do estágio 2, do 3 e do
    veredito; cada pausa diz o que vem, e o diagnóstico sai depois da última."""
    import shutil
    import sys

    from terminal import Tela

    if shutil.which("tmux") is None:
        pytest.skip("sem tmux")
    d = desafios.carregar(CHAVES[0])
    script = f"lab/{next((RAIZ / 'lab').glob(f'{d.licao}_*.py')).name}"
    defeito = d.defeitos[0]
    comando = (f"cd {shlex.quote(str(RAIZ))} && {shlex.quote(sys.executable)} {script} "
               f"--desafio {d.nome} --mostrar-defeito {defeito.nome} --pausa")
    tela = Tela(tmp_path, comando)
    try:
        avisos = [aviso for _, _, aviso in tela.pausas()]
        fim = "\n".join(tela.linhas())
    finally:
        tela.fechar()
    assert [a.split("  (r:")[0] for a in avisos] == [
        "[Enter] estágio 2: o mecanismo, um caso de cada vez",
        "[Enter] estágio 3: contra a referência", "[Enter] o veredito"], avisos
    assert "fim: 0" in fim and "Diagnóstico:" in fim, fim


def test_o_readme_diz_quais_licoes_tem_desafio():
    """A coluna "estado" da tabela das lições no README nomeia os desafios de cada lição, os
    de lab/desafios/ (um desafio novo entra nela)."""
    por_licao = {}
    for chave in CHAVES:
        por_licao.setdefault(chave[:2], []).append(chave[3:])
    vistos = {}
    for linha in (RAIZ / "README.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| (\d\d) \| `lab/.*\| ([^|]*) \|$", linha)
        if m:
            nomes = re.search(r"desafio: (.*)$", m[2])
            vistos[m[1]] = re.findall(r"`(\w+)`", nomes[1]) if nomes else []
    assert {k: v for k, v in vistos.items() if v} == por_licao
    texto = (RAIZ / "lab" / "README.md").read_text(encoding="utf-8")
    assert "`desafios/`" in texto and "meus_desafios/" in texto
