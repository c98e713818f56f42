// ---- a página da 05: a logit lens do experimento 4 (DADOS.frases), calculada pela lição
// frase.top[camada][posição] = [[id, probabilidade], ...]: os 5 próximos tokens mais
// prováveis lidos depois daquela camada (0: o embedding; a última: a saída do modelo).
const FRASES = DADOS.frases, NOMES = DADOS.tokens, TOP = FRASES[0].top[0][0].length;
let frase = 0, celula = null;          // a frase escolhida; a célula apontada [camada, t]
function nome(id) { return NOMES[String(id)]; }
function camadas(f) { return FRASES[f].top.length; }          // L + 1
function onde(f, c, t) {                // "depois do bloco 6, posição 9 (·of)"
  const L = camadas(f) - 1, entrada = nome(FRASES[f].entrada[t]);
  const lido = c === 0 ? "no embedding" : c === L ? `na saída do modelo (bloco ${c})`
                                                  : `depois do bloco ${c}`;
  return `Lido ${lido}, na posição ${t} (${entrada}):`;
}
function campos({frase: f, camada, t}) {
  const {texto, top, final} = FRASES[f], L = top.length - 1, T = top[0].length;
  const c = {frase: texto, celula: onde(f, camada, t),
             aposta: `Depois de "${texto}" o modelo aposta em "${final}" ` +
                     `(${pct(top[L][T - 1][0][1])}).`};
  top.forEach((linha, k) => linha.forEach(([[id, p]], j) => {
    c[`c.${k}.${j}`] = nome(id);
    c[`p.${k}.${j}`] = num(100 * p, 0);           // em %, sem o símbolo: cabe na célula
  }));
  top[camada][t].forEach(([id, p], r) => {
    c[`top.${r}.token`] = nome(id);
    c[`top.${r}.p`] = pct(p);
  });
  return c;
}
const LAB = {onde};

// ---- os controles: a frase (botões) e a célula apontada (mouse) ou focada (Tab)
function ler() {
  const [camada, t] = celula || [camadas(frase) - 1, FRASES[frase].top[0].length - 1];
  return {frase, camada, t};
}
function elemento(tag, atributos = {}, texto = null) {
  const el = document.createElement(tag);
  for (const [n, v] of Object.entries(atributos)) el.setAttribute(n, v);
  if (texto !== null) el.textContent = texto;
  return el;
}
function montar_grade(atualizar) {      // a grade da frase escolhida (T colunas, L + 1 linhas)
  const {top, entrada} = FRASES[frase], L = top.length - 1, grade = $("#grade");
  grade.replaceChildren();
  grade.style.setProperty("--T", String(entrada.length));
  grade.append(elemento("span", {class: "canto"}, "camada"));
  entrada.forEach((id, t) => grade.append(elemento("span", {class: "entrada",
                                                            title: `posição ${t}`}, nome(id))));
  top.forEach((linha, c) => {
    const final = c === L ? " final" : "";
    grade.append(elemento("span", {class: "rotulo" + final}, c === 0 ? "emb"
                                                      : c === L ? `${c} = saída` : String(c)));
    linha.forEach((_, t) => {
      const b = elemento("button", {type: "button", class: "celula" + final,
                                    "data-camada": String(c), "data-t": String(t)});
      b.append(elemento("span", {class: "tok", "data-campo": `c.${c}.${t}`}),
               elemento("span", {class: "prob", "data-campo": `p.${c}.${t}`}));
      const escolher = () => {
        if (!celula || celula[0] !== c || celula[1] !== t) { celula = [c, t]; atualizar(); }
      };
      b.addEventListener("mouseenter", escolher);
      b.addEventListener("focus", escolher);
      b.addEventListener("click", escolher);
      grade.append(b);
    });
  });
}
function preparar(atualizar) {
  $("#modelo").textContent = DADOS.modelo;
  const corpo = $("#linhas-top");
  for (let r = 0; r < TOP; r++) {
    const tr = elemento("tr", {id: `top-${r}`});
    tr.append(elemento("td", {}, String(r + 1)),
              elemento("td", {class: "token", "data-campo": `top.${r}.token`}),
              elemento("td", {class: "barra"}),
              elemento("td", {"data-campo": `top.${r}.p`}));
    tr.children[2].append(elemento("span"));
    corpo.append(tr);
  }
  FRASES.forEach(({texto}, f) => {
    const b = elemento("button", {type: "button", "data-frase": String(f)}, `“${texto}”`);
    b.addEventListener("click", () => {
      if (frase === f) return;
      frase = f;
      celula = null;
      montar_grade(atualizar);
      atualizar();
    });
    $("#frases").append(b);
  });
  montar_grade(atualizar);
}
function cor(p) { return `rgba(10, 88, 168, ${Math.max(0, Math.min(1, p)).toFixed(3)})`; }
function desenhar(estado) {
  const {top} = FRASES[estado.frase];
  for (const el of document.querySelectorAll("#grade .celula")) {
    const c = Number(el.dataset.camada), t = Number(el.dataset.t), [id, p] = top[c][t][0];
    el.style.background = cor(p);
    el.classList.toggle("escuro", p > 0.5);
    el.classList.toggle("escolhida", c === estado.camada && t === estado.t);
    el.setAttribute("aria-label", `${onde(estado.frase, c, t)} ${nome(id)}, ${pct(p, 0)}`);
  }
  const linhas = top[estado.camada][estado.t];
  linhas.forEach(([, p], r) => {
    $(`#top-${r} .barra span`).style.width = `${(100 * p).toFixed(2)}%`;
  });
  for (const b of $("#frases").children)
    b.setAttribute("aria-pressed", String(Number(b.dataset.frase) === estado.frase));
}
const PAGINA = {ler, campos, desenhar, preparar};
