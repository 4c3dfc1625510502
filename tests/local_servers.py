"""Real Scrapyd and Redis servers for the tests, started on 127.0.0.1 in a temporary folder.

Nothing here is a mock: :func:`scrapyd_server` runs the ``scrapyd`` command and
:func:`redis_server` runs ``redis-server``, each on a free port, and both are
stopped (by the pid in their pidfile) when the ``with`` block ends.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
# What the egg is built from: the files a user's checkout deploys (scrapy.cfg, setup.py, packages).
PROJECT_FILES = ("scrapy.cfg", "setup.py", "linkspider", "postprocess")


def command(name: str) -> str:
    """The path of a console script (``scrapyd``, ``scrapyd-deploy``): on PATH, or beside this Python."""
    beside = Path(sys.executable).parent / name
    found = shutil.which(name) or (str(beside) if beside.is_file() else None)
    if found is None:
        raise RuntimeError(f"{name} is not installed: pip install -r requirements.txt")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_for(check, what: str, timeout: float, log: Path | None = None) -> None:
    """Poll ``check`` until it is true; after ``timeout`` seconds, fail with the tail of ``log``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} did not start within {timeout:g} s\n{tail}")


def _stop(pidfile: Path, timeout: float = 10.0, child: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM the pid in ``pidfile`` and wait for it to go (SIGKILL after ``timeout``)."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        pid = child.pid if child is not None else 0
    if not pid:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if child is not None and child.pid == pid:  # our child: reap it (a zombie still answers kill 0)
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        return
    if not gone(pid, timeout):
        os.kill(pid, signal.SIGKILL)


def gone(pid: int, timeout: float, interval: float = 0.1) -> bool:
    """Whether process ``pid`` is gone within ``timeout`` seconds (polled with signal 0)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(interval)
    return False


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A private redis-server (no persistence) on a free port; yields ``redis://127.0.0.1:PORT/0``."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    pidfile = folder / "redis.pid"
    log = folder / "redis.log"
    subprocess.run(
        [
            "redis-server", "--bind", HOST, "--port", str(port), "--save", "", "--appendonly", "no",
            "--daemonize", "yes", "--pidfile", str(pidfile), "--logfile", str(log), "--dir", str(folder),
        ],
        check=True,
    )
    try:
        def answers() -> bool:
            try:
                with socket.create_connection((HOST, port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    return sock.recv(16).startswith(b"+PONG")
            except OSError:
                return False

        wait_for(answers, "redis-server", 10.0, log)
        yield f"redis://{HOST}:{port}/0"
    finally:
        _stop(pidfile)


def scrapyd_conf(folder: Path, port: int, extra: str = "") -> str:
    """A scrapyd.conf for a test server: loopback, ``port``, every directory inside ``folder``."""
    return (
        "[scrapyd]\n"
        f"{extra}"
        f"bind_address = {HOST}\n"
        f"http_port = {port}\n"
        "poll_interval = 1.0\n"
        "max_proc = 4\n"
        f"eggs_dir = {folder / 'eggs'}\n"
        f"logs_dir = {folder / 'logs'}\n"
        f"dbs_dir = {folder / 'dbs'}\n"
        "items_dir =\n"
    )


@contextmanager
def scrapyd_server(folder: Path, extra_conf: str = "") -> Iterator[str]:
    """The real ``scrapyd`` started in ``folder`` (it reads ./scrapyd.conf); yields its base URL.

    ``extra_conf``: more ``name = value`` lines for its [scrapyd] section (username, password).
    """
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (folder / "scrapyd.conf").write_text(scrapyd_conf(folder, port, extra_conf))
    pidfile = folder / "scrapyd.pid"
    log = folder / "scrapyd.log"
    scrapyd = command("scrapyd")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    process = subprocess.Popen(
        [scrapyd, f"--pidfile={pidfile}", "-l", str(log)],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    url = f"http://{HOST}:{port}/"
    try:
        def answers() -> bool:
            try:
                with urllib.request.urlopen(url + "daemonstatus.json", timeout=1) as response:
                    return json.load(response).get("status") == "ok"
            except urllib.error.HTTPError as exc:
                return exc.code == 401  # up, and asking for the password
            except OSError:
                return False

        wait_for(answers, "scrapyd", 30.0, log)
        yield url
    finally:
        _stop(pidfile, child=process)
        if process.poll() is None:
            process.kill()
            process.wait()


def copy_project(target: Path) -> Path:
    """A copy of the deployable project files (what ``scrapyd-deploy`` packs) in ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in PROJECT_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            shutil.copy2(source, target / name)
    return target


def deploy(
    project: Path, scrapyd_url: str, target: str = "", **env_vars: str
) -> subprocess.CompletedProcess[str]:
    """``scrapyd-deploy test`` from a project copy whose scrapy.cfg gains a ``test`` target.

    ``target``: more lines for that section (username, password); ``env_vars``: its environment.
    """
    with open(project / "scrapy.cfg", "a", encoding="utf-8") as cfg:
        cfg.write(f"\n[deploy:test]\nurl = {scrapyd_url}\nproject = linkspider\n{target}")
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"} | env_vars
    return subprocess.run([command("scrapyd-deploy"), "test"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=180)


@contextmanager
def deployed_scrapyd(folder: Path) -> Iterator[str]:
    """A real scrapyd in ``folder`` with this project deployed by ``scrapyd-deploy``; yields its URL."""
    with scrapyd_server(folder / "server") as url:
        done = deploy(copy_project(folder / "project"), url)
        if done.returncode != 0 or '"status": "ok"' not in done.stdout:
            raise RuntimeError(f"scrapyd-deploy failed:\n{done.stderr}\n{done.stdout}")
        yield url


def post_form(url: str, fields: list[tuple[str, str]], auth: tuple[str, str] | None = None) -> dict:
    """POST ``fields`` as a form to ``url`` (HTTP basic ``auth``); the JSON answer."""
    data = urllib.parse.urlencode(fields).encode()
    request = urllib.request.Request(url, data=data)
    if auth:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def get_json(url: str) -> dict:
    """GET ``url``; the JSON answer."""
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)

