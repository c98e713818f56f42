"""Lição 12: os FLOPs contados de um passo são 6 x as matrizes + a atenção (e a soma dos
produtos que o experimento 2 refaz com torch.matmul), o veredito da fronteira sai dos
próprios números, a média dos gradientes das metades é o gradiente do lote inteiro (as
normas impressas, recalculadas com o autograd), 2 processos de verdade dão o treino de 1, e
o torchrun roda o laço da lição 10 com os pesos do treino dela num processo só. A lição
inteira cabe em 80 colunas num console cp1252, e o mapa do curso passa por ela."""
from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
import torch

from conftest import RAIZ, ambiente_de_aluno, rodar_script
from comum.console import num
from comum import importar_licao

L10 = importar_licao("10_treino")
L12 = importar_licao("12_escala")
MINUSCULO = ["--camadas", "1", "--largura", "16", "--cabecas", "2", "--lote", "4",
             "--contexto", "16"]
CONFIG_MINUSCULA = {"camadas": 1, "largura": 16, "cabecas": 2, "contexto": 16,
                    "alfabeto": L10.ALFABETO}


@pytest.fixture(scope="module")
def execucao_minuscula(tmp_path_factory):
    """A lição inteira com um modelo minúsculo, como um aluno no Windows (cp1252, 80
    colunas, num pipe)."""
    pasta = tmp_path_factory.mktemp("l12")
    r = rodar_script("12_escala.py", *MINUSCULO, "--passos", "40", "--figuras",
                     str(pasta / "figuras"), timeout=400)
    return r


def test_a_licao_inteira_roda_em_80_colunas_e_cp1252(execucao_minuscula):
    r = execucao_minuscula
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    assert "Traceback" not in r.saida + r.erros
    largas = [linha for linha in r.saida.splitlines() if len(linha) > 80]
    assert not largas, largas
    assert "5 de 5 experimentos rodaram." in r.saida
    texto = " ".join(r.saida.split())
    N = sum(p.numel() for p in L10.novo_modelo(CONFIG_MINUSCULA).parameters())
    assert "6ND FLOPs" in texto and f"N = {N:,})".replace(",", ".") in texto
    # d = 16 rende bem menos que 30 % do matmul: o aviso fala do tamanho, não da máquina,
    # e manda ao exercício da apostila que mede isso (o 2, "FLOP/s e a largura")
    assert "abaixo dos 30 % que se espera do modelo padrão numa CPU livre" in texto
    assert "os 30 % não servem de régua" in texto and "outro programa" not in texto
    assert "(o exercício 2)." in texto and "2. **FLOP/s e a largura.**" in (
        RAIZ / "apostilas" / "12_escala.md").read_text(encoding="utf-8")
    assert "o treino da lição 10 (40 passos) vê 2.560 tokens" in texto
    assert "Próximo passo: lab/13_tucano.py (leia apostilas/13_tucano.md)." in r.saida
    assert "Fim do curso" not in r.saida                        # o curso fecha na 13


def test_o_mapa_do_curso_passa_pela_12():
    """A 11 aponta para a 12 e a 12 para a 13, sem 'ainda está sendo escrita'."""
    from comum.licao import proxima_licao

    assert proxima_licao("11") == ("lab/12_escala.py", "apostilas/12_escala.md", None)
    assert proxima_licao("12") == ("lab/13_tucano.py", "apostilas/13_tucano.md", None)


def test_flops_do_passo_contra_a_forma_fechada():
    """O contar_flops da 09 num passo de treino do GPT2 minúsculo = 6 x (matrizes dos
    blocos e wte) + 12LTd por token (atenção), e = a soma dos produtos que o
    experimento 2 refaz com torch.matmul; 6NBT fica perto, mas não igual."""
    L09 = importar_licao("09_scaling")
    for L, d, h, V, B, T in ((1, 16, 2, 128, 3, 8), (2, 32, 4, 128, 2, 16)):
        torch.manual_seed(0)
        modelo = importar_licao("06_gpt2").GPT2(L, d, h, V, T)
        x = torch.randint(V, (B, T))
        contado = L09.contar_flops(lambda: L10.perda(modelo, x, x).backward())
        fechado = (6 * (12 * L * d * d + V * d) + 12 * L * T * d) * B * T
        assert contado == fechado
        assert sum(2 * b * m * k * n for b, m, k, n in L12.produtos_do_passo(L, d, h, V, B, T)) \
            == fechado
        N = sum(p.numel() for p in modelo.parameters())
        assert contado != 6 * N * B * T and 0.8 < contado / (6 * N * B * T) < 1.3


