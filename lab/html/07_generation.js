// ---- a peça em JavaScript: o escolher() de lab/07_generation.py, sem o sorteio
// Os logits chegam em float32, os mesmos bits que o escolher() recebe. As contas seguem as do
// PyTorch: logits / T em float32 (T também vira float32); o top-k pelo valor do k-ésimo maior
// (quem empata com ele fica); o top-p ordena do menos ao mais provável e tira a cauda cuja
// massa acumulada (cada probabilidade em float32, a soma em double, como o cumsum do PyTorch)
// não passa de 1 - p (em float32). O softmax daqui é em double: as probabilidades diferem das
// do PyTorch no arredondamento do float32 (~1e-7). Entre logits EMPATADOS na fronteira do
// top-p, a página tira primeiro o de menor índice; o sort do PyTorch só garante essa ordem
// até 16 valores (acima disso, qual dos empatados sai é um detalhe do sort dele).
function decodificar(base64) {          // base64 de float32 little-endian -> Float32Array
  const bytes = Uint8Array.from(atob(base64), c => c.charCodeAt(0));
  const v = new DataView(bytes.buffer), z = new Float32Array(bytes.length / 4);
  for (let i = 0; i < z.length; i++) z[i] = v.getFloat32(4 * i, true);
  return z;
}
const f32 = Math.fround;

function ordem_crescente(x) {           // índices de x do menor ao maior; empate: menor índice
  const ordem = Int32Array.from(x, (_, i) => i);
  ordem.sort((a, b) => (x[a] - x[b]) || (a - b));
  return ordem;
}

function softmax(x) {                   // em double; -Infinity vira 0
  const n = x.length, e = new Float64Array(n);
  let m = -Infinity, s = 0;
  for (let i = 0; i < n; i++) if (x[i] > m) m = x[i];
  for (let i = 0; i < n; i++) { e[i] = Math.exp(x[i] - m); s += e[i]; }
  for (let i = 0; i < n; i++) e[i] /= s;
  return e;
}

function dividir(z, T) {                // logits.float() / T, em float32
  const t = f32(T), x = new Float64Array(z.length);
  for (let i = 0; i < z.length; i++) x[i] = f32(f32(z[i]) / t);
  return x;
}

// logits / T -> top-k -> top-p: {x: os logits filtrados (-Infinity = cortado), corte: para
// cada token, o índice em CORTES de quem o cortou (0: ficou)}. T = 0 é a gulosa: só o
// argmax fica. ordem_z (opcional): ordem_crescente(z), calculada uma vez, para a tela
// (dividir por T > 0 não inverte ninguém: a ordem de z serve para x).
const CORTES = ["", "top-k", "top-p", "gulosa"];
function filtrar(z, T, k, p, ordem_z = null) {
  const n = z.length, corte = new Uint8Array(n);
  if (T === 0) {
    const x = new Float64Array(n).fill(-Infinity);
    let melhor = 0;
    for (let i = 1; i < n; i++) if (z[i] > z[melhor]) melhor = i;
    corte.fill(3);
    corte[melhor] = 0;
    x[melhor] = z[melhor];
    return {x, corte};
  }
  const x = dividir(z, T);
  if (k > 0 && k < n) {                 // filtrar_top_k: o k-ésimo maior (com repetições)
    const limiar = ordem_z ? x[ordem_z[n - k]] : Float64Array.from(x).sort()[n - k];
    for (let i = 0; i < n; i++) if (x[i] < limiar) { x[i] = -Infinity; corte[i] = 1; }
  }
  if (p < 1) {                          // filtrar_top_p
    const ordem = ordem_z ? reordenar_empates(Int32Array.from(ordem_z), x) : ordem_crescente(x);
    const m = x[ordem[n - 1]], e = new Float64Array(n);
    let s = 0;
    for (let j = 0; j < n; j++) { e[j] = Math.exp(x[ordem[j]] - m); s += e[j]; }
    const teto = f32(1 - p);
    let acumulada = 0;
    for (let j = 0; j < n - 1; j++) {   // o último, o mais provável, fica sempre
      acumulada += f32(e[j] / s);
      if (f32(acumulada) > teto) break;
      const i = ordem[j];
      if (x[i] !== -Infinity) { x[i] = -Infinity; corte[i] = 2; }
    }
  }
  return {x, corte};
}

