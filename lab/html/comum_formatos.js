function _exato(x) {            // |x| finito = BigInt(dígitos) / 10^casas, exatamente
  const v = new DataView(new ArrayBuffer(8));
  v.setFloat64(0, Math.abs(x));
  const alto = v.getUint32(0), expoente = (alto >>> 20) & 0x7ff;
  let m = (BigInt(alto & 0xfffff) << 32n) | BigInt(v.getUint32(4)), e = -1074;
  if (expoente) { m |= 1n << 52n; e = expoente - 1075; }
  return e >= 0 ? [m << BigInt(e), 0] : [m * 5n ** BigInt(-e), -e];
}
function _par(d, k) {           // d / 10^k arredondado ao inteiro, metade para o par
  if (k <= 0) return d * 10n ** BigInt(-k);
  const divisor = 10n ** BigInt(k), q = d / divisor, dobro = 2n * (d % divisor);
  return q + (dobro > divisor || (dobro === divisor && q % 2n === 1n) ? 1n : 0n);
}
function _fixo(x, casas) {      // f"{x:.{casas}f}" do Python: [sinal, inteira, decimais]
  const [d, k] = _exato(x);
  const s = _par(d, k - casas).toString().padStart(casas + 1, "0");
  const sinal = x < 0 || Object.is(x, -0) ? "-" : "";
  return [sinal, s.slice(0, s.length - casas), s.slice(s.length - casas)];
}
function _milhar(inteira) { return inteira.replace(/\B(?=(\d{3})+(?!\d))/g, "."); }
function num(x, casas = 2) {    // 0.8413 -> '0,8413'; 1234.5 -> '1.234,50'; nunca '-0,00'
  if (x === null || x === undefined || Number.isNaN(x)) return "\u2014";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  let [sinal, inteira, decimais] = _fixo(x, casas);
  if (/^0*$/.test(inteira + decimais)) sinal = "";
  return sinal + _milhar(inteira) + (casas ? "," + decimais : "");
}
function inteiro(n) {           // 124439808 -> '124.439.808' (int() do Python: trunca)
  const s = BigInt(Math.trunc(n)).toString();
  return s[0] === "-" ? "-" + _milhar(s.slice(1)) : _milhar(s);
}
function arredondar(x) {        // round(x) do Python: metade para o par
  const [sinal, inteira] = _fixo(x, 0);
  return Number(sinal + inteira);
}
function cientifico(x, casas = 2) {   // 0.000473 -> '4,73e-4'
  if (x === 0) return "0";
  const [d, k] = _exato(x), digitos = d.toString();
  let expoente = digitos.length - 1 - k;
  let s = _par(d, digitos.length - 1 - casas).toString();
  if (s.length > casas + 1) { s = s.slice(0, casas + 1); expoente += 1; }  // 9,999 -> 10,0
  const mantissa = s[0] + (casas ? "," + s.slice(1) : "");
  return (x < 0 ? "-" : "") + mantissa + "e" + expoente;
}
function pct(x, casas = 1) { return num(100 * x, casas) + " %"; }   // 0.666 -> '66,6 %'
