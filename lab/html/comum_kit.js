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
