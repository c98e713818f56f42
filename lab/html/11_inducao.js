// ---- a página da 11: a tabela do experimento 2 e os mapas do 3, em cada passo guardado
// DADOS.mapas: float32, para cada linha da tabela e cada cabeça nomeada (a de token anterior e
// a de indução), o triângulo de baixo dos pesos na sequência dos mapas, linha a linha.
const PASSOS = DADOS.passos, CABECAS = DADOS.cabecas, SEQ = DADOS.sequencia, N = SEQ.length;
const [X, Y, CAIU] = DADOS.transicao, POR_MAPA = N * (N + 1) / 2;
const _bytes = Uint8Array.from(atob(DADOS.mapas), c => c.charCodeAt(0));
const _vista = new DataView(_bytes.buffer);
function mapa(linha, k) {                 // [[w00], [w10, w11], ...] da cabeça k na linha
  let i = (linha * CABECAS.length + k) * POR_MAPA;
  const m = [];
  for (let a = 0; a < N; a++) {
    const r = [];
    for (let b = 0; b <= a; b++, i++) r.push(_vista.getFloat32(4 * i, true));
    m.push(r);
  }
  return m;
}
function nome([c, j]) { return `${c}.${j}`; }
function notas(linha) {                   // as notas das cabeças nomeadas nesta linha
  const [c0, j0] = CABECAS[0], n = [DADOS.anterior[linha][c0][j0]];
  if (CABECAS.length > 1) n.push(DADOS.inducao[linha][CABECAS[1][0]][CABECAS[1][1]]);
  return n;
}
function celulas(v) { return v.map(x => num(x, 2)).join("  "); }
function campos({linha}) {
  const s = PASSOS[linha], L = DADOS.anterior[linha].length;
  const c = {passo: inteiro(s), aleatoria: num(DADOS.aleatoria[linha], 2),
             repetida: num(DADOS.repetida[linha], 2),
             ant: celulas(DADOS.anterior[linha][0]), ind: celulas(DADOS.inducao[linha][L - 1])};
  notas(linha).forEach((x, k) => { c[`nota.${k}`] = num(x, 2); });
  if (X === null) {
    c.momento = "Sem transição de fase neste treino:";
    c.resumo = `a maior queda da parte repetida entre duas linhas da tabela foi de ` +
               `${num(CAIU, 2)} nats.`;
  } else {
    c.momento = s <= X ? "Antes da transição de fase." : "Depois da transição de fase.";
    c.resumo = `A maior queda da parte repetida entre duas linhas da tabela, ` +
               `${num(CAIU, 2)} nats, foi entre os passos ${inteiro(X)} e ${inteiro(Y)}.`;
  }
  return c;
}
const LAB = {mapa, notas};

// ---- os controles: o passo (deslizante ou teclas) e o botão de animar
function ler() { return {linha: Number($("#passo").value)}; }
let _relogio = null;
function preparar(atualizar) {
  const passo = $("#passo"), botao = $("#animar");
  passo.max = String(PASSOS.length - 1);
  passo.value = String(PASSOS.length - 1);             // abre no fim do treino
  $("#ultimo").textContent = inteiro(PASSOS[PASSOS.length - 1]);
  $("#V").textContent = inteiro(DADOS.V);
  $("#acaso").textContent = num(DADOS.acaso, 2);
  $("#n").textContent = inteiro(N);
  $("#periodo").textContent = inteiro(DADOS.periodo);
  $("#ultima").textContent = String(DADOS.anterior[0].length - 1);
  $("#cab-notas").textContent = "cabeças " + DADOS.anterior[0][0].map((_, j) => j).join(", ");
  for (const el of document.querySelectorAll(".p-1")) el.textContent = String(DADOS.periodo - 1);
  CABECAS.forEach((cab, k) => {
    for (const el of document.querySelectorAll(`.nome-${k}`)) el.textContent = nome(cab);
  });
  document.body.classList.toggle("com-inducao", CABECAS.length > 1);
  for (let k = 0; k < CABECAS.length; k++) {
    const caixa = $(`#mapa-${k}`);
    caixa.style.setProperty("--N", String(N));
    for (let a = 0; a < N; a++) for (let b = 0; b < N; b++) {
      const el = document.createElement("span");
      el.className = b > a ? "c futuro" : "c";
      // o alvo: o token anterior (k = 0); o que veio depois de cada ocorrência anterior do
      // token atual (a indução; a nota de indução conta só a mais recente, t - p + 1)
      if (b <= a && (k === 0 ? b === a - 1 : b >= 1 && SEQ[b - 1] === SEQ[a]))
        el.classList.add("alvo");
      caixa.append(el);
    }
  }
  botao.addEventListener("click", () => {
    if (_relogio) { clearInterval(_relogio); _relogio = null; }
    else {
      if (Number(passo.value) === PASSOS.length - 1) passo.value = "0";
      _relogio = setInterval(() => {
        if (Number(passo.value) >= PASSOS.length - 1) { clearInterval(_relogio); _relogio = null; }
        else passo.value = String(Number(passo.value) + 1);
        atualizar();
      }, 700);
    }
    atualizar();
  });
}
function cor(w) { return `rgba(10, 88, 168, ${Math.max(0, Math.min(1, w)).toFixed(3)})`; }

