# .venv-setup.ps1 — prepara o ambiente do laboratório no Windows (PowerShell 5.1 ou 7).
#
# Como rodar, numa janela do PowerShell aberta na pasta do laboratório:
#
#     powershell -ExecutionPolicy Bypass -File .venv-setup.ps1
#
# O "-ExecutionPolicy Bypass" vale só para esta execução: é o jeito de rodar o script quando o
# Windows responde que "a execução de scripts foi desabilitada neste sistema". Nada é mudado
# nas configurações do computador.
#
# O que o script faz:
#   1. procura um Python 3.10 ou mais novo: primeiro "py -3" (o inicializador do python.org),
#      depois "python", depois "python3" (ignora o atalho da Microsoft Store, que não é Python);
#   2. cria a pasta .venv (ou reaproveita a que já existe; se estiver quebrada, recria);
#   3. atualiza o pip e instala requirements.txt com
#      .venv\Scripts\python.exe -m pip install -r requirements.txt
# Pode rodar quantas vezes quiser. No fim ele mostra o próximo comando:
#      .venv\Scripts\python.exe lab\00_check.py
#
# (Este arquivo está salvo em UTF-8 com BOM, para o Windows PowerShell 5.1 ler os acentos.)

Set-StrictMode -Version 2
$ErrorActionPreference = 'Stop'
# PowerShell 7.3+: um programa externo que termina com código diferente de 0 não deve virar
# exceção; o script confere $LASTEXITCODE depois de cada passo e explica o que houve.
$PSNativeCommandUseErrorActionPreference = $false

$script:Codigo = 0
$ComandoDeNovo = 'powershell -ExecutionPolicy Bypass -File .venv-setup.ps1'
$ExemploProxy = '$env:HTTPS_PROXY = "http://usuario:senha@proxy.exemplo:8080"'

# ------------------------------------------------------------------ utilidades

function Passo([string]$Texto) {
    Write-Host ''
    Write-Host "==> $Texto" -ForegroundColor Cyan
}

function Falhar([string]$Mensagem, [string[]]$Dicas = @()) {
    Write-Host ''
    Write-Host "ERRO: $Mensagem" -ForegroundColor Red
    foreach ($dica in $Dicas) {
        Write-Host "  $dica"
    }
    Write-Host ''
    exit 1
}

# Roda um programa externo mostrando a saída dele na tela e guarda o código de saída em
# $script:Codigo. Durante a chamada, $ErrorActionPreference fica em 'Continue': no
# PowerShell 5.1, com 'Stop', uma linha que o programa escreva no stderr (um aviso do pip,
# por exemplo) pode virar erro fatal e derrubar o script.
function Invoke-Nativo([string]$Programa, [string[]]$Argumentos) {
    $script:Codigo = -1
    $anterior = $ErrorActionPreference
    $ErrorActionPreference = 'Continue'
    try {
        $global:LASTEXITCODE = 0
        & $Programa @Argumentos
        $script:Codigo = $LASTEXITCODE
    } catch {
        Write-Host "$_" -ForegroundColor Red
        $script:Codigo = -1
    } finally {
        $ErrorActionPreference = $anterior
    }
}

# Roda um programa externo em silêncio e devolve a saída (stdout) e o código de saída.
function Get-SaidaNativa([string]$Programa, [string[]]$Argumentos) {
    $saida = $null
    $codigo = -1
    $anterior = $ErrorActionPreference
    $ErrorActionPreference = 'Continue'
    try {
        $global:LASTEXITCODE = 0
        $saida = & $Programa @Argumentos 2>$null
        $codigo = $LASTEXITCODE
    } catch {
        $saida = $null
        $codigo = -1
    } finally {
        $ErrorActionPreference = $anterior
    }
    $linhas = @($saida | ForEach-Object { "$_".Trim() } | Where-Object { $_ -ne '' })
    return [pscustomobject]@{ Codigo = $codigo; Linhas = $linhas }
}

function Get-EspacoLivre {
    try {
        $drive = (Get-Item -LiteralPath (Get-Location).Path).PSDrive
        if ($null -ne $drive -and $null -ne $drive.Free) {
            return [double]$drive.Free
        }
    } catch {
    }
    return $null
}

function Format-GB($Bytes) {
    if ($null -eq $Bytes) { return '?' }
    return ('{0:N1} GB' -f ($Bytes / 1gb))
}

