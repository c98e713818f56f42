"""--desafio, --dica, --mostrar-defeito e --com-o-seu numa lição (lab/03_attention.py
--desafio): o que o aluno vê. O motor (motor.py) decide; aqui se escreve a decisão.

Saída: 0 quando os desafios pedidos conferem (e com --dica ou --mostrar-defeito), 1 quando
algum ainda não foi escrito ou não confere, 2 para uso errado (um defeito que não existe)."""
from __future__ import annotations

import os
import sys

from comum import comando, curto, dizer, num, quebrar
from comum.console import cortar, largura
from comum.erros import erro_legivel
from comum.licao import interativa, perguntar_pausa

from . import carregar, chaves

__all__ = ["rodar", "conferir_arquivo", "com_o_seu", "frase_do_diagnostico"]


def _script(licao: str) -> str:
    from . import PASTA
    return next(PASTA.parent.glob(f"{licao}_*.py")).name


def _titulo(texto: str) -> None:
    dizer()
    dizer(texto)
    dizer("=" * min(len(texto), largura()))


def _prazo() -> float:
    """LAB_PRAZO_DO_DESAFIO: os segundos por sonda (os testes encurtam)."""
    from .motor import PRAZO
    try:
        return float(os.environ.get("LAB_PRAZO_DO_DESAFIO") or PRAZO)
    except ValueError:
        return PRAZO


def _estourou(sonda):
    """Uma sonda passou do prazo: a mensagem, e o processo sai (uma thread do Python não se
    interrompe de fora)."""
    dizer()
    dizer(quebrar(f"FALHOU: a sua função demorou demais (mais de {num(_prazo(), 0)} s) na "
                  f"sonda \"{sonda.descricao}\": um laço que não termina? As sondas são "
                  "pequenas: a conta certa leva milissegundos."))
    sys.stdout.flush()
    os._exit(1)


# ---------------------------------------------------------------- a frase do diagnóstico
def frase_do_diagnostico(desafio, d) -> list[str]:
    """As linhas do que está errado (vazia quando passou)."""
    from .motor import ESTAGIOS

    if d.passou:
        return []
    i = d.primeira_falha()
    if d.motivo == "proibida":
        nome = next(r.proibida for r in d.resultados if r.proibida)
        return [quebrar(f"O seu arquivo chama a própria peça da lição ({nome}, da lição "
                        f"{desafio.licao}): assim ele não confere nada. Escreva a conta você "
                        "mesmo; a lição fica como referência, para comparar depois.")]
    if d.motivo == "erro":
        sonda, resultado = d.sondas[i], d.resultados[i]
        texto, _ = erro_legivel(resultado.erro)
        return [quebrar(f"Na sonda \"{sonda.descricao}\" (estágio {sonda.estagio}), a sua "
                        "função deu erro:"), texto]
    if d.motivo == "mudou":
        nome = next(r.mudou for r in d.resultados if r.mudou)
        return [quebrar(f"A sua função muda a entrada {nome} no lugar (num tensor que ela "
                        "recebeu, um -=, /=, *= ou um método terminado em _; numa lista, um "
                        "append, um del ou uma atribuição a um item): quem chamou perde o "
                        "valor dela. Trabalhe numa conta nova (x = x - m, e não x -= m) ou "
                        "numa cópia (lista = list(lista)).")]
    if d.motivo == "catálogo":
        linhas = []
        if len(d.defeitos) == 2:
            linhas.append("Dois defeitos do catálogo, juntos:")
        for defeito in d.defeitos:
            linhas.append(quebrar(f"Diagnóstico: {defeito.mensagem}"))
            linhas.append(quebrar(f"Leia: {defeito.secao}.", recuo=2))
        return linhas
    sonda = d.sondas[i]
    primeira = (f"O primeiro estágio que falha é o {sonda.estagio} ({ESTAGIOS[sonda.estagio]}),"
                f" na sonda \"{sonda.descricao}\": {d.diferencas[i]}.")
    if d.motivo == "nan":
        return [quebrar("A sua saída tem NaN (não é um número) onde a da referência tem "
                        "números: um softmax de uma linha inteira de -inf, a raiz de um número "
                        "negativo ou uma divisão por zero."), quebrar(primeira)]
    return [quebrar(primeira), quebrar(
        "Não é nenhum defeito do catálogo (nem dois juntos): compare a sua conta com a da "
        f"apostila ({desafio.secao}) ou peça uma dica (--dica).")]