// ---- as figuras: as curvas até o passo, e os mapas
function grafico(caixa, series, y1, rotulo_y, linha, proporcao, extra) {
  const largura = Math.max(260, Math.floor(caixa.clientWidth));
  const altura = Math.round(Math.min(240, Math.max(130, largura * proporcao)));
  const m = {esq: 48, dir: 14, cima: 8, baixo: 40}, x1 = PASSOS[PASSOS.length - 1];
  const px = s => m.esq + s / x1 * (largura - m.esq - m.dir);
  const py = v => m.cima + (y1 - v) / y1 * (altura - m.cima - m.baixo);
  const s = svg("svg", {viewBox: `0 0 ${largura} ${altura}`, width: largura, height: altura,
                        role: "img", "aria-label": rotulo_y + " por passo"});
  const eixos = svg("g", {stroke: "#e2e5e9"}), rotulos = svg("g", {fill: "#333",
                                                                   "font-size": 13});
  for (let p = 0; p <= x1; p += 100) {
    eixos.append(svg("line", {x1: px(p), x2: px(p), y1: m.cima, y2: altura - m.baixo}));
    rotulos.append(svg("text", {x: px(p), y: altura - m.baixo + 16, "text-anchor": "middle"},
                       inteiro(p)));
  }
  const passo_y = y1 > 2 ? 1 : 0.5;
  for (let v = 0; v <= y1 + 1e-9; v += passo_y) {
    eixos.append(svg("line", {x1: m.esq, x2: largura - m.dir, y1: py(v), y2: py(v)}));
    rotulos.append(svg("text", {x: m.esq - 6, y: py(v) + 4, "text-anchor": "end"},
                       num(v, passo_y < 1 ? 1 : 0)));
  }
  rotulos.append(svg("text", {x: (m.esq + largura - m.dir) / 2, y: altura - 5,
                              "text-anchor": "middle"}, "passo"));
  rotulos.append(svg("text", {x: 12, y: (m.cima + altura - m.baixo) / 2, "text-anchor": "middle",
                              transform: `rotate(-90 12 ${(m.cima + altura - m.baixo) / 2})`},
                     rotulo_y));
  s.append(eixos);
  if (extra) extra(s, px, py, m, altura, largura);
  s.append(rotulos);
  for (const [valores, atributos] of series) {
    const d = valores.slice(0, linha + 1).map((v, i) =>
      `${i ? "L" : "M"}${px(PASSOS[i]).toFixed(1)},${py(v).toFixed(1)}`).join("");
    s.append(svg("path", {d, fill: "none", "stroke-width": 2.5, ...atributos}));
    s.append(svg("circle", {cx: px(PASSOS[linha]), cy: py(valores[linha]), r: 4.5,
                            fill: atributos.stroke}));
  }
  s.append(svg("line", {x1: px(PASSOS[linha]), x2: px(PASSOS[linha]), y1: m.cima,
                        y2: altura - m.baixo, stroke: "#1b1b1b", "stroke-width": 1,
                        "stroke-dasharray": "3 3"}));
  caixa.replaceChildren(s);
}
function desenhar({linha}) {
  const topo = Math.ceil(DADOS.acaso + 0.3);
  grafico($("#grafico"), [[DADOS.aleatoria, {stroke: "#0a58a8"}],
                          [DADOS.repetida, {stroke: "#c25400"}]], topo, "perda (nats)", linha,
          0.36, (s, px, py, m, altura, largura) => {
            if (X !== null && PASSOS[linha] >= Y)
              s.append(svg("rect", {x: px(X), y: m.cima, width: px(Y) - px(X),
                                    height: altura - m.cima - m.baixo, fill: "#f4a259",
                                    opacity: 0.3, "data-faixa": "transicao"}));
            s.append(svg("line", {x1: m.esq, x2: largura - m.dir, y1: py(DADOS.acaso),
                                  y2: py(DADOS.acaso), stroke: "#777", "stroke-width": 1.5,
                                  "stroke-dasharray": "2 3"}));
          });
  const serie_notas = PASSOS.map((_, i) => notas(i));
  grafico($("#grafico-notas"), CABECAS.map((_, k) => [serie_notas.map(n => n[k]),
    {stroke: k ? "#1b7f3a" : "#6b3fa0"}]), 1, "nota", linha, 0.24);
  CABECAS.forEach((_, k) => {
    const m = mapa(linha, k), cels = $(`#mapa-${k}`).children;
    for (let a = 0, i = 0; a < N; a++) for (let b = 0; b < N; b++, i++)
      if (b <= a) cels[i].style.background = cor(m[a][b]);
  });
  $("#passo").setAttribute("aria-valuetext", `passo ${inteiro(PASSOS[linha])}`);
  $("#animar").setAttribute("aria-pressed", String(_relogio !== null));
  $("#animar").textContent = _relogio !== null ? "❚❚ parar" : "▶ animar";
}
const PAGINA = {ler, campos, desenhar, preparar};
