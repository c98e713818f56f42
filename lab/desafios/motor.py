"""O motor dos desafios: as sondas, a comparação e o diagnóstico por impressão digital.

Uma sonda é uma entrada escolhida: float64, todo parâmetro sorteado (nenhum ganho 1, nenhum
viés 0: um LayerNorm que esqueceu o `* w + b` aparece), B, T, h e d diferentes entre si
(um eixo trocado aparece na forma). As sondas vêm em três estágios:

    1. a forma;
    2. o mecanismo, um caso de cada vez: um token só, a consulta 0, T < S como no passo do
       cache, uma entrada zero, um eps grande (0,1: o eps fora da raiz aparece);
    3. contra a referência, em entradas quaisquer.

O diagnóstico é por impressão digital. As saídas do aluno em TODAS as sondas são
comparadas com as da referência (todas iguais: passou) e com as de cada defeito do catálogo
e de cada par de defeitos (dois erros juntos): a igualdade inteira com um deles dá a
mensagem dele. Sem igualdade inteira, nada de palpite: o primeiro estágio que falha e o
primeiro valor que difere.

"Igual" é até TOLERANCIA da escala da saída esperada (o maior valor absoluto dela): uma
conta certa em float32 passa; um defeito do catálogo muda a saída em muito mais que isso em
alguma sonda (os testes conferem, defeito por defeito e par por par).
"""
from __future__ import annotations

import copy
import itertools
import math
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import torch

__all__ = ["TOLERANCIA", "PRAZO", "ESTAGIOS", "Sonda", "Defeito", "Desafio", "Resultado",
           "Diagnostico", "diferenca", "rodar_sonda", "diagnosticar", "catalogo",
           "AINDA_NAO"]

TOLERANCIA = 1e-4      # da escala da saída esperada: float32 passa, um defeito não
PRAZO = 10.0           # segundos por sonda, antes de "demorou demais"
AINDA_NAO = "ainda não escrita"   # o NotImplementedError do arquivo novo do aluno
ESTAGIOS = {1: "A forma", 2: "O mecanismo, um caso de cada vez", 3: "Contra a referência"}


# ---------------------------------------------------------------- o que um desafio declara
@dataclass(frozen=True)
class Sonda:
    estagio: int           # 1, 2 ou 3 (ESTAGIOS)
    descricao: str         # o caso, para o aluno: "um token só (T = 1)"
    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Defeito:
    nome: str              # o nome no catálogo (--mostrar-defeito NOME)
    ajustes: dict          # o que muda na versão do catálogo (Desafio.versao)
    mensagem: str          # o que está errado e por que, em português
    secao: str             # onde a apostila explica


@dataclass
class Desafio:
    licao: str                        # "03"
    nome: str                         # "atencao": meus_desafios/03_atencao.py
    titulo: str                       # "a atenção de uma cabeça"
    modelo: Callable                  # a assinatura e a docstring do arquivo do aluno
    referencia: Callable              # a peça da lição, chamada como o aluno é chamado
    versao: Callable                  # versao(ajustes, *args, **kwargs); {}: a referência
    sondas: Callable[[], list]        # as sondas (sempre as mesmas: semente fixa)
    defeitos: list                    # [Defeito]
    dicas: list                       # do mais geral ao mais próximo da resposta
    secao: str                        # a seção "Desafio" da apostila
    imports: str = "import torch\n"   # o começo do arquivo do aluno
    proibidas: list = field(default_factory=list)   # [(dono, nome)]: a peça da lição
    alternativas: dict = field(default_factory=dict)  # outras versões certas (os testes)
    substituir: Callable | None = None   # funcao do aluno -> {"05_block": {"Bloco.forward": f}}
    com_o_seu: list = field(default_factory=list)    # [(script, o que olhar, *opções)]
    observar: Callable | None = None  # observar(funcao, *args, **kw): a saída a comparar

    @property
    def chave(self) -> str:
        return f"{self.licao}_{self.nome}"

    @property
    def funcao(self) -> str:
        return self.modelo.__name__

    def defeito(self, nome: str) -> Defeito:
        return next(d for d in self.defeitos if d.nome == nome)


# ---------------------------------------------------------------- uma sonda rodada
@dataclass
class Resultado:
    saida: object = None
    erro: BaseException | None = None
    mudou: str | None = None          # a entrada que a função mudou no lugar
    proibida: str | None = None       # a peça da lição que a função chamou
    demorou: bool = False


def _copiar(x):
    """Uma cópia funda das entradas: a função do aluno recebe a cópia, e a original diz se
    ela mudou alguma coisa no lugar."""
    if torch.is_tensor(x):
        return x.detach().clone().requires_grad_(x.requires_grad)
    if isinstance(x, torch.nn.Module):
        return copy.deepcopy(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_copiar(y) for y in x)
    if isinstance(x, dict):
        return {k: _copiar(v) for k, v in x.items()}
    return copy.deepcopy(x)


