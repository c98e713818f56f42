"""As páginas: o painel de uma lição num arquivo .html que abre com um duplo clique.

Um leitor que não roda nada (ou um aluno com o celular na aula) mexe nos controles de
uma lição numa página que funciona sem internet: um arquivo só, com o estilo e o
script dentro dele (nada de CDN, módulos, fetch ou fontes de fora; uma política de
segurança na própria página bloqueia qualquer pedido à rede), UTF-8 com <meta charset>,
números no formato brasileiro (0,84; 1.234,5; 4,73e-4), legível com 390 px de largura e
no projetor. Só o --abrir abre o navegador (nunca os testes nem o CI).

Como uma lição escreve a sua página (a 09 é o exemplo; a 03, a 04, a 07 e a 08 fazem igual):

1. No cabeçalho, as duas opções (e só elas: --html [PASTA] grava e sai, sem rodar os
   experimentos; --abrir grava e abre no navegador padrão):

       from comum import paginas
       LICAO = Licao.da_docstring(__doc__, opcoes=[..., *paginas.opcoes()])

2. No fim da lição, depois dos experimentos, uma função que devolve o HTML; o corpo,
   o script e o estilo moram em lab/html/NN_nome.html, .js e .css (`fonte(nome)` os lê):

       def pagina() -> str:
           corpo, script, estilo = (paginas.fonte(f"09_scaling.{e}") for e in ("html", "js", "css"))
           return paginas.documento("Lição 09 · Leis de escala", corpo, script, {...}, estilo)

   - `dados`: o que o Python da lição sabe e a página usa (constantes, tabelas, e, para
     entradas discretas como os 216 jeitos de montar o bloco da 08, os números já
     contados): vira `const DADOS = {...}` no script, exatamente os mesmos floats.
   - `CORPO`: o HTML da página (sem <html>/<head>/<body>). Todo número mostrado fica num
     elemento com `data-campo="nome"` (ex.: `<td data-campo="kaplan.N"></td>`).
   - `SCRIPT`: JavaScript comum (nada de import/export), que define `PAGINA = {ler,
     campos, desenhar, preparar}`:
       * `ler()` -> o estado dos controles (um objeto simples: {C: 1e23, Dinf: 1e13});
       * `campos(estado)` -> {nome: texto} de TODO data-campo, função pura (sem o
         document): é ela que os testes comparam com o Python da lição;
       * `desenhar(estado)` (opcional): figuras em SVG, visibilidade de painéis;
       * `preparar(atualizar)` (opcional): liga botões e predefinições; chame
         atualizar() depois de mudar o estado por fora dos controles.
     O script também pode definir `LAB = {...}` com as fórmulas, para os testes.
     Ele já tem os formatos do console.py em JavaScript (mesmos nomes e mesmos
     arredondamentos, vírgula decimal e ponto de milhar): num(x, casas=2), inteiro(n),
     cientifico(x, casas=2), pct(x, casas=1), arredondar(x) (o round() do Python), e
     $(seletor), svg(tag, atributos) para desenhar.
   O encanamento chama atualizar() a cada "input"/"change" em qualquer controle: ler(),
   campos() -> cada data-campo, desenhar(). Um erro de JavaScript aparece numa faixa
   vermelha no topo (e em `window.__erros`, que o teste do navegador lê).

3. No fim do arquivo, antes de rodar os experimentos:

       if __name__ == "__main__":
           if paginas.pedida(LICAO.args):
               sys.exit(paginas.gravar(LICAO, pagina, "09_scaling.html"))

   gravar imprime "Página salva: <caminho>" (um erro do aluno em pagina() sai como os
   dos experimentos, com arquivo e linha, sem traceback; saída 1). Uma página que sai do
   GPT-2 (03, 04, 07) chama licao.gpt2() dentro de pagina(): sem o modelo, o
   ExperimentoPulado vira "PULADO: a página ...: <o motivo de sempre>" e a saída 1.

Uma página que sai de um treino da lição (10, 11) é gravada no fim do treino, sem sair:
`*paginas.opcoes(do_treino=True)` (--html PASTA diz só onde), e o experimento chama
`paginas.gravar(LICAO, lambda: pagina(...), "NN_nome.html")` com o que o treino mediu. A do
treino padrão também mora em apostilas/paginas/ (`--html apostilas/paginas`), conferida byte a
byte contra a execução padrão dos testes (tests/apoio/treinos.py).

De onde vêm os números: de uma fonte só. Com entradas contínuas (um orçamento, um
volume de inferência), as fórmulas da peça reescritas em JavaScript, com as constantes
vindas do Python em DADOS, e um teste que as compara com as do Python numa grade; com
entradas discretas e contas que só o PyTorch faz (a 08 conta parâmetros em tensores
meta), os números calculados pelo Python e embutidos em DADOS.

Como se testa uma página (tests/apoio/navegador.py; exemplo: tests/test_09_paginas.py):
`rodar_no_node(html, expressao)` roda o script da página no Node.js (sem navegador) e
devolve o valor da expressão (ex.: `PAGINA.campos({...})` numa grade inteira);
`Navegador` abre a página num Chromium sem tela e sem rede, muda cada controle de
verdade (`clicar`, `deslizar`, `marcar`), lê `campos()` da página como ela está na tela
e `erros` (exceções de JavaScript, console.error, pedidos à rede). O teste compara os
campos com os que o Python da lição dá para o mesmo estado (`PAGINA.ler()`).
"""
from __future__ import annotations

