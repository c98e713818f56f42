// ---- a página da 10: o treino do experimento 3 (DADOS.historico, DADOS.amostras)
// historico: passo, treino e validação de cada avaliação (lotes fixos) e o lote de cada passo;
// amostras: [passo, palavras de 3+ letras, quantas existem no treino, a primeira amostra].
const H = DADOS.historico, AMOSTRAS = DADOS.amostras;
let escolhida = AMOSTRAS.length - 1;    // a amostra apontada (mouse) ou focada (Tab)
function fracao(c, t) { return c / Math.max(1, t); }
function campos({amostra}) {
  const d = DADOS, v = H["validação"], fim = v[v.length - 1];
  const c = {descricao: `O GPT2 da lição 06 com ${d.camadas} blocos, d = ${d.largura}, ` +
    `${d.cabecas} cabeças e ${d.contexto} posições (N = ${inteiro(d.N)} parâmetros), ` +
    `treinado por caractere nas apostilas: ${inteiro(d.passos)} passos de ${d.lote} × ` +
    `${d.contexto} caracteres, AdamW com taxa máxima ${cientifico(d.taxa, 0)}, semente ` +
    `${d.semente}. As contas são as do experimento 3 de lab/10_treino.py (leia junto: ` +
    `apostilas/10_treino.md).`,
    final: `Perda de validação: ${num(v[0], 2)} -> ${num(fim, 2)} ` +
      (fim < d.limiar ? `(abaixo de ${num(d.limiar, 1)}).`
                      : `(não chegou abaixo de ${num(d.limiar, 1)}: treino curto?).`)};
  const [, t0, c0] = AMOSTRAS[0], [, t1, c1] = AMOSTRAS[AMOSTRAS.length - 1];
  const [r0, r1] = d.reais;
  c.palavras = `Palavras que existem no texto: ${pct(fracao(c0, t0), 0)} no passo 0, ` +
    `${pct(fracao(c1, t1), 0)} no passo ${inteiro(d.passos)}: ` +
    (fracao(c1, t1) > fracao(c0, t0) + d.melhora ? "as amostras melhoraram"
                                                 : "as amostras quase não mudaram") +
    ` (no texto de validação, escrito por gente, ${pct(r1 / r0, 0)} das palavras existem no ` +
    "de treino).";
  AMOSTRAS.forEach(([passo, total, conhecidas, texto], k) => {
    c[`amostra.${k}.passo`] = `Passo ${inteiro(passo)}`;
    c[`amostra.${k}.texto`] = texto;
    c[`amostra.${k}.palavras`] = `palavras de 3+ letras que existem no texto de treino: ` +
      `${conhecidas} de ${total} (${pct(fracao(conhecidas, total), 0)})`;
  });
  H.passo.forEach((passo, k) => {
    c[`tab.${k}.passo`] = inteiro(passo);
    c[`tab.${k}.treino`] = num(H.treino[k], 2);
    c[`tab.${k}.validacao`] = num(v[k], 2);
  });
  const passo = AMOSTRAS[amostra][0], k = H.passo.indexOf(passo);
  c.escolhida = `No passo ${inteiro(passo)} (a amostra marcada): treino ${num(H.treino[k], 2)}, ` +
                `validação ${num(v[k], 2)}, nos lotes fixos.`;
  return c;
}

