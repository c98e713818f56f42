#!/usr/bin/env bash
# .venv-setup.sh — prepara o ambiente do laboratório no Linux e no macOS.
#
# Uso (na pasta do laboratório):
#     bash .venv-setup.sh          # cria .venv e instala requirements.txt
#     bash .venv-setup.sh --cpu    # Linux x86_64 sem placa NVIDIA: PyTorch só-CPU (download menor)
#     bash .venv-setup.sh --help
#
# Pode rodar quantas vezes quiser: reaproveita a .venv que já existe (e a recria se estiver
# quebrada). Depois, teste com:  .venv/bin/python lab/00_check.py
set -euo pipefail

URL_TORCH_CPU="https://download.pytorch.org/whl/cpu"

ajuda() {
    cat <<'FIM'
Uso: bash .venv-setup.sh [--cpu] [--help]

Prepara o ambiente do laboratório:
  1. procura um Python 3.10 ou mais novo (python3, python, python3.13 ... python3.10);
  2. cria a pasta .venv (ou reaproveita a que já existe; recria se estiver quebrada);
  3. instala os pacotes de requirements.txt com .venv/bin/python -m pip.

Opções:
  --cpu     Só para Linux x86_64 sem placa NVIDIA. Instala antes o PyTorch só-CPU, do
            índice oficial do PyTorch (https://download.pytorch.org/whl/cpu), e depois o
            resto de requirements.txt. Sem esta opção, o pip do Linux baixa a versão com
            CUDA, que ocupa vários GB a mais. No macOS e no Linux ARM a versão normal já é
            só-CPU: a opção é ignorada.
  --help    Mostra esta ajuda.

Sem rede? Atrás de um proxy? Defina o proxy antes de rodar, por exemplo:
  export HTTPS_PROXY=http://usuario:senha@proxy.exemplo:8080

Depois de instalar, rode:  .venv/bin/python lab/00_check.py
FIM
}

falhar() {
    printf '\nERRO: %s\n' "$1" >&2
    shift
    local linha
    for linha in "$@"; do
        printf '  %s\n' "$linha" >&2
    done
    exit 1
}

passo() {
    printf '\n==> %s\n' "$*"
}

# ---------------------------------------------------------------- opções
CPU=0
for arg in "$@"; do
    case "$arg" in
        --cpu) CPU=1 ;;
        -h|--help|--ajuda) ajuda; exit 0 ;;
        *)
            printf 'Opção desconhecida: %s\n\n' "$arg" >&2
            ajuda >&2
            exit 2
            ;;
    esac
done

# Tudo acontece na pasta deste script (a raiz do laboratório), de onde quer que ele seja chamado.
cd "$(dirname -- "${BASH_SOURCE[0]}")"

[ -f requirements.txt ] || falhar "não encontrei requirements.txt em $(pwd)." \
    "Rode este script da pasta do laboratório (a que tem README.md e requirements.txt)."

# ---------------------------------------------------------------- 1. Python
# Imprime "3 11 64" (versão e bits) ou nada, se o comando não for um Python utilizável.
versao_de() {
    "$1" -c 'import struct, sys; print(sys.version_info[0], sys.version_info[1], struct.calcsize("P") * 8)' \
        2>/dev/null </dev/null || true
}

passo "Procurando Python 3.10 ou mais novo"
PY=""
ANTIGOS=()
for cand in python3 python python3.13 python3.12 python3.11 python3.10; do
    command -v "$cand" >/dev/null 2>&1 || continue
    read -r maior menor bits <<<"$(versao_de "$cand")" || true
    [ -n "${maior:-}" ] || continue
    if [ "$maior" -eq 3 ] && [ "$menor" -ge 10 ] || [ "$maior" -gt 3 ]; then
        if [ "$bits" != 64 ]; then
            ANTIGOS+=("$cand ($maior.$menor, $bits bits: o PyTorch exige 64 bits)")
            continue
        fi
        PY="$(command -v "$cand")"
        break
    fi
    ANTIGOS+=("$cand ($maior.$menor)")
done

if [ -z "$PY" ]; then
    encontrados="nenhum Python encontrado"
    if [ "${#ANTIGOS[@]}" -gt 0 ]; then
        encontrados="$(printf '%s; ' "${ANTIGOS[@]}")"
        encontrados="encontrei só: ${encontrados%; }"
    fi
    falhar "este laboratório precisa de Python 3.10 ou mais novo ($encontrados)." \
        "Instale um Python recente:" \
        "  - Linux (Debian/Ubuntu): sudo apt install python3 python3-venv" \
        "  - macOS: o instalador de https://www.python.org/downloads/ (ou: brew install python)" \
        "  - qualquer sistema: https://www.python.org/downloads/" \
        "Depois rode de novo:  bash .venv-setup.sh"
