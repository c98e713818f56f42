// ---- a página da 04: qualquer cabeça (os pesos do experimento 4) e as notas de indução
// DADOS.pesos: float32, para cada camada e cabeça, o triângulo de baixo linha a linha
// (linha i: as chaves 0..i); DADOS.inducao[camada][cabeca]: a nota do experimento 5.
const L = DADOS.L, H = DADOS.h, INDUCAO = DADOS.inducao;
const _bytes = Uint8Array.from(atob(DADOS.pesos), c => c.charCodeAt(0));
const _vista = new DataView(_bytes.buffer), POR_CABECA = T * (T + 1) / 2;
const _cabecas = new Map();
function pesos_da_cabeca({camada, cabeca}) {      // [[w00], [w10, w11], ...]
  const chave = camada * H + cabeca;
  if (!_cabecas.has(chave)) {
    let k = chave * POR_CABECA;
    const linhas = [];
    for (let i = 0; i < T; i++) {
      const linha = [];
      for (let j = 0; j <= i; j++, k++) linha.push(_vista.getFloat32(4 * k, true));
      linhas.push(linha);
    }
    _cabecas.set(chave, linhas);
  }
  return _cabecas.get(chave);
}
function maiores_notas(quantas = 5) {            // as do experimento 5: "camada.cabeça"
  const todas = [];
  INDUCAO.forEach((linha, c) => linha.forEach((x, j) => todas.push([x, c, j])));
  todas.sort((a, b) => b[0] - a[0]);
  return todas.slice(0, quantas);
}
function campos(estado) {
  const pesos = pesos_da_cabeca(estado), {camada, cabeca} = estado;
  const fortes = INDUCAO.flat().filter(x => x > 0.4).length;
  return {...campos_da_consulta(pesos, estado.i), ...campos_das_notas(pesos),
          nome: `${camada}.${cabeca}`, "inducao.escolhida": num(INDUCAO[camada][cabeca], 2),
          "inducao.maiores": maiores_notas().map(([x, c, j]) => `${c}.${j}: ${num(x, 2)}`)
                               .join(" · "),
          "inducao.fortes": `Cabeças com nota > 0,4: ${fortes} de ${L * H}.`};
}

// ---- os controles: camada e cabeça (listas) ou um clique no mapa das notas
function ler() {
  return {camada: Number($("#camada").value), cabeca: Number($("#cabeca").value), i: consulta};
}
function preparar(atualizar) {
  $("#frase").textContent = DADOS.texto;
  $("#modelo").textContent = DADOS.modelo;
  $("#n").textContent = inteiro(DADOS.n);
  $("#semente").textContent = inteiro(DADOS.semente);
  for (const [id, quantos] of [["camada", L], ["cabeca", H]]) {
    const lista = $(`#${id}`);
    for (let v = 0; v < quantos; v++) {
      const op = document.createElement("option");
      op.value = op.textContent = String(v);
      lista.append(op);
    }
  }
  const [, c0, j0] = maiores_notas(1)[0];          // abre na cabeça de indução mais forte
  $("#camada").value = String(c0);
  $("#cabeca").value = String(j0);
  const grade = $("#grade");
  grade.style.setProperty("--H", String(H));
  grade.append(document.createElement("span"));
  for (let j = 0; j < H; j++) {
    const r = document.createElement("span");
    r.className = "rotulo";
    r.textContent = String(j);
    grade.append(r);
  }
  INDUCAO.forEach((linha, c) => {
    const r = document.createElement("span");
    r.className = "rotulo";
    r.textContent = String(c);
    grade.append(r);
    linha.forEach((x, j) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "nota";
      b.dataset.camada = String(c);
      b.dataset.cabeca = String(j);
      b.style.background = cor(x);
      b.setAttribute("aria-label", `cabeça ${c}.${j}: nota de indução ${num(x, 2)}`);
      b.title = `${c}.${j}: ${num(x, 2)}`;
      b.addEventListener("click", () => {
        $("#camada").value = String(c);
        $("#cabeca").value = String(j);
        atualizar();
      });
      grade.append(b);
    });
  });
  preparar_tokens(atualizar);
}
function desenhar(estado) {
  desenhar_cabeca(estado);
  for (const b of document.querySelectorAll("#grade .nota"))
    b.setAttribute("aria-pressed", String(Number(b.dataset.camada) === estado.camada &&
                                          Number(b.dataset.cabeca) === estado.cabeca));
}
const PAGINA = {ler, campos, desenhar, preparar};
