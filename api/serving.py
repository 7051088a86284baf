"""Run an app under uvicorn in a background thread on a free loopback port (tests, screenshots,
the load test). The server is the real one `serve` uses, not a test transport."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Iterator


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(app, host: str = "127.0.0.1", port: int | None = None, timeout_s: float = 20.0,
                   log_level: str = "warning") -> Iterator[str]:
    """Yield the base URL of `app` served by uvicorn on (host, port); stop it on exit."""
    import uvicorn

    port = port or free_port(host)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"uvicorn did not start on {host}:{port} within {timeout_s} s")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=timeout_s)
