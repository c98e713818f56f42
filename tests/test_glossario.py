"""O glossário se sustenta: cada termo é usado como está escrito, com o inglês no primeiro
uso em cada apostila, e uma grafia só por termo nas apostilas e nos scripts.

- Todo termo do glossário aparece em alguma apostila (ou no README), escrito como no
  glossário (um termo que ninguém usa confunde quem procura).
- Em cada apostila, o primeiro uso de um termo na prosa (fora de títulos, código e
  fórmulas) traz o termo em inglês por perto (a 200 caracteres), como "(*residual stream*)".
  Ficam de fora os termos cujo inglês é o próprio termo (token, softmax), as palavras
  comuns demais para marcar o primeiro uso (PALAVRAS_COMUNS) e o termo curto dentro de um
  maior ("entropia" em "entropia cruzada" é um uso de "entropia cruzada").
- As grafias proibidas (GRAFIAS: variante -> forma certa) não aparecem nem nas apostilas
  nem nas strings dos scripts.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parent.parent
GLOSSARIO = RAIZ / "apostilas" / "glossario.md"
APOSTILAS = sorted((RAIZ / "apostilas").glob("0*.md"))
SCRIPTS = sorted((RAIZ / "lab").glob("*.py"))  # as lições e o encanamento

# Palavras do dia a dia que também são termos: o primeiro uso pode ser o comum ("de forma
# que"), então não se exige o inglês nele.
PALAVRAS_COMUNS = {"forma", "época", "posto", "núcleo", "camada", "compute"}

# variante (regex, sem distinguir maiúsculas, salvo quando marcada) -> o que escrever
GRAFIAS = {
    r"não-linear": "não linear / não linearidade (sem hífen)",
    r"(?-i:\bpre-LN\b)": "Pre-LN",
    r"(?-i:\bpost-LN\b)": "Post-LN",
    r"(?-i:\bpré-LN\b)": "Pre-LN",
    r"\bcapítulo\b": "dizer de onde vem (a lição, o artigo), não 'o capítulo'",
    r"texto de origem": "dizer de onde vem (o artigo, a tabela), não 'o texto de origem'",
    r"se perdeu na extração": "dizer o que a lição mostra, sem falar da extração",
    r"\bfeatures\b": "coordenadas / dimensões",
    r"\breranking\b": "reordenação de resultados",
    r"embedding posicional": "embedding de posição",
}


def _sem_acento(texto: str) -> str:
    return unicodedata.normalize("NFKD", texto).encode("ascii", "ignore").decode().lower()


def termos() -> list[tuple[str, str]]:
    """(termo, inglês) de cada linha da tabela do glossário."""
    linhas = GLOSSARIO.read_text(encoding="utf-8").split("\n")
    saida = []
    for linha in linhas:
        m = re.match(r"\| \*\*(.+?)\*\* \| (.*?) \| ", linha)
        if m:
            saida.append((m.group(1), m.group(2)))
    return saida


def prosa(texto: str) -> str:
    """O texto que se lê como frase: sem blocos de código, código em linha, fórmulas,
    comentários HTML, endereços de links nem títulos."""
    texto = re.sub(r"```.*?```", " ", texto, flags=re.S)
    texto = re.sub(r"<!--.*?-->", " ", texto, flags=re.S)
    texto = re.sub(r"\$\$.*?\$\$", " ", texto, flags=re.S)
    texto = re.sub(r"`[^`\n]*`", " ", texto)
    texto = re.sub(r"(?<!\\)\$[^$\n]+\$", " ", texto)
    texto = re.sub(r"\]\([^)\s]*\)", "]", texto)
    texto = re.sub(r"^#.*$", " ", texto, flags=re.M)
    return texto


def _partes(termo: str) -> list[str]:
    """'consulta, chave, valor' -> três termos; 'GQA / MQA' -> dois."""
    return [p.strip() for p in re.split(r" / |, ", termo) if p.strip()]


def _padrao(parte: str) -> re.Pattern:
    return re.compile(r"(?<![\w-])" + re.escape(parte) + r"(s|es)?(?![\w-])", re.I)


def _ingleses(ingles: str) -> list[str]:
    """'token embedding (wte)' -> ['token embedding', 'wte']; 'a, b' -> ['a', 'b']."""
    partes = re.split(r", | / |\(|\)", ingles)
    return [p.strip() for p in partes if len(p.strip()) > 1]


def test_glossario_em_ordem_e_sem_repeticao():
    nomes = [_sem_acento(t) for t, _ in termos()]
    assert len(nomes) > 50
    assert len(set(nomes)) == len(nomes), "termo repetido no glossário"
    assert nomes == sorted(nomes), "o glossário não está em ordem alfabética"


@pytest.mark.parametrize("termo", [t for t, _ in termos()])
def test_termo_usado_como_escrito(termo):
    textos = [prosa(a.read_text(encoding="utf-8")) for a in APOSTILAS]
    textos.append(prosa((RAIZ / "README.md").read_text(encoding="utf-8")))
    usado = any(_padrao(p).search(t) for p in _partes(termo) for t in textos)
    assert usado, (f"o termo {termo!r} do glossário não aparece escrito assim em apostila "
                   "nenhuma: use-o como está, ou tire-o do glossário")


def _precisa_de_ingles(termo: str, ingles: str) -> bool:
    if termo.lower() in PALAVRAS_COMUNS:
        return False
    alvo = _sem_acento(ingles)
    return not any(_sem_acento(p) in alvo for p in _partes(termo))


@pytest.mark.parametrize("apostila", APOSTILAS, ids=lambda p: p.name)
def test_ingles_no_primeiro_uso(apostila):
    texto = prosa(apostila.read_text(encoding="utf-8"))
    faltas = []
    for termo, ingles in termos():
        if not _precisa_de_ingles(termo, ingles):
            continue
        # "entropia" dentro de "entropia cruzada" é um uso do termo maior, não deste
        maiores = [(m.start(), m.end()) for outro, _ in termos()
                   if outro != termo and any(p.lower() in outro.lower() for p in _partes(termo))
                   for q in _partes(outro) for m in _padrao(q).finditer(texto)]
        usos = [m for p in _partes(termo) for m in _padrao(p).finditer(texto)
                if not any(a <= m.start() and m.end() <= b for a, b in maiores)]
        if not usos:
            continue
        primeiro = min(usos, key=lambda m: m.start())
        janela = texto[max(0, primeiro.start() - 200):primeiro.end() + 200]
        if not any(_padrao(i).search(janela) for i in _ingleses(ingles)):
            linha = texto[:primeiro.start()].count("\n") + 1
            faltas.append(f"linha {linha}: {primeiro.group(0)!r} sem {ingles!r} por perto")
    assert not faltas, f"{apostila.name}: o primeiro uso destes termos não diz o " \
        "inglês (escreva como '... (*inglês*)'):\n" + "\n".join(faltas)


@pytest.mark.parametrize("arquivo", APOSTILAS + SCRIPTS + [GLOSSARIO, RAIZ / "README.md"],
                         ids=lambda p: p.name)
def test_uma_grafia_por_termo(arquivo):
    texto = arquivo.read_text(encoding="utf-8")
    if arquivo.suffix == ".md":
        texto = prosa(texto)
    erros = []
    for variante, certo in GRAFIAS.items():
        for m in re.finditer(variante, texto, re.I):
            linha = texto[:m.start()].count("\n") + 1
            erros.append(f"linha {linha}: {m.group(0)!r} -> {certo}")
    assert not erros, f"{arquivo.name}:\n" + "\n".join(erros)


def _prerequisitos(caminho: Path) -> str:
    texto = caminho.read_text(encoding="utf-8")
    assert "## Pré-requisitos" in texto, f"{caminho.name} sem a seção de pré-requisitos"
    return texto.split("## Pré-requisitos", 1)[1].split("\n## ", 1)[0]


def test_prerequisitos_no_readme_e_no_indice():
    """Issue 22: o README e o índice das apostilas têm a mesma seção de pré-requisitos (só o
    caminho do glossário muda), e cada ideia que ela resume é um termo do glossário."""
    raiz = _prerequisitos(RAIZ / "README.md")
    indice = _prerequisitos(RAIZ / "apostilas" / "README.md")
    assert raiz.replace("(apostilas/glossario.md)", "(glossario.md)") == indice
    glossario = GLOSSARIO.read_text(encoding="utf-8").lower()
    termos = re.findall(r"^- \*\*(.+?)\*\*", raiz, flags=re.M)
    assert len(termos) >= 6, termos
    for termo in termos:
        termo = termo.strip("`").lower()
        termo = {"backward()": "passada para a frente / para trás"}.get(termo, termo)
        assert f"| **{termo}** |" in glossario, f"'{termo}' não está no glossário"
