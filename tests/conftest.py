"""Fixtures offline: um GPT-2 pequeno e aleatório, salvo com save_pretrained.

Nenhum teste usa a rede. O modelo é de verdade (transformers' GPT2LMHeadModel),
só que pequeno e com pesos aleatórios; o tokenizador é um BPE de bytes, como o
do GPT-2, treinado aqui num texto curto.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(RAIZ / "lab"))
os.environ["HF_HUB_OFFLINE"] = "1"

TEXTO_TREINO = [
    "O gato subiu no telhado e a chuva caiu sobre a cidade de São Paulo.",
    "A atenção move informação entre posições; o MLP processa cada posição.",
    "The cat sat on the mat, and the quick brown fox jumps over the lazy dog.",
    "A capital do Brasil é Brasília. The capital of France is Paris.",
    "Transformers empilham blocos: atenção, MLP, conexões residuais e LayerNorm.",
    "1 2 3 4 5 6 7 8 9 10 100 1000 2026 ção ões ã õ é ê í ó ú ç",
]


def construir_tokenizador(pasta: Path, vocab: int = 400, textos=()):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    treinador = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator((TEXTO_TREINO + list(textos)) * 20, trainer=treinador)
    rapido = GPT2TokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                               eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    rapido.save_pretrained(pasta)
    return rapido


def construir_gpt2(pasta: Path, camadas=3, d=64, cabecas=4, posicoes=64, semente=0):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    pasta.mkdir(parents=True, exist_ok=True)
    tok = construir_tokenizador(pasta)
    torch.manual_seed(semente)
    config = GPT2Config(vocab_size=len(tok), n_positions=posicoes, n_embd=d,
                        n_layer=camadas, n_head=cabecas,
                        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)
    modelo = GPT2LMHeadModel(config).eval()
    modelo.save_pretrained(pasta, safe_serialization=True)
    return pasta


@pytest.fixture(scope="session")
def gpt2_pequeno(tmp_path_factory) -> Path:
    """Pasta com um GPT-2 de 3 camadas, d = 64, 4 cabeças, e seu tokenizador."""
    return construir_gpt2(tmp_path_factory.mktemp("gpt2_pequeno"))


def ambiente_de_aluno(env=None) -> dict:
    """O ambiente de um aluno: sem cores, console cp1252, 80 colunas, sem rede."""
    ambiente = dict(os.environ)
    ambiente.update({"NO_COLOR": "1", "PYTHONIOENCODING": "cp1252", "COLUMNS": "80",
                     "HF_HUB_OFFLINE": "1"})
    ambiente.pop("LAB_MODELO", None)
    if env:
        ambiente.update(env)
    return ambiente


class ScriptEmSegundoPlano:
    """lab/<script> rodando enquanto os testes seguem (a saída vai para arquivos
    temporários, então ninguém trava esperando um cano ser lido)."""

    def __init__(self, script: str, *args, env=None):
        import tempfile

        self.saida, self.erros = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, str(RAIZ / "lab" / script), *args], cwd=RAIZ,
            stdin=subprocess.DEVNULL, stdout=self.saida, stderr=self.erros,
            env=ambiente_de_aluno(env))

    def terminar(self, timeout=240):
        """(código de saída, stdout, stderr) em bytes, esperando o fim."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        self.saida.seek(0)
        self.erros.seek(0)
        return self.proc.returncode, self.saida.read(), self.erros.read()


def rodar_script(script: str, *args, env=None, entrada: str | None = None, timeout=240):
    """Roda lab/<script> como um aluno: subprocesso, sem cores, console cp1252."""
    ambiente = ambiente_de_aluno(env)
    resultado = subprocess.run(
        [sys.executable, str(RAIZ / "lab" / script), *args], cwd=RAIZ,
        capture_output=True, env=ambiente, input=(entrada or "").encode(),
        timeout=timeout)
    resultado.saida = resultado.stdout.decode("cp1252", errors="replace")
    resultado.erros = resultado.stderr.decode("cp1252", errors="replace")
    return resultado


# Os arquivos mais demorados primeiro. Com --dist loadfile, o pytest-xdist entrega os
# arquivos aos processos na ordem da coleta: um arquivo longo no fim deixaria um processo
# trabalhando sozinho enquanto o outro espera (medido: ~1,5 min no fim da suíte).
PRIMEIRO = ["test_apostilas.py", "test_pausa_todas.py", "test_08_since_2017.py",
            "test_05_apostila.py", "test_05_block.py", "test_common.py", "test_06_gpt2.py",
            "test_pausa.py", "test_09_scaling.py", "test_07_generation.py",
            "test_01_apostila.py", "test_03_attention.py", "test_04_multihead.py"]


def pytest_collection_modifyitems(session, config, items):
    ordem = {nome: i for i, nome in enumerate(PRIMEIRO)}
    items.sort(key=lambda item: ordem.get(item.path.name, len(ordem)))  # estável


# O encanamento do lab (lab/*.py que não são lições): uma cópia de lição precisa dele ao lado.
ENCANAMENTO = sorted(p for p in (RAIZ / "lab").glob("*.py") if not p.name[:2].isdigit())
