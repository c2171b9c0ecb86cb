"""Bounded waits: every wait in the tests ends by a deadline, and a child process that exits
meanwhile ends it at once (for a condition, for text in a log, for a server the test started to
be ready or gone). Nothing asserts on how long a wait took. And the test's work directory."""
from __future__ import annotations

import signal
import subprocess
import tempfile
import time
from pathlib import Path

from support.checks import fail


def wait_until(predicate, timeout_s: float, what: str, proc: subprocess.Popen | None = None,
               interval_s: float = 0.05):
    """predicate()'s value as soon as it is true. Raises TimeoutError after timeout_s, and
    RuntimeError if `proc` exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with code {proc.returncode} first")
        time.sleep(interval_s)
    raise TimeoutError(f"{what}: not within {timeout_s} s")


def wait_for(predicate, what: str, timeout_s: float, proc: subprocess.Popen | None = None,
             interval_s: float = 0.1):
    """wait_until() that fails the test instead of raising."""
    try:
        return wait_until(predicate, timeout_s, what, proc, interval_s)
    except (TimeoutError, RuntimeError) as e:
        fail(str(e))


def wait_for_text(path, text: str, timeout_s: float, proc: subprocess.Popen | None = None):
    """Waits until `text` appears in the file at `path` (a log), failing the test if not."""
    def present():
        with open(path, errors="replace") as f:
            return text in f.read()
    wait_for(present, f"'{text}' in {path}", timeout_s, proc, interval_s=0.05)


def wait_ready(proc: subprocess.Popen, probe, what: str, log, timeout_s: float = 60,
               interval_s: float = 0.1):
    """Waits until probe() of a server this test started is true; fails at once, with the end of
    its log, if the server exits."""
    def ready():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited {proc.returncode}: {open(log).read()[-2000:]}")
        return probe()
    wait_until(ready, timeout_s, what, interval_s=interval_s)


def stop_process(proc: subprocess.Popen, timeout_s: float = 30):
    """SIGTERM to a server this test started (by its handle), SIGKILL if it does not end."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def workdir(prefix: str) -> Path:
    """A new temporary directory for one test's files (left for a look after a failure)."""
    return Path(tempfile.mkdtemp(prefix=prefix))
