// ---- onde cada token olha: os pesos de uma cabeça, calculados pela lição (DADOS.pesos)
// pesos[i][j], j <= i: quanto o token i (a consulta) olha para o token j (a chave); as
// chaves j > i estão no futuro, cortadas pela máscara causal (peso 0).
// (lab/html/atencao.js: o que as páginas da 03 e da 04 dividem; cada uma define
// pesos_da_cabeca(estado), ler, campos e preparar.)
const TOKENS = DADOS.tokens, T = TOKENS.length;
let consulta = T - 1;                   // o token apontado (mouse) ou focado (Tab)

function media(valores) { return valores.reduce((s, v) => s + v, 0) / valores.length; }
function notas(pesos) {                 // notas_de_padrao da lição 03: posições >= 1
  const i = Array.from({length: T - 1}, (_, n) => n + 1);
  return {"no token anterior": media(i.map(n => pesos[n][n - 1])),
          "no primeiro token": media(i.map(n => pesos[n][0])),
          "no próprio token": media(i.map(n => pesos[n][n]))};
}
function veredito(nt) {                 // a frase do experimento 6
  const maior = Object.keys(nt).reduce((a, b) => (nt[b] > nt[a] ? b : a));
  return nt[maior] > 0.5 ? `Esta cabeça põe mais da metade do peso ${maior}.`
    : "Esta cabeça espalha a atenção: nenhum dos três padrões passa de 0,5.";
}
const LAB = {notas, veredito};

function campos_da_consulta(pesos, i) {
  const c = {consulta: `${TOKENS[i]} (posição ${i})`};
  let melhor = 0;
  for (let j = 0; j < T; j++) {
    c[`peso.${j}`] = j <= i ? num(pesos[i][j], 2) : "futuro";
    if (j <= i && pesos[i][j] > pesos[i][melhor]) melhor = j;
  }
  c.maior = `o maior peso vai para ${TOKENS[melhor]} (posição ${melhor}): ` +
            `${num(pesos[i][melhor], 2)}`;
  return c;
}
function campos_das_notas(pesos) {
  const nt = notas(pesos), c = {};
  c["nota.anterior"] = num(nt["no token anterior"], 2);
  c["nota.primeiro"] = num(nt["no primeiro token"], 2);
  c["nota.proprio"] = num(nt["no próprio token"], 2);
  c.veredito = veredito(nt);
  return c;
}

// ---- os controles: o token apontado (mouse) ou focado (Tab) e o mapa
function preparar_tokens(atualizar) {
  const faixa = $("#tokens"), mapa = $("#mapa");
  mapa.style.setProperty("--T", String(T));
  TOKENS.forEach((texto, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "tok";
    b.dataset.i = String(i);
    const nome = document.createElement("span");
    nome.className = "nome";
    nome.textContent = texto;
    const peso = document.createElement("span");
    peso.className = "peso";
    peso.dataset.campo = `peso.${i}`;
    b.append(nome, peso);
    const escolher = () => { if (consulta !== i) { consulta = i; atualizar(); } };
    b.addEventListener("mouseenter", escolher);
    b.addEventListener("focus", escolher);
    b.addEventListener("click", escolher);
    faixa.append(b);
  });
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
    const celula = document.createElement("div");
    celula.className = j > i ? "celula futuro" : "celula";
    celula.dataset.linha = String(i);
    celula.dataset.coluna = String(j);
    celula.addEventListener("mouseenter", () => { if (consulta !== i) { consulta = i; atualizar(); } });
    mapa.append(celula);
  }
}
function cor(w) { return `rgba(10, 88, 168, ${Math.max(0, Math.min(1, w)).toFixed(3)})`; }
function desenhar_cabeca(estado) {
  const pesos = pesos_da_cabeca(estado), i = estado.i;
  for (const el of document.querySelectorAll("#mapa .celula")) {
    const a = Number(el.dataset.linha), b = Number(el.dataset.coluna);
    el.style.background = b <= a ? cor(pesos[a][b]) : "";
    el.classList.toggle("escolhida", a === i);
    el.title = b <= a ? `${TOKENS[a]} → ${TOKENS[b]}: ${num(pesos[a][b], 2)}`
                      : `${TOKENS[a]} → ${TOKENS[b]}: futuro (máscara)`;
  }
  for (const el of document.querySelectorAll("#tokens .tok")) {
    const j = Number(el.dataset.i);
    el.classList.toggle("consulta", j === i);
    el.classList.toggle("futuro", j > i);
    el.style.setProperty("--fundo", j <= i ? cor(pesos[i][j]) : "transparent");
    el.classList.toggle("escuro", j <= i && pesos[i][j] > 0.5);
  }
}
