#!/usr/bin/env bash
# .venv-setup.sh — prepara o ambiente do laboratório no Linux e no macOS.
#
# Uso (na pasta do laboratório):
#     bash .venv-setup.sh          # cria .venv e instala requirements.txt; no Linux x86_64, o
#                                  # PyTorch só-CPU se não há placa NVIDIA (sem nvidia-smi)
#     bash .venv-setup.sh --cpu    # força o PyTorch só-CPU (download menor)
#     bash .venv-setup.sh --cuda   # força o PyTorch com CUDA (Linux x86_64 com placa NVIDIA)
#     bash .venv-setup.sh --help
#
# Pode rodar quantas vezes quiser: reaproveita a .venv que já existe (e a recria se estiver
# quebrada). Depois, teste com:  .venv/bin/python lab/00_check.py
set -euo pipefail

URL_TORCH_CPU="https://download.pytorch.org/whl/cpu"

ajuda() {
    cat <<'FIM'
Uso: bash .venv-setup.sh [--cpu | --cuda] [--so-procurar] [--help]

Prepara o ambiente do laboratório:
  1. procura um Python da faixa do lab (a linha "# Pythons do lab" de requirements.txt):
     python3.16 ... python3.10, python3, python; usa o mais novo da faixa e diz por que
     pulou os outros; sem nenhum, para antes do pip e diz qual instalar;
  2. cria a pasta .venv (ou reaproveita a que já existe; recria se estiver quebrada ou se
     foi feita com um Python fora da faixa);
  3. escolhe o PyTorch pelo que a máquina tem e diz qual: no Linux x86_64 sem placa NVIDIA
     (sem o programa nvidia-smi, do driver dela), a versão só-CPU, do índice oficial do
     PyTorch (https://download.pytorch.org/whl/cpu); com ela, a versão com CUDA, do pip
     normal, vários GB a mais. No macOS e no Linux ARM, a versão normal já é só-CPU;
  4. instala os pacotes de requirements.txt com .venv/bin/python -m pip.

Opções:
  --cpu     Força o PyTorch só-CPU no Linux x86_64 (o lab roda inteiro na CPU).
  --cuda    Força o PyTorch com CUDA no Linux x86_64 (placa NVIDIA sem o nvidia-smi no PATH).
  --so-procurar
            Só procura o Python e diz qual usaria e o que faria com a .venv; não cria
            nem instala nada.
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
CUDA=0
SO_PROCURAR=0
for arg in "$@"; do
    case "$arg" in
        --cpu) CPU=1 ;;
        --cuda) CUDA=1 ;;
        --so-procurar) SO_PROCURAR=1 ;;
        -h|--help|--ajuda) ajuda; exit 0 ;;
        *)
            printf 'Opção desconhecida: %s\n\n' "$arg" >&2
            ajuda >&2
            exit 2
            ;;
    esac
done
if [ "$CPU" -eq 1 ] && [ "$CUDA" -eq 1 ]; then
    printf 'Use --cpu ou --cuda, não as duas.\n\n' >&2
    ajuda >&2
    exit 2
fi

# Tudo acontece na pasta deste script (a raiz do laboratório), de onde quer que ele seja chamado.
cd "$(dirname -- "${BASH_SOURCE[0]}")"

[ -f requirements.txt ] || falhar "não encontrei requirements.txt em $(pwd)." \
    "Rode este script da pasta do laboratório (a que tem README.md e requirements.txt)."

# ---------------------------------------------------------------- 1. Python
# A faixa de Pythons do lab mora numa linha só de requirements.txt ("# Pythons do lab: 3.11 a
# 3.14"): a faixa em que todo pacote fixado tem versão (tests/test_pythons.py confere).
FAIXA="$(sed -n 's/^# Pythons do lab: 3\.\([0-9][0-9]*\) a 3\.\([0-9][0-9]*\).*/\1 \2/p' requirements.txt | head -n 1)"
read -r MIN MAX <<<"$FAIXA" || true
[ -n "${MIN:-}" ] && [ -n "${MAX:-}" ] || falhar "requirements.txt não diz a faixa de Pythons do lab." \
    "Falta a linha '# Pythons do lab: 3.X a 3.Y': baixe de novo o laboratório."
TORCH_FIXO="$(sed -n 's/^[[:space:]]*torch[[:space:]]*==[[:space:]]*\([^[:space:]#]*\).*/\1/p' requirements.txt | head -n 1)"
PAGINA_PYTHON="https://www.python.org/downloads/latest/python3.$MAX/"

# Imprime "3 11 64" (versão e bits) ou nada, se o comando não for um Python utilizável.
versao_de() {
    "$1" -c 'import struct, sys; print(sys.version_info[0], sys.version_info[1], struct.calcsize("P") * 8)' \
        2>/dev/null </dev/null || true
}

