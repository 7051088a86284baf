"""Test-wide setup: without a GPU, Triton programs run under the interpreter.

TRITON_INTERPRET must be set before Triton decorates any kernel, so it is set here, before any
test module imports cake_kernels.
"""

import os
import shutil

import pytest

try:
    import torch

    _HAS_CUDA = torch.cuda.is_available()
except Exception:  # torch missing entirely: kernel tests will fail loudly on import
    _HAS_CUDA = False

if not _HAS_CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU (run on the H200 through the device tool)")
    skip_pg = pytest.mark.skip(reason="CAKE_TEST_PG_URL is not set (.ci/run starts PostgreSQL and sets it)")
    skip_browser = pytest.mark.skip(reason="no Chromium found (.ci/run installs Debian's chromium)")
    have_browser = bool(os.environ.get("CAKE_TEST_CHROMIUM") or shutil.which("chromium"))
    for item in items:
        if "gpu" in item.keywords and not _HAS_CUDA:
            item.add_marker(skip_gpu)
        if "postgres" in item.keywords and not os.environ.get("CAKE_TEST_PG_URL"):
            item.add_marker(skip_pg)
        if "browser" in item.keywords and not have_browser:
            item.add_marker(skip_browser)