function Falhar-Pip([string]$Mensagem) {
    Falhar "$Mensagem (código $script:Codigo)" @(
        'Leia a mensagem do pip logo acima. As causas mais comuns:',
        '  - sem internet, ou rede com proxy (escola, empresa): defina o proxy nesta janela',
        "    e rode de novo, por exemplo:  $ExemploProxy",
        "  - disco cheio: a .venv precisa de ~1,5 GB (livre agora: $(Format-GB (Get-EspacoLivre))).",
        '  - caminho longo demais (erros com "No such file or directory" dentro de .venv):',
        '    copie o laboratório para uma pasta curta, como C:\lab, ou ative LongPathsEnabled.',
        '  - antivírus bloqueando arquivos: tente de novo; se repetir, fale com o suporte.',
        "Depois rode de novo:  $ComandoDeNovo"
    )
}

# ------------------------------------------------------------------ início

# Tudo acontece na pasta deste script (a raiz do laboratório).
if ($PSScriptRoot) {
    Set-Location -LiteralPath $PSScriptRoot
}
if (-not (Test-Path -LiteralPath 'requirements.txt' -PathType Leaf)) {
    Falhar "não encontrei requirements.txt em $((Get-Location).Path)." @(
        'Rode este script na pasta do laboratório (a que tem README.md e requirements.txt).'
    )
}

# ------------------------------------------------------------------ 1. Python

Passo 'Procurando Python 3.10 ou mais novo'

# Imprime "3 12 64": versão e bits. Só aspas simples dentro do código Python: o PowerShell 5.1
# estraga aspas duplas em argumentos de programas externos.
$codigoSonda = 'import struct, sys; print(sys.version_info[0], sys.version_info[1], struct.calcsize(''P'') * 8)'

$candidatos = @(
    @{ Nome = 'py -3';   Programa = 'py';      Extra = @('-3') },
    @{ Nome = 'python';  Programa = 'python';  Extra = @() },
    @{ Nome = 'python3'; Programa = 'python3'; Extra = @() }
)

# O Python escolhido: o comando (caminho achado pelo PowerShell) e seus argumentos fixos ("-3"
# no caso do py). Não usamos sys.executable: com acentos no caminho (C:\Users\João\...), o
# texto impresso pelo Python chegaria ao PowerShell em outra codificação.
$PyExe = $null
$PyExtra = @()
$PyVersao = $null
$vistos = New-Object System.Collections.Generic.List[string]

foreach ($cand in $candidatos) {
    $cmd = Get-Command $cand.Programa -CommandType Application -ErrorAction SilentlyContinue |
        Select-Object -First 1
    if ($null -eq $cmd) {
        continue
    }
    $r = Get-SaidaNativa $cmd.Path (@($cand.Extra) + @('-c', $codigoSonda))
    $ok = ($r.Codigo -eq 0) -and ($r.Linhas.Count -ge 1) -and ($r.Linhas[0] -match '^(\d+) (\d+) (\d+)$')
    if (-not $ok) {
        # O atalho da Microsoft Store ("python" que abre a loja) não imprime nada e sai com 9009.
        if ($cmd.Path -like '*\Microsoft\WindowsApps\*') {
            $vistos.Add("$($cand.Nome) (atalho da Microsoft Store, não é um Python instalado)")
        } else {
            $vistos.Add("$($cand.Nome) (não respondeu; código $($r.Codigo))")
        }
        continue
    }
    $maior = [int]$Matches[1]
    $menor = [int]$Matches[2]
    $bits = [int]$Matches[3]
    if ($maior -lt 3 -or ($maior -eq 3 -and $menor -lt 10)) {
        $vistos.Add("$($cand.Nome) (Python $maior.$menor, antigo demais)")
        continue
    }
    if ($bits -ne 64) {
        $vistos.Add("$($cand.Nome) (Python $maior.$menor de $bits bits; o PyTorch exige 64 bits)")
        continue
    }
    $PyExe = $cmd.Path
    $PyExtra = @($cand.Extra)
    $PyVersao = "$maior.$menor"
    break
}

if ($null -eq $PyExe) {
    $achados = 'nenhum Python encontrado'
    if ($vistos.Count -gt 0) {
        $achados = 'encontrei só: ' + ($vistos -join '; ')
    }
    Falhar "este laboratório precisa de Python 3.10 ou mais novo, 64 bits ($achados)." @(
        'Baixe o Python em https://www.python.org/downloads/ ("Windows installer (64-bit)").',
        'Na primeira tela do instalador, marque a caixa "Add python.exe to PATH".',
        'Depois FECHE esta janela, abra uma janela nova do PowerShell na pasta do laboratório',
        "e rode de novo:  $ComandoDeNovo"
    )
}
$PyNome = (@($PyExe) + $PyExtra) -join ' '
Write-Host "Usando Python $PyVersao ($PyNome)"

