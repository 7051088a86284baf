#!/usr/bin/env bash
# compute-sanitizer memcheck of every program the shipped sm_90a route table runs (and their
# fallbacks) at the odd shapes of sanitize.py; card-independent, so it runs on whichever card comes.
# A parallel pass without the sanitizer first builds every kernel (Triton's disk cache), so the
# sanitized pass compiles nothing. Usage: bash scripts/device/sanitize_routed.sh [SECONDS] [all]
# ("all": every registered Triton program instead of the routed ones; logs named *-all.log).
export PYTHONPATH=$PWD
SEL="--routed sm_90a"; TAG=routed
[ "${2:-}" = all ] && { SEL=""; TAG=all; }
T0=$(date +%s); BUDGET=${1:-400}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
timeout $(( BUDGET / 2 )) python3 scripts/device/sanitize.py $SEL --procs 14 > $OUT/sanitize-warm-$TAG.log 2>&1
echo "warm pass: rc=$? $(tail -1 $OUT/sanitize-warm-$TAG.log) in $(( $(date +%s) - T0 )) s"
LEFT=$(( BUDGET - ($(date +%s) - T0) - 5 ))
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout $LEFT compute-sanitizer --tool memcheck --error-exitcode 9 \
  python3 scripts/device/sanitize.py $SEL > $OUT/memcheck-$TAG.log 2>&1
echo "memcheck: rc=$? $(grep -c '^ran ' $OUT/memcheck-$TAG.log) runs; $(grep 'ERROR SUMMARY' $OUT/memcheck-$TAG.log | tail -1)"
grep -B2 -A12 -m3 "Invalid\|Error:" $OUT/memcheck-$TAG.log | head -60