// ---- os controles: a amostra apontada
function ler() { return {amostra: escolhida}; }
function elemento(tag, atributos = {}, texto = null) {
  const el = document.createElement(tag);
  for (const [n, v] of Object.entries(atributos)) el.setAttribute(n, v);
  if (texto !== null) el.textContent = texto;
  return el;
}
function preparar(atualizar) {
  $("#novos").textContent = inteiro(AMOSTRAS[0][3].length);
  $("#temperatura").textContent = num(DADOS.temperatura, 1);
  AMOSTRAS.forEach((_, k) => {
    const b = elemento("button", {type: "button", class: "cartao", "data-k": String(k)});
    b.append(elemento("span", {class: "passo", "data-campo": `amostra.${k}.passo`}),
             elemento("span", {class: "texto", "data-campo": `amostra.${k}.texto`}),
             elemento("span", {class: "palavras", "data-campo": `amostra.${k}.palavras`}));
    const marcar = () => { if (escolhida !== k) { escolhida = k; atualizar(); } };
    b.addEventListener("mouseenter", marcar);
    b.addEventListener("focus", marcar);
    b.addEventListener("click", marcar);
    $("#amostras").append(b);
  });
  H.passo.forEach((_, k) => {
    const tr = elemento("tr", {id: `linha-${k}`});
    for (const campo of ["passo", "treino", "validacao"])
      tr.append(elemento("td", {"data-campo": `tab.${k}.${campo}`}));
    $("#linhas").append(tr);
  });
}
function marcas(maximo) {              // 5 a 6 marcas redondas: 1, 2 ou 5 x 10^k
  const bruto = maximo / 5, base = 10 ** Math.floor(Math.log10(bruto));
  const passo = [1, 2, 5, 10].map(m => m * base).find(m => maximo / m <= 6);
  const lista = [];
  for (let x = 0; x <= maximo + 1e-9; x += passo) lista.push(x);
  return lista;
}
function desenhar({amostra}) {
  const caixa = $("#grafico"), d = DADOS, v = H["validação"];
  const largura = Math.max(260, Math.floor(caixa.clientWidth));
  const altura = Math.round(Math.min(380, Math.max(220, largura * 0.6)));
  const m = {esq: 50, dir: 26, cima: 10, baixo: 42}, x1 = H.passo[H.passo.length - 1];
  const finitos = [...H.treino, ...v, d.bigrama].filter(Number.isFinite);
  const y0 = Math.floor(2 * Math.min(...finitos)) / 2, y1 = d.acaso + 0.2;
  const px = s => m.esq + s / x1 * (largura - m.esq - m.dir);
  const py = y => m.cima + (y1 - Math.min(y1, Math.max(y0, y))) / (y1 - y0) *
                  (altura - m.cima - m.baixo);
  const s = svg("svg", {viewBox: `0 0 ${largura} ${altura}`, width: largura, height: altura,
                        role: "img", "aria-label": "as perdas de treino e de validação por passo"});
  const eixos = svg("g", {stroke: "#e2e5e9"});
  const rotulos = svg("g", {fill: "#333", "font-size": largura < 480 ? 12 : 14});
  for (const x of marcas(x1)) {
    eixos.append(svg("line", {x1: px(x), x2: px(x), y1: m.cima, y2: altura - m.baixo}));
    rotulos.append(svg("text", {x: px(x), y: altura - m.baixo + 17, "text-anchor": "middle"},
                       inteiro(x)));
  }
  for (let y = Math.ceil(2 * y0) / 2; y <= y1 + 1e-9; y += 0.5) {
    eixos.append(svg("line", {x1: m.esq, x2: largura - m.dir, y1: py(y), y2: py(y)}));
    rotulos.append(svg("text", {x: m.esq - 6, y: py(y) + 4, "text-anchor": "end"}, num(y, 1)));
  }
  rotulos.append(svg("text", {x: (m.esq + largura - m.dir) / 2, y: altura - 6,
                              "text-anchor": "middle"}, "passo"));
  rotulos.append(svg("text", {x: 13, y: (m.cima + altura - m.baixo) / 2, "text-anchor": "middle",
                              transform: `rotate(-90 13 ${(m.cima + altura - m.baixo) / 2})`},
                     "perda (nats por caractere)"));
  s.append(eixos, rotulos);
  const linha = (pontos, atributos) => {
    const d_ = pontos.filter(([, y]) => Number.isFinite(y))
      .map(([x, y], i) => `${i ? "L" : "M"}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join("");
    s.append(svg("path", {d: d_, fill: "none", ...atributos}));
  };
  for (const [y, tracos, nome] of [[d.acaso, "2 3", "acaso"], [d.bigrama, "7 4", "bigrama"]])
    s.append(svg("line", {x1: m.esq, x2: largura - m.dir, y1: py(y), y2: py(y), stroke: "#888",
                          "stroke-width": 1.5, "stroke-dasharray": tracos, "data-linha": nome}));
  AMOSTRAS.forEach(([passo], k) => s.append(svg("line", {
    x1: px(passo), x2: px(passo), y1: m.cima, y2: altura - m.baixo,
    stroke: k === amostra ? "#1b1b1b" : "#c9ccd1", "stroke-width": k === amostra ? 1.5 : 1,
    "stroke-dasharray": "3 3", "data-marca": String(k)})));
  linha(H.lote.map((y, i) => [i + 1, y]), {stroke: "#0a58a8", "stroke-width": 1, opacity: 0.3});
  linha(H.passo.map((x, i) => [x, H.treino[i]]), {stroke: "#0a58a8", "stroke-width": 2.5});
  linha(H.passo.map((x, i) => [x, v[i]]), {stroke: "#c25400", "stroke-width": 2.5,
                                          "stroke-dasharray": "7 4"});
  H.passo.forEach((x, i) => {
    if (Number.isFinite(H.treino[i]))
      s.append(svg("circle", {cx: px(x), cy: py(H.treino[i]), r: 3.5, fill: "#0a58a8"}));
    if (Number.isFinite(v[i]))
      s.append(svg("rect", {x: px(x) - 3.5, y: py(v[i]) - 3.5, width: 7, height: 7,
                            fill: "#c25400"}));
  });
  caixa.replaceChildren(s);
  for (const b of document.querySelectorAll("#amostras .cartao"))
    b.setAttribute("aria-pressed", String(Number(b.dataset.k) === amostra));
  const passo = AMOSTRAS[amostra][0];
  H.passo.forEach((x, k) => $(`#linha-${k}`).classList.toggle("marcada", x === passo));
}
const PAGINA = {ler, campos, desenhar, preparar};
