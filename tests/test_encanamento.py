"""O encanamento do lab (console, licao, pausas, figuras, carregar_gpt2, otimizador): console,
linha de comando, o roteiro da lição, carregamento do GPT-2, Adam."""
from __future__ import annotations

import re
import os
import shutil
from pathlib import Path
import subprocess
import sys

import pytest
import torch

import carregar_gpt2
import console
import figuras
import licao
import otimizador
from conftest import RAIZ, rodar_script


# ------------------------------------------------------------ números pt-BR
def test_numeros_no_formato_brasileiro():
    assert console.num(0.84134, 4) == "0,8413"
    assert console.num(1234.5, 2) == "1.234,50"
    assert console.inteiro(124439808) == "124.439.808"
    assert console.cientifico(0.000473) == "4,73e-4"
    assert console.cientifico(5.7e6, 1) == "5,7e6"
    assert console.pct(0.6663) == "66,6 %"
    assert console.tamanho(3 * 2**30) == "3,00 GiB"


# ------------------------------------------------------------ linha de comando
def test_ajuda_em_portugues_e_sem_torch():
    codigo = (
        "import sys, runpy\n"
        "sys.argv = ['lab/05_block.py', '--help']\n"
        "try:\n    runpy.run_path('lab/05_block.py', run_name='__main__')\n"
        "except SystemExit as s:\n    print('saida', s.code)\n"
        "print('torch importado:', 'torch' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ, capture_output=True,
                       text=True, env={"PYTHONPATH": str(RAIZ / "lab"), "PATH": ""})
    assert "uso:" in r.stdout and "mostra esta ajuda" in r.stdout
    assert "--so 2,4" in r.stdout or "--so" in r.stdout
    assert "saida 0" in r.stdout
    assert "torch importado: False" in r.stdout


@pytest.mark.parametrize("args, trecho", [
    (["--so", "9"], "não há experimento 9"),
    (["--so", "abc"], "não é uma lista de números"),
    (["--semente", "x"], "não é um número inteiro"),
    (["--semente", "-1"], "fora do intervalo"),
    (["--semente", str(2**32)], "fora do intervalo"),
    (["--nao-existe"], "argumentos desconhecidos"),
])
def test_uso_errado_sai_com_2_e_explica(args, trecho):
    r = rodar_script("05_block.py", *args)
    assert r.returncode == 2
    assert trecho in r.erros
    assert "Traceback" not in r.erros + r.saida


def test_real_entre_com_sufixos_e_limites_legiveis():
    """real_entre(sufixos=True) lê as quantidades como as lições as escrevem (70B, 1,4T),
    no mesmo número que a notação científica; os limites saem como o aluno os digitaria
    (1e30, não 1e+30) e um mínimo excluído diz "maior que"."""
    import argparse

    ler = licao.real_entre(0, 1e30, "--tokens 1e13", sufixos=True)
    assert ler("1,4T") == 1.4e12 and ler("15T") == 15e12 and ler(" 70B ") == 70e9
    assert ler("400M") == 400e6 and ler("8k") == ler("8K") == 8000 and ler("2,5e12") == 2.5e12
    for ruim, motivo in (("T", "'T' não é um número"), ("1e3T", "não é um número"),
                         ("5b", "não é um número"), ("2e30", "use um número entre 0 e 1e30"),
                         ("-1B", "-1B está fora do intervalo")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(motivo)):
            ler(ruim)
    with pytest.raises(argparse.ArgumentTypeError, match="não é um número"):
        licao.real_entre(0, 10)("7B")                    # sem sufixos=True, 7B não é número
    positivo = licao.real_entre(0, 1e30, inclui_minimo=False)
    with pytest.raises(argparse.ArgumentTypeError, match="use um número maior que 0 e até 1e30"):
        positivo("0")
    assert [licao._g(x) for x in (1e-5, 0.001, 1.5, 1e30, 2.5e12, 30)] == \
        ["1e-5", "0,001", "1,5", "1e30", "2,5e12", "30"]


def test_a_licao_e_lida_da_docstring():
    """O título sai da 1ª linha (sem o '(leia junto: ...)', com os parênteses do próprio
    título); cada 'k. título' é um experimento; as outras linhas são só para quem lê."""
    doc = ("Lição 42 · Posições (wpe) e tokens (leia junto: apostilas/42_x.md)\n"
           "Uma linha para quem lê o arquivo.\n1. Primeiro: com dois-pontos\n"
           "2. Segundo, o último\n")
    li = licao.Licao.da_docstring(doc, usa_gpt2={2})
    assert (li.numero, li.titulo) == ("42", "Posições (wpe) e tokens")
    assert li.titulos == ["Primeiro: com dois-pontos", "Segundo, o último"]
    assert li.experimentos[1] == (2, "Segundo, o último", True)
    assert li.modulo == __name__  # o __name__ de quem declarou a lição
    for errada in ("Lição 42 · x\n2. fora de ordem", "Sem o cabeçalho\n1. um"):
        with pytest.raises(AssertionError):
            licao.Licao.da_docstring(errada)


def test_abrir_numa_licao_importada_nao_faz_nada():
    """LICAO.abrir() no topo do arquivo só age quando a lição é o script rodado: importada
    por outra lição, não lê a linha de comando (a de quem importou) nem imprime nada."""
    codigo = ("import sys\nsys.path.insert(0, 'lab')\nsys.argv = ['x', '--opcao-que-nao-existe']\n"
              "from licao import importar_licao\nL05 = importar_licao('05_block')\n"
              "print('args', L05.LICAO.args, L05.Bloco.__name__)\n")
    r = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ, capture_output=True,
                       text=True, encoding="utf-8", timeout=120)
    assert r.returncode == 0 and r.stdout == "args None Bloco\n", r.stdout + r.stderr
    li = licao.Licao.da_docstring("Lição 42 · x\n1. um")
    assert li.abrir() is None and li.args is None
    assert li.abrir(["--so", "1"]).so == [1]  # com argv explícito, lê (os testes fazem isso)


