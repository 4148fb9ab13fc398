"""Runs SecantusDB as a child process (never imported: it is GPL-2.0)."""
from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time

log = logging.getLogger("statsapi.embedded_db")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class EmbeddedDatabase:
    """A SecantusDB server on a free loopback port, storing under `storage_path`."""

    def __init__(self, storage_path: str, port: int | None = None, host: str = "127.0.0.1"):
        self.storage_path = storage_path
        self.host = host
        self.port = port or free_port(host)
        self.process: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        # retryWrites=false: SecantusDB's retryable-write bookkeeping slows every write.
        return f"mongodb://{self.host}:{self.port}/?directConnection=true&retryWrites=false"

    def start(self, timeout: float = 60.0) -> "EmbeddedDatabase":
        if self.storage_path != ":memory:":
            os.makedirs(self.storage_path, exist_ok=True)
        log_path = os.path.join(self.storage_path, "secantus.log") if self.storage_path != ":memory:" else os.devnull
        self._log_file = open(log_path, "ab")
        cmd = [sys.executable, "-m", "secantus", "--host", self.host, "--port", str(self.port),
               "--storage-path", self.storage_path, "--log-level", "WARNING"]
        self.process = subprocess.Popen(cmd, stdout=self._log_file, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        self.wait_ready(timeout)
        log.info("embedded database listening on %s:%s (data in %s)", self.host, self.port, self.storage_path)
        return self

    def wait_ready(self, timeout: float) -> None:
        from pymongo import MongoClient  # the sync driver is fine before the loop runs

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"embedded database exited with code {self.process.returncode}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    pass
                client = MongoClient(self.uri, serverSelectionTimeoutMS=1000)
                try:
                    client.admin.command("ping")
                    return
                finally:
                    client.close()
            except Exception:
                time.sleep(0.1)
        raise RuntimeError("embedded database did not answer a ping in time")

    def stop(self, timeout: float = 15.0) -> None:
        proc, self.process = self.process, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self._log_file.close()
        log.info("embedded database stopped")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
