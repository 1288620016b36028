#!/bin/sh
# tests/device/check.sh: every check that needs a GPU, in one run of under
# eight minutes on one H100 (issue 42; docs/gpu.md):
#
#   1. build grove with the CUDA part for sm_90 (CUDA_ARCHS=90: machine code
#      for the H100, PTX beside it) and the tests;
#   2. grove info must say "cuda: yes (...)";
#   3. the device tests (tests/test_device_*.c) on CUDA against the CPU
#      path: GROVE_TEST_DEVICE=cuda build/test_grove device_;
#   4. compute-sanitizer memcheck, then racecheck, on the tiny inputs of
#      device_join_tiny and device_gravity_tiny;
#   5. bench/gpu.py --device cuda: the benchmark table.
#
# Where there is no GPU it says so (why, as grove info and nvidia-smi put
# it) and makes a dry run instead: the same build (with the CUDA part when
# nvcc is there), the device tests on OpenCL (PoCL), and bench/gpu.py
# --quick on OpenCL; exit status 0 unless one of those fails.
#
# Usage (from anywhere): sh tests/device/check.sh [--no-bench]
set -u
cd "$(dirname "$0")/../.."
bench=1
[ "${1:-}" = "--no-bench" ] && bench=0
jobs=$(nproc 2>/dev/null || echo 4)
cuda_home=${CUDA_HOME:-/usr/local/cuda}
start=$(date +%s)
failed=""
summary=""

# step NAME COMMAND...: run it, time it, remember how it went.
step() {
    name=$1
    shift
    t0=$(date +%s)
    echo "== $name: $*"
    if "$@"; then verdict=ok; else verdict="FAILED ($?)"; failed="$failed $name"; fi
    t1=$(date +%s)
    summary="$summary
  $name: $verdict, $((t1 - t0)) s"
    echo "== $name: $verdict ($((t1 - t0)) s, $((t1 - start)) s so far)"
}

gpu_why=""
if ! command -v nvidia-smi >/dev/null 2>&1; then
    gpu_why="nvidia-smi is not installed"
elif ! nvidia-smi -L >/dev/null 2>&1; then
    gpu_why="nvidia-smi finds no GPU: $(nvidia-smi -L 2>&1 | head -n 1)"
fi

if [ -n "$gpu_why" ]; then
    echo "check.sh: no device: $gpu_why. A dry run: the build, the device tests on OpenCL, bench/gpu.py --quick."
    step build make -j"$jobs" WERROR=1 all build/test_grove
    echo "grove info:"
    build/grove info | grep -E '^(cuda|opencl):'
    if build/grove info | grep -q '^opencl: yes'; then
        step device-tests-opencl env GROVE_CLI=build/grove GROVE_LIB_SO=build/libgrove.so GROVE_LIB_A=build/libgrove.a \
            GROVE_CC=cc build/test_grove device_
        [ $bench = 1 ] && step bench-quick python3 bench/gpu.py --device opencl --quick
    else
        echo "check.sh: no OpenCL device either: the device tests would skip"
    fi
    echo "check.sh: on a GPU this would run: make CUDA_ARCHS=90, grove info (cuda: yes), GROVE_TEST_DEVICE=cuda"
    echo "          build/test_grove device_, compute-sanitizer memcheck and racecheck on device_join_tiny and"
    echo "          device_gravity_tiny, python3 bench/gpu.py --device cuda"
else
    echo "check.sh: GPU: $(nvidia-smi -L | head -n 1)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
    step build make -j"$jobs" WERROR=1 CUDA_ARCHS=90 all build/test_grove
    build/grove info | grep -E '^(cuda|opencl):'
    step grove-info-cuda sh -c 'build/grove info | grep -q "^cuda: yes"'
    step device-tests-cuda env GROVE_TEST_DEVICE=cuda GROVE_CLI=build/grove GROVE_LIB_SO=build/libgrove.so \
        GROVE_LIB_A=build/libgrove.a GROVE_CC=cc timeout 240 build/test_grove device_
    sanitizer=$(command -v compute-sanitizer || echo "$cuda_home/bin/compute-sanitizer")
    if [ -x "$sanitizer" ]; then
        for tool in memcheck racecheck; do
            step "sanitizer-$tool" env GROVE_TEST_DEVICE=cuda GROVE_CLI=build/grove timeout 150 "$sanitizer" \
                --tool "$tool" --error-exitcode 9 build/test_grove device_join_tiny device_gravity_tiny
        done
    else
        echo "check.sh: compute-sanitizer not found ($sanitizer): memcheck and racecheck not run"
        failed="$failed compute-sanitizer-missing"
    fi
    [ $bench = 1 ] && step bench python3 bench/gpu.py --device cuda
fi

echo "check.sh: $(($(date +%s) - start)) s in all:$summary"
if [ -n "$failed" ]; then
    echo "check.sh: FAILED:$failed"
    exit 1
fi
echo "check.sh: every step passed"