def test_lista_nao_roda_nada():
    r = rodar_script("05_block.py", "--lista")
    assert r.returncode == 0
    linhas = r.saida.strip().splitlines()
    assert linhas[0].startswith("Lição 05")
    assert len(linhas) == 7 and linhas[3].strip().startswith("3.")


def test_primeira_linha_antes_do_torch():
    """A primeira linha sai antes de qualquer import do torch (stdout e stderr no mesmo cano)."""
    r = subprocess.run([sys.executable, "-X", "importtime", "lab/05_block.py", "--so", "6",
                        "--sem-figuras"], cwd=RAIZ, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env={"PATH": "", "PYTHONUNBUFFERED": "1",
                                                      "PYTHONIOENCODING": "utf-8"})
    linhas = r.stdout.decode("utf-8", "replace").splitlines()
    titulo = next(i for i, l in enumerate(linhas) if l.startswith("Lição 05"))
    torch_import = next(i for i, l in enumerate(linhas) if l.rstrip().endswith("| torch"))
    assert titulo < torch_import


def test_console_legado_nao_quebra():
    codigo = ("import console; console.preparar_saida(); "
              "console.dizer('token: 日本 ✓ ção'); print('fim')")
    r = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ / "lab", capture_output=True,
                       env={"PYTHONIOENCODING": "cp1252", "PATH": ""})
    assert r.returncode == 0, r.stderr
    texto = r.stdout.decode("cp1252")
    assert "token: ?? ? ção" in texto and "fim" in texto


def test_ctrl_c_sai_com_130_sem_traceback():
    li = licao.Licao("99", "teste", ["interrompe"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])

    def interrompe(_):
        raise KeyboardInterrupt

    assert li.rodar({1: interrompe}) == 130


def test_experimento_que_falha_vira_resumo_e_saida_1(capsys):
    li = licao.Licao("99", "teste", ["ok", "quebra"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])

    def quebra(_):
        raise RuntimeError("algo deu errado")

    assert li.rodar({1: lambda _: None, 2: quebra}) == 1
    saida = capsys.readouterr().out
    assert "Experimento 1/2 · ok" in saida and "falhou: 2. quebra" in saida
    assert "algo deu errado" in saida


def test_autoverificacao_que_nao_confere_sai_com_1(capsys):
    li = licao.Licao("99", "teste", ["confere", "não confere"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])

    def bate(li):
        assert li.verificar(True, "nada") is True

    def nao_bate(li):
        print("logits iguais?", "sim" if li.verificar(False, "logits") else "NÃO")

    assert li.rodar({1: bate, 2: nao_bate}) == 1
    saida = capsys.readouterr().out
    assert "logits iguais? NÃO" in saida
    assert "falhou: 2. não confere" in saida and "não confere: logits" in saida
    assert "1 de 2" in saida


def test_pausa_com_stdin_fechado_nao_quebra():
    """`--pausa` com a entrada fechada (`<&-`): segue sem pausar, sem traceback."""
    r = subprocess.run(f"exec 0<&-; exec {sys.executable} lab/05_block.py --so 1,6 "
                       "--pausa --sem-figuras", shell=True, cwd=RAIZ, capture_output=True,
                       env={**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"})
    saida = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0, saida
    assert "Traceback" not in saida and "lost sys.stdin" not in saida
    assert "Experimento 6/6" in saida


def test_figuras_vao_para_a_pasta_do_lab(tmp_path):
    """O padrão de --figuras não depende de onde o aluno está no terminal."""
    p = licao.criar_parser("x", "x", [])
    assert Path(p.parse_args([]).figuras) == RAIZ / "figuras"


# ------------------------------------------------------------ GPT-2
def test_carrega_da_pasta(gpt2_pequeno):
    modelo, tokenizador = carregar_gpt2.carregar_gpt2(str(gpt2_pequeno))
    assert modelo.config.n_layer == 3 and not modelo.training
    assert len(tokenizador("Olá")["input_ids"]) > 0


@pytest.mark.parametrize("caso, trecho", [
    ("pasta_inexistente", "não há pasta"),
    ("sem_safetensors", "não tem pesos .safetensors"),
    ("corrompido", "corrompidos"),
    ("nome_desconhecido", "não é um nome de GPT-2"),
])
def test_erros_de_carregamento_explicam(caso, trecho, gpt2_pequeno, tmp_path):
    if caso == "pasta_inexistente":
        nome = str(tmp_path / "nada")
    elif caso == "sem_safetensors":
        nome = str(tmp_path)
        (tmp_path / "config.json").write_text("{}")
    elif caso == "corrompido":
        copia = tmp_path / "modelo"
        shutil.copytree(gpt2_pequeno, copia)
        pesos = copia / "model.safetensors"
        pesos.write_bytes(pesos.read_bytes()[: pesos.stat().st_size // 2])
        nome = str(copia)
    else:
        nome = "gpt7-gigante"
    with pytest.raises(carregar_gpt2.ModeloIndisponivel, match=trecho):
        carregar_gpt2.carregar_gpt2(nome)


def test_sem_rede_e_sem_cache_explica(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    import huggingface_hub.constants as constantes

    monkeypatch.setattr(constantes, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constantes, "HF_HUB_OFFLINE", True)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel, match="00_check"):
        carregar_gpt2.carregar_gpt2("gpt2")


def test_recusa_modelo_que_nao_cabe(monkeypatch):
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 2 * 2**30)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel, match="GiB livres"):
        carregar_gpt2.carregar_gpt2("gpt2-xl")  # 6,2 GB em fp32: recusa antes de tentar


def test_memoria_sugere_um_menor_que_caberia_e_diz_a_margem(monkeypatch):
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 3 * 2**30)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2-xl", margem=1.3)
    texto = str(erro.value)
    # gpt2-large (3,1 GB x 1,3) não cabe em 3 GiB; gpt2-medium (1,4 GB x 1,3) cabe
    assert "--modelo gpt2-medium" in texto and "gpt2-large" not in texto
    assert "vezes 1,3" in texto and "7,5 GiB" in texto and "3,0 GiB livres" in texto
    # já é o menor: não sugere "--modelo gpt2" de novo
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 2**28)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2", margem=2.5)
    assert "--modelo" not in str(erro.value) and "vezes 2,5" in str(erro.value)
    assert "o gpt2 já é o menor" in str(erro.value)