def test_os_flops_impressos_sao_os_contados(execucao_minuscula):
    """As linhas do experimento 1 na lição inteira: o passo inteiro é o contado aqui e a
    soma por extenso, e 6NBT é 6 x N x tokens do modelo minúsculo."""
    secao = execucao_minuscula.saida.split("Experimento 2/5")[0]
    d, B, T, L = 16, 4, 16, 1
    N = sum(p.numel() for p in L10.novo_modelo(CONFIG_MINUSCULA).parameters())
    fechado = (6 * (12 * L * d * d + 128 * d) + 12 * L * T * d) * B * T
    inteiro = lambda n: f"{n:,}".replace(",", ".")  # noqa: E731
    assert re.search(rf"^  passo inteiro +{re.escape(inteiro(fechado))}$", secao, re.M)
    assert re.search(rf"^  6 x N x tokens +{re.escape(inteiro(6 * N * B * T))}$", secao, re.M)
    assert re.search(rf"^  soma +{re.escape(inteiro(fechado))}  = contado$", secao, re.M)


# ------------------------------------------------------------ a fronteira
def test_melhores_e_veredito_saem_dos_numeros():
    cresce = {1000: [3.0, 2.8, 2.7, 2.65], 2000: [3.1, 2.7, 2.5, 2.4], 4000: [3.3, 2.9, 2.55, 2.3]}
    assert L12.melhores(cresce) == [1000, 2000, 2000, 4000]
    assert L12.tendencia([1000, 2000, 2000, 4000]) == "cresce"
    assert L12.tendencia([4000, 2000, 2000, 1000]) == "encolhe"
    assert L12.tendencia([2000, 1000, 4000, 2000]) == "parado"


def _fronteira_de_brinquedo(monkeypatch, capsys, perdas_por_d, threads=None):
    """O experimento 3 com --escala, com dois modelos minúsculos e o treino trocado por
    perdas escolhidas: o veredito impresso tem de seguir os números. threads: uma lista
    que recebe as threads de conta com que a previsão e cada treino rodaram."""
    import types

    threads = [] if threads is None else threads
    monkeypatch.setitem(L12.ESCALA, "larguras", (16, 32))
    monkeypatch.setitem(L12.ESCALA, "maior", 4e8)
    monkeypatch.setitem(L12.ESCALA, "orcamentos", 3)
    medir = L12.segundos_por_passo
    monkeypatch.setattr(L12, "segundos_por_passo", lambda *a: (
        threads.append(("previsão", torch.get_num_threads())), medir(*a))[1])
    monkeypatch.setattr(L12, "treinar_na_escala", lambda m, semente, barra, *dados: (
        threads.append(("treino", torch.get_num_threads())), perdas_por_d[m["d"]])[1])
    args = types.SimpleNamespace(semente=0, escala=True)
    L12.exp_fronteira(types.SimpleNamespace(args=args, quer_figuras=False, pausa=lambda _: None,
                                           uma_vez=lambda _chave, f: f()))
    return capsys.readouterr().out


def test_a_fronteira_diz_cresce_com_numeros_que_crescem(monkeypatch, capsys):
    saida = _fronteira_de_brinquedo(monkeypatch, capsys, {16: [3.0, 2.8, 2.7],
                                                          32: [3.2, 2.9, 2.5]})
    assert "O melhor tamanho cresce com o compute: de 9.664 parâmetros" in saida
    assert re.search(r" 2,700$", saida, re.M) and "2,500*" in saida and "3,000*" in saida
    assert not [linha for linha in saida.splitlines() if linha != linha.rstrip()]