def _iguais(a, b) -> bool:
    if torch.is_tensor(a):
        return torch.is_tensor(b) and a.shape == b.shape and torch.equal(a.detach(), b.detach())
    if isinstance(a, torch.nn.Module):
        x, y = a.state_dict(), b.state_dict()
        return x.keys() == y.keys() and all(_iguais(x[k], y[k]) for k in x)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_iguais(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_iguais(a[k], b[k]) for k in a)
    if type(a) is type(b) and hasattr(a, "__dict__") and not callable(a):
        return _iguais(vars(a), vars(b))  # um objeto da lição (o CacheKV): o que ele guarda
    return a == b


def _nomes_dos_argumentos(modelo, sonda) -> list[str]:
    import inspect

    try:
        nomes = list(inspect.signature(modelo).parameters)
    except (TypeError, ValueError):
        nomes = []
    return [nomes[i] if i < len(nomes) else f"argumento {i + 1}"
            for i in range(len(sonda.args))] + list(sonda.kwargs)


@contextmanager
def _vigiar(proibidas):
    """Troca cada peça proibida por uma espiã enquanto a função do aluno roda: quem só chama
    a função da lição não escreveu nada."""
    chamadas, trocadas = [], []
    for dono, nome in proibidas:
        original = getattr(dono, nome)

        def espia(*a, _original=original, _nome=nome, **k):
            chamadas.append(_nome)
            return _original(*a, **k)
        setattr(dono, nome, espia)
        trocadas.append((dono, nome, original))
    try:
        yield chamadas
    finally:
        for dono, nome, original in trocadas:
            setattr(dono, nome, original)


@contextmanager
def _relogio(prazo, ao_estourar):
    """ao_estourar() se a sonda passar do prazo (na linha de comando: a mensagem e a saída do
    processo, porque uma thread do Python não se interrompe de fora)."""
    if prazo is None or ao_estourar is None:
        yield
        return
    alarme = threading.Timer(prazo, ao_estourar)
    alarme.daemon = True
    alarme.start()
    try:
        yield
    finally:
        alarme.cancel()


def chamar(desafio: Desafio, funcao, sonda: Sonda):
    """A saída que se compara: a da função, ou a que o desafio observa (um passo de treino
    muda os pesos: a saída é a perda e os pesos de depois)."""
    if desafio.observar is not None:
        return desafio.observar(funcao, *sonda.args, **sonda.kwargs)
    return funcao(*sonda.args, **sonda.kwargs)


def rodar_sonda(desafio: Desafio, funcao, sonda: Sonda, vigiar=True, prazo=None,
                ao_estourar=None) -> Resultado:
    copia = Sonda(sonda.estagio, sonda.descricao, _copiar(sonda.args), _copiar(sonda.kwargs))
    estourar = (lambda: ao_estourar(sonda)) if ao_estourar else None
    with _vigiar(desafio.proibidas if vigiar else ()) as chamadas, _relogio(prazo, estourar):
        try:
            saida = chamar(desafio, funcao, copia)
        except Exception as erro:  # noqa: BLE001 - o erro do aluno, com arquivo e linha
            return Resultado(erro=erro, proibida=(chamadas or [None])[0])
    resultado = Resultado(saida=saida, proibida=(chamadas or [None])[0])
    nomes = _nomes_dos_argumentos(desafio.modelo, sonda)
    originais = list(sonda.args) + list(sonda.kwargs.values())
    depois = list(copia.args) + list(copia.kwargs.values())
    for nome, antes, agora in zip(nomes, originais, depois):
        if not _iguais(antes, agora):
            resultado.mudou = nome
            break
    return resultado


# ---------------------------------------------------------------- a comparação
def _posicao(indice) -> str:
    return "(" + ", ".join(str(int(i)) for i in indice) + ")"


def _valor(x: float) -> str:
    from comum import num

    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return num(x, 4) if abs(x) >= 1e-3 or x == 0 else f"{x:.3e}".replace(".", ",")


def _descrever(x) -> str:
    if torch.is_tensor(x):
        return f"um tensor {tuple(x.shape)}"
    if isinstance(x, dict):
        return "{" + ", ".join(map(str, x)) + "}"
    if isinstance(x, (tuple, list)):
        return f"{'uma tupla' if isinstance(x, tuple) else 'uma lista'} de {len(x)}"
    return f"{type(x).__name__} {x!r}"[:50]


