"""O roteiro da lição (lab/comum/licao.py): a docstring é o sumário, --lista, a primeira linha
antes do torch, o resumo e a saída 0/1/130, o próximo passo, importar_licao."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from comum import carregar_gpt2, licao
from conftest import RAIZ, rodar_script


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
              "from comum.licao import importar_licao\nL05 = importar_licao('05_block')\n"
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


def test_uma_vez_calcula_uma_vez_por_licao_e_lembra_o_pulado(monkeypatch, capsys):
    """Licao.uma_vez: o 2º experimento que pede a mesma chave recebe o mesmo objeto sem
    calcular; um pulado pula de novo sem tentar de novo; r + Enter numa pausa repete o
    experimento, não a conta; outra Licao (outra execução) começa do zero."""
    contas = []

    def conta(nome):
        contas.append(nome)
        return [nome]

    def sem_tokenizador():
        contas.append("tokenizador")
        raise licao.ExperimentoPulado("sem o tokenizador")

    vistos = []

    def usa(li):
        vistos.append(li.uma_vez("treino", lambda: conta("treino")))
        li.pausa("a tabela")

    def pula(li):
        assert li.ja_feito("treino")
        li.uma_vez("tokenizador", sem_tokenizador)

    respostas = iter([True, False])           # r + Enter na pausa do experimento 1, depois Enter
    monkeypatch.setattr(licao, "interativa", lambda _args: True)
    monkeypatch.setattr(licao, "perguntar_pausa", lambda _t: next(respostas, False))
    monkeypatch.setattr(licao, "limpar_tela", lambda: None)
    li = licao.Licao("99", "teste", ["treina", "pula", "pula de novo", "treina de novo"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args(["--pausa"])
    assert li.rodar({1: usa, 2: pula, 3: pula, 4: usa}) == 1
    assert contas == ["treino", "tokenizador"]              # uma vez cada
    assert len(vistos) == 3 and all(v is vistos[0] for v in vistos)   # 1, o 1 de novo, o 4
    assert "pulado: 3. pula de novo" in capsys.readouterr().out
    outra = licao.Licao("99", "teste", ["treina"])
    assert outra.uma_vez("treino", lambda: conta("outra")) == ["outra"] and not outra.ja_feito("x")


def test_resumo_de_falha_diz_o_que_a_mensagem_acima_traz(capsys):
    """Issue 40: o resumo mandava ler "o arquivo e a linha" também depois de uma
    autoverificação, cuja mensagem não tem linha. Agora ele diz o que a mensagem traz."""
    def rodar(funcoes):
        li = licao.Licao("99", "teste", [f"e{k}" for k in funcoes])
        li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])
        assert li.rodar(funcoes) == 1
        return capsys.readouterr().out.split("Resumo", 1)[1]

    def nao_bate(li):
        li.verificar(False, "BPE à mão = tokenizador")

    def quebra(_):
        raise RuntimeError("algo deu errado")

    conferencia = rodar({1: nao_bate})
    assert "a conferência acima diz o que não bateu" in " ".join(conferencia.split())
    assert "arquivo e a linha" not in conferencia
    erro = rodar({1: quebra})
    assert "a mensagem acima diz o arquivo e a linha" in " ".join(erro.split())
    assert "test_licao.py:" in erro                     # e diz mesmo
    ambos = " ".join(rodar({1: nao_bate, 2: quebra}).split())
    assert "o que não bateu em cada conferência e onde foi cada erro" in ambos


def test_pulado_na_verificacao_concorda_em_genero(capsys):
    """Issue 40: a lição 00 dizia "(veja o verificação 3, acima)"."""
    li = licao.Licao("00", "teste", ["um", "dois"], rotulo="Verificação")
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])

    def sem_rede(_):
        raise licao.ExperimentoPulado("sem internet.")

    li.rodar({1: sem_rede, 2: sem_rede})
    assert "PULADO: sem internet. (veja a verificação 1, acima)" in capsys.readouterr().out


def test_tempo_impresso_nao_conta_a_pausa(capsys, monkeypatch):
    """Issue 40: com --pausa, o tempo impresso somava o tempo de leitura do professor. O
    experimento espera 0,6 s numa pausa e trabalha quase nada: imprime (0,0 s)."""
    import time

    monkeypatch.setattr(licao, "interativa", lambda _args: True)
    monkeypatch.setattr(licao, "perguntar_pausa", lambda _t: time.sleep(0.6) or False)
    monkeypatch.setattr(licao, "limpar_tela", lambda: None)
    li = licao.Licao("99", "teste", ["com pausa"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args(["--pausa"])
    inicio = time.perf_counter()
    assert li.rodar({1: lambda li: li.pausa("a tabela")}) == 0
    assert time.perf_counter() - inicio >= 0.6                # a pausa aconteceu
    assert "(0,0 s)" in capsys.readouterr().out


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


def test_pausa_com_stdin_fechado_nao_quebra():
    """`--pausa` com a entrada fechada (`<&-`): segue sem pausar, sem traceback."""
    r = subprocess.run(f"exec 0<&-; exec {sys.executable} lab/05_block.py --so 1,6 "
                       "--pausa --sem-figuras", shell=True, cwd=RAIZ, capture_output=True,
                       env={**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"})
    saida = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0, saida
    assert "Traceback" not in saida and "lost sys.stdin" not in saida
    assert "Experimento 6/6" in saida


def test_saida_cortada_sem_traceback():
    """`python lab/05_block.py | head -3`: o cano fecha cedo e ninguém vê traceback."""
    proc = subprocess.Popen([sys.executable, "lab/05_block.py", "--so", "6", "--sem-figuras"],
                            cwd=RAIZ, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    erros = proc.stderr.read().decode("utf-8", "replace")
    proc.wait(timeout=120)
    assert "Traceback" not in erros and "BrokenPipe" not in erros


def test_importar_licao_devolve_o_modulo_sem_rodar():
    modulo = licao.importar_licao("05_block")
    assert hasattr(modulo, "Bloco") and hasattr(modulo, "AtencaoMultiCabeca")


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
    assert licao.proxima_licao("11", lab) == (None, None, "12")      # o mapa vai à 14
    assert licao.proxima_licao("13", lab) == (None, None, "14")
    assert licao.proxima_licao("14", lab) == (None, None, None)      # a 14 fecha o mapa
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


def test_licao_gpt2_passa_a_margem(monkeypatch):
    monkeypatch.setattr(carregar_gpt2, "memoria_disponivel", lambda: 2**28)
    li = licao.Licao("99", "teste", ["usa o GPT-2"], usa_gpt2={1})
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args(
        ["--modelo", "gpt2"])
    with pytest.raises(licao.ExperimentoPulado, match="vezes 2,5, a margem"):
        li.gpt2(margem=2.5)


def test_a_ultima_licao_que_existe_fecha_o_curso(tmp_path, monkeypatch, capsys):
    """O fim do curso é da lição de maior número em lab/, rodada inteira, e nenhuma lição o
    escreve. Num mapa de teste: com só a 10 e a 11, a 11 fecha; com a 13 no disco e a 12
    faltando, a 11 manda para a 13 e avisa que a 12 ainda está sendo escrita; com a 12, a 11
    manda para ela, a 12 para a 13, e a 13 fecha o curso, apontando para a seção da apostila
    dela; com a 14 (opcional, como a 12), a 13 manda para ela e ela fecha o curso."""
    lab = tmp_path / "lab"
    lab.mkdir()
    monkeypatch.setattr(licao, "PASTA_LAB", lab)
    for nome in ("10_treino.py", "11_inducao.py"):
        (lab / nome).write_text("")

    def rodar(numero, *argv):
        li = licao.Licao(numero, "teste", ["ok", "outro"])
        li.args = licao.criar_parser("x", "x", li.titulos).parse_args(list(argv))
        li.rodar({1: lambda _: None, 2: lambda _: None})
        return " ".join(capsys.readouterr().out.split())

    saida = rodar("11")
    assert "Fim do curso. As lições 00 a 11" in saida and "Próximo passo" not in saida
    assert f'apostilas/11_inducao.md, seção "{licao.FIM_DO_CURSO}"' in saida
    (lab / "13_tucano.py").write_text("")
    saida = rodar("11")
    assert "Próximo passo: lab/13_tucano.py (leia apostilas/13_tucano.md)." in saida
    assert "(a lição 12 ainda está sendo escrita)" in saida and "Fim do curso" not in saida
    (lab / "12_escala.py").write_text("")
    saida = rodar("11")
    assert "Próximo passo: lab/12_escala.py (leia apostilas/12_escala.md)." in saida
    assert "sendo escrita" not in saida and "Fim do curso" not in saida
    saida = rodar("12")
    assert "Próximo passo: lab/13_tucano.py (leia apostilas/13_tucano.md)." in saida
    assert "sendo escrita" not in saida and "Fim do curso" not in saida
    saida = rodar("13")
    assert "Fim do curso. As lições 00 a 13" in saida and "pulados" not in saida
    assert f'apostilas/13_tucano.md, seção "{licao.FIM_DO_CURSO}"' in saida
    assert "Fim do curso" not in rodar("13", "--so", "1")        # só a lição inteira
    (lab / "14_corrida.py").write_text("")                         # a 14, opcional, fecha
    saida = rodar("13")
    assert "Próximo passo: lab/14_corrida.py (leia apostilas/14_corrida.md)." in saida
    assert "Fim do curso" not in saida
    saida = rodar("14")
    assert "Fim do curso. As lições 00 a 14" in saida and "Próximo passo" not in saida
    assert f'apostilas/14_corrida.md, seção "{licao.FIM_DO_CURSO}"' in saida


def test_o_fim_do_curso_nao_diz_que_o_aluno_viu_o_que_foi_pulado(tmp_path, monkeypatch, capsys):
    """A última lição com um experimento pulado (sem o modelo, por exemplo) fecha o curso
    falando do que as lições cobrem, não do que o aluno viu, e diz o que falta nela."""
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "13_tucano.py").write_text("")
    monkeypatch.setattr(licao, "PASTA_LAB", lab)

    def pulado(_):
        raise licao.ExperimentoPulado("sem o modelo")

    li = licao.Licao("13", "teste", ["ok", "outro"])
    li.args = licao.criar_parser("x", "x", li.titulos).parse_args([])
    assert li.rodar({1: lambda _: None, 2: pulado}) == 1
    saida = " ".join(capsys.readouterr().out.split())
    assert "Fim do curso. As lições 00 a 13" in saida and "viu" not in saida
    assert "Nesta lição, os experimentos pulados acima dizem o que falta" in saida


def test_no_lab_o_mapa_esta_inteiro():
    """Toda lição do mapa, de 00 à ULTIMA_DO_MAPA, está em lab/ (a 12 inclusive): nenhum
    próximo passo avisa que a seguinte ainda está sendo escrita, cada um é a lição seguinte
    com a sua apostila (a 00 não tem), e a última não tem próximo passo: fecha o curso."""
    licoes = sorted(p.stem for p in licao.PASTA_LAB.glob("[0-9][0-9]_*.py"))
    assert [n[:2] for n in licoes] == [f"{i:02d}" for i in range(licao.ULTIMA_DO_MAPA + 1)]
    for atual, seguinte in zip(licoes, licoes[1:]):
        assert licao.proxima_licao(atual[:2]) == (f"lab/{seguinte}.py",
                                                  f"apostilas/{seguinte}.md", None)
        assert (licao.RAIZ / "apostilas" / f"{seguinte}.md").exists()
    assert licao.proxima_licao(licoes[-1][:2]) == (None, None, None)