def test_a_fronteira_treina_e_preve_com_uma_thread(monkeypatch, capsys):
    """Os modelos da fronteira são minúsculos: com duas threads e outro programa na CPU, o
    --escala levou 19 min contra 1 min 36 s com uma (a revisão de 2026-12-06). A previsão e o treino rodam com 1 thread (a
    mesma conta para os dois), e o processo volta às threads de antes no fim."""
    threads = []
    antes = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        saida = _fronteira_de_brinquedo(monkeypatch, capsys, {16: [3.0, 2.8, 2.7],
                                                              32: [3.2, 2.9, 2.5]}, threads)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(antes)
    assert threads == [("previsão", 1)] * 2 + [("treino", 1)] * 2, threads
    assert "medidos agora com 1 thread, como o treino)" in saida


def test_a_fronteira_diz_o_contrario_com_numeros_ao_contrario(monkeypatch, capsys):
    saida = _fronteira_de_brinquedo(monkeypatch, capsys, {16: [3.2, 2.8, 2.4],
                                                          32: [3.0, 2.9, 2.5]})
    assert "ENCOLHEU" in saida and "cresce com o compute" not in saida


def test_a_fronteira_sem_escala_so_mostra_o_plano(monkeypatch, capsys):
    import types

    monkeypatch.setitem(L12.ESCALA, "larguras", (16, 32))
    monkeypatch.setattr(L12, "treinar_na_escala", lambda *a: pytest.fail("treinou"))
    args = types.SimpleNamespace(semente=0, escala=False)
    L12.exp_fronteira(types.SimpleNamespace(args=args, quer_figuras=False, pausa=lambda _: None,
                                           uma_vez=lambda _chave, f: f()))
    saida = capsys.readouterr().out
    assert ".venv/bin/python lab/12_escala.py --so 3 --escala" in saida
    assert ".venv\\Scripts\\python.exe lab\\12_escala.py --so 3 --escala" in saida
    assert "nesta máquina\n(a mediana de 3 passos" in saida


# ------------------------------------------------------------ dividir o lote (4 e 5)
def _norma(tensores):
    return math.sqrt(sum(float((t.double() ** 2).sum()) for t in tensores))


def test_dividir_o_gradiente_confere_com_o_autograd(execucao_minuscula):
    """O experimento 4 (na lição inteira, modelo minúsculo): as normas que ele imprime são
    as do gradiente de cada metade e do lote inteiro, recalculadas aqui com o autograd numa
    perda escrita à mão; e a média das metades é o gradiente do lote. O 5, sem --dividir,
    diz como abrir os processos."""
    saida = execucao_minuscula.saida
    secao = saida.split("Experimento 4/5 · ", 1)[1].split("Experimento 5/5")[0]
    _, _, _, treino, _ = L10.dados()
    modelo = L10.novo_modelo(CONFIG_MINUSCULA, 0)
    x, y = L10.lote(treino, 4, 16, torch.Generator().manual_seed(0))

    def grad(xx, yy):                                  # a entropia cruzada, por extenso
        logp = modelo(xx).log_softmax(-1)                              # (b, T, V)
        p = -logp.gather(-1, yy[..., None]).mean()
        return torch.autograd.grad(p, list(modelo.parameters()))

    metades = [grad(x[:2], y[:2]), grad(x[2:], y[2:])]
    todo = grad(x, y)
    media = [(a + b) / 2 for a, b in zip(*metades)]
    assert max(float((m - t).abs().max()) for m, t in zip(media, todo)) < 1e-6
    numeros = [num(_norma(g), 2) for g in (*metades, media, todo)]
    impressos = re.findall(r"^  (?:norma do gradiente|a média|o lote inteiro).* (\d+,\d{2})$",
                           secao, re.M)
    assert impressos == numeros, (impressos, numeros)
    assert "max |média - lote inteiro|, peso a peso: < 1e-6: iguais." in secao
    assert ".venv/bin/python lab/12_escala.py --so 5 --dividir" in saida.split("Experimento 5/5")[1]


