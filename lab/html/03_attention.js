// ---- a página da 03: uma cabeça só, a do experimento 6 (DADOS.pesos)
function pesos_da_cabeca() { return DADOS.pesos; }
function ler() { return {i: consulta}; }
function campos(estado) {
  const pesos = pesos_da_cabeca(estado);
  return {...campos_da_consulta(pesos, estado.i), ...campos_das_notas(pesos)};
}
function preparar(atualizar) {
  $("#frase").textContent = DADOS.frase;
  $("#modelo").textContent = DADOS.modelo;
  for (const el of document.querySelectorAll(".qual-cabeca"))
    el.textContent = `${DADOS.camada}.${DADOS.cabeca}`;
  preparar_tokens(atualizar);
}
const PAGINA = {ler, campos, desenhar: desenhar_cabeca, preparar};