import html as _html
import json
from pathlib import Path

from .console import dizer, quebrar
from .caminhos import PASTA_LAB, RAIZ
from .erros import ExperimentoPulado, erro_legivel, traceback_pedido
from .opcoes import opcao

__all__ = ["opcoes", "pedida", "documento", "gravar", "abrir", "PASTA_PADRAO", "FORMATOS_JS",
           "KIT_JS", "ESTILO"]

PASTA_PADRAO = RAIZ / "paginas"


# ---------------------------------------------------------------- as opções
def opcoes(do_treino: bool = False) -> list:
    """As opções --html [PASTA] e --abrir, para o opcoes=[...] de uma Licao. do_treino=True:
    a página sai de um treino da lição (10, 11), que a grava no fim; --html só diz onde."""
    if do_treino:
        return [
            opcao("--html", None, None, "a pasta da página que o treino grava no fim (um "
                  "arquivo .html que abre sem internet, com um duplo clique; padrão: a pasta "
                  "paginas/ do lab)", "PASTA", nargs="?", const=str(PASTA_PADRAO)),
            opcao("--abrir", "flag", None, "abre no navegador a página que o treino grava"),
        ]
    return [
        opcao("--html", None, None, "grava a página interativa da lição (um arquivo .html "
              "que abre sem internet, com um duplo clique) em PASTA e sai, sem rodar os "
              "experimentos (sem PASTA: a pasta paginas/ do lab)", "PASTA", nargs="?",
              const=str(PASTA_PADRAO)),
        opcao("--abrir", "flag", None, "grava a página (como --html) e a abre no navegador"),
    ]


def pedida(args) -> bool:
    """A linha de comando pediu a página (--html ou --abrir)?"""
    return getattr(args, "html", None) is not None or bool(getattr(args, "abrir", False))


