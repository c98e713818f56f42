"""O esqueleto de toda lição, conferido na árvore sintática (AST) de cada lab/NN_nome.py.

- Um cabeçalho curto: a docstring é o sumário (o título e um experimento por linha),
  `LICAO = Licao.da_docstring(__doc__, ...)` a lê, e as opções são declaradas com os
  validadores do encanamento (licao.opcao, inteiro_entre...).
- Logo depois, a peça: o código do conceito começa na primeira tela (linha PRIMEIRA_TELA)
  e `__all__` diz o que as lições seguintes podem importar.
- Uma lição importa de outra (importar_licao) só nomes do `__all__` dela, e a tabela "lição
  -> usa as peças de" de lab/README.md é a desses imports.
- Os ajudantes de saída (limites, tokens, tempo, mapas ASCII, linhas) moram no
  encanamento, uma vez só; a entropia é da lição 03 (a 07 a importa).
- Toda conferência impressa ("sim"/"NÃO") passa por licao.verificar: uma que não confere
  faz a execução sair com 1.
"""
from __future__ import annotations

import ast
import functools
import re

import pytest

from conftest import RAIZ

LICOES = sorted(p for p in (RAIZ / "lab").glob("[0-9][0-9]_*.py"))
PRIMEIRA_TELA = 40  # a linha em que a peça (a primeira def/class) já começou (40: uma tela)
# Ajudantes de saída que têm casa no encanamento (console.py): uma lição não define o seu
# (eram cópias que discordavam entre si). Só nomes que existem: o teste abaixo confere.
DO_ENCANAMENTO = {"limite", "token", "cronometrar", "em_linhas", "plural", "citar"}
SIM_NAO = re.compile(r"^\s*(sim|não|NÃO|confere|NÃO confere|não confere)\b")


@functools.lru_cache(maxsize=None)
def _arvore(caminho):
    """A árvore sintática do arquivo, lida uma vez por processo (os testes só a percorrem)."""
    return ast.parse(caminho.read_text(encoding="utf-8"), filename=str(caminho))


def _todos(arvore) -> list[str] | None:
    for no in arvore.body:
        if isinstance(no, ast.Assign) and any(getattr(t, "id", "") == "__all__"
                                              for t in no.targets):
            return [e.value for e in no.value.elts]
    return None


@pytest.mark.parametrize("licao", LICOES, ids=lambda p: p.stem)
def test_cabecalho_declarativo(licao):
    arvore = _arvore(licao)
    chamadas = [no.value for no in arvore.body if isinstance(no, ast.Assign)
                and any(getattr(t, "id", "") == "LICAO" for t in no.targets)]
    assert chamadas, "a lição declara LICAO = Licao(...) no topo"
    chamada = chamadas[0]
    assert isinstance(chamada.func, ast.Attribute) and chamada.func.attr == "da_docstring" \
        and getattr(chamada.func.value, "id", "") == "Licao", "LICAO = Licao.da_docstring(...)"
    assert getattr(chamada.args[0], "id", "") == "__doc__", "a lição é lida da docstring"
    palavras = {k.arg for k in chamada.keywords}
    assert not palavras & {"argumentos", "proxima"}, "use opcoes=[opcao(...)]"
    doc = ast.get_docstring(arvore, clean=False).strip().splitlines()
    assert re.fullmatch(r"Lição \d\d · .+", doc[0]), doc[0]
    numeros = [int(m[1]) for m in (re.match(r"(\d+)\. \S", linha) for linha in doc[1:]) if m]
    assert numeros == list(range(1, len(numeros) + 1)) and numeros, \
        "a docstring lista os experimentos: '1. título', '2. título'..."
    for no in ast.walk(arvore):  # nenhum validador de opção feito à mão
        if isinstance(no, ast.Call) and getattr(no.func, "attr", "") == "add_argument":
            pytest.fail(f"linha {no.lineno}: declare a opção com opcao(...) no cabeçalho")


@pytest.mark.parametrize("licao", [p for p in LICOES if not p.name.startswith("00")],
                         ids=lambda p: p.stem)
def test_a_peca_abre_o_arquivo_com_all(licao):
    arvore = _arvore(licao)
    todos = _todos(arvore)
    assert todos is not None, "__all__ diz o que as lições seguintes podem importar"
    definidos = {no.name for no in arvore.body
                 if isinstance(no, (ast.FunctionDef, ast.ClassDef))}
    definidos |= {t.id for no in arvore.body if isinstance(no, ast.Assign)
                  for t in no.targets if isinstance(t, ast.Name)}
    assert set(todos) <= definidos, f"__all__ cita o que não existe: {set(todos) - definidos}"
    primeira = next(no for no in arvore.body if isinstance(no, (ast.FunctionDef, ast.ClassDef)))
    inicio = min([primeira.lineno] + [d.lineno for d in primeira.decorator_list])
    assert inicio <= PRIMEIRA_TELA, (
        f"a peça ({primeira.name}) começa na linha {inicio}: depois da primeira tela")


