"""Test-wide setup: without a GPU, Triton programs run under the interpreter.

TRITON_INTERPRET must be set before Triton decorates any kernel, so it is set here, before any
test module imports cake_kernels.
"""

import os
import secrets
import shutil

import pytest

try:
    import torch

    _HAS_CUDA = torch.cuda.is_available()
except Exception:  # torch missing entirely: kernel tests will fail loudly on import
    _HAS_CUDA = False

if not _HAS_CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")
_INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")

if _INTERPRETING:
    # The interpreter's tl.reduce with a combine function a slice at a time instead of an element at
    # a time, and helper calls inside a launch without re-patching triton.language: the same
    # results, bit for bit, in a fraction of the time (tests/interpreter_speedups.py).
    from tests import interpreter_speedups

    interpreter_speedups.install()


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU (run on the H200 through the device tool)")
    # TRITON_INTERPRET is read once, when Triton decorates a kernel, so one process either compiles
    # for the GPU or interprets on the CPU: each kind of kernel test runs in the process that suits it.
    skip_interpreter = pytest.mark.skip(
        reason="launches Triton programs on CPU tensors, which needs TRITON_INTERPRET=1: "
        "run `TRITON_INTERPRET=1 python -m pytest -m 'not gpu'` for these"
    )
    skip_gpu_interpreting = pytest.mark.skip(
        reason="compiles Triton programs for the GPU, which TRITON_INTERPRET=1 prevents: "
        "run `python -m pytest -m gpu` without it for these"
    )
    skip_pg = pytest.mark.skip(reason="CAKE_TEST_PG_URL is not set (.ci/run starts PostgreSQL and sets it)")
    skip_browser = pytest.mark.skip(reason="no Chromium found (.ci/run installs Debian's chromium)")
    have_browser = bool(os.environ.get("CAKE_TEST_CHROMIUM") or shutil.which("chromium"))
    for item in items:
        if "gpu" in item.keywords and not _HAS_CUDA:
            item.add_marker(skip_gpu)
        elif "gpu" in item.keywords and _INTERPRETING:
            item.add_marker(skip_gpu_interpreting)
        if "interpreter" in item.keywords and not _INTERPRETING:
            item.add_marker(skip_interpreter)
        if "postgres" in item.keywords and not os.environ.get("CAKE_TEST_PG_URL"):
            item.add_marker(skip_pg)
        if "browser" in item.keywords and not have_browser:
            item.add_marker(skip_browser)


@pytest.fixture
def pg_url():
    """A fresh PostgreSQL database on the server of CAKE_TEST_PG_URL (.ci/run starts one), dropped afterwards."""
    base = os.environ.get("CAKE_TEST_PG_URL")
    if not base:
        pytest.skip("CAKE_TEST_PG_URL is not set")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"cake_test_{secrets.token_hex(6)}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(base).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
