#!/usr/bin/env bash
# On the H200 device machine: install the peers' wheels carried in .whlA (and .whlB) into /tmp/site.
# QuACK's CUTLASS DSL (nvidia-cutlass-dsl-libs-cu13, 92 MB) exceeds one call's 64 MiB, so it travels
# split: call 1 carries .whlA (small wheels + cu13.part.aa, copied to /tmp), call 2 (while the
# machine is warm, within 30 s) carries .whlB (cu13.part.ab); this script joins the parts once both
# are on the machine. Prepare here with:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 ... -d .whl \
#     liger-kernel==0.8.5 quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1 \
#     nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 apache-tvm-ffi==0.1.15.post2 torch-c-dlpack-ext
#   split -b 46m nvidia_cutlass_dsl_libs_cu13-*.whl cu13.part.   (aa -> .whlA, ab -> .whlB; apache_tvm_ffi and
#   nvidia_cutlass_dsl_libs_base travel in .whlB too, so each call stays under 64 MiB with the tree)
# Source it: `. scripts/device/setup_peers.sh`; it exports PYTHONPATH.
set -u
SITE=/tmp/site
mkdir -p "$SITE" /tmp/wheels
[ -d .whlA ] && cp .whlA/* /tmp/wheels/ 2>/dev/null
[ -d .whlB ] && cp .whlB/* /tmp/wheels/ 2>/dev/null
[ -d .whlL ] && cp .whlL/* /tmp/wheels/ 2>/dev/null
[ -d .whlG ] && cp .whlG/* /tmp/wheels/ 2>/dev/null  # Liger alone (a round without QuACK)
CU13=/tmp/wheels/nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl
if [ ! -f "$CU13" ] && [ -f /tmp/wheels/cu13.part.aa ] && [ -f /tmp/wheels/cu13.part.ab ]; then
  cat /tmp/wheels/cu13.part.aa /tmp/wheels/cu13.part.ab > "$CU13"
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" /tmp/wheels/*.whl >/dev/null 2>&1 \
  || echo "setup_peers: some wheels did not install (a peer without them is recorded as unavailable)"
# The CUTLASS DSL installs its `cutlass` module through a .pth file that --target does not run.
export PYTHONPATH="$PWD:$SITE:$SITE/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"
python3 - <<'PY'
for mod in ("liger_kernel", "quack", "cutlass"):
    try:
        __import__(mod)
        print(f"setup_peers: {mod} importable")
    except Exception as exc:
        print(f"setup_peers: {mod} NOT importable: {exc!r}")
PY