def diferenca(obtido, esperado, tolerancia: float = TOLERANCIA) -> str | None:
    """None quando obtido confere com esperado; senão, o que difere, em português.

    Tensores: a mesma forma, NaN e infinitos nos mesmos lugares, e o resto a menos de
    tolerancia x a escala do esperado (o maior valor finito, em módulo). Inteiros e
    booleanos: iguais. Tuplas e listas: item a item. Dicionários (a saída de um observar:
    os logits e o cache depois do passo): chave a chave, com o nome da chave na frase."""
    if isinstance(esperado, dict):
        if not isinstance(obtido, dict) or obtido.keys() != esperado.keys():
            return (f"a referência devolve {_descrever(esperado)}; a sua devolve "
                    f"{_descrever(obtido)}")
        for chave, b in esperado.items():
            dif = diferenca(obtido[chave], b, tolerancia)
            if dif:
                return f"em {chave}: {dif}"
        return None
    if isinstance(esperado, (tuple, list)):
        if not isinstance(obtido, (tuple, list)) or len(obtido) != len(esperado):
            return (f"a referência devolve {_descrever(esperado)}; a sua devolve "
                    f"{_descrever(obtido)}")
        for i, (a, b) in enumerate(zip(obtido, esperado)):
            dif = diferenca(a, b, tolerancia)
            if dif:
                return f"no item {i + 1} do que ela devolve: {dif}" if len(esperado) > 1 else dif
        return None
    if not torch.is_tensor(esperado):
        return None if obtido == esperado else (f"a sua dá {obtido!r}, a referência "
                                                f"{esperado!r}")[:200]
    if not torch.is_tensor(obtido):
        return f"a referência devolve {_descrever(esperado)}; a sua devolve {_descrever(obtido)}"
    if tuple(obtido.shape) != tuple(esperado.shape):
        return (f"a forma difere: a sua {tuple(obtido.shape)}, a referência "
                f"{tuple(esperado.shape)}")
    a, b = obtido.detach().cpu(), esperado.detach().cpu()
    if not (a.is_floating_point() or b.is_floating_point()):
        ruins = a != b
    else:
        a, b = a.double(), b.double()
        finitos = torch.isfinite(b)
        escala = float(b[finitos].abs().max()) if finitos.any() else 1.0
        escala = escala if escala > 0 else 1.0
        perto = (a - b).abs() <= tolerancia * escala
        iguais_nao_finitos = (~finitos) & ((a == b) | (a.isnan() & b.isnan()))
        ruins = ~((finitos & perto) | iguais_nao_finitos)
    if not ruins.any():
        return None
    primeiro = ruins.nonzero()[0]
    total = ruins.numel()
    return (f"{int(ruins.sum())} de {total} valores diferem; o primeiro, na posição "
            f"{_posicao(primeiro)}: a sua dá {_valor(float(a[tuple(primeiro)]))}, a "
            f"referência {_valor(float(b[tuple(primeiro)]))}")


def tem_nan_a_mais(obtido, esperado) -> bool:
    """A saída do aluno tem NaN onde a esperada não tem (em qualquer item)."""
    if isinstance(esperado, dict) and isinstance(obtido, dict):
        return any(tem_nan_a_mais(obtido.get(k), v) for k, v in esperado.items())
    if isinstance(esperado, (tuple, list)) and isinstance(obtido, (tuple, list)):
        return any(tem_nan_a_mais(a, b) for a, b in zip(obtido, esperado))
    if torch.is_tensor(obtido) and torch.is_tensor(esperado) and obtido.shape == esperado.shape \
            and obtido.is_floating_point():
        return bool((obtido.detach().cpu().isnan() & ~esperado.detach().cpu().isnan()).any())
    return False


# ---------------------------------------------------------------- o catálogo
def catalogo(desafio: Desafio) -> list[tuple]:
    """Os defeitos, um a um, e depois os pares que se combinam (ajustes em chaves
    diferentes): [(defeito,), ..., (defeito_a, defeito_b), ...]."""
    sozinhos = [(d,) for d in desafio.defeitos]
    pares = [(a, b) for a, b in itertools.combinations(desafio.defeitos, 2)
             if not set(a.ajustes) & set(b.ajustes)]
    return sozinhos + pares


def versao_de(desafio: Desafio, combinacao) -> Callable:
    ajustes = {}
    for defeito in combinacao:
        ajustes.update(defeito.ajustes)

    def com_defeito(*args, **kwargs):
        return desafio.versao(ajustes, *args, **kwargs)
    com_defeito.__name__ = desafio.funcao
    return com_defeito


_MEMORIA: dict = {}     # (desafio, versão) -> {índice da sonda: saída}
_SONDAS: dict = {}      # desafio -> as sondas, montadas uma vez por processo


def _sondas(desafio: Desafio) -> list:
    """As sondas do desafio, montadas uma vez por processo (as de um passo de treino montam
    um modelo cada)."""
    if desafio.chave not in _SONDAS:
        _SONDAS[desafio.chave] = desafio.sondas()
    return _SONDAS[desafio.chave]


