// ---- o placar de lab/14_corrida.py: as mesmas regras (posicoes, marcas, tokens_por_parametro)
const E = DADOS.entradas;
function posicoes(medias) {       // 1 + quantas ficaram pelo menos DADOS.empate abaixo
  const validas = medias.filter(m => m !== null);
  return medias.map(m => m === null ? null : 1 + validas.filter(o => o <= m - DADOS.empate).length);
}
function marcas(pos) {            // '1', '1=' (empatado com outro), '-' (divergiu)
  return pos.map(p => p === null ? "-" : `${p}${pos.filter(q => q === p).length > 1 ? "=" : ""}`);
}
function nota(x, casas = 3) { return x === null ? "divergiu" : num(x, casas); }
function tokens_por_parametro(e) { return e.tokens / e.parametros; }
const EIXOS = {
  parametros: {rotulo: "parâmetros N (escala log)", valor: e => e.parametros,
               texto: e => `${inteiro(e.parametros)} parâmetros`},
  passos: {rotulo: "passos de treino (escala log)", valor: e => e.passos,
           texto: e => `${inteiro(e.passos)} passos`},
  tokens_por_parametro: {rotulo: "tokens de treino por parâmetro (escala log)",
                         valor: tokens_por_parametro,
                         texto: e => `${num(tokens_por_parametro(e), 1)} tokens por parâmetro`},
};
function campos({eixo}) {
  const turma = E.filter(e => !e.base).length;
  const pos = marcas(posicoes(E.map(e => e.media)));
  const c = {descricao: `O placar dos registros em ${DADOS.pasta}: ${turma} ${turma === 1 ? "inscrição" :
    "inscrições"} e a linha de base, no orçamento de ${inteiro(DADOS.orcamento)} FLOPs` +
    (DADOS.oficial ? "" : " (ORÇAMENTO DE TESTE: fora da corrida)") + ". Nota: bits por " +
    "caractere na validação, a média das sementes 0, 1 e 2 (menos é melhor). As contas são " +
    "as de lab/14_corrida.py (leia junto: apostilas/14_corrida.md).",
    legenda: `= : empate, a menos de ${num(DADOS.empate, 2)} bits (o ruído da média de três ` +
      "sementes). Tokens por parâmetro: o Chinchilla usou cerca de 20.",
    fora: DADOS.fora.map(([arquivo, motivo]) => `Fora do placar: ${arquivo}: ${motivo}`)
      .join(" ")};
  E.forEach((e, k) => {
    c[`linha.${k}.pos`] = pos[k];
    c[`linha.${k}.nome`] = e.nome;
    c[`linha.${k}.media`] = nota(e.media);
    c[`linha.${k}.sementes`] = e.sementes.map(x => nota(x)).join(" ");
    c[`linha.${k}.parametros`] = inteiro(e.parametros);
    c[`linha.${k}.tokens`] = num(tokens_por_parametro(e), 1);
    c[`linha.${k}.modelo`] = e.modelo;
  });
  const primeiro = E.find(e => e.media !== null), base = E.find(e => e.base), x = EIXOS[eixo];
  c.frase = !primeiro ? "Nenhuma inscrição terminou o treino." :
    `O primeiro, ${primeiro.nome}: ${x.texto(primeiro)}` +
    (base && base !== primeiro ? `; a linha de base: ${x.texto(base)}.` : ".");
  return c;
}

// ---- o controle e o desenho
function ler() { return {eixo: $("#eixo").value}; }
function preparar() {
  E.forEach((e, k) => {
    const tr = document.createElement("tr");
    if (e.base) tr.className = "base";
    for (const [coluna, rotulo] of [["pos", "posição"], ["nome", ""], ["media", "média"],
                                    ["sementes", "sementes 0, 1, 2"], ["parametros", "parâmetros"],
                                    ["tokens", "tokens por parâmetro"], ["modelo", ""]]) {
      const td = document.createElement("td");
      td.dataset.campo = `linha.${k}.${coluna}`;
      td.dataset.rotulo = rotulo;
      tr.append(td);
    }
    $("#linhas").append(tr);
  });
}
function desenhar({eixo}) {
  const caixa = $("#grafico"), x = EIXOS[eixo], pontos = E.filter(e => e.media !== null);
  const largura = Math.max(260, Math.floor(caixa.clientWidth));
  const altura = Math.round(Math.min(380, Math.max(220, largura * 0.6)));
  const m = {esq: 50, dir: 20, cima: 12, baixo: 44};
  const xs = pontos.map(e => Math.log10(x.valor(e))), ys = pontos.map(e => e.media);
  const x0 = pontos.length ? Math.floor(Math.min(...xs) - 0.15) : 0;     // décadas inteiras
  const x1 = pontos.length ? Math.ceil(Math.max(...xs) + 0.15) : 1;
  const y0 = pontos.length ? Math.floor(2 * Math.min(...ys) - 0.2) / 2 : 0;  // meios bits
  const y1 = pontos.length ? Math.ceil(2 * Math.max(...ys) + 0.2) / 2 : 1;
  const px = v => m.esq + (v - x0) / (x1 - x0) * (largura - m.esq - m.dir);
  const py = v => m.cima + (y1 - v) / (y1 - y0) * (altura - m.cima - m.baixo);
  const s = svg("svg", {viewBox: `0 0 ${largura} ${altura}`, width: largura, height: altura,
                        role: "img", "aria-label": `a nota de cada inscrição contra ${x.rotulo}`});
  const eixos = svg("g", {stroke: "#e2e5e9"});
  const rotulos = svg("g", {fill: "#333", "font-size": largura < 480 ? 12 : 14});
  for (let e = x0; e <= x1; e++) {
    eixos.append(svg("line", {x1: px(e), x2: px(e), y1: m.cima, y2: altura - m.baixo}));
    rotulos.append(svg("text", {x: px(e), y: altura - m.baixo + 17,     // o último não vaza
                                "text-anchor": e === x1 ? "end" : "middle"}, inteiro(10 ** e)));
  }
  for (let v = y0; v <= y1 + 1e-9; v += 0.5) {
    eixos.append(svg("line", {x1: m.esq, x2: largura - m.dir, y1: py(v), y2: py(v)}));
    rotulos.append(svg("text", {x: m.esq - 6, y: py(v) + 4, "text-anchor": "end"}, num(v, 1)));
  }
  rotulos.append(svg("text", {x: (m.esq + largura - m.dir) / 2, y: altura - 6,
                              "text-anchor": "middle"}, x.rotulo));
  rotulos.append(svg("text", {x: 13, y: (m.cima + altura - m.baixo) / 2, "text-anchor": "middle",
                              transform: `rotate(-90 13 ${(m.cima + altura - m.baixo) / 2})`},
                     "bits por caractere"));
  s.append(eixos, rotulos);
  pontos.forEach((e, k) => {
    const cx = px(xs[k]), cy = py(ys[k]);
    const forma = e.base ? svg("rect", {x: cx - 6, y: cy - 6, width: 12, height: 12, fill: "#c25400"})
                         : svg("circle", {cx, cy, r: 6, fill: "#0a58a8"});
    forma.setAttribute("stroke", "#fff");
    forma.setAttribute("stroke-width", 1.5);
    forma.dataset.ponto = e.nome;
    forma.append(svg("title", {}, `${e.nome}: ${nota(e.media)} bits por caractere, ${x.texto(e)}`));
    s.append(forma);
  });
  caixa.replaceChildren(s);
}
const PAGINA = {ler, campos, desenhar, preparar};