# ---------------------------------------------------------------- o documento
ESTILO = """
:root { --texto: #1b1b1b; --fraco: #555; --borda: #c9ccd1; --fundo-claro: #f3f5f7;
  --destaque: #0a58a8; --erro: #9b1111; font-size: 18px; }
@media (max-width: 640px) { :root { font-size: 16px; } }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; color: var(--texto); background: #fff; line-height: 1.45;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans",
  sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 0.8rem 1rem 2rem; }
h1 { font-size: 1.5rem; margin: 0.2rem 0 0.4rem; line-height: 1.2; }
h2 { font-size: 1.15rem; margin: 1.2rem 0 0.4rem; line-height: 1.25; }
p { margin: 0.4rem 0; }
code, pre { font-family: ui-monospace, "Cascadia Mono", Consolas, "DejaVu Sans Mono",
  monospace; font-size: 0.88em; }
pre { background: var(--fundo-claro); padding: 0.6rem 0.7rem; overflow-x: auto;
  border-radius: 0.3rem; line-height: 1.35; }
.fraco { color: var(--fraco); }
.numero, td, output { font-variant-numeric: tabular-nums; }
.rolagem { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.3rem 0; }
th, td { padding: 0.25rem 0.45rem; text-align: right; border-bottom: 1px solid var(--borda);
  white-space: nowrap; }
th { font-weight: 600; vertical-align: bottom; }
th:first-child, td:first-child { text-align: left; }
label { cursor: pointer; }
input[type=range] { width: 100%; height: 2.2rem; margin: 0.1rem 0; accent-color: var(--destaque); }
input[type=checkbox], input[type=radio] { width: 1.3rem; height: 1.3rem; vertical-align: -0.2rem;
  accent-color: var(--destaque); }
button { font: inherit; min-height: 2.4rem; padding: 0.2rem 0.75rem; border-radius: 0.4rem;
  border: 1px solid var(--borda); background: var(--fundo-claro); color: var(--texto);
  cursor: pointer; }
button[aria-pressed=true] { background: var(--destaque); border-color: var(--destaque);
  color: #fff; }
.botoes { display: flex; flex-wrap: wrap; gap: 0.4rem; margin: 0.3rem 0; }
.marcas { display: flex; justify-content: space-between; font-size: 0.8rem; color: var(--fraco); }
#erro-pagina { background: #fdecec; color: var(--erro); border: 2px solid var(--erro);
  padding: 0.6rem 1rem; margin: 0; font-weight: 600; }
svg text { font-family: inherit; }
footer { margin-top: 1.5rem; font-size: 0.9rem; color: var(--fraco); }
"""

# Os formatos de console.py, em JavaScript, com os mesmos arredondamentos: o Python
# arredonda o valor binário exato (metade vai para o par: 0.125 -> '0.12'); toFixed e
# toExponential mandam a metade para cima e toFixed desiste a partir de 1e21. Aqui o
# valor exato de cada double sai em dígitos decimais (BigInt) e o arredondamento é o do
# Python. Os testes comparam com console.py em mais de mil valores.
FORMATOS_JS = r"""
function _exato(x) {            // |x| finito = BigInt(dígitos) / 10^casas, exatamente
  const v = new DataView(new ArrayBuffer(8));
  v.setFloat64(0, Math.abs(x));
  const alto = v.getUint32(0), expoente = (alto >>> 20) & 0x7ff;
  let m = (BigInt(alto & 0xfffff) << 32n) | BigInt(v.getUint32(4)), e = -1074;
  if (expoente) { m |= 1n << 52n; e = expoente - 1075; }
  return e >= 0 ? [m << BigInt(e), 0] : [m * 5n ** BigInt(-e), -e];
}
function _par(d, k) {           // d / 10^k arredondado ao inteiro, metade para o par
  if (k <= 0) return d * 10n ** BigInt(-k);
  const divisor = 10n ** BigInt(k), q = d / divisor, dobro = 2n * (d % divisor);
  return q + (dobro > divisor || (dobro === divisor && q % 2n === 1n) ? 1n : 0n);
}
function _fixo(x, casas) {      // f"{x:.{casas}f}" do Python: [sinal, inteira, decimais]
  const [d, k] = _exato(x);
  const s = _par(d, k - casas).toString().padStart(casas + 1, "0");
  const sinal = x < 0 || Object.is(x, -0) ? "-" : "";
  return [sinal, s.slice(0, s.length - casas), s.slice(s.length - casas)];
}
function _milhar(inteira) { return inteira.replace(/\B(?=(\d{3})+(?!\d))/g, "."); }
function num(x, casas = 2) {    // 0.8413 -> '0,8413'; 1234.5 -> '1.234,50'; nunca '-0,00'
  if (x === null || x === undefined || Number.isNaN(x)) return "\u2014";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  let [sinal, inteira, decimais] = _fixo(x, casas);
  if (/^0*$/.test(inteira + decimais)) sinal = "";
  return sinal + _milhar(inteira) + (casas ? "," + decimais : "");
}
function inteiro(n) {           // 124439808 -> '124.439.808' (int() do Python: trunca)
  const s = BigInt(Math.trunc(n)).toString();
  return s[0] === "-" ? "-" + _milhar(s.slice(1)) : _milhar(s);
}
function arredondar(x) {        // round(x) do Python: metade para o par
  const [sinal, inteira] = _fixo(x, 0);
  return Number(sinal + inteira);
}
function cientifico(x, casas = 2) {   // 0.000473 -> '4,73e-4'
  if (x === 0) return "0";
  const [d, k] = _exato(x), digitos = d.toString();
  let expoente = digitos.length - 1 - k;
  let s = _par(d, digitos.length - 1 - casas).toString();
  if (s.length > casas + 1) { s = s.slice(0, casas + 1); expoente += 1; }  // 9,999 -> 10,0
  const mantissa = s[0] + (casas ? "," + s.slice(1) : "");
  return (x < 0 ? "-" : "") + mantissa + "e" + expoente;
}
function pct(x, casas = 1) { return num(100 * x, casas) + " %"; }   // 0.666 -> '66,6 %'
"""

