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
#   1. procura um Python da faixa do lab (a linha "# Pythons do lab" de requirements.txt):
#      o que o inicializador "py" tem (py -0p; py -3.16 ... py -3.10), depois "python" e
#      "python3" (ignora o atalho da Microsoft Store, que não é Python); usa o mais novo da
#      faixa e diz por que pulou os outros; sem nenhum, para antes do pip e diz qual instalar;
#   2. cria a pasta .venv (ou reaproveita a que já existe; se estiver quebrada, ou se foi feita
#      com um Python fora da faixa, recria);
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

# A faixa de Pythons do lab mora numa linha só de requirements.txt ("# Pythons do lab: 3.11 a
# 3.14"): a faixa em que todo pacote fixado tem versão (tests/test_pythons.py confere).
$linhaFaixa = Select-String -LiteralPath 'requirements.txt' -Pattern '^# Pythons do lab: 3\.(\d+) a 3\.(\d+)' |
    Select-Object -First 1
if ($null -eq $linhaFaixa) {
    Falhar 'requirements.txt não diz a faixa de Pythons do lab.' @(
        "Falta a linha '# Pythons do lab: 3.X a 3.Y': baixe de novo o laboratório."
    )
}
$Min = [int]$linhaFaixa.Matches[0].Groups[1].Value
$Max = [int]$linhaFaixa.Matches[0].Groups[2].Value
$linhaTorch = Select-String -LiteralPath 'requirements.txt' -Pattern '^\s*torch\s*==\s*([^\s#]+)' |
    Select-Object -First 1
$TorchFixo = 'do lab'
if ($null -ne $linhaTorch) {
    $TorchFixo = $linhaTorch.Matches[0].Groups[1].Value
}
$PaginaPython = "https://www.python.org/downloads/latest/python3.$Max/"
# Notebook com processador ARM (Snapdragon): o PyTorch não tem versão para o Windows ARM, mas o
# Python x64 roda nele, sob a emulação do Windows.
$MaquinaArm = ($env:PROCESSOR_ARCHITECTURE -eq 'ARM64') -or ($env:PROCESSOR_ARCHITEW6432 -eq 'ARM64')

Passo "Procurando um Python de 3.$Min a 3.$Max (a faixa do lab)"

# Imprime "3 12 64 AMD64": versão, bits e processador. Só aspas simples dentro do código Python:
# o PowerShell 5.1 estraga aspas duplas em argumentos de programas externos.
$codigoSonda = 'import platform, struct, sys; print(sys.version_info[0], sys.version_info[1], struct.calcsize(''P'') * 8, platform.machine() or ''?'')'

# Por que um Python fica de fora (vazio: serve).
function Get-PorQueNao([int]$Maior, [int]$Menor, [int]$Bits, [string]$Maquina) {
    if ($Maior -ne 3 -or $Menor -lt $Min) {
        return "antigo demais: os pacotes do lab pedem o 3.$Min ou mais novo"
    }
    if ($Menor -gt $Max) {
        return "novo demais: o PyTorch $TorchFixo ainda não tem versão para ele"
    }
    if ($Bits -ne 64) {
        return "de $Bits bits: o PyTorch exige 64 bits"
    }
    if ($Maquina -eq 'ARM64') {
        return 'para ARM64: o PyTorch não tem versão para o Windows ARM (use o Python x64)'
    }
    return ''
}