function reordenar_empates(ordem, x) {  // dentro de cada sequência de x iguais, por índice
  for (let a = 0; a < ordem.length;) {
    let b = a + 1;
    while (b < ordem.length && x[ordem[b]] === x[ordem[a]]) b++;
    if (b - a > 1 && x[ordem[a]] !== -Infinity) ordem.subarray(a, b).sort();
    a = b;
  }
  return ordem;
}

// o que o escolher() sortearia: as probabilidades sobre o vocabulário inteiro
function probabilidades(z, T, k, p, ordem_z = null) {
  const {x, corte} = filtrar(z, T, k, p, ordem_z);
  return {probs: softmax(x), corte, x};
}
const LAB = {decodificar, filtrar, probabilidades, softmax, ordem_crescente, dividir, CORTES};

// ---- o que a página mostra
const Z = decodificar(DADOS.logits), V = Z.length, MOSTRADOS = DADOS.mostrados;
const ORDEM_Z = ordem_crescente(Z);
const PARADAS = DADOS.paradas;
let _conta = null;                      // a última conta (campos e desenhar usam a mesma)
function contar(estado) {
  const chave = `${estado.T}|${estado.k}|${estado.p}`;
  if (!_conta || _conta.chave !== chave) {
    const {probs, corte} = probabilidades(Z, estado.T, estado.k, estado.p, ORDEM_Z);
    const antes = estado.T === 0 ? null : softmax(dividir(Z, estado.T));  // em T, sem corte
    // o que o top-p vê: depois da temperatura e do top-k, renormalizado
    const para_o_top_p = estado.T === 0 ? null
      : estado.k > 0 && estado.k < V ? probabilidades(Z, estado.T, estado.k, 1, ORDEM_Z).probs
      : antes;
    _conta = {chave, probs, corte, antes, para_o_top_p};
  }
  return _conta;
}
function nome_k(k) { return k === 0 ? "desligado" : k >= V ? `${inteiro(k)} (≥ V: não corta)`
                                                            : inteiro(k); }
function nome_p(p) { return p >= 1 ? "1 (desligado)" : num(p, 2); }
function campos(estado) {
  const {probs, corte, antes, para_o_top_p} = contar(estado);
  let ficam = 0, massa = 0, pk = 0, pp = 0;
  for (let i = 0; i < V; i++) {
    if (corte[i] === 0) { ficam++; if (antes) massa += antes[i]; }
    else if (corte[i] === 1) pk++;
    else if (corte[i] === 2) pp++;
  }
  const c = {T: num(estado.T, 2), k: nome_k(estado.k), p: nome_p(estado.p),
             ficam: inteiro(ficam), V: inteiro(V),
             cortados: estado.T === 0 ? "A gulosa: só o mais provável, sem sorteio."
               : `Cortados: ${inteiro(pk)} pelo top-k, ${inteiro(pp)} pelo top-p.`,
             massa: antes ? pct(massa) : "—"};
  let acumulada = 0;
  MOSTRADOS.forEach(([i], j) => {
    if (antes) acumulada += para_o_top_p[i];
    c[`p.${j}`] = pct(probs[i]);
    c[`antes.${j}`] = antes ? pct(antes[i]) : "—";
    c[`acum.${j}`] = antes ? pct(acumulada) : "—";
    c[`corte.${j}`] = CORTES[corte[i]];  // "", "top-k", "top-p" ou "gulosa": quem cortou
  });
  return c;
}