# O que toda página faz com o PAGINA da lição: liga os controles, preenche os campos,
# desenha, e mostra numa faixa vermelha qualquer erro de JavaScript.
KIT_JS = r"""
function $(seletor) { return document.querySelector(seletor); }
function svg(tag, atributos = {}, texto = null) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [nome, valor] of Object.entries(atributos)) el.setAttribute(nome, valor);
  if (texto !== null) el.textContent = texto;
  return el;
}
function _erro(mensagem) {
  window.__erros.push(String(mensagem));
  const faixa = document.getElementById("erro-pagina");
  faixa.hidden = false;
  faixa.textContent = "Erro na página (os números abaixo podem estar errados): " + mensagem;
}
function iniciar(pagina) {
  let vezes = 0;
  function atualizar() {
    const estado = pagina.ler(), campos = pagina.campos(estado);
    const faltam = new Set(Array.from(document.querySelectorAll("[data-campo]"),
                                      el => el.dataset.campo));
    for (const [nome, texto] of Object.entries(campos)) {
      const lugares = document.querySelectorAll(`[data-campo="${CSS.escape(nome)}"]`);
      if (!lugares.length) throw new Error(`o campo ${nome} não tem lugar na página`);
      for (const el of lugares) el.textContent = texto;
      faltam.delete(nome);
    }
    if (faltam.size) throw new Error(`campos sem valor: ${Array.from(faltam).join(", ")}`);
    if (pagina.desenhar) pagina.desenhar(estado);
    document.documentElement.dataset.atualizacoes = String(++vezes);
  }
  document.addEventListener("input", atualizar);
  document.addEventListener("change", atualizar);
  let espera = null;
  window.addEventListener("resize", () => {
    clearTimeout(espera);
    espera = setTimeout(atualizar, 100);
  });
  if (pagina.preparar) pagina.preparar(atualizar);
  atualizar();
}
if (typeof window !== "undefined") {
  window.__erros = [];
  window.addEventListener("error", e => _erro(e.error ? e.error.message : e.message));
  window.addEventListener("unhandledrejection", e => _erro(e.reason));
  document.addEventListener("securitypolicyviolation", e =>
    _erro("pedido bloqueado (a página não usa a rede): " + e.blockedURI));
  document.addEventListener("DOMContentLoaded", () => iniciar(PAGINA));
}
"""