# Os candidatos, na ordem: o que o inicializador "py" diz ter (py -0p), depois "py -3.X" de
# 3.(Max+2) a 3.(Min-1) (o mesmo Python aparece uma vez só), depois "python" e "python3".
$candidatos = New-Object System.Collections.Generic.List[object]
$py = Get-Command 'py' -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
if ($null -ne $py) {
    $lista = Get-SaidaNativa $py.Path @('-0p')
    foreach ($linha in $lista.Linhas) {
        # "-V:3.13 *   C:\...\python.exe" (inicializador novo) ou "-3.13-64   C:\..." (antigo);
        # as outras marcas (3.14t, sem GIL; Anaconda...) ficam de fora.
        if ($linha -match '^-V:(3\.\d+(-32|-64|-arm64)?)\s') {
            $candidatos.Add(@{ Nome = "py -V:$($Matches[1])"; Programa = $py.Path; Extra = @("-V:$($Matches[1])"); Lancador = $true })
        } elseif ($linha -match '^-(3\.\d+(-32|-64)?)\s') {
            $candidatos.Add(@{ Nome = "py -$($Matches[1])"; Programa = $py.Path; Extra = @("-$($Matches[1])"); Lancador = $true })
        }
    }
    for ($m = $Max + 2; $m -ge $Min - 1; $m--) {
        $candidatos.Add(@{ Nome = "py -3.$m"; Programa = $py.Path; Extra = @("-3.$m"); Lancador = $true })
    }
}
foreach ($nome in @('python', 'python3')) {
    $cmd = Get-Command $nome -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
    if ($null -ne $cmd) {
        $candidatos.Add(@{ Nome = $nome; Programa = $cmd.Path; Extra = @(); Lancador = $false })
    }
}

# O Python escolhido: o comando (caminho achado pelo PowerShell) e seus argumentos fixos ("-3.13"
# no caso do py). Não usamos sys.executable: com acentos no caminho (C:\Users\João\...), o
# texto impresso pelo Python chegaria ao PowerShell em outra codificação.
$PyExe = $null
$PyExtra = @()
$PyNomeCurto = $null
$PyMenor = -1
$vistos = @{}
$fora = New-Object System.Collections.Generic.List[string]

foreach ($cand in $candidatos) {
    $r = Get-SaidaNativa $cand.Programa (@($cand.Extra) + @('-c', $codigoSonda))
    $ok = ($r.Codigo -eq 0) -and ($r.Linhas.Count -ge 1) -and ($r.Linhas[0] -match '^(\d+) (\d+) (\d+) (\S+)$')
    if (-not $ok) {
        if ($cand.Lancador) {
            continue  # "py -3.15" sem o 3.15 instalado: o inicializador só diz que não tem
        }
        # O atalho da Microsoft Store ("python" que abre a loja) não imprime nada e sai com 9009.
        if ($cand.Programa -like '*\Microsoft\WindowsApps\*') {
            $fora.Add("$($cand.Nome) (atalho da Microsoft Store, não é um Python instalado)")
        } elseif ($cand.Programa -like '*\shims\*') {
            # o atalho do pyenv-win para uma versão instalada que não está ativa
            $fora.Add("$($cand.Nome): existe mas não está ativo (pyenv?)")
        } else {
            $fora.Add("$($cand.Nome) (não respondeu como um Python; código $($r.Codigo))")
        }
        continue
    }
    $maior = [int]$Matches[1]
    $menor = [int]$Matches[2]
    $bits = [int]$Matches[3]
    $maquina = $Matches[4]
    $chave = "$maior.$menor-$bits-$maquina"
    if ($vistos.ContainsKey($chave)) {
        continue  # o mesmo Python por outro nome
    }
    $vistos[$chave] = $true
    $motivo = Get-PorQueNao $maior $menor $bits $maquina
    if ($motivo -ne '') {
        $fora.Add("$($cand.Nome) (Python $maior.$menor): $motivo")
    } elseif ($menor -gt $PyMenor) {
        if ($null -ne $PyExe) {
            $fora.Add("$PyNomeCurto (Python 3.$PyMenor): serve, mas há um mais novo na faixa")
        }
        $PyExe = $cand.Programa
        $PyExtra = @($cand.Extra)
        $PyNomeCurto = $cand.Nome
        $PyMenor = $menor
    } else {
        $fora.Add("$($cand.Nome) (Python $maior.$menor): serve, mas há um mais novo na faixa")
    }
}