def _sonda(desafio: Desafio, i: int) -> Sonda:
    """Uma cópia da sonda i (um defeito que muda a entrada no lugar não estraga a sonda das
    outras versões)."""
    s = _sondas(desafio)[i]
    return Sonda(s.estagio, s.descricao, _copiar(s.args), _copiar(s.kwargs))


def _saida(desafio: Desafio, funcao, chave, i: int):
    """A saída de uma função do lab (a referência, uma versão do catálogo) na sonda i,
    calculada uma vez por processo; None se ela dá erro nessa sonda."""
    memoria = _MEMORIA.setdefault((desafio.chave, chave), {})
    if i not in memoria:
        with _uma_thread():
            try:
                memoria[i] = chamar(desafio, funcao, _sonda(desafio, i))
            except Exception:  # noqa: BLE001 - um defeito que quebra nesta sonda
                memoria[i] = None
    return memoria[i]


def saidas(desafio: Desafio, funcao, chave=None) -> list:
    """As saídas de uma função do lab em todas as sondas (None onde ela dá erro)."""
    return [_saida(desafio, funcao, chave, i) for i in range(len(_sondas(desafio)))]


def esperadas(desafio: Desafio) -> list:
    return saidas(desafio, desafio.referencia, "referência")


def impressao(desafio: Desafio, combinacao) -> list:
    return saidas(desafio, versao_de(desafio, combinacao),
                  tuple(d.nome for d in combinacao))


# ---------------------------------------------------------------- o diagnóstico
@dataclass
class Diagnostico:
    passou: bool
    sondas: list                      # [Sonda]
    resultados: list                  # [Resultado]
    diferencas: list                  # [str | None]: None = confere
    defeitos: tuple = ()              # a combinação do catálogo que bate inteira
    motivo: str = ""                  # 'erro', 'mudou', 'proibida', 'nan', 'valores', ''

    @property
    def conferem(self) -> int:
        return sum(d is None for d in self.diferencas)

    def primeira_falha(self) -> int | None:
        """O índice da primeira sonda que falha, na ordem dos estágios."""
        ordem = sorted(range(len(self.sondas)), key=lambda i: (self.sondas[i].estagio, i))
        return next((i for i in ordem if self.diferencas[i] is not None), None)


def diagnosticar(desafio: Desafio, funcao, prazo=None, ao_estourar=None,
                 vigiar=True) -> Diagnostico:
    with _uma_thread():
        return _diagnosticar(desafio, funcao, prazo, ao_estourar, vigiar)


def _uma_thread():
    """As sondas são contas minúsculas: com duas threads, cada operação espera pela outra
    (um passo de treino do desafio da lição 10 leva 20 vezes mais numa máquina ocupada)."""
    from comum import uma_thread

    return uma_thread()


def _diagnosticar(desafio, funcao, prazo, ao_estourar, vigiar) -> Diagnostico:
    sondas = _sondas(desafio)        # rodar_sonda dá à função uma cópia de cada uma
    certas = esperadas(desafio)
    resultados = [rodar_sonda(desafio, funcao, s, vigiar, prazo, ao_estourar) for s in sondas]
    diferencas = [("deu erro" if r.erro is not None else diferenca(r.saida, e))
                  for r, e in zip(resultados, certas)]
    d = Diagnostico(False, sondas, resultados, diferencas)
    if any(r.proibida for r in resultados):
        d.motivo = "proibida"
        return d
    if any(r.erro is not None for r in resultados):
        d.motivo = "erro"
        return d
    if all(x is None for x in diferencas):
        if any(r.mudou for r in resultados):
            d.motivo = "mudou"
            return d
        d.passou = True
        return d
    # as sondas em que o aluno erra primeiro: um defeito que não muda nelas cai logo, sem
    # rodar as outras (cada versão do catálogo roda só até a primeira sonda que não bate)
    ordem = sorted(range(len(sondas)), key=lambda i: diferencas[i] is None)
    for combinacao in catalogo(desafio):
        versao, nome = versao_de(desafio, combinacao), tuple(x.nome for x in combinacao)

        def bate(i, versao=versao, nome=nome):
            x = _saida(desafio, versao, nome, i)
            return x is not None and diferenca(resultados[i].saida, x) is None
        if all(bate(i) for i in ordem):
            d.defeitos = combinacao
            break
    if d.defeitos:
        d.motivo = "catálogo"
    elif any(tem_nan_a_mais(r.saida, e) for r, e in zip(resultados, certas)):
        d.motivo = "nan"
    else:
        d.motivo = "valores"
    if any(r.mudou for r in resultados) and not d.defeitos:
        d.motivo = "mudou"
    return d
