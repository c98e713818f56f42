// ---- a peça em JavaScript: as contas de lab/09_scaling.py, na mesma ordem
const R = DADOS.reajuste, K = DADOS.kaplan, MODELOS = DADOS.modelos;
function custo_treino(N, D) { return 6 * N * D; }
function custo_inferencia(N, tokens = 1.0) { return 2 * N * tokens; }
function tokens_de_empate(N1, D1, N2, D2) {
  return (custo_treino(N2, D2) - custo_treino(N1, D1)) /
         (custo_inferencia(N1) - custo_inferencia(N2));
}
function perda(N, D, a = R) { return a.E + a.A / N ** a.alfa + a.B / D ** a.beta; }
function otimo(C, a = R) {          // Ajuste.otimo: a fórmula fechada
  const x = a.beta / (a.alfa + a.beta);
  const G = (a.alfa * a.A / (a.beta * a.B)) ** (1 / (a.alfa + a.beta));
  const N = G * (C / 6) ** x;
  return [N, C / (6 * N)];
}
function otimo_kaplan(C) {
  const N = K.NE * (C / 2 / K.PF_DIA) ** K.EXPOENTE;
  return [N, C / (6 * N)];
}
function secao_aurea(f, a, b, tol = 1e-9) {
  const r = (Math.sqrt(5) - 1) / 2;
  let c = b - r * (b - a), d = a + r * (b - a), fc = f(c), fd = f(d);
  while (b - a > tol * Math.max(1.0, Math.abs(a))) {
    if (fc < fd) { b = d; d = c; fd = fc; c = b - r * (b - a); fc = f(c); }
    else { a = c; c = d; fc = fd; d = a + r * (b - a); fd = f(d); }
  }
  return (a + b) / 2;
}
function n_minimo(alvo, a = R) { return (a.A / (alvo - a.E)) ** (1 / a.alfa); }
function tokens_para_alvo(N, alvo, a = R) {
  const resto = alvo - a.E - a.A / N ** a.alfa;
  return resto > 0 ? (a.B / resto) ** (1 / a.beta) : Infinity;
}
function custo_total(N, alvo, Dinf, a = R) {
  return custo_treino(N, tokens_para_alvo(N, alvo, a)) + custo_inferencia(N, Dinf);
}
function otimo_com_inferencia(alvo, Dinf, a = R) {
  const ini = Math.log(n_minimo(alvo, a)) + 1e-12;
  const x = secao_aurea(x => Math.log(custo_total(Math.exp(x), alvo, Dinf, a)),
                        ini, Math.log(1e15), 1e-12);
  return [Math.exp(x), tokens_para_alvo(Math.exp(x), alvo, a)];
}
// os formatos da lição (razao, grande) e a frase do experimento 5 (resumo_inferencia)
function razao(x) {
  if (x >= 1e6) return cientifico(x);
  if (x >= 100) return inteiro(arredondar(x));
  return num(x, x >= 10 ? 1 : x >= 1 ? 2 : 3);
}
function grande(x) {
  if (x >= 1e15) return cientifico(x);
  for (const [teto, sufixo] of [[1e12, "T"], [1e9, "B"], [1e6, "M"]]) {
    if (x >= teto) {
      const v = x / teto;
      return num(v, v < 10 ? 2 : v < 100 ? 1 : 0) + sufixo;
    }
  }
  return inteiro(x);
}
function resumo_inferencia(alvo, Dinf) {
  const [N, D] = otimo_com_inferencia(alvo, Dinf), [nc] = otimo_com_inferencia(alvo, 0.0);
  const total = custo_total(N, alvo, Dinf), chin = custo_total(nc, alvo, Dinf);
  return `Com ${cientifico(Dinf)} tokens de inferência: N ótimo ${grande(N)}, treinado em ` +
         `${grande(D)} tokens (${razao(D / N)} por parâmetro); custo total ` +
         `${cientifico(total)} FLOPs. O ótimo do Chinchilla (${grande(nc)}) custaria ` +
         `${cientifico(chin)}: ${pct(chin / total - 1)} a mais.`;
}
// nos rótulos dos controles, a notação das marcas embaixo deles (10²³, não e23)
function potencia(x) {
  const [mantissa, expoente] = cientifico(x).split("e");
  return `${mantissa} × 10${Array.from(expoente, c => "⁰¹²³⁴⁵⁶⁷⁸⁹"["0123456789".indexOf(c)]
                                       || "⁻").join("")}`;
}
const LAB = {custo_treino, custo_inferencia, tokens_de_empate, perda, otimo, otimo_kaplan,
             n_minimo, tokens_para_alvo, custo_total, otimo_com_inferencia, razao, grande,
             resumo_inferencia, potencia};

