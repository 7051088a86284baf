#!/usr/bin/env bash
# The project's test command (README, .ci/run). Kernel tests run the Triton programs under
# TRITON_INTERPRET=1 when no GPU is present (tests/conftest.py sets it before Triton loads).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 -m pytest -q "$@"
