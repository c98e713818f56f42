// ---- os números: contados pela lição (contar_componentes), a página só soma e formata
const CONTROLES = DADOS.controles, ANOS = DADOS.anos, GRUPOS = DADOS.grupos;
const DEPENDE = DADOS.depende, TAMANHOS = DADOS.tamanhos;
const CHAVES = CONTROLES.map(([chave]) => chave);
function contar(cfg, tamanho) {     // {componente: parâmetros, total}, como contar_componentes
  const tabela = TAMANHOS[tamanho].contagens, c = {};
  for (const g of GRUPOS) {
    const n = tabela[g][DEPENDE[g].map(k => cfg[k]).join("|")];
    if (n === undefined) throw new Error(`sem contagem de ${g} para ${JSON.stringify(cfg)}`);
    c[g] = n;
  }
  c.total = GRUPOS.reduce((soma, g) => soma + c[g], 0);
  return c;
}
function diferenca(x) {      // o menos das apostilas (\u2212), não o hífen
  return (x > 0 ? "+" : x < 0 ? "\u2212" : "") + inteiro(Math.abs(x));
}
function nome_da_configuracao(cfg) {
  const anos = Object.keys(ANOS).filter(a => CHAVES.every(k => ANOS[a][k] === cfg[k]));
  return anos.length ? `a de ${anos[0]}` : "personalizada";
}

// ---- o código do bloco: [controles de que a linha depende, texto]
function codigo(cfg) {
  const v = cfg.vieses === "sim" ? "True" : "False";
  const norma = cfg.normalizador === "layernorm" ? `nn.LayerNorm(d, eps=1e-5, bias=${v})`
                                                 : "nn.RMSNorm(d, eps=1e-5)";
  const kv = {mha: "h", gqa: "h // 4", mqa: "1"}[cfg.atencao];
  const mlp = cfg.mlp === "swiglu" ? `SwiGLU(d, largura_swiglu(d), vieses=${v})`
                                   : `MLPClassico(d, 4 * d, "${cfg.mlp}", vieses=${v})`;
  const rope = cfg.posicoes === "rope", rot = rope ? ", rot" : "";
  const linhas = [
    [[], "class Bloco(nn.Module):"],
    [[], "    def __init__(self, d, h):"],
    [[], "        super().__init__()"],
    [["normalizador"], {layernorm: "        # LayerNorm: centra e reescala",
                        rmsnorm: "        # RMSNorm: só reescala (só o ganho)",
                        }[cfg.normalizador]],
    [["normalizador", "vieses"], `        self.ln_1 = ${norma}`],
    [["atencao"], {mha: "        # MHA: um K/V por cabeça",
                   gqa: "        # GQA: um K/V a cada 4 cabeças",
                   mqa: "        # MQA: um K/V para todas as cabeças"}[cfg.atencao]],
    [["atencao", "vieses"], `        self.attn = Atencao(d, h, kv=${kv}, vieses=${v})`],
    [["normalizador", "vieses"], `        self.ln_2 = ${norma}`],
    [["mlp"], {relu: "        # ReLU: 2 matrizes, largura 4d",
               gelu: "        # GELU: 2 matrizes, largura 4d",
               swiglu: "        # SwiGLU: 3 matrizes com porta, largura int(8d/3)"}[cfg.mlp]],
    [["mlp", "vieses"], `        self.mlp = ${mlp}`],
    [[], ""],
    [["posicoes"], {senoidal: "    # posições senoidais (fixas): já somadas à entrada",
                    aprendida: "    # posições aprendidas: já somadas à entrada",
                    rope: "    # RoPE: rot gira Q e K dentro da atenção"}[cfg.posicoes]],
    [["posicoes"], `    def forward(self, x${rot}):`],
    ...(cfg.norma === "post" ? [
      [["norma"], "        # Post-LN: a norma depois da soma residual"],
      [["norma", "posicoes"], `        x = self.ln_1(x + self.attn(x${rot}))`],
      [["norma"], "        return self.ln_2(x + self.mlp(x))"]] : [
      [["norma"], "        # Pre-LN: a norma dentro do ramo; o fluxo residual fica limpo"],
      [["norma", "posicoes"], `        x = x + self.attn(self.ln_1(x)${rot})`],
      [["norma"], "        return x + self.mlp(self.ln_2(x))"]]),
  ];
  return linhas;
}

// ---- o que a página mostra
function campos(cfg) {
  const c = {nome: `Configuração: ${nome_da_configuracao(cfg)}.`};
  for (const chave of CHAVES)
    c[`mudou.${chave}`] = cfg[chave] === ANOS["2017"][chave] ? "" : "(mudou)";
  const kv = t => TAMANHOS[t].kv[cfg.atencao];
  c.kv = `Cabeças de K/V: ${kv("base")} das ${TAMANHOS.base.h} de consulta no tamanho base; ` +
         `${kv("big")} das ${TAMANHOS.big.h} no big.`;
  for (const tamanho of Object.keys(TAMANHOS)) {
    const t = TAMANHOS[tamanho];
    const antes = contar(ANOS["2017"], tamanho), agora = contar(cfg, tamanho);
    c[`${tamanho}.descricao`] = `d = ${inteiro(t.d)}, ${t.h} cabeças, FFN ${inteiro(t.ffn)}, ` +
      `${t.camadas} + ${t.camadas} blocos, vocabulário de ${inteiro(t.vocab)} compartilhado`;
    for (const g of [...GRUPOS, "total"]) {
      c[`${tamanho}.${g}.2017`] = inteiro(antes[g]);
      c[`${tamanho}.${g}`] = inteiro(agora[g]);
      c[`${tamanho}.${g}.dif`] = diferenca(agora[g] - antes[g]);
    }
    c[`${tamanho}.milhoes`] = `${num(agora.total / 1e6, 1)}M`;
  }
  c.codigo = codigo(cfg).map(([, linha]) => linha).join("\n");
  return c;
}
const LAB = {contar, codigo, nome_da_configuracao};