// ---- os controles: cada um desliza por uma lista de paradas (DADOS.paradas)
const CONTROLES = [["temperatura", "temperatura"], ["top_k", "top-k"], ["top_p", "top-p"]];
function valor(nome) { return PARADAS[nome][Number($(`#${nome}`).value)]; }
function ler() { return {T: valor("temperatura"), k: valor("top_k"), p: valor("top_p")}; }
function por(nome, v) {                 // põe o controle na parada de valor v
  const i = PARADAS[nome].indexOf(v);
  if (i < 0) throw new Error(`${nome} = ${v} não é uma parada do controle`);
  $(`#${nome}`).value = String(i);
}
const ATALHOS = [
  ["como a lição rodou", DADOS.inicio],
  ["sem corte (T = 1)", {temperatura: 1, top_k: 0, top_p: 1}],
  ["top-k 50", {temperatura: 1, top_k: 50, top_p: 1}],
  ["top-p 0,5", {temperatura: 1, top_k: 0, top_p: 0.5}],
  ["top-p 0,9", {temperatura: 1, top_k: 0, top_p: 0.9}],
  ["T = 0,5", {temperatura: 0.5, top_k: 0, top_p: 1}],
  ["T = 2", {temperatura: 2, top_k: 0, top_p: 1}]];
function preparar(atualizar) {
  $("#frase").textContent = DADOS.texto;
  $("#modelo").textContent = DADOS.modelo;
  $("#vocabulario").textContent = inteiro(V);
  $("#quantos").textContent = inteiro(MOSTRADOS.length);
  for (const [nome] of CONTROLES) {
    const el = $(`#${nome}`);
    el.max = String(PARADAS[nome].length - 1);
    por(nome, DADOS.inicio[nome]);
  }
  const caixa = $("#atalhos");
  ATALHOS.forEach(([rotulo, regras], i) => {
    if (regras.top_k >= V && regras !== DADOS.inicio) return;
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = rotulo;
    b.dataset.atalho = String(i);
    b.addEventListener("click", () => {
      for (const [nome] of CONTROLES) por(nome, regras[nome]);
      atualizar();
    });
    caixa.append(b);
  });
  const corpo = $("#linhas");
  MOSTRADOS.forEach(([, texto], j) => {
    const tr = document.createElement("tr");
    tr.id = `linha-${j}`;
    const nome = document.createElement("td");
    nome.className = "token";
    nome.textContent = texto;
    nome.title = texto;
    const barra = document.createElement("td");
    barra.className = "barra";
    barra.innerHTML = '<span class="antes"></span><span class="depois"></span>';
    tr.append(nome, barra);
    for (const campo of ["p", "antes", "acum", "corte"]) {
      const td = document.createElement("td");
      td.dataset.campo = `${campo}.${j}`;
      td.className = campo;
      tr.append(td);
    }
    corpo.append(tr);
  });
}
function desenhar(estado) {
  const {probs, corte, antes} = contar(estado);
  let topo = 0;
  for (const [i] of MOSTRADOS) topo = Math.max(topo, probs[i], antes ? antes[i] : 0);
  MOSTRADOS.forEach(([i], j) => {
    const tr = $(`#linha-${j}`);
    tr.classList.toggle("cortado", corte[i] !== 0);
    tr.querySelector(".depois").style.width = `${(100 * probs[i] / topo).toFixed(2)}%`;
    tr.querySelector(".antes").style.width = `${(100 * (antes ? antes[i] : 0) / topo).toFixed(2)}%`;
  });
  for (const [nome, rotulo] of CONTROLES) {
    const v = valor(nome);
    $(`#${nome}`).setAttribute("aria-valuetext", `${rotulo} ${nome === "temperatura" ? num(v, 2)
      : nome === "top_k" ? nome_k(v) : nome_p(v)}`);
  }
}
const PAGINA = {ler, campos, desenhar, preparar};
