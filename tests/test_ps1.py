"""O .venv-setup.ps1 analisado sem PowerShell: sem erro de sintaxe e sem nada do PowerShell 7.

O .venv-setup.ps1 é o primeiro comando que todo aluno de Windows roda, e nenhuma máquina
do projeto tem PowerShell. A gramática do tree-sitter para PowerShell (tree-sitter-powershell,
fixada em requirements.txt) analisa o script aqui: qualquer erro de sintaxe reprova, e também
o que o Windows PowerShell 5.1 (o que vem no Windows) não tem e o PowerShell 7 tem:

- encadeamento de pipelines `a && b`, `a || b` (a gramática conhece: nó pipeline_chain_tail);
- o ternário `$a ? 1 : 2`, `??`, `??=` e o acesso condicional `${a}?.B`, `${a}?[0]`: a
  gramática não os conhece e os lê como erro de sintaxe num '?'; o teste diz qual é, pelo
  que vem logo depois do '?' no texto.

Cada recusa é conferida num trecho pequeno, ao lado do equivalente do 5.1, que passa.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_powershell

RAIZ = Path(__file__).resolve().parent.parent
SCRIPT = RAIZ / ".venv-setup.ps1"
BOM = b"\xef\xbb\xbf"

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))

SO_NO_7 = "só existe no PowerShell 7; o Windows PowerShell 5.1 não entende"


def _operador_interrogacao(fonte: bytes, no) -> str | None:
    """Nome da construção do PowerShell 7 que começa no '?' de um nó de erro, ou None."""
    texto = no.text.strip()
    if texto not in (b"?", b"??"):
        return None
    seguinte = fonte[no.end_byte:no.end_byte + 1]
    if texto == b"??":
        return "'??=' (atribuição se nulo)" if seguinte == b"=" else "'??' (coalescência nula)"
    if seguinte == b".":
        return "'?.' (acesso condicional a membro)"
    if seguinte == b"[":
        return "'?[]' (acesso condicional a elemento)"
    return "'? :' (operador ternário)"


def _folhas(no):
    if no.child_count == 0:
        yield no
    for filho in no.children:
        yield from _folhas(filho)


def problemas(fonte: bytes) -> list[str]:
    """Erros de sintaxe e construções só do PowerShell 7, um por linha de texto."""
    raiz = _PARSER.parse(fonte).root_node
    achados: list[str] = []

    def linha(no) -> int:
        return no.start_point.row + 1

    def visitar(no) -> None:
        if no.type == "pipeline_chain_tail":
            operador = no.text.decode("utf-8", "replace").strip()
            achados.append(f"linha {linha(no)}: '{operador}' (encadeamento de pipelines) "
                           f"{SO_NO_7}")
        if no.is_missing:
            achados.append(f"linha {linha(no)}: erro de sintaxe, falta '{no.type}'")
            return
        if no.is_error:
            interrogacoes = [(f, nome) for f in _folhas(no)
                             if f.is_error and (nome := _operador_interrogacao(fonte, f))]
            for folha, nome in interrogacoes:
                achados.append(f"linha {linha(folha)}: {nome} {SO_NO_7}")
            if not interrogacoes:
                trecho = no.text.decode("utf-8", "replace").strip().splitlines() or [""]
                achados.append(f"linha {linha(no)}: erro de sintaxe perto de "
                               f"{trecho[0][:60]!r}")
            return
        for filho in no.children:
            visitar(filho)

    visitar(raiz)
    if raiz.has_error and not achados:  # a gramática marcou erro que a busca não achou
        achados.append("erro de sintaxe (sem posição)")
    return achados


# ---------------------------------------------------------------- o script de verdade
def test_o_script_nao_tem_erro_nem_nada_do_powershell_7():
    assert problemas(SCRIPT.read_bytes()) == []


def test_o_script_tem_bom_utf8():
    """Sem o BOM, o PowerShell 5.1 lê o arquivo como ANSI (cp1252) e estraga os acentos."""
    fonte = SCRIPT.read_bytes()
    assert fonte.startswith(BOM)
    fonte[len(BOM):].decode("utf-8")  # o resto é UTF-8 válido


# Uma edição pequena numa cópia do script: (trecho original, trecho editado). Cada trecho
# aparece uma vez só no script, para a edição cair exatamente ali.
EDICOES = {
    "sem a chave que fecha uma função": (
        "    Write-Host \"==> $Texto\" -ForegroundColor Cyan\n}\n",
        "    Write-Host \"==> $Texto\" -ForegroundColor Cyan\n\n"),
    "sem a chave que abre um foreach": (
        "foreach ($cand in $candidatos) {", "foreach ($cand in $candidatos) "),
    "sem a última chave do script": ("Falhar-Pip 'a instalação dos pacotes falhou'\n}",
                                     "Falhar-Pip 'a instalação dos pacotes falhou'\n"),
    "um parêntese a mais numa atribuição": ("$script:Codigo = 0\n", "$script:Codigo = (0\n"),
    "um parêntese a mais num if": ("if ($null -eq $PyExe) {", "if (($null -eq $PyExe) {"),
    "um parêntese fechando a mais": ("$VenvPy = Join-Path (Get-Location).Path",
                                     "$VenvPy = Join-Path (Get-Location)).Path"),
}


@pytest.mark.parametrize("edicao", EDICOES)
def test_uma_copia_com_um_erro_de_sintaxe_e_recusada(edicao, tmp_path):
    original, editado = EDICOES[edicao]
    texto = SCRIPT.read_bytes().decode("utf-8")
    assert texto.count(original) == 1, f"o trecho da edição '{edicao}' mudou no script"
    copia = tmp_path / ".venv-setup.ps1"
    copia.write_bytes(texto.replace(original, editado).encode("utf-8"))
    achados = problemas(copia.read_bytes())
    assert achados and all("erro de sintaxe" in a for a in achados), achados


# ---------------------------------------------------------------- o que só o 7 tem
# (trecho do PowerShell 7, o que o teste deve dizer, o mesmo no 5.1)
SO_DO_7 = [
    ("git pull && echo ok", "'&&'", "git pull; if ($?) { echo ok }"),
    ("git pull || echo falhou", "'||'", "git pull; if (-not $?) { echo falhou }"),
    ("$x = $a ? 1 : 2", "ternário", "$x = if ($a) { 1 } else { 2 }"),
    ("$x = $a ?? 2", "'??' (coalescência", "$x = if ($null -ne $a) { $a } else { 2 }"),
    ("$x ??= 2", "'??='", "if ($null -eq $x) { $x = 2 }"),
    ("$n = ${a}?.Count", "'?.'", "$n = if ($null -ne $a) { $a.Count }"),
    ("$p = ${a}?[0]", "'?[]'", "$p = if ($null -ne $a) { $a[0] }"),
]


@pytest.mark.parametrize("trecho, nome, equivalente_51", SO_DO_7,
                         ids=[t for t, _, _ in SO_DO_7])
def test_construcao_do_powershell_7_e_recusada(trecho, nome, equivalente_51):
    achados = problemas(trecho.encode())
    assert len(achados) == 1 and nome in achados[0] and SO_NO_7 in achados[0], achados
    assert problemas(equivalente_51.encode()) == []


def test_construcao_do_7_no_meio_do_script_e_achada_na_linha_certa():
    texto = SCRIPT.read_bytes().decode("utf-8")
    original = "$script:Codigo = 0\n"
    assert texto.count(original) == 1
    linha = texto[:texto.index(original)].count("\n") + 1
    editado = texto.replace(original, "$script:Codigo = $script:Codigo ?? 0\n")
    assert problemas(editado.encode()) == [f"linha {linha}: '??' (coalescência nula) {SO_NO_7}"]


@pytest.mark.parametrize("trecho", [
    "Get-Process | ? { $_.CPU -gt 1 }",            # '?' como apelido de Where-Object
    "if ($?) { Write-Host 'ok' }",                  # $? é a variável do último status
    "Write-Host 'a && b || c ? d : e ?? f'",        # dentro de texto não conta
    "Write-Host \"x ?. y ?[0]\"",
    "$a = 1  # a && b ?? c",                        # nem em comentário
    "$ok = ($a -and $b) -or -not $c",
])
def test_o_que_o_51_aceita_passa(trecho):
    assert problemas(trecho.encode()) == []