def _importacoes(arvore):
    """[(lição importada, nome usado, linha)] de importar_licao("NN_x").nome e de
    L = importar_licao("NN_x") seguido de L.nome."""
    apelidos, usos = {}, []
    for no in ast.walk(arvore):
        if isinstance(no, ast.Assign) and isinstance(no.value, ast.Call) and \
                getattr(no.value.func, "id", getattr(no.value.func, "attr", "")) \
                == "importar_licao":
            for t in no.targets:
                if isinstance(t, ast.Name):
                    apelidos[t.id] = no.value.args[0].value
    for no in ast.walk(arvore):
        if not isinstance(no, ast.Attribute):
            continue
        alvo = no.value
        if isinstance(alvo, ast.Name) and alvo.id in apelidos:
            usos.append((apelidos[alvo.id], no.attr, no.lineno))
        elif isinstance(alvo, ast.Call) and getattr(
                alvo.func, "id", getattr(alvo.func, "attr", "")) == "importar_licao":
            usos.append((alvo.args[0].value, no.attr, no.lineno))
    return usos


@pytest.mark.parametrize("licao", LICOES, ids=lambda p: p.stem)
def test_importa_de_outra_licao_so_o_que_ela_exporta(licao):
    for outra, nome, linha in _importacoes(_arvore(licao)):
        assert outra < licao.stem, f"linha {linha}: {outra} vem depois de {licao.stem}"
        todos = _todos(_arvore(RAIZ / "lab" / f"{outra}.py")) or []
        assert nome in todos, (f"linha {linha}: {licao.stem} usa {outra}.{nome}, que não está "
                               f"no __all__ de {outra} ({todos})")


def _pecas_usadas(arvore) -> set[str]:
    """As lições de cada importar_licao("NN_x") do arquivo, em qualquer ponto (também as de
    dentro de uma função e as que não passam por um apelido)."""
    return {no.args[0].value for no in ast.walk(arvore) if isinstance(no, ast.Call)
            and getattr(no.func, "id", getattr(no.func, "attr", "")) == "importar_licao"
            and no.args and isinstance(no.args[0], ast.Constant)}


def _tabela_das_pecas(texto: str) -> dict[str, set[str]]:
    """{lição: {lições}} da tabela "lição | usa as peças de" de lab/README.md."""
    secao = texto.split("| lição | usa as peças de |")[1].split("\n\n")[0]
    tabela = {}
    for linha in secao.strip().splitlines()[1:]:                  # depois do |---|---|
        licao, pecas = (celula.strip() for celula in linha.strip("|").split("|"))
        tabela[licao.strip("`")] = set(re.findall(r"`(\d\d_\w+)`", pecas))
    return tabela


def test_a_tabela_das_pecas_do_readme_e_a_do_codigo():
    """lab/README.md mostra quem usa as peças de quem (importar_licao, que nenhuma ferramenta
    de código vê); a tabela tem uma linha para cada lição que usa peças, e só as do código.
    Uma lição nova sem peças de outra não precisa de linha."""
    assert _pecas_usadas(ast.parse('L = importar_licao("05_block")\n'
                                   'def f():\n    return comum.importar_licao("03_x").y\n')) \
        == {"05_block", "03_x"}
    tabela = _tabela_das_pecas((RAIZ / "lab" / "README.md").read_text(encoding="utf-8"))
    codigo = {p.stem: usadas for p in LICOES if (usadas := _pecas_usadas(_arvore(p)))}
    assert "06_gpt2" in codigo and "13_tucano" in codigo
    faltam = {k: sorted(v) for k, v in codigo.items() if tabela.get(k) != v}
    assert not faltam, f"lab/README.md: a linha destas lições não é a do código: {faltam}"
    sobram = sorted(set(tabela) - set(codigo))
    assert not sobram, f"lab/README.md: linhas de lições que não usam peças: {sobram}"


@pytest.mark.parametrize("licao", LICOES, ids=lambda p: p.stem)
def test_ajudantes_de_saida_tem_uma_casa_so(licao):
    arvore = _arvore(licao)
    for no in ast.walk(arvore):
        if isinstance(no, (ast.FunctionDef, ast.ClassDef)):
            assert no.name not in DO_ENCANAMENTO, (
                f"linha {no.lineno}: {no.name} já existe no encanamento (console/figuras)")
            if no.name == "entropia":
                assert licao.stem.startswith("03"), "a entropia é da lição 03"


