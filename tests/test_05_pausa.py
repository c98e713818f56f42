"""Lição 05 com --pausa, num terminal de verdade de 80 x 30 (tmux), e num pipe.

O tmux é um emulador de terminal real: o que `capture-pane` devolve é o que a sala
veria na tela. A cada pausa conferimos que a linha de baixo diz o que vem e que a
parte inteira desde a última tela limpa (a tabela ou o gráfico da vez) ainda está na
tela, a começar pelo cabeçalho; r + Enter repete o experimento. Num pipe, ou com a
entrada fechada, --pausa não acrescenta nem tira uma linha.

O GPT-2 do teste tem 12 camadas, como o gpt2 de verdade: as tabelas por camada dos
experimentos 3 e 4 ocupam as mesmas linhas que ocupariam na aula.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import RAIZ, ambiente_de_aluno, rodar_script
from terminal import COLUNAS, Tela, sem_tmux


# ------------------------------------------------------------------ num pipe
def _sem_tempos(texto: str) -> str:
    """Tempos medidos mudam de uma execução para outra: '(0,5 s)' -> '( N s)'."""
    return re.sub(r"\s*\d+,\d\s+s\b", " N s", texto)  # também com a linha quebrada no meio


def _rodar_em_pipe(argumentos: str, entrada: str, modelo: Path) -> str:
    r = subprocess.run(
        ["bash", "-c", f'{entrada}; exec "$0" lab/05_block.py {argumentos} --modelo "$1"',
         sys.executable, str(modelo)],
        cwd=RAIZ, capture_output=True, env=ambiente_de_aluno(), timeout=300)
    saida = r.stdout.decode("cp1252", "replace")
    assert r.returncode == 0, saida + r.stderr.decode("cp1252", "replace")
    return _sem_tempos(saida)


def test_pausa_num_pipe_nao_muda_a_saida(gpt2_12_camadas):
    """Saída num pipe: com --pausa (entrada só com r, ou fechada) = sem --pausa. A saída
    sem --pausa vem de rodar_script (a mesma configuração, no interpretador quente: byte a
    byte a de um processo novo, tests/test_cpus.py); as duas com --pausa, de processos
    novos num pipe de verdade."""
    base = "--so 4,6 --sem-figuras"
    r = rodar_script("05_block.py", *base.split(), "--modelo", str(gpt2_12_camadas))
    assert r.returncode == 0, r.saida + r.erros
    sem = _sem_tempos(r.saida)
    assert "Experimento 6/6" in sem and "Logit lens" in sem
    for entrada in ("exec 0< <(yes r)", "exec 0<&-"):  # r (o mais arriscado) e fechada
        com = _rodar_em_pipe(base + " --pausa", entrada, gpt2_12_camadas)
        assert com == sem, entrada


# ------------------------------------------------------------------ no tmux
# (primeira linha da tela, linhas-chave que têm de estar inteiras na tela, o aviso)
CONT = " (continuação)"
ROTEIRO = [
    ("Lição 05 · O bloco Transformer completo",
     ["Experimento 1/6 · Monte o bloco", "  x = x + mlp(ln_2(x))    (5, 768)    <- soma",
      "Passo a passo = bloco(x)? sim."],
     "[Enter] 2/6 · Pre-LN contra Post-LN em 40 camadas"),
    ("Experimento 2/6 · Pre-LN contra Post-LN em 40 camadas: o gradiente da camada 1",
     ["   bloco     Pre-LN    Post-LN  Post/Pre", "       1 ", "      40 ",
      "nada sumiu"],
     "[Enter] 2/6, a seguir: o treino, passo a passo"),
    ("Experimento 2/6 · Pre-LN contra Post-LN", ["   passo     Pre-LN   perda",
                                                "       0 ", "      20 ", "Pre-LN: o gradiente"],
     "[Enter] 2/6, a seguir: o gráfico do gradiente da camada 1"),
    ("Experimento 2/6 · Pre-LN contra Post-LN", ["gradiente da camada 1 (escala log)",
                                                "passo de treino", "* Pre-LN   o Post-LN"],
     "[Enter] 3/6 · A norma do fluxo residual"),
    ("Experimento 3/6 · A norma do fluxo residual, camada a camada, no GPT-2",
     ["  camada      posições >= 1   fator   posição 0", "  embedding ", "  bloco 1 ",
      "  bloco 12 ", "Crescimento médio por bloco"],
     "[Enter] 3/6, a seguir: o gráfico da norma, camada a camada"),
    ("Experimento 3/6 · A norma do fluxo residual", ["norma (escala log)",
                                                    "camada (0 = embedding)"],
     "[Enter] 4/6 · Logit lens"),
    ("Experimento 4/6 · Logit lens: lendo o quadro-negro no meio do caminho",
     ['"A capital da França é"', " emb ", " 1 ", " 12 ", 'Depois de "A capital da França é"'],
     '[Enter] 4/6, a seguir: "The Eiffel Tower is in the city of"'),
    # com o tokenizador dos testes a frase tem 21 tokens: a tabela sai em duas partes
    ("Experimento 4/6 · Logit lens", ['"The Eiffel Tower is in the city of"', " emb ", " 12 "],
     # o aviso curto, inteiro em 80 colunas (o título da parte, longo, era cortado numa palavra)
     "[Enter] 4/6, a seguir: a mesma frase, posições 12 a 21 de 21  (r: repete)"),
    ("Experimento 4/6 · Logit lens", [" emb ", " 12 ", 'Depois de "The Eiffel Tower'],
     "[Enter] 5/6 · Os parâmetros de um bloco real"),
    ("Experimento 5/6 · Os parâmetros de um bloco real, peça por peça",
     ["  attn.c_attn ", "  ln_2 ", "  bloco ", "  normas ", "Fórmula fechada 12d² + 13d"],
     "[Enter] 5/6, a seguir: o modelo inteiro"),
    ("Experimento 5/6 · Os parâmetros", ["  wte ", "  modelo inteiro ", "Somar o state_dict()"],
     "[Enter] 6/6 · GELU contra ReLU em ASCII"),
    ("Experimento 6/6 · GELU contra ReLU em ASCII",
     ["f(x)", "     3,00 |", "    -0,17 |", "* GELU   o ReLU"],
     "[Enter] 6/6, a seguir: a tabela perto de zero"),
    ("Experimento 6/6 · GELU contra ReLU em ASCII",
     ["Perto de zero (onde as duas diferem):", "   -2,00   0,0000  -0,0455",
      "    2,00   2,0000   1,9545", "tem derivada zero num ponto"],
     "[Enter] Resumo"),
]
# As teclas, pausa a pausa (índice no ROTEIRO, tecla): r na 11 repete o 6 de dentro
# dele (antes da tabela); r na 12 (antes do resumo) repete o 6 inteiro, entre experimentos.
PASSOS = [(n, "Enter") for n in range(11)] + [(11, "r"), (11, "Enter"), (12, "r"),
                                              (11, "Enter"), (12, "Enter")]
CONTINUACOES = {2, 3, 5, 7, 8, 10, 12}  # partes que começam com "... (continuação)"


def _conferir_tela(tela, n):
    primeira, chaves, aviso = ROTEIRO[n]
    cheias = [linha for linha in tela if linha]
    quadro = "\n".join(tela)
    assert cheias[-1].startswith(aviso), f"pausa {n}: a linha de baixo não diz o que vem\n{quadro}"
    assert len(cheias[-1]) < COLUNAS, f"pausa {n}: o aviso não cabe numa linha\n{quadro}"
    # Nada rolou para fora: a tela ainda começa pelo começo da parte.
    assert tela[0].startswith(primeira), f"pausa {n}: o começo rolou para fora\n{quadro}"
    assert tela[0].endswith(CONT) == (n in CONTINUACOES), f"pausa {n}: cabeçalho\n{quadro}"
    for chave in chaves:
        assert any(chave in linha for linha in tela), \
            f"pausa {n}: falta na tela: {chave!r}\n{quadro}"


@sem_tmux
def test_pausa_no_terminal_80x30(gpt2_12_camadas, tmp_path):
    comando = (f"{shlex.quote(sys.executable)} lab/05_block.py --pausa --sem-figuras "
               f"--modelo {shlex.quote(str(gpt2_12_camadas))}")
    tela = Tela(tmp_path, f"cd {shlex.quote(str(RAIZ))} && {comando}")
    try:
        for vistas, (n, tecla) in enumerate(PASSOS, start=1):
            linhas = tela.esperar(lambda v=vistas: tela.pausas_vistas() >= v,
                                  f"a pausa {n} (passo {vistas})")
            _conferir_tela(linhas, n)
            if tecla == "r":
                tela.tmux("send-keys", "r", "Enter")
            else:
                tela.tmux("send-keys", "Enter")
        linhas = tela.esperar(lambda: any(x.startswith("fim: ") for x in tela.linhas()),
                              "o fim da lição")
        quadro = "\n".join(linhas)
        assert "fim: 0" in linhas, quadro
        assert "6 de 6 experimentos rodaram." in linhas, quadro  # r não conta duas vezes
        assert tela.pausas_vistas() == len(PASSOS)  # nenhuma pausa fora do roteiro
    finally:
        tela.fechar()
