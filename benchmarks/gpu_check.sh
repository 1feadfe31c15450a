#!/usr/bin/env bash
# One prepared GPU check for the Triton kernels: the GPU-marked tests, then the
# kernel benchmark.  Written for a lent H200 machine, where `python3` holds a CUDA torch
# and Triton and nothing can be installed; it finishes in under 8 minutes (each step has a
# hard timeout: 200 s of tests, 260 s of benchmark) and writes everything under $OUT:
#   env.txt               GPU, driver, torch / triton versions
#   gpu_tests.log         pytest -m gpu tests/kernels/test_gpu.py (+ slowest durations)
#   bench.log             the benchmark's console output
#   bench_kernels.md      the results table + targets, ready for benchmarks/RESULTS.md
#   bench_kernels.csv     the same rows as CSV (bench_kernels_partial.csv: row by row); the
#                         Kernels page draws it from benchmarks/results/bench_kernels.csv
# Liger-Kernel is benchmarked only if it imports there (carry its wheel to include it).
# Run from the repository root:  bash benchmarks/gpu_check.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-$PWD/gpu_out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET  # compiled kernels here; the interpreter tests are CI's

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  "$PY" -c "import sys, torch, triton; print(sys.version); print('torch', torch.__version__, \
'cuda', torch.version.cuda, 'available', torch.cuda.is_available()); print('triton', \
triton.__version__); print(torch.cuda.get_device_name(0), \
torch.cuda.get_device_properties(0).multi_processor_count, 'SMs')"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
if ! "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "no CUDA GPU visible to $PY: nothing to check here"
  exit 2
fi

status=0
echo "== GPU tests (at most 200 s)"
timeout 200 "$PY" -m pytest tests/kernels/test_gpu.py -m gpu -q -p no:cacheprovider \
  --durations=10 -o addopts="" 2>&1 | tee "$OUT/gpu_tests.log"
test_rc=${PIPESTATUS[0]}
[ "$test_rc" -ne 0 ] && status=1

echo "== benchmark (new measurements stop at 220 s; killed at 260 s)"
timeout 260 "$PY" benchmarks/bench_kernels.py --budget-s 220 --out "$OUT" 2>&1 \
  | tee "$OUT/bench.log"
bench_rc=${PIPESTATUS[0]}
[ "$bench_rc" -ne 0 ] && status=1

echo "== done: tests rc=$test_rc, benchmark rc=$bench_rc; files in $OUT"
exit $status
