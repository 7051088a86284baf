"""`python -m cake_router serve`: a real process, bound to loopback, serving the store it was given."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from service_support import ARCH, TOKEN

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited with {proc.returncode}: {proc.stderr.read().decode()}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"serve did not answer {url} within {timeout} s")


@pytest.fixture
def served(store_url):
    port = _free_port()
    env = dict(os.environ, CAKE_API_TOKEN=TOKEN, PYTHONPATH=str(REPO))
    env.pop("CAKE_DB_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "cake_router", "serve", "--port", str(port), "--db", store_url,
                             "--log-level", "warning"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        _wait(f"http://127.0.0.1:{port}/healthz", proc)
        yield port, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serve_answers_on_loopback_from_the_given_store(served):
    port, proc = served
    runs = httpx.get(f"http://127.0.0.1:{port}/api/runs").json()
    assert {r["run_id"] for r in runs} == {"synthetic-r1", "synthetic-r2"}
    # no table file of the fixture arch is shipped: the arch page shows the table solved from the store
    view = httpx.get(f"http://127.0.0.1:{port}/api/arch/{ARCH}").json()
    assert view["table"]["id"] == f"solved:{ARCH}"
    page = httpx.get(f"http://127.0.0.1:{port}/")
    assert page.status_code == 200 and "enabled (bearer token)" in page.text


def _listen_addresses(port: int) -> set[str]:
    """Local addresses of sockets listening on `port`, from /proc/net/tcp and tcp6 (Linux)."""
    out = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for ln in lines:
            f = ln.split()
            addr, hexport = f[1].rsplit(":", 1)
            if int(hexport, 16) == port and f[3] == "0A":  # 0A: LISTEN
                out.add(addr)
    return out


def test_serve_listens_on_127_0_0_1_only(served):
    port, _ = served
    addrs = _listen_addresses(port)
    if not addrs and not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp on this system")
    assert addrs == {"0100007F"}, addrs  # 127.0.0.1, little-endian hex; never 00000000 (any)


def test_serve_is_not_reachable_on_other_interfaces(served):
    """Bound to 127.0.0.1: a connection to this host's other addresses is refused."""
    port, _ = served
    others = set()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            if not info[4][0].startswith("127."):
                others.add(info[4][0])
    except socket.gaierror:
        pass
    if not others:
        pytest.skip("this host has no non-loopback IPv4 address to try")
    for addr in others:
        with pytest.raises(OSError):
            socket.create_connection((addr, port), timeout=2).close()


def test_serve_rejects_a_bad_port():
    out = subprocess.run([sys.executable, "-m", "cake_router", "serve", "--port", "70000"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--port 70000" in out.stderr


def test_serve_refuses_an_unreadable_store_at_start(tmp_path):
    bad = tmp_path / "corrupt.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    out = subprocess.run([sys.executable, "-m", "cake_router", "serve", "--port", "0", "--db", f"sqlite:///{bad}"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "cannot serve" in out.stderr and "corrupt.sqlite" in out.stderr
