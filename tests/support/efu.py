"""The one way the tests run efu: a child process with its arguments, its log in a work
directory, ready when it says so (or when its UDP sockets are bound), stopped with SIGTERM, and
its final counters read from --stats-json. Every wait is bounded; only this process's own child
is ever signalled, by its handle.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

from support.ports import udp_sockets_bound
from support.waits import wait_until

SOURCE = Path(os.environ.get("EFU_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("EFU_BUILD_DIR", SOURCE / "build"))


def binary(name: str, build: Path | str | None = None) -> Path:
    """bin/<name> of a build directory (default: $EFU_BUILD_DIR, else <source>/build)."""
    return Path(build or BUILD) / "bin" / name


class EfuExited(RuntimeError):
    """efu ended before it was ready (code and log kept for the caller to judge)."""

    def __init__(self, code: int, log: str):
        super().__init__(f"efu exited {code} at start:\n{log[-3000:]}")
        self.code, self.log = code, log


class Efu:
    """efu <args>, started and ready on return.

    stderr goes to <workdir>/efu.log and stdout to <workdir>/efu.out (inherit_output: both stay
    this process's). --stats-json <workdir>/stats.json is added unless args name one. Ready when
    `ready_text` is in the log, or, with `ready_udp_port`, when `ready_sockets` sockets are bound
    to that port (efu --log-level warn says nothing at start). `prefix` goes in front of the
    binary (e.g. ip netns exec NS)."""

    def __init__(self, args: list[str], workdir: Path | str, *, binary_path: Path | str | None = None,
                 prefix: list[str] = (), env: dict[str, str] | None = None,
                 ready_text: str = " running", ready_udp_port: int | None = None,
                 ready_sockets: int = 1, ready_timeout_s: float = 30, inherit_output: bool = False):
        self.workdir = Path(workdir)
        self.log_path, self.out_path = self.workdir / "efu.log", self.workdir / "efu.out"
        self.stats_path = self.workdir / "stats.json"
        args = list(args)
        if "--stats-json" in args:
            self.stats_path = Path(args[args.index("--stats-json") + 1])
        else:
            args += ["--stats-json", str(self.stats_path)]
        self.cmd = [*prefix, str(binary_path or binary("efu")), *args]
        self.inherit_output = inherit_output
        full_env = None if env is None else dict(os.environ, **env)
        if inherit_output:
            self.proc = subprocess.Popen(self.cmd, env=full_env)
        else:
            with open(self.log_path, "w") as err, open(self.out_path, "w") as out:
                self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=err, env=full_env)
        if ready_udp_port is not None:
            ready = lambda: udp_sockets_bound(ready_udp_port) >= ready_sockets  # noqa: E731
        else:
            ready = lambda: ready_text in self.log()  # noqa: E731
        self._wait_ready(ready, ready_timeout_s)

    def _wait_ready(self, ready, timeout_s: float):
        try:
            wait_until(lambda: ready() or self.proc.poll() is not None, timeout_s, "efu to start",
                       interval_s=0.05)
        except TimeoutError:
            self.kill()
            raise TimeoutError(f"efu did not start within {timeout_s} s:\n{self.log()[-3000:]}")
        if self.proc.poll() is not None:
            raise EfuExited(self.proc.returncode, self.log())

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        """What efu wrote to stderr so far (empty with inherit_output)."""
        return "" if self.inherit_output else self.log_path.read_text(errors="replace")

    def out(self) -> str:
        return "" if self.inherit_output else self.out_path.read_text(errors="replace")

    def log_value(self, pattern: str) -> str:
        """Group 1 of the first match of `pattern` in the log."""
        m = re.search(pattern, self.log())
        if not m:
            raise RuntimeError(f"'{pattern}' not in the efu log")
        return m.group(1)

    def wait(self, timeout_s: float) -> int | None:
        """The exit code, or None if efu is still running after timeout_s."""
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def terminate(self, timeout_s: float = 30, sig: int = signal.SIGTERM) -> int:
        """`sig` (SIGTERM), then the exit code; SIGKILL and RuntimeError if it does not end."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.wait(timeout_s)
        if code is None:
            self.kill()
            raise RuntimeError(f"efu did not stop within {timeout_s} s of signal {sig}")
        return code

    def stop(self, timeout_s: float = 30, sig: int = signal.SIGTERM) -> dict:
        """terminate(); RuntimeError with the log's end unless efu exited 0; the final counters."""
        code = self.terminate(timeout_s, sig)
        if code != 0:
            raise RuntimeError(f"efu exited {code}: {' '.join(self.cmd)}\n{self.log()[-3000:]}")
        return self.stats()

    def stats(self) -> dict:
        """The counters of --stats-json (the final ones once efu has stopped)."""
        return json.loads(self.stats_path.read_text())

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait(timeout=10)