def test_memoria_com_base_fixa_sugere_pela_mesma_conta(monkeypatch):
    """Com uma base fixa (o Python com o PyTorch), o modelo menor sugerido é o que cabe
    com ela: em 3 GiB, com 2 GiB de base, o gpt2-large (2,9 GiB de pesos) não cabe."""
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 3 * 2**30)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2-xl", margem=1.0, base=2 * 2**30)
    texto = " ".join(str(erro.value).split())
    assert "--modelo gpt2." in texto and "gpt2-large" not in texto
    assert "mais 2,00 GiB do Python com o PyTorch" in texto and "7,8 GiB" in texto


def _llama_minusculo(pasta):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(
        vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2,
        tie_word_embeddings=True)).save_pretrained(pasta)
    return pasta


def test_pasta_de_outro_modelo_nao_vira_gpt2_aleatorio(gpt2_pequeno, tmp_path):
    """Um Llama salvo com save_pretrained carregava como GPT-2 ao acaso, sem aviso."""
    llama = _llama_minusculo(tmp_path / "llama")
    for arquivo in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(gpt2_pequeno / arquivo, llama)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel, match="tipo 'llama'.*não um GPT-2"):
        carregar_gpt2.carregar_gpt2(str(llama))
    # o config diz gpt2, mas os pesos são de outro modelo: faltam e sobram pesos
    shutil.copy(gpt2_pequeno / "config.json", llama)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel,
                       match=r"não são os de um GPT-2: faltam \d+ pesos.*há \d+ pesos"):
        carregar_gpt2.carregar_gpt2(str(llama))


def test_pesos_de_forma_errada_explicam(gpt2_pequeno, tmp_path):
    import json

    pasta = tmp_path / "formas"
    shutil.copytree(gpt2_pequeno, pasta)
    config = json.loads((pasta / "config.json").read_text())
    config["n_embd"] = 32
    (pasta / "config.json").write_text(json.dumps(config))
    with pytest.raises(carregar_gpt2.ModeloIndisponivel, match="não têm as formas que o config"):
        carregar_gpt2.carregar_gpt2(str(pasta))


def test_pasta_sem_tokenizador_explica(gpt2_pequeno, tmp_path):
    pasta = tmp_path / "sem_tok"
    shutil.copytree(gpt2_pequeno, pasta)
    for arquivo in ("tokenizer.json", "tokenizer_config.json"):
        (pasta / arquivo).unlink()
    with pytest.raises(carregar_gpt2.ModeloIndisponivel, match="não o tokenizador"):
        carregar_gpt2.carregar_gpt2(str(pasta))
    r = rodar_script("05_block.py", "--so", "3", "--modelo", str(pasta), "--sem-figuras")
    # a mensagem quebra na largura, e onde quebra depende do comprimento da pasta
    assert r.returncode == 1 and "não o tokenizador" in " ".join(r.saida.split())
    assert "Traceback" not in r.saida + r.erros and "reshape" not in r.saida


def test_tokenizador_vazio_explica(gpt2_pequeno, tmp_path):
    from tokenizers import Tokenizer, models
    from transformers import GPT2TokenizerFast

    pasta = tmp_path / "tok_vazio"
    shutil.copytree(gpt2_pequeno, pasta)
    GPT2TokenizerFast(tokenizer_object=Tokenizer(models.BPE())).save_pretrained(pasta)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel, match="tokenizador .* está vazio"):
        carregar_gpt2.carregar_gpt2(str(pasta))