def test_um_lote_impar_pula_a_divisao():
    r = rodar_script("12_escala.py", "--so", "4", *MINUSCULO[:-4], "--lote", "5",
                     "--contexto", "16")
    assert r.returncode == 1 and "--lote 5 não se divide entre 2 processos" in r.saida


def test_dividir_em_dois_processos_de_verdade(tmp_path):
    """--so 5 --dividir, modelo minúsculo: 2 processos (gloo, DDP) dão os pesos de 1 processo
    com o lote inteiro (a linha impressa: < 1e-4), e a diferença "sem a média" que a lição
    imprime é a que sai aqui, de um laço escrito à parte (1 processo com o lote inteiro
    contra 1 processo só com a primeira metade, os mesmos lotes)."""
    r = rodar_script("12_escala.py", "--so", "5", "--dividir", *MINUSCULO)
    assert r.returncode == 0, r.saida[-2000:] + r.erros[-2000:]
    assert re.search(r"max \|pesos com 2 processos - com 1\| +< 1e-4$", r.saida, re.M)
    assert "Iguais: dividir o lote entre processos é o mesmo treino" in " ".join(r.saida.split())
    _, _, _, treino, _ = L10.dados()
    pesos = []
    for parte in (slice(0, 4), slice(0, 2)):
        torch.set_num_threads(1)
        modelo = L10.novo_modelo(CONFIG_MINUSCULA, 0)
        otimizador = L10.adamw(modelo, 1e-3)
        g = torch.Generator().manual_seed(0)
        k = L12.PASSOS_DIVIDIDOS
        for passo in range(k):
            otimizador.lr = L10.taxa(passo, k, 1e-3, max(1, k // 10))
            x, y = L10.lote(treino, 4, 16, g)
            otimizador.zero_grad()
            L10.perda(modelo, x[parte], y[parte]).backward()
            torch.nn.utils.clip_grad_norm_(modelo.parameters(), 1.0)
            otimizador.step()
        pesos.append(list(modelo.state_dict().values()))
    sem_media = max(float((a - b).abs().max()) for a, b in zip(*pesos))
    assert sem_media > 1e-4
    assert re.search(rf"max \|pesos sem a média - com 1\| +{re.escape(L12.limite(sem_media, 1e-4))}$",
                     r.saida, re.M), r.saida
    assert re.search(r"^  2 processos, 1 thread cada +[\d.]+ ms$", r.saida, re.M)
    largas = [linha for linha in r.saida.splitlines() if len(linha) > 80
              and not linha.startswith("  .venv")]
    assert not largas, largas


def test_torchrun_dois_processos_treinam_como_a_licao_10(tmp_path):
    """torchrun (python -m torch.distributed.run) com 2 processos e gloo, --so 5: o laço da
    lição 10 em 2 processos grava um checkpoint com os pesos do treino da própria lição 10
    num processo só, com o mesmo lote global (até 1e-5; medido: ~5e-7 em 20 passos do
    modelo minúsculo); a tela é a de 1 processo (cada linha uma vez só, a do posto 0, sem o
    aviso do torchrun em inglês: OMP_NUM_THREADS posto, como a apostila manda); e a lição
    10 lê o checkpoint com --amostrar, pelo comando que a lição imprime (em 80 colunas).

    Num Mac com chip da Apple (aqui, o MPS de mentira de um sitecustomize, como o
    torch.backends.mps.is_available() de um Mac responderia), o comando da apostila, sem
    --dispositivo, treina na CPU e diz por quê (o auto nunca escolhe o MPS em vários
    processos)."""
    args = [*MINUSCULO, "--passos", "20"]
    um = tmp_path / "um.pt"
    r1 = rodar_script("10_treino.py", "--so", "3", "--sem-figuras", *args, "--checkpoint",
                      str(um), "--html", str(tmp_path / "pag"))
    assert r1.returncode == 0, r1.saida + r1.erros
    dois = tmp_path / "dois.pt"
    mac = tmp_path / "mac"
    mac.mkdir()
    (mac / "sitecustomize.py").write_text(
        "import torch.backends.mps\ntorch.backends.mps.is_available = lambda: True\n")
    ambiente = ambiente_de_aluno({"OMP_NUM_THREADS": "1", "PYTHONPATH": str(mac)})
    r2 = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                         str(RAIZ / "lab" / "12_escala.py"), *args, "--checkpoint", str(dois)],
                        cwd=RAIZ, env=ambiente, capture_output=True, timeout=300)
    saida, erros = r2.stdout.decode("cp1252", "replace"), r2.stderr.decode("cp1252", "replace")
    assert r2.returncode == 0, saida[-2000:] + erros[:3000]   # o começo: o erro do posto
    assert not erros.strip(), erros                             # nem o aviso do torchrun
    assert saida.count("Lição 12 · Escala") == 1 and saida.count("Resumo") == 1
    texto = " ".join(saida.split())
    assert "Treino em 2 processos (torchrun, gloo): cada um treina 2 das 4" in texto
    assert "Experimento 5/5" in saida and "Experimento 1/5" not in saida
    assert ("Dispositivo: CPU; a GPU da Apple (MPS) não treina em vários processos (o gloo e "
            "o nccl não a usam): todos na CPU.") in texto
    assert "Processo 1 de 2" not in saida          # numa máquina só, a tela é a do posto 0
    assert not [linha for linha in saida.splitlines()      # (o caminho longo é o do teste)
                if len(linha) > 80 and not linha.startswith("      --checkpoint ")]
    windows = str(dois).replace("/", "\\")          # na linha do Windows, com \\
    assert (f"  .venv\\Scripts\\python.exe lab\\10_treino.py --amostrar `\n"
            f"      --checkpoint {windows}\n"
            f"  .venv/bin/python lab/10_treino.py --amostrar \\\n"
            f"      --checkpoint {dois}\n") in saida
    passos = re.findall(r"^ +(\d+) +\d,\d\d +(\d,\d\d)$", saida, re.M)
    assert [int(p) for p, _ in passos] == list(range(2, 21, 2))
    a, b = L10.carregar(um)[0].state_dict(), L10.carregar(dois)[0].state_dict()
    assert max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-5
    validacao = L10.carregar(um)[2]["historico"]["validação"][-1]
    assert passos[-1][1] == num(validacao, 2)                  # a mesma avaliação da 10
    r3 = rodar_script("10_treino.py", "--amostrar", "--checkpoint", str(dois))
    assert r3.returncode == 0 and "passo 20" in r3.saida
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dois.pt", "mac", "pag",
                                                          "um.pt"]  # sem .tmp


