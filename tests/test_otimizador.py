"""O Adam do lab (lab/comum/otimizador.py) contra o torch.optim, com e sem decaimento de pesos."""
from __future__ import annotations

import torch

from comum import otimizador


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


def test_um_passo_sem_gradiente_nao_faz_nada_como_no_pytorch():
    """Um step() sem gradiente nenhum (o zero_grad depois do backward, um erro do desafio da
    lição 10) não mexe nos pesos nem conta um passo, como o torch.optim.Adam; o passo
    seguinte dá o mesmo nos dois."""
    torch.manual_seed(0)
    a, b = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    b.load_state_dict(a.state_dict())
    nosso = otimizador.Adam(a.parameters(), lr=1e-2, decaimento=0.1)
    deles = torch.optim.AdamW(b.parameters(), lr=1e-2, weight_decay=0.1)
    antes = [p.clone() for p in a.parameters()]
    nosso.step()
    deles.step()
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), antes))
    x = torch.randn(8, 4)
    for modelo, opt in ((a, nosso), (b, deles)):
        opt.zero_grad()
        modelo(x).pow(2).mean().backward()
        opt.step()
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.allclose(p, q, atol=1e-6)