// ---- os controles
function ler() {
  const cfg = {};
  for (const chave of CHAVES)
    cfg[chave] = chave === "vieses" ? ($("#vieses").checked ? "sim" : "nao")
                                    : $(`input[name="${chave}"]:checked`).value;
  return cfg;
}
function elemento(tag, atributos = {}, texto = null) {
  const el = document.createElement(tag);
  for (const [nome, valor] of Object.entries(atributos)) el.setAttribute(nome, valor);
  if (texto !== null) el.textContent = texto;
  return el;
}
function aplicar(ano) {
  for (const chave of CHAVES) {
    if (chave === "vieses") $("#vieses").checked = ANOS[ano].vieses === "sim";
    else $(`input[name="${chave}"][value="${ANOS[ano][chave]}"]`).checked = true;
  }
}
function preparar(atualizar) {
  const caixa = $("#controles");
  CONTROLES.forEach(([chave, nome, opcoes], i) => {
    const grupo = elemento("fieldset", {id: `controle-${chave}`});
    const legenda = elemento("legend", {}, `${i + 1}. ${nome}`);
    legenda.append(elemento("span", {class: "marca", "data-campo": `mudou.${chave}`}));
    grupo.append(legenda);
    if (chave === "vieses") {          // "marque os vieses": uma caixa, marcada = sim
      const rotulo = elemento("label");
      rotulo.append(elemento("input", {type: "checkbox", id: "vieses"}),
                    " com vieses (nas camadas lineares e na norma)");
      grupo.append(rotulo);
    } else {
      for (const [valor, texto] of opcoes) {
        const rotulo = elemento("label");
        rotulo.append(elemento("input", {type: "radio", name: chave, value: valor}), " " + texto);
        grupo.append(rotulo);
      }
    }
    caixa.append(grupo);
  });
  for (const ano of Object.keys(ANOS)) {
    const botao = elemento("button", {type: "button", "data-ano": ano}, ano);
    botao.addEventListener("click", () => { aplicar(ano); atualizar(); });
    $("#anos").append(botao);
  }
  aplicar("2026");
  const nomes = {embeddings: "embeddings", "posições": "posições", "atenção": "atenção",
                 MLP: "MLP", normas: "normas"};
  for (const tamanho of Object.keys(TAMANHOS)) {
    const tabela = elemento("table", {class: "tabela-tamanho", id: `tabela-${tamanho}`});
    const titulo = elemento("caption", {}, `Tamanho ${tamanho} `);
    titulo.append(elemento("span", {"data-campo": `${tamanho}.descricao`}));
    tabela.append(titulo);
    const cabeca = elemento("thead"), linha = elemento("tr");
    for (const texto of ["componente", "2017", "escolhido", "diferença"])
      linha.append(elemento("th", {}, texto));
    cabeca.append(linha);
    const corpo = elemento("tbody");
    for (const g of [...GRUPOS, "total"]) {
      const tr = elemento("tr", g === "total" ? {class: "total"} : {});
      tr.append(elemento("td", {}, nomes[g] || g),
                elemento("td", {"data-campo": `${tamanho}.${g}.2017`}),
                elemento("td", {"data-campo": `${tamanho}.${g}`}),
                elemento("td", {"data-campo": `${tamanho}.${g}.dif`, class: "diferenca"}));
      corpo.append(tr);
    }
    tabela.append(cabeca, corpo);
    const rolagem = elemento("div", {class: "rolagem"});
    rolagem.append(tabela);
    $("#tabelas").append(rolagem);
  }
  const rotulos = Object.fromEntries(CONTROLES.map(([chave, nome]) => [chave, nome]));
  const lista = nomes => nomes.length < 2 ? nomes.join("")
    : nomes.slice(0, -1).join(", ") + " e " + nomes[nomes.length - 1];
  $("#depende").textContent = GRUPOS.map(g => DEPENDE[g].length
    ? `${g}, de ${lista(DEPENDE[g].map(k => rotulos[k]))}` : `${g}, de nenhum`).join("; ");
}
function desenhar(cfg) {              // marca o que mudou desde 2017
  const de2017 = codigo(ANOS["2017"]).map(([, linha]) => linha), linhas = codigo(cfg);
  $("#codigo code").replaceChildren(...linhas.map(([, linha], i) => {
    const s = elemento("span", {}, linha + (i < linhas.length - 1 ? "\n" : ""));
    s.className = [linha !== de2017[i] ? "mudou" : "",
                   linha.trim().startsWith("#") ? "comentario" : ""].join(" ").trim();
    return s;
  }));
  for (const chave of CHAVES)
    $(`#controle-${chave}`).classList.toggle("mudou", cfg[chave] !== ANOS["2017"][chave]);
  for (const b of $("#anos").children)
    b.setAttribute("aria-pressed", String(CHAVES.every(k => ANOS[b.dataset.ano][k] === cfg[k])));
}
const PAGINA = {ler, campos, desenhar, preparar};