def test_so_o_processo_0_grava(tmp_path, monkeypatch, capsys):
    """O treino do torchrun num processo que não é o 0 (RANK=1 de WORLD_SIZE=2, num grupo
    gloo de verdade de um processo só): treina, mas não avalia nem grava checkpoint."""
    import types

    import torch.distributed as dist

    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'loja'}", rank=0,
                            world_size=1)
    try:
        args = types.SimpleNamespace(camadas=1, largura=16, cabecas=2, lote=4, contexto=16,
                                     passos=10, taxa=1e-3, semente=0, aparelho="cpu",
                                     checkpoint=str(tmp_path / "ck.pt"), dispositivo="cpu")
        L12.treino_no_torchrun(types.SimpleNamespace(args=args, pausa=lambda _: None,
                                                      uma_vez=lambda _chave, f: f()))
    finally:
        dist.destroy_process_group()
    assert not (tmp_path / "ck.pt").exists()
    assert not re.search(r"^ +10 +\d,\d\d +\d,\d\d$", capsys.readouterr().out, re.M)


# ------------------------------------------------------------ o dispositivo no torchrun
def _preparar(monkeypatch, capsys, mundo, nesta_maquina, gpus=0, mps=False, pedido="auto"):
    """preparar() da lição 12 como o torchrun a chamaria em cada processo (mundo processos,
    nesta_maquina deles aqui), numa máquina com `gpus` GPUs CUDA e/ou o MPS (de mentira:
    esta não tem GPU) e o grupo trocado por um que só anota o dispositivo pedido. Devolve
    (args.dispositivo, o dispositivo com que o grupo entrou ou None, a saída)."""
    import types

    import torch.distributed as dist

    from comum import distribuido

    monkeypatch.setenv("WORLD_SIZE", str(mundo))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(nesta_maquina))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda _i=0: "NVIDIA de teste")
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    grupo = []
    monkeypatch.setattr(distribuido, "iniciar", lambda d: grupo.append(d) or torch.device(d))
    monkeypatch.setattr(dist, "get_backend", lambda: "nccl" if grupo[-1] == "cuda" else "gloo")
    args = types.SimpleNamespace(largura=128, cabecas=4, lote=12, dispositivo=pedido, so=None)
    L12.preparar(args)
    return args.dispositivo, (grupo or [None])[-1], " ".join(capsys.readouterr().out.split())