// ---- o que a página mostra
function colunas(prefixo, N, D) {
  return {[prefixo + ".N"]: grande(N), [prefixo + ".D"]: grande(D),
          [prefixo + ".razao"]: razao(D / N)};
}
function campos({C, Dinf}) {
  const [nk, dk] = otimo_kaplan(C), [nc, dc] = otimo(C);
  const pk = perda(nk, dk), pc = perda(nc, dc);
  const c = {C: potencia(C), ...colunas("kaplan", nk, dk), "kaplan.perda": num(pk, 3),
             ...colunas("chinchilla", nc, dc), "chinchilla.perda": num(pc, 3)};
  c.comparacao = (nk >= nc
    ? `Kaplan pede um modelo ${num(nk / nc, 2)}x maior, treinado em ${num(dc / dk, 2)}x ` +
      "menos tokens. "
    : `Kaplan pede um modelo ${num(nc / nk, 2)}x menor, treinado em ${num(dk / dc, 2)}x ` +
      "mais tokens. ") +
    `Pela perda ajustada, a divisão de Kaplan chega a ${num(pk, 3)}; a do Chinchilla, a ` +
    `${num(pc, 3)}, a menor possível com este orçamento.`;
  // com a inferência: a mesma qualidade do ótimo do Chinchilla, pelo menor custo total
  const alvo = perda(nc, dc);
  c.alvo = num(alvo, 3);
  c.Dinf = potencia(Dinf);
  for (const [prefixo, volume] of [["so_treino", 0.0], ["inf", Dinf]]) {
    const [N, D] = otimo_com_inferencia(alvo, volume);
    Object.assign(c, colunas(prefixo, N, D));
    c[prefixo + ".treino"] = cientifico(custo_treino(N, D));
    c[prefixo + ".servir"] = cientifico(custo_inferencia(N, Dinf));
    c[prefixo + ".total"] = cientifico(custo_total(N, alvo, Dinf));
  }
  c.resumo = resumo_inferencia(alvo, Dinf);
  // a régua (experimento 2)
  MODELOS.forEach(([nome, ano, N, D], i) => {
    Object.assign(c, colunas(`regua.${i}`, N, D));
    c[`regua.${i}.C`] = cientifico(custo_treino(N, D));
    c[`regua.${i}.servir`] = cientifico(custo_inferencia(N));
    c[`regua.${i}.otimo`] = grande(otimo(custo_treino(N, D))[0]);
    c[`regua.${i}.vida`] = cientifico(custo_treino(N, D) + custo_inferencia(N, Dinf));
  });
  const [, , Nc, Dc] = MODELOS.find(m => m[0] === "Chinchilla");
  const [, , Nl, Dl] = MODELOS.find(m => m[0] === "Llama 3 8B");
  c.empate = cientifico(tokens_de_empate(Nc, Dc, Nl, Dl));
  const vc = custo_treino(Nc, Dc) + custo_inferencia(Nc, Dinf);
  const vl = custo_treino(Nl, Dl) + custo_inferencia(Nl, Dinf);
  c["vida.frase"] = `Com ${cientifico(Dinf)} tokens servidos, ` +
    (vl < vc ? `o Llama 3 8B custa ${cientifico(vl)} FLOPs e o Chinchilla, ${cientifico(vc)}.`
             : `o Chinchilla custa ${cientifico(vc)} FLOPs e o Llama 3 8B, ${cientifico(vl)}.`);
  return c;
}

