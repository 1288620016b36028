#!/bin/sh
# make check-cuda: compile the device kernels (src/device/cuda/kernels.cu,
# i.e. src/device/kernels/all.h) for every architecture in ARCHS with
# ptxas's report, print each kernel's registers, stack and spills, and
# fail on any spill or on registers above the budget:
#   64 per thread for the join and scan kernels (blocks of 256 then keep
#      at least half of an SM's threads resident),
#   96 for the gravity kernels (their interaction loops hold a tile of
#      particle and cell terms).
# Usage: check_cuda.sh NVCC OUTDIR ARCH... (run from the repository root).
set -e
nvcc=$1
out=$2
shift 2
mkdir -p "$out"
status=0
printf '%-6s %-24s %9s %8s %12s  %s\n' arch kernel registers stack spills verdict
for arch in "$@"; do
    log="$out/ptxas_sm_$arch.log"
    if ! "$nvcc" -O3 -std=c++17 -cubin -arch="sm_$arch" -Xptxas -v -o "$out/kernels_sm_$arch.cubin" \
        src/device/cuda/kernels.cu 2> "$log"; then
        cat "$log"
        exit 1
    fi
    awk -v arch="$arch" '
        /Compiling entry function/ { name = $0; sub(/.*function .\047*/, "", name); sub(/\047 for.*/, "", name) }
        /bytes stack frame/ { stack = $1; stores = $5; loads = $9 }
        /Used [0-9]+ registers/ {
            for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i + 1)
            budget = name ~ /^gravity/ ? 96 : 64
            verdict = "ok"
            if (stores + loads > 0) verdict = "SPILLS"
            else if (regs + 0 > budget) verdict = "OVER BUDGET (" budget ")"
            if (verdict != "ok") bad = 1
            printf "sm_%-3s %-24s %9d %8d %5d/%-6d  %s\n", arch, name, regs, stack, stores, loads, verdict
            kernels++
        }
        END { if (kernels == 0) { print "sm_" arch ": no kernel found in the ptxas report"; exit 1 } exit bad }
    ' "$log" || status=1
done
exit $status