# Por que um Python fica de fora (vazio: serve).
por_que_nao() {  # maior menor bits
    if [ "$1" -ne 3 ] || [ "$2" -lt "$MIN" ]; then
        echo "antigo demais: os pacotes do lab pedem o 3.$MIN ou mais novo"
    elif [ "$2" -gt "$MAX" ]; then
        echo "novo demais: o PyTorch ${TORCH_FIXO:-do lab} ainda não tem versão para ele"
    elif [ "$3" != 64 ]; then
        echo "de $3 bits: o PyTorch exige 64 bits"
    fi
}

passo "Procurando um Python de 3.$MIN a 3.$MAX (a faixa do lab)"
candidatos=()
for ((m = MAX + 2; m >= MIN - 1; m--)); do
    candidatos+=("python3.$m")
done
candidatos+=(python3 python)

PY=""; PY_NOME=""; PY_MENOR=-1
VISTOS=()          # caminhos reais já olhados (python3 e python3.13 podem ser o mesmo)
FORA=()            # "python3 (Python 3.15): novo demais..."
for cand in "${candidatos[@]}"; do
    caminho="$(command -v "$cand" 2>/dev/null)" || continue
    real="$(readlink -f -- "$caminho" 2>/dev/null || echo "$caminho")"
    repetido=0
    for visto in "${VISTOS[@]+"${VISTOS[@]}"}"; do
        [ "$visto" = "$real" ] && repetido=1
    done
    [ "$repetido" -eq 0 ] || continue
    VISTOS+=("$real")
    maior=""; menor=""; bits=""
    read -r maior menor bits <<<"$(versao_de "$cand")" || true
    if [ -z "$maior" ] || [ -z "$menor" ] || [ -z "$bits" ]; then
        case "$caminho" in
            # um atalho (shim) do pyenv para uma versão instalada que não está ativa: ele só
            # responde com um erro (pyenv global ou pyenv local a ativam)
            */shims/*) FORA+=("$cand: existe mas não está ativo (pyenv?)") ;;
            *) FORA+=("$cand: não respondeu como um Python") ;;
        esac
        continue
    fi
    motivo="$(por_que_nao "$maior" "$menor" "$bits")"
    if [ -n "$motivo" ]; then
        FORA+=("$cand (Python $maior.$menor): $motivo")
    elif [ "$menor" -gt "$PY_MENOR" ]; then
        [ -z "$PY" ] || FORA+=("$PY_NOME (Python 3.$PY_MENOR): serve, mas há um mais novo na faixa")
        PY="$caminho"; PY_NOME="$cand"; PY_MENOR="$menor"
    elif [ "$menor" -eq "$PY_MENOR" ]; then
        FORA+=("$cand (Python $maior.$menor): serve, mas já fico com o 3.$menor de $PY_NOME")
    else
        FORA+=("$cand (Python $maior.$menor): serve, mas há um mais novo na faixa")
    fi
done

for linha in "${FORA[@]+"${FORA[@]}"}"; do
    echo "  pulei $linha"
done
if [ -z "$PY" ]; then
    encontrados="não achei nenhum Python"
    [ "${#FORA[@]}" -eq 0 ] || encontrados="nenhum dos Pythons acima serve"
    falhar "este laboratório precisa de um Python de 3.$MIN a 3.$MAX, 64 bits ($encontrados)." \
        "Instale o Python 3.$MAX (ele fica ao lado dos outros; não precisa desinstalar nada):" \
        "  - macOS: o instalador de $PAGINA_PYTHON" \
        "    (ou: brew install python@3.$MAX)" \
        "  - Linux (Debian/Ubuntu): sudo apt install python3.$MAX python3.$MAX-venv" \
        "    (se a sua versão do sistema não tiver, use o pyenv ou o uv para instalar o 3.$MAX)" \
        "Depois rode de novo:  bash .venv-setup.sh"
fi
maior=3; menor="$PY_MENOR"
echo "Usando o Python 3.$menor ($PY_NOME: $PY), o mais novo da faixa 3.$MIN a 3.$MAX que achei."

# Qual PyTorch: no Linux x86_64, o do pip normal é a versão com CUDA (com as bibliotecas da
# NVIDIA, vários GB a mais); a só-CPU vem do índice do PyTorch. Sem placa NVIDIA, a com CUDA
# só ocupa disco: a escolha segue o que a máquina tem (o nvidia-smi vem com o driver da placa).
TORCH_CPU=0
TORCH_MOTIVO=()    # as linhas que dizem qual e por quê
if [ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ]; then
    if [ "$CPU" -eq 1 ]; then
        TORCH_CPU=1
        TORCH_MOTIVO=("PyTorch: a versão só-CPU (--cpu).")
    elif [ "$CUDA" -eq 1 ]; then
        TORCH_MOTIVO=("PyTorch: a versão com CUDA (--cuda; o download tem vários GB).")
    elif command -v nvidia-smi >/dev/null 2>&1; then
        TORCH_MOTIVO=("PyTorch: a versão com CUDA, porque achei o nvidia-smi, do driver da placa NVIDIA."
                      "  O download tem vários GB; o lab roda inteiro na CPU: para um download"
                      "  bem menor, use --cpu.")
    else
        TORCH_CPU=1
        TORCH_MOTIVO=("PyTorch: a versão só-CPU, porque não achei o nvidia-smi, do driver da placa"
                      "  NVIDIA: sem a placa, a versão com CUDA só ocuparia vários GB a mais."
                      "  (Com a placa NVIDIA e sem o nvidia-smi, use --cuda.)")
    fi
else
    TORCH_MOTIVO=("PyTorch: a versão normal do pip (só no Linux x86_64 há uma com CUDA e uma"
                  "  só-CPU para escolher).")
    if [ "$CPU" -eq 1 ] || [ "$CUDA" -eq 1 ]; then
        TORCH_MOTIVO+=("  (--cpu e --cuda: ignorados em $(uname -s) $(uname -m).)")
    fi
fi
printf '%s\n' "${TORCH_MOTIVO[@]}"

# ---------------------------------------------------------------- 2. .venv
VPY=".venv/bin/python"

# 0: a .venv funciona (Python com pip) e o Python dela está na faixa; 1: quebrada; 2: fora da faixa.
estado_da_venv() {
    [ -x "$VPY" ] || return 1
    "$VPY" -c "import sys, pip; sys.exit(0 if (3, $MIN) <= sys.version_info[:2] <= (3, $MAX) else 2)" \
        >/dev/null 2>&1 </dev/null
    case $? in
        0) return 0 ;;
        2) return 2 ;;
        *) return 1 ;;
    esac
}

venv_ok() {
    estado_da_venv
}

NOVA=0
estado=0
estado_da_venv || estado=$?
if [ "$SO_PROCURAR" -eq 1 ]; then
    if [ "$estado" -eq 0 ]; then
        echo "A .venv que existe serve: seria reaproveitada."
    elif [ "$estado" -eq 2 ]; then
        velho="$("$VPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null </dev/null || echo '?')"
        echo "A .venv que existe foi criada com o Python $velho, fora da faixa 3.$MIN a 3.$MAX: seria recriada com o 3.$menor."
    elif [ -e .venv ]; then
        echo "A pasta .venv existe mas está quebrada: seria recriada com o 3.$menor."
    else
        echo "Não há .venv: seria criada com o 3.$menor."
    fi
    echo "(--so-procurar: nada foi criado nem instalado.)"
    exit 0
fi
if [ "$estado" -eq 0 ]; then
    passo "Reaproveitando a .venv que já existe"
else
    if [ -e .venv ]; then
        if [ "$estado" -eq 2 ]; then
            velho="$("$VPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null </dev/null || echo '?')"
            passo "A .venv que existe foi criada com o Python $velho, fora da faixa 3.$MIN a 3.$MAX: vou recriá-la com o 3.$menor"
        else
            passo "A pasta .venv existe mas está quebrada (sem Python ou sem pip que funcionem): vou recriá-la"
        fi
        rm -rf .venv || falhar "não consegui apagar a pasta .venv." \
            "Feche programas que a estejam usando e rode de novo, ou apague a pasta à mão."
    else
        passo "Criando a .venv"
    fi
    if ! "$PY" -m venv .venv; then
        rm -rf .venv
        falhar "não consegui criar a .venv com $PY -m venv." \
            "No Debian/Ubuntu falta, em geral, o pacote venv:" \
            "  sudo apt install python3.$menor-venv      (ou python3-venv)" \
            "Depois rode de novo:  bash .venv-setup.sh"
    fi
    venv_ok || falhar "a .venv foi criada mas o pip dela não funciona." \
        "No Debian/Ubuntu: sudo apt install python3.$menor-venv  e rode de novo."
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

if [ "$TORCH_CPU" -eq 1 ]; then
    TORCH="$(grep -E '^[[:space:]]*torch[[:space:]]*==' requirements.txt | head -n 1 | tr -d '[:space:]' || true)"
    TORCH="${TORCH%%#*}"
    [ -n "$TORCH" ] || TORCH="torch==2.13.0"
    ATUAL="$("$VPY" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true)"
    if [ "$ATUAL" = "${TORCH#torch==}+cpu" ]; then
        passo "O PyTorch só-CPU ($ATUAL) já está instalado"
    elif [ -n "$ATUAL" ] && [ "${ATUAL%+cpu}" = "$ATUAL" ]; then
        passo "Esta .venv já tem o PyTorch $ATUAL (com CUDA): fica ele"
        echo "Para trocá-lo pela versão só-CPU, apague a pasta .venv e rode de novo:"
        echo "    rm -rf .venv && bash .venv-setup.sh --cpu"
    else
        # Só o torch daqui (--no-deps): o que ele pede vem com o resto, do pip normal.
        passo "Instalando o PyTorch só-CPU ($TORCH) de $URL_TORCH_CPU"
        if ! "${PIP[@]}" install --no-deps "$TORCH" --index-url "$URL_TORCH_CPU"; then
            [ "$CPU" -eq 0 ] || falha_pip "não consegui instalar o PyTorch só-CPU." "$@"
            echo "Aviso: não consegui o PyTorch só-CPU de $URL_TORCH_CPU (a rede bloqueia esse"
            echo "endereço?). Sigo com o pip normal, que traz a versão com CUDA (vários GB a mais)."
        fi
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