# ---------------------------------------------------------------- um desafio conferido
def mostrar_conferencia(desafio, d, pausa=None) -> None:
    """Imprime o diagnóstico d estágio por estágio: uma linha por sonda, e o que está
    errado (pausa(a_seguir) entre os estágios, com --pausa)."""
    from .motor import ESTAGIOS

    for estagio in sorted({s.estagio for s in d.sondas}):
        if estagio > 1 and pausa:
            pausa(f"estágio {estagio}: {ESTAGIOS[estagio].lower()}")
        dizer(f"Estágio {estagio}/3 · {ESTAGIOS[estagio]}")
        for sonda, dif in zip(d.sondas, d.diferencas):
            if sonda.estagio == estagio:
                dizer(cortar(f"  {'confere' if dif is None else 'NÃO    '}  {sonda.descricao}"))
    if pausa:
        pausa("o veredito")
    dizer()
    if d.passou:
        dizer(quebrar(f"Passou: as {len(d.sondas)} sondas conferem com a referência da lição "
                      f"{desafio.licao}."))
        return
    dizer(f"{d.conferem} de {len(d.sondas)} sondas conferem.")
    for linha in frase_do_diagnostico(desafio, d):
        dizer(linha)


def ainda_nao_escrita(d) -> bool:
    """A função ainda levanta o 'ainda não escrita' do modelo."""
    from .motor import AINDA_NAO

    i = d.primeira_falha()
    return (not d.passou and d.motivo == "erro" and i is not None
            and isinstance(d.resultados[i].erro, NotImplementedError)
            and AINDA_NAO in str(d.resultados[i].erro))


def conferir_um(desafio, args) -> int:
    """Um desafio: escreve o arquivo na primeira vez; depois confere. 0 passou, 1 não."""
    from . import aluno

    caminho = aluno.arquivo(desafio)
    novo = aluno.escrever_modelo(desafio)
    if novo is not None:
        dizer(quebrar(f"Escrevi {curto(novo)}: a assinatura e a docstring de "
                      f"{desafio.funcao}(), com um corpo que ainda não faz nada. Abra-o num "
                      "editor, escreva a conta no lugar do raise e rode de novo:"))
        dizer(comando(_script(desafio.licao), "--desafio", desafio.nome))
        dizer(quebrar(f"A apostila explica a peça: {desafio.secao}."))
        return 1
    dizer(quebrar(f"O seu arquivo: {curto(caminho)}"))
    dizer("(carregando o PyTorch...)")
    try:
        funcao = aluno.ler(desafio, caminho)
    except aluno.ArquivoComErro as erro:
        dizer(str(erro))
        aluno.registrar(desafio, caminho, False, 0, 0, "o arquivo não carrega")
        return 1
    from .motor import diagnosticar

    d = diagnosticar(desafio, funcao, prazo=_prazo(), ao_estourar=_estourou)
    if ainda_nao_escrita(d):
        dizer(quebrar(f"Ainda não escrita: {curto(caminho)} ainda tem o raise do modelo. "
                      f"Escreva a conta de {desafio.funcao}() no lugar dele e rode de novo."))
        aluno.registrar(desafio, caminho, False, 0, len(d.sondas), "ainda não escrita")
        return 1
    mostrar_conferencia(desafio, d, _pausa(args))
    diagnostico = ("passou" if d.passou else
                   "+".join(x.nome for x in d.defeitos) or d.motivo)
    aluno.registrar(desafio, caminho, d.passou, d.conferem, len(d.sondas), diagnostico)
    if d.passou:
        for script, olhar, *extra in desafio.com_o_seu[:1]:
            licao = ("esta lição" if script[:2] == desafio.licao else
                     f"a lição {script[:2]}")
            dizer(quebrar(f"Agora rode {licao} com a sua peça no lugar da da lição "
                          f"{desafio.licao} ({olhar}):"))
            dizer(comando(script, "--com-o-seu", desafio.licao, *extra))
        return 0
    dizer("Corrija e rode de novo:")
    dizer(comando(_script(desafio.licao), "--desafio", desafio.nome))
    return 1