// ---- os controles
let C_da_regua = null;      // um botão da régua fixa o C exato (6ND); o controle o solta
function ler() {
  return {C: C_da_regua !== null ? C_da_regua : 10 ** Number($("#orcamento").value),
          Dinf: 10 ** Number($("#volume").value), inferencia: $("#inferencia").checked};
}
function preparar(atualizar) {
  const caixa = $("#predefinidos"), corpo = $("#linhas-regua");
  MODELOS.forEach(([nome], i) => {
    const botao = document.createElement("button");
    botao.type = "button";
    botao.textContent = nome;
    botao.dataset.modelo = String(i);
    botao.setAttribute("aria-pressed", "false");
    botao.addEventListener("click", () => {
      const [, , N, D] = MODELOS[i];
      C_da_regua = custo_treino(N, D);
      $("#orcamento").value = String(Math.log10(C_da_regua));
      for (const b of caixa.children) b.setAttribute("aria-pressed", String(b === botao));
      atualizar();
    });
    caixa.append(botao);
    const linha = document.createElement("tr");
    const celula = document.createElement("td");
    celula.textContent = nome;
    linha.append(celula);
    for (const [coluna, rotulo] of [["N", "N"], ["D", "D"], ["razao", "D/N"],
                                    ["C", "C = 6ND"], ["servir", "2N/token"],
                                    ["otimo", "N ótimo"], ["vida", "vida útil"]]) {
      const td = document.createElement("td");
      td.dataset.campo = `regua.${i}.${coluna}`;
      td.dataset.rotulo = rotulo;
      if (coluna === "vida") td.className = "so-inferencia";
      linha.append(td);
    }
    corpo.append(linha);
  });
  $("#orcamento").addEventListener("input", () => {
    C_da_regua = null;
    for (const b of caixa.children) b.setAttribute("aria-pressed", "false");
  });
}