def _definidos_na_peca(arvore, fonte) -> set[str]:
    """Os nomes que o topo do arquivo define entre `# ==== a peça` e `# ==== os experimentos`."""
    linhas = fonte.splitlines()
    marcas = [i + 1 for i, l in enumerate(linhas) if l.startswith("# ====")]
    inicio = next(n for n in marcas if "a peça" in linhas[n - 1])
    fim = next(n for n in marcas if "os experimentos" in linhas[n - 1])
    nomes = set()
    for no in arvore.body:
        if not inicio < no.lineno < fim:
            continue
        if isinstance(no, (ast.FunctionDef, ast.ClassDef)):
            nomes.add(no.name)
        elif isinstance(no, (ast.Assign, ast.AnnAssign)):
            for alvo in (no.targets if isinstance(no, ast.Assign) else [no.target]):
                nomes |= {n.id for n in ast.walk(alvo) if isinstance(n, ast.Name)}
        elif isinstance(no, (ast.Import, ast.ImportFrom)):
            nomes |= {(a.asname or a.name).split(".")[0] for a in no.names}
    return nomes


@pytest.mark.parametrize("licao", [p for p in LICOES if _todos(_arvore(p))], ids=lambda p: p.stem)
def test_o_all_so_nomeia_o_que_a_peca_define(licao):
    """`__all__` é o que as lições seguintes importam: só a peça (o conceito), nunca um
    ajudante dos experimentos; o que várias lições usam dos experimentos mora no encanamento
    (montagem: modelos, tokenizar, confere, contar; pesos_gpt2: a transposição das Conv1D)."""
    fonte = licao.read_text(encoding="utf-8")
    arvore = ast.parse(fonte)
    fora = [n for n in _todos(arvore) if n not in _definidos_na_peca(arvore, fonte)]
    assert not fora, f"no __all__ mas definidos fora da peça: {fora}"


def test_a_fronteira_da_peca_e_lida_de_verdade():
    """O teste acima pode falhar: um nome definido depois de `# ==== os experimentos` não
    conta como da peça."""
    fonte = ("# ==== a peça\ndef peca():\n    pass\n\n__all__ = ['peca', 'ajudante']\n"
             "# ==== os experimentos\ndef ajudante():\n    pass\n")
    assert _definidos_na_peca(ast.parse(fonte), fonte) == {"peca", "__all__"}


def test_os_ajudantes_guardados_existem_no_encanamento():
    """Um nome guardado que saiu do encanamento não guarda nada: cada um é definido lá."""
    definidos = {no.name for p in (RAIZ / "lab" / "comum").glob("*.py")
                 for no in _arvore(p).body if isinstance(no, (ast.FunctionDef, ast.ClassDef))}
    assert DO_ENCANAMENTO <= definidos, DO_ENCANAMENTO - definidos


def _frases_de_conferencia(funcao):
    """Os "sim"/"NÃO" impressos numa função cujo teste não veio de licao.verificar."""
    verificados = set()
    for no in ast.walk(funcao):
        if isinstance(no, ast.Assign) and isinstance(no.value, ast.Call) and \
                getattr(no.value.func, "attr", "") == "verificar":
            verificados |= {t.id for t in no.targets if isinstance(t, ast.Name)}

    def vem_de_verificar(teste):
        if isinstance(teste, ast.Call) and getattr(teste.func, "attr", "") == "verificar":
            return True
        if isinstance(teste, ast.Name) and teste.id in verificados:
            return True
        if isinstance(teste, ast.UnaryOp):
            return vem_de_verificar(teste.operand)
        return False

    for no in ast.walk(funcao):
        if isinstance(no, ast.IfExp):
            lados = [no.body, no.orelse]
            if any(isinstance(l, ast.Constant) and isinstance(l.value, str)
                   and SIM_NAO.match(l.value) for l in lados) \
                    and not vem_de_verificar(no.test):
                yield no.lineno


@pytest.mark.parametrize("licao", LICOES, ids=lambda p: p.stem)
def test_toda_conferencia_impressa_passa_por_verificar(licao):
    arvore = _arvore(licao)
    soltas = [linha for no in ast.walk(arvore) if isinstance(no, ast.FunctionDef)
              for linha in _frases_de_conferencia(no)]
    assert not soltas, (f"linhas {sorted(set(soltas))}: um 'sim'/'NÃO' impresso sem "
                        "licao.verificar (um 'NÃO' tem de fazer a execução sair com 1)")


def test_o_encanamento_nao_importa_torch_no_topo():
    """A primeira linha sai antes do torch: nenhum módulo do encanamento o importa no
    topo (só dentro das funções que o usam)."""
    modulos = sorted((RAIZ / "lab" / "comum").glob("*.py"))
    assert len(modulos) > 10 and any(p.name == "licao.py" for p in modulos)
    for arquivo in modulos:
        for no in _arvore(arquivo).body:
            nomes = ([a.name for a in no.names] if isinstance(no, ast.Import) else
                     [no.module or ""] if isinstance(no, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] in ("torch", "transformers", "matplotlib", "numpy")
                           for n in nomes), f"{arquivo.name}:{no.lineno} importa {nomes}"