# ------------------------------------------------------------------ 2. .venv

$VenvPy = Join-Path (Get-Location).Path '.venv\Scripts\python.exe'

function Test-Venv {
    if (-not (Test-Path -LiteralPath $VenvPy -PathType Leaf)) {
        return $false
    }
    $r = Get-SaidaNativa $VenvPy @('-c', 'import sys, pip; sys.exit(0 if sys.version_info >= (3, 10) else 1)')
    return ($r.Codigo -eq 0)
}

$venvNova = $false
if (Test-Venv) {
    Passo 'Reaproveitando a .venv que já existe'
} else {
    if (Test-Path -LiteralPath '.venv') {
        Passo 'A pasta .venv existe mas está quebrada (sem Python ou sem pip que funcionem): vou recriá-la'
        try {
            Remove-Item -LiteralPath '.venv' -Recurse -Force
        } catch {
            Falhar 'não consegui apagar a pasta .venv quebrada.' @(
                "Motivo: $_",
                'Feche os programas que possam estar usando a pasta (VS Code, Jupyter, outro terminal)',
                "e rode de novo:  $ComandoDeNovo"
            )
        }
    } else {
        Passo 'Criando a .venv'
    }
    Invoke-Nativo $PyExe ($PyExtra + @('-m', 'venv', '.venv'))
    if ($script:Codigo -ne 0 -or -not (Test-Venv)) {
        $codigoVenv = $script:Codigo
        if (Test-Path -LiteralPath '.venv') {
            Remove-Item -LiteralPath '.venv' -Recurse -Force -ErrorAction SilentlyContinue
        }
        Falhar "não consegui criar a .venv com $PyNome -m venv (código $codigoVenv)." @(
            "Disco: livre agora $(Format-GB (Get-EspacoLivre)); a .venv precisa de ~1,5 GB.",
            'Se o problema continuar, reinstale o Python de https://www.python.org/downloads/',
            'e rode de novo:  ' + $ComandoDeNovo
        )
    }
    $venvNova = $true
}

# ------------------------------------------------------------------ 3. pacotes

$PipBase = @('-m', 'pip', '--disable-pip-version-check')

if ($venvNova) {
    $livre = Get-EspacoLivre
    if ($null -ne $livre -and $livre -lt 2gb) {
        Write-Host "Aviso: só $(Format-GB $livre) livres neste disco; a instalação precisa de ~1,5 GB." -ForegroundColor Yellow
    }
    Passo 'Atualizando o pip'
    Invoke-Nativo $VenvPy ($PipBase + @('install', '--quiet', '--upgrade', 'pip'))
    if ($script:Codigo -ne 0) {
        Falhar-Pip 'não consegui atualizar o pip'
    }
}

# Cópia de requirements.txt guardada depois de uma instalação completa: se não mudou, basta
# conferir os pacotes em silêncio (rápido e sem rede).
$Marca = '.venv\requirements-instalado.txt'
$jaInstalado = $false
if (Test-Path -LiteralPath $Marca -PathType Leaf) {
    $jaInstalado = (Get-FileHash -LiteralPath 'requirements.txt').Hash -eq (Get-FileHash -LiteralPath $Marca).Hash
}

if ($jaInstalado) {
    Passo 'Conferindo os pacotes de requirements.txt (já instalados)'
    Invoke-Nativo $VenvPy ($PipBase + @('install', '--quiet', '-r', 'requirements.txt'))
} else {
    Passo 'Instalando os pacotes de requirements.txt (na primeira vez demora: o PyTorch é grande)'
    Invoke-Nativo $VenvPy ($PipBase + @('install', '-r', 'requirements.txt'))
}
if ($script:Codigo -ne 0) {
    Falhar-Pip 'a instalação dos pacotes falhou'
}
Copy-Item -LiteralPath 'requirements.txt' -Destination $Marca -Force

Write-Host ''
Write-Host 'Pronto: o ambiente está em .venv.' -ForegroundColor Green
Write-Host 'Próximo passo (com internet, para baixar o GPT-2 uma vez):'
Write-Host ''
Write-Host '    .venv\Scripts\python.exe lab\00_check.py'
Write-Host ''
exit 0
