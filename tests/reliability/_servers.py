"""Throwaway Redis and PostgreSQL servers that a test may kill and restart.

Not the shared servers of ``scripts/ci_services.sh`` (other tests use those): each is a
new instance on a free loopback port, with its data in a temporary folder, stopped and
removed afterwards. Redis keeps an append-only file fsynced at every write, so a
``SIGKILL`` loses nothing it acknowledged; PostgreSQL is stopped with ``-m immediate``
(no shutdown checkpoint: it recovers from its WAL at restart, as after a crash).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ._backends import unusable


def free_port() -> int:
    """A TCP port nobody listens on, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, up: bool, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.2)
            listening = sock.connect_ex(("127.0.0.1", port)) == 0
        if listening == up:
            return
        time.sleep(0.05)
    raise TimeoutError(f"port {port} is still {'down' if up else 'up'} after {timeout} s")


class RedisServer:
    """A ``redis-server`` process: :meth:`start`, :meth:`kill` (SIGKILL), :attr:`url`."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            unusable("redis-server is not installed (scripts/ci_services.sh installs it)")
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        options = {
            "bind": "127.0.0.1",
            "port": str(self.port),
            "save": "",
            "appendonly": "yes",
            "appendfsync": "always",
            "dir": str(self.folder),
            "logfile": str(self.folder / "redis.log"),
        }
        command = [self.binary]
        for name, value in options.items():
            command += [f"--{name}", value]
        self._process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, up=True)

    def kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=10)
            self._process = None
        _wait_for_port(self.port, up=False)


class PostgresServer:
    """A PostgreSQL cluster: :meth:`start`, :meth:`kill` (immediate stop), :attr:`url`."""

    def __init__(self, folder: Path) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        pg_ctl = found[-1] if found else shutil.which("pg_ctl")
        if pg_ctl is None:
            unusable("PostgreSQL is not installed (scripts/ci_services.sh installs it)")
        self.bin = Path(pg_ctl).parent
        self.folder = folder
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        root = os.geteuid() == 0
        if root:  # the server refuses to run as root: its folder belongs to postgres
            shutil.chown(folder, "postgres", "postgres")
        self._as = ["runuser", "-u", "postgres", "--"] if root else []
        initdb = [str(self.bin / "initdb"), "-D", str(folder / "data"), "-U", "postgres"]
        subprocess.run(
            [*self._as, *initdb, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"],
            check=True,
            capture_output=True,
        )

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self._as, str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), *args],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        self._ctl("-l", str(self.folder / "server.log"), "-w", "-o", options, "start")
        _wait_for_port(self.port, up=True)

    def kill(self) -> None:
        self._ctl("-m", "immediate", "-w", "stop")
        _wait_for_port(self.port, up=False)

    def stop_quietly(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError):  # already stopped
            self._ctl("-m", "immediate", "-w", "stop")


@contextmanager
def own_redis() -> Iterator[RedisServer]:
    folder = Path(tempfile.mkdtemp(prefix="mc_restart_redis_"))
    server = RedisServer(folder)
    try:
        server.start()
        yield server
    finally:
        server.kill()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def own_postgres() -> Iterator[PostgresServer]:
    # not under pytest's tmp_path: the postgres user must be able to enter the folder
    folder = Path(tempfile.mkdtemp(prefix="mc_restart_pg_"))
    try:
        server = PostgresServer(folder)
        server.start()
        try:
            yield server
        finally:
            server.stop_quietly()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