foreach ($linha in $fora) {
    Write-Host "  pulei $linha"
}
if ($null -eq $PyExe) {
    $achados = 'não achei nenhum Python'
    if ($fora.Count -gt 0) {
        $achados = 'nenhum dos Pythons acima serve'
    }
    $dicas = @(
        "Instale o Python 3.$Max (ele fica ao lado dos outros; não precisa desinstalar nada):",
        "  $PaginaPython",
        '  ("Windows installer (64-bit)"). Na primeira tela do instalador, marque a caixa',
        '  "Add python.exe to PATH".'
    )
    if ($MaquinaArm) {
        $dicas += @(
            'Este computador tem processador ARM: baixe o instalador de 64 bits para x64',
            '("Windows installer (64-bit)", não o "ARM64"). O PyTorch não tem versão para o',
            'Windows ARM; o Python x64 roda sob a emulação do Windows.'
        )
    }
    $dicas += @(
        'Depois FECHE esta janela, abra uma janela nova do PowerShell na pasta do laboratório',
        "e rode de novo:  $ComandoDeNovo"
    )
    Falhar "este laboratório precisa de um Python de 3.$Min a 3.$Max, 64 bits ($achados)." $dicas
}
$PyNome = (@($PyExe) + $PyExtra) -join ' '
$PyVersao = "3.$PyMenor"
Write-Host "Usando o Python $PyVersao ($PyNomeCurto), o mais novo da faixa 3.$Min a 3.$Max que achei."

# Qual PyTorch: no Windows, o do pip é a versão só-CPU (pouco mais de 100 MB), a que o lab usa;
# não há o que escolher, ao contrário do Linux. Uma placa NVIDIA (o nvidia-smi vem com o driver
# dela) não muda isso: o script só diz como usá-la, se quiser.
Write-Host 'PyTorch: a versão do pip no Windows, só-CPU (o lab roda inteiro na CPU).'
$nvidiaSmi = Get-Command 'nvidia-smi' -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
if ($null -ne $nvidiaSmi) {
    Write-Host '  Achei o nvidia-smi, do driver da placa NVIDIA. Para treinar nela (opcional:'
    Write-Host '  --dispositivo cuda nas lições 10 a 12), troque depois o PyTorch pelo com CUDA,'
    Write-Host '  com o comando de https://pytorch.org/get-started/locally/ rodado com'
    Write-Host '  .venv\Scripts\python.exe -m pip.'
}

# ------------------------------------------------------------------ 2. .venv

$VenvPy = Join-Path (Get-Location).Path '.venv\Scripts\python.exe'

# 0: a .venv funciona (Python com pip) e o Python dela está na faixa; 1: quebrada; 2: fora da faixa.
function Get-EstadoVenv {
    if (-not (Test-Path -LiteralPath $VenvPy -PathType Leaf)) {
        return 1
    }
    $r = Get-SaidaNativa $VenvPy @('-c', "import sys, pip; sys.exit(0 if (3, $Min) <= sys.version_info[:2] <= (3, $Max) else 2)")
    if ($r.Codigo -eq 0) { return 0 }
    if ($r.Codigo -eq 2) { return 2 }
    return 1
}

function Test-Venv {
    return ((Get-EstadoVenv) -eq 0)
}

$venvNova = $false
$estadoVenv = Get-EstadoVenv
if ($estadoVenv -eq 0) {
    Passo 'Reaproveitando a .venv que já existe'
} else {
    if (Test-Path -LiteralPath '.venv') {
        if ($estadoVenv -eq 2) {
            $velho = Get-SaidaNativa $VenvPy @('-c', 'import sys; print(sys.version_info[0], sys.version_info[1])')
            $versaoVelha = '?'
            if ($velho.Linhas.Count -ge 1) {
                $versaoVelha = $velho.Linhas[0] -replace ' ', '.'
            }
            Passo "A .venv que existe foi criada com o Python $versaoVelha, fora da faixa 3.$Min a 3.$($Max): vou recriá-la com o $PyVersao"
        } else {
            Passo 'A pasta .venv existe mas está quebrada (sem Python ou sem pip que funcionem): vou recriá-la'
        }
        try {
            Remove-Item -LiteralPath '.venv' -Recurse -Force
        } catch {
            Falhar 'não consegui apagar a pasta .venv.' @(
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