def _pausa(args):
    """Com --pausa num terminal, uma pausa entre os estágios (o professor no projetor)."""
    if not interativa(args):
        return None

    def pausar(a_seguir):
        perguntar_pausa(a_seguir)
    return pausar


# ---------------------------------------------------------------- a lição com --desafio
def rodar(numero: str, args) -> int:
    escolhidos = chaves(numero) if args.desafio == "todos" else [f"{numero}_{args.desafio}"]
    try:
        if args.mostrar_defeito:
            return mostrar_defeito(numero, escolhidos, args)
        if args.dica:
            return dar_dica(escolhidos)
        codigos = []
        for n, chave in enumerate(escolhidos, 1):
            desafio = carregar(chave)
            contagem = f" {n}/{len(escolhidos)}" if len(escolhidos) > 1 else ""
            _titulo(f"Desafio{contagem} · {desafio.funcao}(): {desafio.titulo}")
            codigos.append(conferir_um(desafio, args))
    except KeyboardInterrupt:
        print("\nInterrompido (Ctrl+C).", flush=True)
        return 130
    if len(escolhidos) > 1:
        dizer()
        dizer(f"{codigos.count(0)} de {len(escolhidos)} desafios desta lição conferem.")
    return max(codigos)


def dar_dica(escolhidos) -> int:
    """A próxima dica do primeiro desafio pedido que ainda não passou."""
    from . import aluno

    registro = aluno.registro()
    chave = next((c for c in escolhidos if not registro.get(c, {}).get("passou")),
                 escolhidos[0])
    desafio = carregar(chave)
    n, texto = aluno.proxima_dica(desafio)
    dizer(f"Dica {n} de {len(desafio.dicas)} para {desafio.funcao}():")
    dizer(quebrar(texto, recuo=2))
    if n < len(desafio.dicas):
        dizer("(--dica de novo dá a próxima)")
    return 0


def mostrar_defeito(numero, escolhidos, args) -> int:
    """O diagnóstico de um defeito do catálogo, como se fosse o arquivo de um aluno."""
    from .motor import versao_de

    if len(escolhidos) != 1:
        nomes = ", ".join(c[3:] for c in chaves(numero))
        print(quebrar(f"erro: --mostrar-defeito vai com um desafio só: --desafio NOME "
                      f"({nomes})."), file=sys.stderr)
        return 2
    desafio = carregar(escolhidos[0])
    nomes = [d.nome for d in desafio.defeitos]
    if args.mostrar_defeito == "lista" or args.mostrar_defeito not in nomes:
        if args.mostrar_defeito != "lista":
            print(quebrar(f"erro: o catálogo de {desafio.funcao}() não tem o defeito "
                          f"'{args.mostrar_defeito}'."), file=sys.stderr)
        dizer(f"Os defeitos do catálogo de {desafio.funcao}():")
        for d in desafio.defeitos:
            dizer(cortar(f"  {d.nome}: {d.mensagem}", 0))
        return 0 if args.mostrar_defeito == "lista" else 2
    defeito = desafio.defeito(args.mostrar_defeito)
    _titulo(f"Desafio · {desafio.funcao}(): {desafio.titulo}")
    dizer(quebrar(f"Demonstração: o defeito '{defeito.nome}' do catálogo, conferido como se "
                  "fosse o arquivo de um aluno."))
    dizer("(carregando o PyTorch...)")
    from .motor import diagnosticar

    d = diagnosticar(desafio, versao_de(desafio, (defeito,)))
    mostrar_conferencia(desafio, d, _pausa(args))
    return 0


