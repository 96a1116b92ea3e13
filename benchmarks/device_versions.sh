#!/usr/bin/env bash
# Rehearse the GPU path on this CPU machine with the device machine's library versions
# (the device README: torch 2.11, Triton 3.6), before spending device time.
#
#   bash benchmarks/device_versions.sh [VENV]      (default /tmp/rooflab-devver; ~5 GB: the
#                                                   CUDA build of torch runs on the CPU too)
#
# It runs (1) every test file that touches torch, Triton or the GPU probe, (2) the Triton
# kernels compiled for sm_90 (benchmarks/gpu_kernels_sass.py, no GPU needed: Triton's wheel
# carries ptxas), (3) benchmarks/gpu_check.py as a dry run on PyTorch's CPU device.
# numpy stays below 2.3: Triton 3.6's interpreter calls int() on 1-element arrays, which
# numpy 2.3+ refuses (a TypeError in the interpreter only; compiled kernels are unaffected).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-/tmp/rooflab-devver}
TORCH=${ROOFLAB_DEVICE_TORCH:-2.11.0}
TRITON=${ROOFLAB_DEVICE_TRITON:-3.6.0}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "torch==$TORCH" "triton==$TRITON" "numpy<2.3"
  "$VENV/bin/pip" install -q pytest pytest-timeout hypothesis typer rich matplotlib numba \
    plotly scipy nvidia-ml-py ncu-report selenium
fi
PY="$VENV/bin/python"
echo "== versions"; "$PY" -c "import torch, triton, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
echo "== tests that touch torch, Triton or the GPU probe"
# shellcheck disable=SC2046
PYTHONPATH=src "$PY" -m pytest -q -p no:cacheprovider $(grep -l -E "torch|triton|gpu" tests/*.py)
echo "== Triton kernels for sm_90"
PYTHONPATH=src "$PY" benchmarks/gpu_kernels_sass.py
echo "== gpu_check.py dry run on the CPU device"
PYTHONPATH=src "$PY" benchmarks/gpu_check.py "$(mktemp -d)" --device cpu --quick
