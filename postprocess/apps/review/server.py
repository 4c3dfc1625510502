"""Running the app under uvicorn: bind first (so a busy port is one clear line), then serve.

``bind`` opens the listening socket itself, so the address is known (port 0: any free
port) before uvicorn starts and clients that connect early wait in the listen queue.
``serving`` runs a real uvicorn server in a background thread for as long as a ``with``
block lasts (tests, scripts); ``serve_forever`` runs it in the foreground (the CLI).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp

from postprocess.errors import InputError

#: Connections the kernel queues before accept.
LISTEN_BACKLOG = 128
#: Seconds an idle keep-alive connection stays open.
KEEP_ALIVE = 30
SERVER_HEADER = "linkspider-review"


def bind(host: str = "127.0.0.1", port: int = 8000) -> socket.socket:
    """A listening TCP socket on ``host``:``port``; InputError when it cannot listen."""
    if not 0 <= port <= 65535:
        raise InputError(f"serve: --port must be between 0 and 65535, not {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except (OSError, OverflowError) as exc:
        sock.close()
        raise InputError(f"serve: cannot listen on {host}:{port}: {exc}") from exc
    sock.set_inheritable(True)
    return sock


def address(sock: socket.socket) -> str:
    """``http://host:port`` of a bound socket (IPv6 in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def make_server(app: ASGIApp) -> uvicorn.Server:
    """A uvicorn server for ``app``: h11, no lifespan or websockets, quiet (warnings only)."""
    config = uvicorn.Config(app, http="h11", ws="none", lifespan="off", log_level="warning",
                            access_log=False, server_header=False, headers=[("server", SERVER_HEADER)],
                            timeout_keep_alive=KEEP_ALIVE, backlog=LISTEN_BACKLOG)
    return uvicorn.Server(config)


def serve_forever(app: ASGIApp, sock: socket.socket) -> None:
    """Serve on ``sock`` until SIGINT/SIGTERM (uvicorn handles both, then re-raises them)."""
    try:
        make_server(app).run(sockets=[sock])
    finally:
        sock.close()


@contextmanager
def serving(app: ASGIApp, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread; yields the base URL; stops the server at the end."""
    sock = bind(host, port)
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                              name="uvicorn")
    thread.start()
    try:
        while not server.started:  # the socket already listens: this only surfaces startup errors
            if not thread.is_alive():
                raise RuntimeError("uvicorn stopped while starting")
            time.sleep(0.01)
        yield address(sock)
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