# Nenhum pedido a lugar nenhum: só o estilo e o script de dentro do arquivo.
POLITICA = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "img-src data:; base-uri 'none'; form-action 'none'")


FONTES = PASTA_LAB / "html"


def fonte(nome: str) -> str:
    """O texto de lab/html/<nome>: o HTML, o CSS e o JavaScript de uma página moram em
    arquivos próprios (a lição fica com o que calcula; o navegador, com o que mostra)."""
    return (FONTES / nome).read_text(encoding="utf-8")


def _json_no_script(dados) -> str:
    """dados em JSON, seguro dentro de <script> (nada de '</script>' nem '<!--')."""
    texto = json.dumps(dados, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return texto.replace("</", "<\\/").replace("<!--", "<\\!--")


def documento(titulo: str, corpo: str, script: str, dados=None, estilo: str = "",
              descricao: str = "") -> str:
    """O HTML inteiro de uma página: um arquivo só, que não pede nada à rede.

    corpo: o HTML de dentro do <main>; script: o JavaScript da lição (define PAGINA);
    dados: vira `const DADOS = ...` (JSON); estilo: CSS além do comum (ESTILO)."""
    if "</script" in script.lower():
        raise ValueError("o script da página não pode conter '</script'")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="pt-BR">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLITICA}">',
        *([f'<meta name="description" content="{_html.escape(descricao)}">'] if descricao
          else []),
        f"<title>{_html.escape(titulo)}</title>",
        f"<style>{ESTILO}{estilo}</style>",
        "</head>",
        "<body>",
        '<p id="erro-pagina" role="alert" hidden></p>',
        f"<main>\n{corpo.strip()}\n</main>",
        "<script>",
        '"use strict";',
        f"const DADOS = {_json_no_script(dados if dados is not None else {})};",
        FORMATOS_JS.strip(),
        script.strip(),
        KIT_JS.strip(),
        "</script>",
        "</body>",
        "</html>",
        "",
    ])


# ---------------------------------------------------------------- gravar e abrir
def gravar(licao, pagina, nome: str) -> int:
    """Grava pagina() (o HTML) em --html PASTA (ou paginas/) com o nome dado, imprime o
    caminho e, com --abrir, abre no navegador. Devolve o código de saída (0 ou 1)."""
    try:
        html = pagina() if callable(pagina) else pagina
    except ExperimentoPulado as motivo:  # ex.: a página sai do GPT-2, que não está aqui
        dizer(quebrar(f"PULADO: a página {nome}: {motivo}"))
        return 1
    except Exception as erro:  # noqa: BLE001 - o erro do aluno, com arquivo e linha
        if traceback_pedido():
            raise
        dizer(erro_legivel(erro)[0])
        return 1
    pasta = Path(getattr(licao.args, "html", None) or PASTA_PADRAO)
    caminho = pasta / nome
    try:
        pasta.mkdir(parents=True, exist_ok=True)
        caminho.write_text(html, encoding="utf-8", newline="\n")
    except OSError as erro:
        dizer(f"Não consegui gravar a página {caminho}: {erro.strerror or erro}")
        return 1
    dizer(f"Página salva: {caminho}")  # o caminho é do aluno: uma linha só
    dizer("Abra com um duplo clique: funciona sem internet, em qualquer navegador.")
    if getattr(licao.args, "abrir", False):
        abrir(caminho)
    return 0


def abrir(caminho: Path) -> bool:
    """Abre o arquivo no navegador padrão (o webbrowser do Python); sem navegador, diz
    o que fazer. Só com --abrir: um teste, o CI ou uma sessão por SSH nunca abre nada."""
    import webbrowser

    try:
        aberto = webbrowser.open(Path(caminho).resolve().as_uri())
    except webbrowser.Error:
        aberto = False
    if not aberto:
        dizer("(não encontrei um navegador para abrir a página: abra o arquivo acima "
              "com um duplo clique)")
    return aberto