fi
echo "Usando $PY (Python $maior.$menor)."

# ---------------------------------------------------------------- 2. .venv
VPY=".venv/bin/python"

venv_ok() {
    [ -x "$VPY" ] && "$VPY" -c 'import sys, pip; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
        >/dev/null 2>&1 </dev/null
}

NOVA=0
if venv_ok; then
    passo "Reaproveitando a .venv que já existe"
else
    if [ -e .venv ]; then
        passo "A pasta .venv existe mas está quebrada (sem Python ou sem pip que funcionem): vou recriá-la"
        rm -rf .venv || falhar "não consegui apagar a pasta .venv." \
            "Feche programas que a estejam usando e rode de novo, ou apague a pasta à mão."
    else
        passo "Criando a .venv"
    fi
    if ! "$PY" -m venv .venv; then
        rm -rf .venv
        falhar "não consegui criar a .venv com $PY -m venv." \
            "No Debian/Ubuntu falta, em geral, o pacote venv:" \
            "  sudo apt install python3-venv      (ou python3.$menor-venv)" \
            "Depois rode de novo:  bash .venv-setup.sh"
    fi
    venv_ok || falhar "a .venv foi criada mas o pip dela não funciona." \
        "No Debian/Ubuntu: sudo apt install python3-venv  e rode de novo."
    NOVA=1
fi

# ---------------------------------------------------------------- 3. pacotes
espaco_livre() {
    df -Ph . 2>/dev/null | awk 'NR == 2 { print $4 }'
}

falha_pip() {
    local msg="$1"
    shift
    falhar "$msg" \
        "Leia a mensagem do pip acima. As causas mais comuns:" \
        "  - sem internet, ou atrás de um proxy: defina o proxy e rode de novo, por exemplo" \
        "      export HTTPS_PROXY=http://usuario:senha@proxy.exemplo:8080" \
        "  - disco cheio: a .venv precisa de ~1,5 GB (livre agora: $(espaco_livre || echo '?'))." \
        "Depois rode de novo:  bash .venv-setup.sh $*"
}

PIP=("$VPY" -m pip --disable-pip-version-check)

if [ "$NOVA" -eq 1 ]; then
    passo "Atualizando o pip"
    "${PIP[@]}" install --quiet --upgrade pip || falha_pip "não consegui atualizar o pip." "$@"
fi

if [ "$CPU" -eq 1 ]; then
    if [ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ]; then
        TORCH="$(grep -E '^[[:space:]]*torch[[:space:]]*==' requirements.txt | head -n 1 | tr -d '[:space:]' || true)"
        TORCH="${TORCH%%#*}"
        [ -n "$TORCH" ] || TORCH="torch==2.13.0"
        ATUAL="$("$VPY" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true)"
        if [ "$ATUAL" = "${TORCH#torch==}+cpu" ]; then
            passo "O PyTorch só-CPU ($ATUAL) já está instalado"
        elif [ -n "$ATUAL" ] && [ "${ATUAL%+cpu}" = "$ATUAL" ]; then
            passo "Esta .venv já tem o PyTorch $ATUAL (com CUDA)"
            echo "Para trocá-lo pela versão só-CPU, apague a pasta .venv e rode de novo:"
            echo "    rm -rf .venv && bash .venv-setup.sh --cpu"
        else
            passo "Instalando o PyTorch só-CPU ($TORCH) de $URL_TORCH_CPU"
            "${PIP[@]}" install "$TORCH" --index-url "$URL_TORCH_CPU" \
                || falha_pip "não consegui instalar o PyTorch só-CPU." "$@"
        fi
    else
        echo "(--cpu ignorado: em $(uname -s) $(uname -m) o PyTorch normal já é só-CPU.)"
    fi
fi

# Cópia de requirements.txt guardada depois de uma instalação completa: se não mudou, basta
# conferir os pacotes em silêncio (rápido e sem rede).
MARCA=".venv/requirements-instalado.txt"
if cmp -s requirements.txt "$MARCA"; then
    passo "Conferindo os pacotes de requirements.txt (já instalados)"
    "${PIP[@]}" install --quiet -r requirements.txt || falha_pip "a conferência dos pacotes falhou." "$@"
else
    passo "Instalando os pacotes de requirements.txt (na primeira vez demora: o PyTorch é grande)"
    "${PIP[@]}" install -r requirements.txt || falha_pip "a instalação dos pacotes falhou." "$@"
    cp requirements.txt "$MARCA"
fi

printf '\nPronto: o ambiente está em .venv.\n'
printf 'Próximo passo (com internet, para baixar o GPT-2 uma vez):\n\n'
printf '    .venv/bin/python lab/00_check.py\n\n'