def test_config_invalido_em_portugues(gpt2_pequeno, tmp_path):
    pasta = tmp_path / "config_ruim"
    shutil.copytree(gpt2_pequeno, pasta)
    (pasta / "config.json").write_text("{isto não é json", encoding="utf-8")
    with pytest.raises(carregar_gpt2.ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2(str(pasta))
    texto = str(erro.value)
    assert "não é um JSON válido" in texto and "linha 1" in texto
    assert ".." not in texto and "It looks like" not in texto


def test_pesos_truncados_numa_pasta_falam_da_pasta(gpt2_pequeno, tmp_path):
    pasta = tmp_path / "minha_pasta"
    shutil.copytree(gpt2_pequeno, pasta)
    pesos = pasta / "model.safetensors"
    pesos.write_bytes(pesos.read_bytes()[: pesos.stat().st_size // 2])
    with pytest.raises(carregar_gpt2.ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2(str(pasta))
    texto = str(erro.value)
    assert "corrompidos" in texto and f"na pasta '{pasta}'" in texto
    assert "huggingface" not in texto and "cache" not in texto


def test_modelo_grande_sem_rede_manda_baixar_esse_modelo(tmp_path, monkeypatch):
    """O 00_check baixa o modelo de --modelo: a mensagem diz o comando com ele."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constantes

    monkeypatch.setattr(constantes, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constantes, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: None)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2-xl")
    assert "lab/00_check.py --modelo gpt2-xl" in str(erro.value)


def _parametros_gpt2(L, d, V=50257, P=1024):
    """12d² + 13d por bloco, wte, wpe e ln_f (FACTS.md), contado à parte."""
    return V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d


def test_tabela_de_parametros_bate_com_o_transformers_e_facts():
    from transformers import GPT2Config, GPT2LMHeadModel

    assert carregar_gpt2.estimar_memoria("gpt2") == 4 * 124_439_808
    for nome, (L, d, h) in carregar_gpt2.TAMANHOS_GPT2.items():
        with torch.device("meta"):
            m = GPT2LMHeadModel(GPT2Config(n_layer=L, n_embd=d, n_head=h))
        n = sum(p.numel() for p in m.parameters())
        assert carregar_gpt2.PARAMETROS_GPT2[nome] == n == _parametros_gpt2(L, d)
    assert carregar_gpt2.PARAMETROS_GPT2["gpt2-xl"] == 1_557_611_200


def test_contagem_nao_conta_a_cabeca_amarrada_duas_vezes(gpt2_pequeno):
    modelo, _ = carregar_gpt2.carregar_gpt2(str(gpt2_pequeno))
    soma_estado = sum(t.numel() for t in modelo.state_dict().values())
    wte = modelo.transformer.wte.weight.numel()
    contados = sum(p.numel() for p in modelo.parameters())  # parameters() deduplica
    assert contados == soma_estado - wte
    cfg = modelo.config
    assert contados == _parametros_gpt2(cfg.n_layer, cfg.n_embd, cfg.vocab_size,
                                        cfg.n_positions)


# ------------------------------------------------------------ utilidades
def test_adam_igual_ao_do_pytorch():
    torch.manual_seed(0)
    a = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.GELU(), torch.nn.Linear(7, 3))
    b = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.GELU(), torch.nn.Linear(7, 3))
    b.load_state_dict(a.state_dict())
    nosso = otimizador.Adam(a.parameters(), lr=1e-2, betas=(0.9, 0.98), eps=1e-9)
    deles = torch.optim.Adam(b.parameters(), lr=1e-2, betas=(0.9, 0.98), eps=1e-9)
    x = torch.randn(16, 5)
    for passo in range(20):
        for modelo, opt in ((a, nosso), (b, deles)):
            opt.zero_grad()
            modelo(x).pow(2).mean().backward()
            opt.step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.allclose(pa, pb, atol=1e-6)


def test_grafico_ascii_cabe_na_largura():
    texto = figuras.grafico_ascii({"a": [1, 2, 3], "b": [3, 2, 1]}, [0, 1, 2], larg=40)
    linhas = texto.splitlines()
    assert max(len(l) for l in linhas) <= 11 + 40 + 20
    assert any("*" in l for l in linhas) and any("o" in l for l in linhas)


def test_importar_licao_devolve_o_modulo_sem_rodar():
    modulo = licao.importar_licao("05_block")
    assert hasattr(modulo, "Bloco") and hasattr(modulo, "AtencaoMultiCabeca")


def test_saida_cortada_sem_traceback():
    """`python lab/05_block.py | head -3`: o cano fecha cedo e ninguém vê traceback."""
    proc = subprocess.Popen([sys.executable, "lab/05_block.py", "--so", "6", "--sem-figuras"],
                            cwd=RAIZ, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    erros = proc.stderr.read().decode("utf-8", "replace")
    proc.wait(timeout=120)
    assert "Traceback" not in erros and "BrokenPipe" not in erros


def test_figura_com_margens_e_escala_log_em_texto_simples(tmp_path):
    """As margens fixas viram frações da figura; a escala log rotula 10⁻³, 10⁰..."""
    fig, (ax1, ax2) = figuras.figura(10, 4, ncols=2, margens=(1.0, 0.5, 0.8, 0.4),
                                    ajuste={"wspace": 0.3})
    assert fig.get_layout_engine() is None
    assert fig.subplotpars.left == pytest.approx(0.1)
    assert fig.subplotpars.right == pytest.approx(0.95)
    assert fig.subplotpars.bottom == pytest.approx(0.2)
    assert fig.subplotpars.top == pytest.approx(0.9)
    ax1.plot([0, 1, 2], [1e-3, 1e-1, 1.0])
    figuras.escala_log(ax1)
    ax1.set_ylim(1e-3, 1.0)
    fig.savefig(tmp_path / "f.png", dpi=50)
    rotulos = [t.get_text() for t in ax1.get_yticklabels() if t.get_text()]
    assert {"10\u207b\u00b3", "10\u207b\u00b9", "10\u2070"} <= set(rotulos)
    assert not any("$" in r for r in rotulos)  # nada de mathtext
    assert ax2.get_yscale() == "linear"
    # sem margens, o layout automático continua o padrão
    fig2, _ = figuras.figura()
    assert fig2.get_layout_engine() is not None


def test_nenhuma_licao_importa_o_matplotlib_no_topo():
    """O matplotlib só entra quando uma figura é salva (figuras.figura, dentro das funções):
    nenhuma lição o importa no topo do arquivo. O teste abaixo confere em execução."""
    for script in sorted((RAIZ / "lab").glob("*.py")):
        topo = [linha for linha in script.read_text(encoding="utf-8").splitlines()
                if re.match(r"(import|from) matplotlib", linha)]
        assert not topo, (script.name, topo)


@pytest.mark.parametrize("script, args", [
    ("05_block.py", ["--so", "6"]),
    ("09_scaling.py", ["--so", "3"]),
])
def test_sem_figuras_nem_importa_o_matplotlib(script, args, tmp_path):
    """--sem-figuras poupa o import do matplotlib (quase 1 s); com figuras, ele é usado."""
    codigo = (
        "import runpy, sys\nsys.path.insert(0, 'lab')\n"
        f"sys.argv = ['lab/{script}', *{args!r}, *sys.argv[1:]]\n"
        "try:\n"
        f"    runpy.run_path('lab/{script}', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('MATPLOTLIB=%s' % ('matplotlib' in sys.modules))\n"
    )
    for extra, esperado in ((["--sem-figuras"], "False"), ([], "True")):
        r = subprocess.run([sys.executable, "-c", codigo, *extra,
                            "--figuras", str(tmp_path)],
                           cwd=RAIZ, capture_output=True, timeout=300,
                           env={**os.environ, "HF_HUB_OFFLINE": "1",
                                "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
        assert f"MATPLOTLIB={esperado}" in r.stderr.decode("utf-8", "replace"), (
            script, extra, r.stderr.decode("utf-8", "replace")[-500:])


def test_virgula_decimal_em_todo_eixo_e_na_barra_de_cor(tmp_path):
    """salvar_figura escreve 0,5 (não 0.5) em eixos lineares e barras de cor; o log fica."""
    import numpy as np

    li = licao.Licao("99", "teste", [])
    li.args = licao.criar_parser("x", "x", []).parse_args(["--figuras", str(tmp_path)])
    fig, (ax1, ax2, ax3) = figuras.figura(12, 4, ncols=3)
    ax1.plot([0, 2.5, 5], [0.0, 0.5, 1.0])
    imagem = ax2.imshow(np.linspace(0, 1, 16).reshape(4, 4))
    barra = fig.colorbar(imagem, ax=ax2)
    ax3.plot([1, 2, 3], [1e-3, 1e-2, 1e-1])
    figuras.escala_log(ax3)
    ax3.plot([1.0001, 1.0002], [1e-3, 1e-2])  # eixo x com deslocamento ("+1")
    assert li.salvar_figura(fig, "virgula.png").exists()
    rotulos = []
    for ax in (ax1, ax2, barra.ax, ax3):
        for eixo in (ax.xaxis, ax.yaxis):
            rotulos += [t.get_text() for t in eixo.get_ticklabels(which="both")]
            rotulos.append(eixo.get_offset_text().get_text())
    rotulos = [r for r in rotulos if r]
    assert "0,5" in rotulos and "2,5" in rotulos      # eixo linear e barra de cor
    assert "10\u207b\u00b2" in rotulos                # a escala log continua a sua
    assert not [r for r in rotulos if "." in r or "$" in r], rotulos


def test_eixo_de_passos_so_tem_marcas_inteiras(tmp_path):
    """Um eixo de passos (ou camadas) não mostra '2,5': eixos_inteiros põe marcas inteiras."""
    li = licao.Licao("99", "teste", [])
    li.args = licao.criar_parser("x", "x", []).parse_args(["--figuras", str(tmp_path)])
    fig, (sem, com) = figuras.figura(8, 3, ncols=2)
    for ax in (sem, com):
        ax.plot(range(4), [x * x for x in range(4)])  # 4 passos: o padrão marca 0,5 e 2,5
    figuras.eixos_inteiros(com)
    li.salvar_figura(fig, "inteiros.png")
    rotulos = lambda ax: [t.get_text() for t in ax.xaxis.get_ticklabels() if t.get_text()]  # noqa: E731
    assert any("," in r for r in rotulos(sem))           # o padrão dá 2,5, 7,5...
    assert rotulos(com) and not any("," in r for r in rotulos(com)), rotulos(com)
    com.set_xlim(0, 2000)                                # e o ponto do milhar, como no texto
    assert com.xaxis.get_major_formatter()(1000, 0) == "1.000"


VM_STAT_M1 = """\
Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                                3712.
Pages active:                            187254.
Pages inactive:                          183541.
Pages speculative:                         1861.
Pages throttled:                              0.
Pages wired down:                         86012.
Pages purgeable:                           5431.
"Translation faults":                 436158795.
Pages copy-on-write:                   19076540.
Pages zero filled:                    207745215.
Pages reactivated:                     16353473.
Pages purged:                           1981013.
File-backed pages:                        91583.
Anonymous pages:                         281073.
Pages stored in compressor:              958467.
Pages occupied by compressor:             49066.
Decompressions:                        20203357.
Compressions:                          27302555.
Pageins:                                7658401.
Pageouts:                                167436.
Swapins:                                2412003.
Swapouts:                               2841541.
"""


def test_memoria_no_macos_vem_do_vm_stat():
    """No macOS valia a RAM total como livre; agora livres + inativas + especulativas."""
    assert carregar_gpt2.ler_vm_stat(VM_STAT_M1) == 16384 * (3712 + 183541 + 1861)
    intel = VM_STAT_M1.replace("16384", "4096")
    assert carregar_gpt2.ler_vm_stat(intel) == 4096 * (3712 + 183541 + 1861)
    assert carregar_gpt2.ler_vm_stat("vm_stat: comando estranho") is None


def test_memoria_no_macos_sem_vm_stat_nao_inventa(monkeypatch):
    import subprocess as sp

    monkeypatch.setattr(carregar_gpt2.sys, "platform", "darwin")
    real_open = open

    def sem_proc(caminho, *a, **k):
        if str(caminho).startswith("/proc"):
            raise OSError("não há /proc no macOS")
        return real_open(caminho, *a, **k)

    monkeypatch.setattr("builtins.open", sem_proc)

    def falha(*a, **k):
        raise FileNotFoundError("vm_stat")

    monkeypatch.setattr(sp, "run", falha)
    assert carregar_gpt2.memoria_disponivel() is None

    class Saida:
        stdout = VM_STAT_M1

    monkeypatch.setattr(sp, "run", lambda *a, **k: Saida())
    assert carregar_gpt2.memoria_disponivel() == 16384 * (3712 + 183541 + 1861)


CTRL_C_COM_THREADS = r"""
import concurrent.futures, sys, time
sys.path.insert(0, "lab")
import console, licao
li = licao.Licao("99", "teste", ["treina em duas threads"])
li.abrir(["--sem-figuras"])
import torch

def treinar(fim):
    a = torch.randn(256, 256)
    while time.time() < fim:  # como o treino da lição 05: contas em C++ sem parar
        a = torch.tanh(a @ a)

def exp(_):
    fim = time.time() + 120
    with console.Progresso(10, "treinando") as barra, \
            concurrent.futures.ThreadPoolExecutor(2) as threads:
        futuros = [threads.submit(treinar, fim) for _ in range(2)]
        print("TREINANDO", flush=True)
        licao.esperar(futuros)

sys.exit(li.rodar({1: exp}))
"""


def test_ctrl_c_com_threads_treinando_para_na_hora():
    """SIGINT no meio de um treino em duas threads: sai 130 logo, uma linha, sem
    traceback e sem 'terminate called' (antes: esperava as threads, ou abortava)."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_COM_THREADS], cwd=RAIZ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
    for linha in proc.stdout:
        if b"TREINANDO" in linha:
            break
    time.sleep(1.0)
    inicio = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        saida, erros = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("Ctrl+C não parou o treino em 30 s")
    segundos = time.monotonic() - inicio
    saida, erros = saida.decode("utf-8", "replace"), erros.decode("utf-8", "replace")
    assert proc.returncode == 130, (saida, erros)
    assert saida.count("Interrompido (Ctrl+C).") == 1
    assert "Traceback" not in erros + saida and "terminate called" not in erros
    assert segundos < 15, segundos  # a máquina é dividida; sem o conserto, ~120 s


@pytest.mark.parametrize("script", sorted(p.name for p in (RAIZ / "lab").glob("[0-9][0-9]_*.py")))
def test_ajuda_cabe_em_80_colunas(script):
    """Nenhuma linha do --help passa de 80 colunas com COLUMNS=80 (eram 117), nem com
    um LAB_MODELO comprido."""
    r = rodar_script(script, "--help", env={"PYTHONIOENCODING": "utf-8",
                                            "LAB_MODELO": "/tmp/" + "m" * 120})
    assert r.returncode == 0, r.erros
    longas = [l for l in r.stdout.decode("utf-8").splitlines() if len(l) > 80]
    assert not longas, longas


def test_ajuda_quebra_linhas_longas_da_descricao_com_recuo():
    fmt = licao._Formatador("x", width=40)
    texto = fmt._fill_text("Experimentos:\n  1. " + "palavra " * 12, 40, "")
    linhas = texto.splitlines()
    assert linhas[0] == "Experimentos:" and linhas[1].startswith("  1. palavra")
    assert all(len(l) <= 40 for l in linhas) and linhas[2].startswith("     palavra")


def test_proximo_passo_e_a_licao_seguinte_que_existe(tmp_path, monkeypatch, capsys):
    """A lição 00 mandava para a 05 mesmo com a 01 pronta; agora o próximo passo é
    calculado do disco e avisa quando a seguinte do mapa ainda está sendo escrita."""
    lab = tmp_path / "lab"
    lab.mkdir()
    for nome in ("00_check.py", "05_block.py", "06_gpt2.py", "09_scaling.py", "console.py"):
        (lab / nome).write_text("")
    assert licao.proxima_licao("00", lab) == ("lab/05_block.py", "apostilas/05_block.md", "01")
    assert licao.proxima_licao("05", lab) == ("lab/06_gpt2.py", "apostilas/06_gpt2.md", None)
    assert licao.proxima_licao("06", lab) == ("lab/09_scaling.py", "apostilas/09_scaling.md",
                                               "07")
    assert licao.proxima_licao("09", lab) == (None, None, "10")
    assert licao.proxima_licao("10", lab) == (None, None, "11")
    assert licao.proxima_licao("11", lab) == (None, None, None)      # a 11 fecha o mapa
    (lab / "01_tokens.py").write_text("")
    assert licao.proxima_licao("00", lab) == ("lab/01_tokens.py", "apostilas/01_tokens.md",
                                               None)
    # no resumo, o próximo passo é o primeiro arquivo que existe
    monkeypatch.setattr(licao, "PASTA_LAB", lab)
    (lab / "01_tokens.py").unlink()
    li = licao.Licao("00", "teste", ["ok"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])
    assert li.rodar({1: lambda _: None}) == 0
    saida = capsys.readouterr().out
    assert "Próximo passo: lab/05_block.py (leia apostilas/05_block.md)." in saida
    assert "(a lição 01 ainda está sendo escrita)" in saida
    (lab / "01_tokens.py").write_text("")
    assert li.rodar({1: lambda _: None}) == 0
    saida = capsys.readouterr().out
    assert "Próximo passo: lab/01_tokens.py (leia apostilas/01_tokens.md)." in saida
    assert "sendo escrita" not in saida


def test_esperar_devolve_na_ordem_e_repassa_excecoes():
    import concurrent.futures
    import time

    def devagar(x):
        time.sleep(0.3 * (3 - x))
        return x * 10

    with concurrent.futures.ThreadPoolExecutor(3) as threads:
        assert licao.esperar([threads.submit(devagar, x) for x in range(3)]) == [0, 10, 20]
        with pytest.raises(ZeroDivisionError):
            licao.esperar([threads.submit(lambda: 1 / 0)])


@pytest.mark.parametrize("redirecao, esperado", [("0<&-", "None"), ("0</dev/null", "None"),
                                                 ("0<<< 'oi'", "'oi'")])
def test_perguntar_sem_entrada_devolve_none(redirecao, esperado):
    """Base do --pausa e do --interativo: sem stdin, segue em vez de quebrar."""
    codigo = "import console; print(repr(console.perguntar('> ')))"
    r = subprocess.run(["bash", "-c", f'exec {redirecao}; exec "$0" -c "$1"',
                        sys.executable, codigo], cwd=RAIZ / "lab", capture_output=True,
                       text=True)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.strip().endswith(esperado)


def test_licao_gpt2_passa_a_margem(monkeypatch):
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 2**28)
    li = licao.Licao("99", "teste", ["usa o GPT-2"], usa_gpt2={1})
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args(
        ["--modelo", "gpt2"])
    with pytest.raises(licao.ExperimentoPulado, match="vezes 2,5, a margem"):
        li.gpt2(margem=2.5)


def test_ferramenta_outra_cpu_compara_as_duas_execucoes():
    """ferramentas/outra_cpu.py: uma lição sem contas de ponto flutuante instáveis
    não muda em nenhuma linha (as de tempo não contam)."""
    r = subprocess.run([sys.executable, "ferramentas/outra_cpu.py", "lab/09_scaling.py",
                        "--so", "2"], cwd=RAIZ, capture_output=True, timeout=300,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"})
    saida = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 0 and "Nenhuma linha muda" in saida, saida
    assert int(saida.split("(")[1].split()[0]) > 5  # comparou a saída de verdade


# ------------------------------------------------------------ o erro do aluno, com arquivo e linha
LICAO_DO_ALUNO = '''
import sys
from licao import Licao, opcao, inteiro_entre

LICAO = Licao("98", "a cópia do aluno", ["um erro de forma", "um TypeError", "roda"],
              opcoes=[opcao("--camadas", inteiro_entre(1, 64, "--camadas 4"), 2, "camadas")])
if __name__ == "__main__":
    LICAO.abrir()

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc, self.c_proj = nn.Linear(d, 4 * d), nn.Linear(d, d)  # o erro: 4 * d

    def forward(self, x):
        return self.c_proj(self.c_fc(x))


@LICAO.experimento(1)
def exp_forma(licao):
    MLP(8)(torch.randn(2, 8))


@LICAO.experimento(2)
def exp_tipo(licao):
    n = None
    print(n + 1)


@LICAO.experimento(3)
def exp_roda(licao):
    print("o terceiro rodou")


if __name__ == "__main__":
    sys.exit(LICAO.rodar())
'''


def _rodar_copia(tmp_path, *args, env=None):
    copia = tmp_path / "meu_98.py"
    copia.write_text(LICAO_DO_ALUNO, encoding="utf-8")
    ambiente = {**os.environ, "PYTHONPATH": str(RAIZ / "lab"), "PYTHONIOENCODING": "utf-8",
                "NO_COLOR": "1", "COLUMNS": "80", **(env or {})}
    r = subprocess.run([sys.executable, str(copia), "--sem-figuras", *args], cwd=tmp_path,
                       capture_output=True, env=ambiente, timeout=120)
    return r, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")


def test_erro_no_codigo_do_aluno_mostra_arquivo_e_linha(tmp_path):
    """Qualquer exceção (RuntimeError do torch, TypeError do Python) sai em português com o
    quadro mais interno do código do aluno (arquivo:linha, função, a linha); os outros
    experimentos rodam; o resumo lista as falhas; sem "Próximo passo"; saída 1."""
    r, saida, erros = _rodar_copia(tmp_path)
    assert r.returncode == 1 and "Traceback" not in saida + erros, saida + erros
    fonte = LICAO_DO_ALUNO.splitlines()
    linha_forward = 1 + fonte.index("        return self.c_proj(self.c_fc(x))")
    linha_tipo = 1 + fonte.index("    print(n + 1)")
    assert "FALHOU: RuntimeError: mat1 and mat2 shapes cannot be multiplied" in saida
    assert f"  em meu_98.py:{linha_forward}, na função forward:\n" \
           "    return self.c_proj(self.c_fc(x))" in saida
    assert "FALHOU: TypeError: unsupported operand" in saida
    assert f"  em meu_98.py:{linha_tipo}, na função exp_tipo:\n    print(n + 1)" in saida
    assert "o terceiro rodou" in saida
    assert "1 de 3 experimentos rodou." in saida
    assert "  falhou: 1. um erro de forma" in saida and "  falhou: 2. um TypeError" in saida
    assert f"(meu_98.py:{linha_tipo})" in saida
    assert "Próximo passo" not in saida
    assert all(len(linha) <= 80 for linha in saida.splitlines()
               if not linha.startswith(("FALHOU: Runtime", "    RuntimeError"))), saida


def test_lab_traceback_mostra_o_traceback_inteiro(tmp_path):
    r, saida, erros = _rodar_copia(tmp_path, "--so", "2", env={"LAB_TRACEBACK": "1"})
    assert r.returncode == 1 and "Traceback (most recent call last)" in erros
    assert "TypeError" in erros and "o terceiro rodou" not in saida


def test_opcao_declarada_valida_em_portugues(tmp_path):
    r, saida, erros = _rodar_copia(tmp_path, "--camadas", "99")
    assert r.returncode == 2 and "Traceback" not in erros
    assert "erro: opção --camadas: 99 está fora do intervalo; use um inteiro de 1 a 64" in erros
    assert "(exemplo: --camadas 4)" in erros
    assert all(len(linha) <= 80 for linha in erros.splitlines()), erros
    r, saida, _ = _rodar_copia(tmp_path, "--help")
    assert r.returncode == 0 and "--camadas N" in saida and "camadas (padrão: 2)" in saida
    assert "LAB_TRACEBACK=1" in saida


@pytest.mark.parametrize("args, trecho", [
    (["--so"], "esperava um valor"),
    (["--semente", "4294967295"], "use um inteiro de 0 a 2147483647"),
    (["--semente", "-1"], "use um inteiro de 0 a 2147483647"),
    (["--xyz"], "argumentos desconhecidos: --xyz"),
])
def test_mensagens_do_argparse_em_portugues(tmp_path, args, trecho):
    r, _, erros = _rodar_copia(tmp_path, *args)
    assert r.returncode == 2 and trecho in " ".join(erros.split()), erros
    assert "expected" not in erros and "argument " not in erros
    assert all(len(linha) <= 80 for linha in erros.splitlines()), erros


def test_nargs_em_portugues():
    p = licao.criar_parser("x", "x", [])
    p.add_argument("--ids", nargs="+", type=int)
    with pytest.raises(SystemExit):
        p.parse_args(["--ids"])


def test_pulado_pelo_mesmo_motivo_diz_uma_vez(capsys):
    li = licao.Licao("05", "teste", ["um", "dois", "três"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])

    def sem_modelo(_):
        raise licao.ExperimentoPulado("sem o GPT-2 aqui.\nRode lab/00_check.py com internet.")

    assert li.rodar({1: sem_modelo, 2: sem_modelo, 3: lambda _: None}) == 1
    saida = capsys.readouterr().out
    assert saida.count("Rode lab/00_check.py com internet.") == 1
    assert "PULADO: sem o GPT-2 aqui. (veja o experimento 1, acima)" in saida
    assert saida.count("sem o GPT-2 aqui.") == 3   # 1, 2 e a linha do resumo
    assert "1 de 3 experimentos rodou." in saida and "Próximo passo" in saida


def test_sem_rede_com_hf_hub_offline_diz_para_tirar_a_variavel(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constantes

    monkeypatch.setattr(constantes, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constantes, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: None)
    with pytest.raises(carregar_gpt2.ModeloIndisponivel) as erro:
        carregar_gpt2.carregar_gpt2("gpt2")
    assert "HF_HUB_OFFLINE=1 está definida" in str(erro.value)
    assert "Remove-Item Env:HF_HUB_OFFLINE" in str(erro.value) and "unset" in str(erro.value)
    assert "Conecte-se" not in str(erro.value)


def test_formatos_novos():
    assert console.plural(1, "token") == "1 token" and console.plural(2, "token") == "2 tokens"
    assert console.plural(1, "fusão", "fusões") == "1 fusão"
    assert console.plural(1000, "fusão", "fusões") == "1.000 fusões"
    assert console.limite(3e-17, 1e-12) == "< 1e-12" and console.limite(2.5e-4, 1e-12) == "2,5e-4"
    assert console.num(-0.001, 2) == "0,00"           # nunca "-0,00": o sinal do ruído
    assert console.cortar("o gradiente da camada um mais coisas", 0, 26) in (
        "o gradiente da camada um…", "o gradiente da camada um...")
    assert console.em_linhas(["aaa", "bbb", "ccc"], 2, 10) == "  aaa bbb\n  ccc"


def test_niveis_ascii_zero_no_meio_da_faixa():
    linhas = figuras.niveis_ascii([[-1.0, -1e-9, 0.0, 1e-9, 1.0]], -1, 1, rampa="abcde")
    assert linhas == ["accce"]


def test_adamw_igual_ao_do_pytorch():
    torch.manual_seed(0)
    a = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.GELU(), torch.nn.Linear(7, 3))
    b = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.GELU(), torch.nn.Linear(7, 3))
    b.load_state_dict(a.state_dict())
    vieses = [p for n, p in a.named_parameters() if n.endswith("bias")]
    nosso = otimizador.Adam(a.parameters(), lr=1e-2, decaimento=0.1, sem_decaimento=vieses)
    pesos_b = [p for n, p in b.named_parameters() if not n.endswith("bias")]
    vieses_b = [p for n, p in b.named_parameters() if n.endswith("bias")]
    deles = torch.optim.AdamW([{"params": pesos_b, "weight_decay": 0.1},
                               {"params": vieses_b, "weight_decay": 0.0}], lr=1e-2)
    x = torch.randn(16, 5)
    for _ in range(5):
        for modelo, opt in ((a, nosso), (b, deles)):
            opt.zero_grad()
            modelo(x).pow(2).mean().backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.allclose(p, q, atol=1e-6)


def test_conferir_diz_o_que_difere(capsys):
    import conferir

    x = torch.arange(6.0).reshape(2, 3)
    assert conferir.conferir(lambda t: t * 2, lambda t: t + t, [x], dica="nenhuma")
    assert "confere com a referência nas 1 entradas" in capsys.readouterr().out
    assert not conferir.conferir(lambda t: t[:, :2], lambda t: t, [x], dica="não corte")
    saida = " ".join(capsys.readouterr().out.split())
    assert "a forma difere: a sua (2, 2), a referência (2, 3)" in saida and "Dica: não corte" in saida
    errado = lambda t: t + (t == 4).float()  # noqa: E731
    assert not conferir.conferir(errado, lambda t: t, [x])
    saida = " ".join(capsys.readouterr().out.split())
    assert "1 de 6 valores diferem" in saida and "posição (1, 1)" in saida
    assert "a sua dá 5,0000, a referência 4,0000" in saida

    def quebra(t):
        return t @ t

    assert not conferir.conferir(quebra, lambda t: t, [x])
    saida = capsys.readouterr().out
    assert "deu erro" in saida and "na função quebra" in saida and "return t @ t" in saida


@pytest.mark.parametrize("rotulo, quantos, rodam, esperado", [
    ("Experimento", 1, 0, "Nenhum experimento rodou."),
    ("Experimento", 3, 0, "Nenhum dos 3 experimentos rodou."),
    ("Experimento", 3, 1, "1 de 3 experimentos rodou."),
    ("Experimento", 1, 1, "1 de 1 experimento rodou."),
    ("Verificação", 4, 0, "Nenhuma das 4 verificações rodou."),
    ("Verificação", 4, 4, "4 de 4 verificações rodaram."),
])
def test_resumo_concorda_em_numero_e_genero(capsys, rotulo, quantos, rodam, esperado):
    li = licao.Licao("99", "teste", [f"e{k}" for k in range(quantos)], rotulo=rotulo)
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])

    def pula(_):
        raise licao.ExperimentoPulado("sem isto")

    li.rodar({k: (lambda _: None) if k <= rodam else pula for k in range(1, quantos + 1)})
    assert esperado in capsys.readouterr().out


def test_uso_errado_nao_quebra_o_exemplo(monkeypatch, capsys):
    """O exemplo de uma mensagem de uso errado fica numa linha só em qualquer largura (o
    aluno o copia inteiro); antes, '--d 2048' ia para a linha de baixo sem o 'exemplo:'."""
    p = licao.criar_parser("lab/99.py", "teste", ["um"],
                           [licao.opcao("--d", licao.inteiro_entre(1, 100_000, "--d 2048"),
                                        4096, "d")])
    for colunas in range(40, 101):
        monkeypatch.setenv("COLUMNS", str(colunas))
        with pytest.raises(SystemExit) as saida:
            p.parse_args(["--d", "-3"])
        assert saida.value.code == 2
        erro = capsys.readouterr().err.split("erro: ", 1)[1].split("\nPara ajuda")[0]
        assert "exemplo: --d 2048" in erro.splitlines()[-1], (colunas, erro)
        assert all(len(linha) < colunas for linha in ("erro: " + erro).splitlines()), erro
