"""Os desafios da lição 08 na lição 13 (--com-o-seu 08): as quatro peças do aluno (a RMSNorm,
o SwiGLU, o RoPE e a repetição da GQA) entram no Llama da 13 no lugar das da lição. Certas, os
logits continuam os do LlamaForCausalLM e a gulosa com o cache, a do generate(); erradas, cada
uma diz que não confere e os logits saem do teto. O modelo de teste tem GQA (2 cabeças de K/V
para 4 de consulta): com MHA, a repetição não mudaria nada.

Os arquivos do aluno aqui são escritos à mão, sem o catálogo dos desafios (um caminho
independente das versões de lá)."""
from __future__ import annotations

import pytest

from conftest import modelo_compartilhado, rodar_script
from modelos_de_teste import construir_llama

CERTOS = {
    "08_rmsnorm.py": """import torch


def rms_norm(x, peso, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * peso
""",
    "08_swiglu.py": """import torch.nn.functional as F


def forward(self, x):
    return self.w2(F.silu(self.w1(x)) * self.w3(x))
""",
    "08_rope.py": """import torch


def rope(x, inicio=0, base=10_000.0):
    T, dh = x.shape[-2], x.shape[-1]
    m = torch.arange(inicio, inicio + T, dtype=torch.float64)
    angulo = torch.outer(m, base ** (-torch.arange(0, dh, 2, dtype=torch.float64) / dh))
    cos, sen = angulo.cos().to(x.dtype), angulo.sin().to(x.dtype)
    a, b = x[..., :dh // 2], x[..., dh // 2:]
    return torch.cat([a * cos - b * sen, a * sen + b * cos], dim=-1)
""",
    "08_gqa.py": """def repetir_kv(k, h):
    B, kv, S, dh = k.shape
    return k[:, :, None].expand(B, kv, h // kv, S, dh).reshape(B, h, S, dh)
""",
}

# um erro do catálogo em cada uma, escrito como um aluno escreveria
ERRADOS = {
    "08_rmsnorm.py": CERTOS["08_rmsnorm.py"].replace(
        "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
        "x / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps)"),
    "08_swiglu.py": CERTOS["08_swiglu.py"].replace("F.silu(self.w1(x)) * self.w3(x)",
                                                   "self.w1(x) * F.silu(self.w3(x))"),
    "08_rope.py": CERTOS["08_rope.py"].replace(
        "a, b = x[..., :dh // 2], x[..., dh // 2:]\n"
        "    return torch.cat([a * cos - b * sen, a * sen + b * cos], dim=-1)",
        "a, b = x[..., 0::2], x[..., 1::2]\n"
        "    return torch.stack([a * cos - b * sen, a * sen + b * cos], dim=-1).flatten(-2)"),
    "08_gqa.py": """def repetir_kv(k, h):
    return k.repeat(1, h // k.shape[1], 1, 1)
""",
}
FUNCOES = ["repetir_kv()", "rms_norm()", "rope()", "forward()"]


@pytest.fixture(scope="module")
def llama_smollm():
    """O Llama de teste com GQA e saída amarrada (a pasta que test_13_tucano também usa)."""
    return modelo_compartilhado("llama_smollm", lambda p: construir_llama(p, "smollm"))


def _pasta(raiz, arquivos):
    raiz.mkdir()
    for nome, texto in arquivos.items():
        (raiz / nome).write_text(texto, encoding="utf-8")
    return str(raiz)


def _rodar(llama, pasta, *so):
    r = rodar_script("13_tucano.py", "--modelo", str(llama), "--sem-figuras", "--so", *so,
                     "--com-o-seu", "08", env={"LAB_DESAFIOS": pasta})
    assert "Traceback" not in r.saida + r.erros, r.saida[-3000:] + r.erros[-2000:]
    return r, " ".join(r.saida.split())


def test_as_pecas_certas_do_aluno_dao_os_logits_do_transformers(llama_smollm, tmp_path):
    r, saida = _rodar(llama_smollm, _pasta(tmp_path / "certo", CERTOS), "2,4", "--novos", "8")
    assert r.returncode == 0, r.saida[-3000:]
    for funcao in FUNCOES:
        assert f"Com o seu {funcao}" in saida
    assert saida.count("no lugar do da lição 08: confere com a referência.") == 4
    assert "o arredondamento do float32): confere." in saida
    assert "8 de 8 iguais, na ordem: os mesmos tokens." in saida
    assert "NÃO" not in saida


def test_as_pecas_erradas_mudam_os_logits(llama_smollm, tmp_path):
    r, saida = _rodar(llama_smollm, _pasta(tmp_path / "errado", ERRADOS), "2")
    assert r.returncode == 1, r.saida[-3000:]
    assert saida.count("ainda NÃO confere") == 4
    assert "os números abaixo mostram o efeito" in saida
    assert "o arredondamento do float32): NÃO confere." in saida