// ---- a figura: a perda ao longo da curva de iso-FLOP, N em escala log
function desenhar(estado) {
  document.body.classList.toggle("com-inferencia", estado.inferencia);
  $("#painel-inferencia").hidden = !estado.inferencia;
  const caixa = $("#grafico");
  const largura = Math.max(260, Math.floor(caixa.clientWidth));
  const altura = Math.round(Math.min(430, Math.max(250, largura * 0.62)));
  const m = {esq: 50, dir: 22, cima: 10, baixo: 46}, x0 = 7, x1 = 14, y0 = 1.8, y1 = 3.6;
  const px = lx => m.esq + (lx - x0) / (x1 - x0) * (largura - m.esq - m.dir);
  const py = L => m.cima + (y1 - L) / (y1 - y0) * (altura - m.cima - m.baixo);
  const s = svg("svg", {viewBox: `0 0 ${largura} ${altura}`, width: largura, height: altura,
                        role: "img", "aria-label": "curvas de iso-FLOP: perda prevista por N"});
  const recorte = svg("clipPath", {id: "recorte"});
  recorte.append(svg("rect", {x: m.esq, y: m.cima, width: largura - m.esq - m.dir,
                              height: altura - m.cima - m.baixo}));
  s.append(recorte);
  const eixos = svg("g", {stroke: "#e2e5e9"});
  const rotulos = svg("g", {fill: "#333", "font-size": largura < 480 ? 12 : 15});
  for (let e = x0; e <= x1; e++) {
    eixos.append(svg("line", {x1: px(e), x2: px(e), y1: m.cima, y2: altura - m.baixo}));
    const nome = `${10 ** (e % 3)}${["M", "B", "T"][Math.floor(e / 3) - 2]}`;
    rotulos.append(svg("text", {x: px(e), y: altura - m.baixo + 17, "text-anchor": "middle"},
                       nome));
  }
  for (let L = 2.0; L <= y1 + 1e-9; L += 0.5) {
    eixos.append(svg("line", {x1: m.esq, x2: largura - m.dir, y1: py(L), y2: py(L)}));
    rotulos.append(svg("text", {x: m.esq - 6, y: py(L) + 4, "text-anchor": "end"}, num(L, 1)));
  }
  rotulos.append(svg("text", {x: (m.esq + largura - m.dir) / 2, y: altura - 6,
                              "text-anchor": "middle"}, "parâmetros N (escala log)"));
  rotulos.append(svg("text", {x: 13, y: (m.cima + altura - m.baixo) / 2, "text-anchor": "middle",
                              transform: `rotate(-90 13 ${(m.cima + altura - m.baixo) / 2})`},
                     "perda prevista"));
  s.append(eixos, rotulos);
  const curvas = svg("g", {"clip-path": "url(#recorte)", fill: "none"});
  function curva(C, atributos) {
    let d = "";
    for (let lx = x0; lx <= x1 + 1e-9; lx += 0.02) {
      const N = 10 ** lx, D = C / (6 * N);
      if (D < 1e6) break;
      d += `${d ? "L" : "M"}${px(lx).toFixed(1)},${py(Math.min(perda(N, D), 9)).toFixed(1)}`;
    }
    curvas.append(svg("path", {d, ...atributos}));
  }
  for (let e = 19; e <= 26; e++) curva(10 ** e, {stroke: "#b9bec6", "stroke-width": 1.5});
  curva(estado.C, {stroke: "#0a58a8", "stroke-width": 3});
  const [nk, dk] = otimo_kaplan(estado.C), [nc, dc] = otimo(estado.C);
  const pontos = [];
  if (estado.inferencia) {
    const alvo = perda(nc, dc), [ni, di] = otimo_com_inferencia(alvo, estado.Dinf);
    curva(custo_treino(ni, di), {stroke: "#1b7f3a", "stroke-width": 2,
                                 "stroke-dasharray": "6 4"});
    curvas.append(svg("line", {x1: m.esq, x2: largura - m.dir, y1: py(alvo), y2: py(alvo),
                               stroke: "#1b7f3a", "stroke-width": 1, "stroke-dasharray": "2 3"}));
    pontos.push(["inferencia", ni, alvo,
                 `com a inferência: ${grande(ni)}, ${grande(di)} tokens, perda ${num(alvo, 3)}`]);
  }
  pontos.push(["kaplan", nk, perda(nk, dk),
               `Kaplan: ${grande(nk)}, ${grande(dk)} tokens, perda ${num(perda(nk, dk), 3)}`],
              ["chinchilla", nc, perda(nc, dc),
               `Chinchilla: ${grande(nc)}, ${grande(dc)} tokens, perda ${num(perda(nc, dc), 3)}`]);
  for (const [qual, N, L, texto] of pontos) {
    const x = px(Math.log10(N)), y = py(L), cor = {kaplan: "#c25400", chinchilla: "#0a58a8",
                                                   inferencia: "#1b7f3a"}[qual];
    const forma = qual === "kaplan" ? svg("rect", {x: x - 6, y: y - 6, width: 12, height: 12})
      : qual === "chinchilla" ? svg("circle", {cx: x, cy: y, r: 7})
      : svg("path", {d: `M${x},${y - 8}L${x + 8},${y + 6}L${x - 8},${y + 6}Z`});
    forma.setAttribute("fill", cor);
    forma.setAttribute("stroke", "#fff");
    forma.setAttribute("stroke-width", 1.5);
    forma.dataset.ponto = qual;
    forma.append(svg("title", {}, texto));
    curvas.append(forma);
  }
  s.append(curvas);
  caixa.replaceChildren(s);
}
const PAGINA = {ler, campos, desenhar, preparar};