# ---------------------------------------------------------------- --com-o-seu
def com_o_seu(numero_atual: str, licao: str) -> None:
    """Antes de a lição carregar as anteriores: lê as peças que o aluno escreveu na lição
    `licao`, diz numa linha se cada uma confere, e as põe no lugar das da lição."""
    from comum import desafio as opcoes_de_desafio

    from . import aluno
    from .motor import diagnosticar

    usadas = _carregadas(numero_atual)
    trocaveis = [d for d in map(carregar, chaves(licao)) if d.substituir is not None]
    if not trocaveis:
        nomes = ", ".join(f"{d.funcao}()" for d in map(carregar, chaves(licao)))
        dizer(quebrar(f"--com-o-seu {licao}: nenhuma lição seguinte usa a peça que você "
                      f"escreveu na lição {licao} ({nomes}): esta lição roda como sempre."))
    for desafio in trocaveis:
        alvos = set(desafio.substituir(lambda *a, **k: None))
        if not alvos & usadas:          # a peça entra numa lição que esta não carrega
            dizer(quebrar(f"--com-o-seu {licao}: a sua {desafio.funcao}() entra numa peça "
                          f"da lição {min(alvos)[:2]} quando outra lição a importa; esta não "
                          "a importa: aqui nada muda. Ela roda em:"))
            for script, _olhar, *extra in desafio.com_o_seu[:1]:
                dizer(comando(script, "--com-o-seu", licao, *extra))
            continue
        caminho = aluno.arquivo(desafio)
        if not caminho.exists():
            dizer(quebrar(f"--com-o-seu {licao}: você ainda não escreveu {desafio.funcao}(), "
                          f"{desafio.titulo} (rode lab/{_script(licao)} --desafio "
                          f"{desafio.nome}); segue a da lição."))
            continue
        try:
            funcao = aluno.ler(desafio, caminho)
            d = diagnosticar(desafio, funcao, prazo=_prazo(), ao_estourar=_estourou)
        except aluno.ArquivoComErro as erro:
            dizer(str(erro))
            sys.exit(1)
        veredito = ("confere com a referência" if d.passou else
                    f"ainda NÃO confere ({d.conferem} de {len(d.sondas)} sondas; rode "
                    f"lab/{_script(licao)} --desafio {desafio.nome}): os números abaixo "
                    "mostram o efeito")
        dizer(quebrar(f"Com o seu {desafio.funcao}() ({curto(caminho)}) no lugar do da lição "
                      f"{licao}: {veredito}."))
        for nome_da_licao, trocas in desafio.substituir(funcao).items():
            trocas = list(trocas.items())
            opcoes_de_desafio.SUBSTITUICOES.setdefault(nome_da_licao, []).extend(trocas)
            ja = sys.modules.get("licao_" + nome_da_licao)
            if ja is not None:                      # já carregada (pelo próprio desafio)
                opcoes_de_desafio.substituir(nome_da_licao, ja, trocas)


def _carregadas(numero: str) -> set[str]:
    """A lição lab/NN_*.py e as que ela carrega com importar_licao, direta ou indiretamente
    (lidas do texto dos arquivos, sem importar nada): onde uma peça trocada pode rodar (na
    própria, rodada como __main__, a troca entra em Licao.rodar)."""
    import re

    from . import PASTA

    propria = next(PASTA.parent.glob(f"{numero}_*.py")).stem
    vistas, fila = {propria}, [propria]
    while fila:
        texto = (PASTA.parent / f"{fila.pop()}.py").read_text(encoding="utf-8")
        for outra in re.findall(r'importar_licao\("(\d\d_\w+)"\)', texto):
            if outra not in vistas:
                vistas.add(outra)
                fila.append(outra)
    return vistas