def test_no_torchrun_o_auto_usa_a_cuda_so_com_uma_gpu_por_processo(monkeypatch, capsys):
    """O --help diz "auto escolhe a CUDA se há uma GPU para cada processo, senão a CPU": num
    Mac (MPS), a CPU, e não o erro "--dispositivo mps"; num PC com uma GPU e
    --nproc-per-node 2, a CPU, e não o processo 1 pedindo a cuda:1, que não existe; com duas
    GPUs, a CUDA; em duas máquinas, a CPU (o auto não sabe se a outra tem GPU). A linha
    "Dispositivo:" diz o que foi deixado de lado e por quê."""
    assert "auto escolhe a CUDA se há uma GPU para cada processo, senão a CPU" in " ".join(
        rodar_script("12_escala.py", "--help").saida.split())
    casos = [({"mps": True}, 2, "cpu", "a GPU da Apple (MPS) não treina em vários processos"),
             ({"gpus": 1}, 2, "cpu", "há 1 GPU CUDA para 2 processos nesta máquina, e cada "
                                     "processo precisa da sua: todos na CPU"),
             ({"gpus": 2}, 2, "cuda", "GPU CUDA (NVIDIA de teste); uma GPU CUDA para cada um "
                                      "dos 2 processos"),
             ({"gpus": 1}, 1, "cpu", "o treino tem processos em outra máquina")]
    for maquina, aqui, esperado, frase in casos:
        nome, grupo, saida = _preparar(monkeypatch, capsys, 2, aqui, **maquina)
        assert (nome, grupo) == (esperado, esperado), (maquina, aqui, nome, grupo)
        assert f"Dispositivo: {'CPU' if esperado == 'cpu' else ''}" in saida and frase in saida
        assert "Treino em 2 processos (torchrun, " in saida
    nome, _, saida = _preparar(monkeypatch, capsys, 2, 2)          # sem GPU: nada a dizer
    assert nome == "cpu" and "Dispositivo" not in saida


def test_no_torchrun_a_cuda_sem_uma_gpu_por_processo_e_uso_errado(monkeypatch, capsys):
    for pedido, gpus, frase in (("cuda", 1, "cada um dos 2 processos desta máquina usa uma GPU "
                                            "CUDA só sua, e aqui há 1."),
                                ("mps", 0, "--dispositivo mps: o treino em 2 processos usa "
                                           "gloo (CPU) ou nccl (CUDA)")):
        with pytest.raises(SystemExit) as saida:
            _preparar(monkeypatch, capsys, 2, 2, gpus=gpus, mps=True, pedido=pedido)
        assert saida.value.code == 2
        assert frase in " ".join(capsys.readouterr().err.split())


def test_sem_torchrun_a_licao_nao_fala_do_dispositivo(monkeypatch, capsys):
    """Os experimentos 1 a 4 e o --dividir rodam sempre na CPU: num Mac ou num PC com GPU, a
    lição sem torchrun não abre com "Dispositivo: ..." (o dispositivo só serve ao treino do
    torchrun), mas um --dispositivo que não existe continua sendo uso errado."""
    for maquina in ({"mps": True}, {"gpus": 1}):
        nome, grupo, saida = _preparar(monkeypatch, capsys, 1, 1, **maquina)
        assert grupo is None and "Dispositivo" not in saida and not saida
    with pytest.raises(SystemExit) as saida:
        _preparar(monkeypatch, capsys, 1, 1, pedido="cuda")
    assert saida.value.code == 2
