"""Shared pieces of the operations tests: efu as a child process, a command-port client that
behaves like the reference's efushell SocketDriver, UDP traffic with exact accounting, and the
protocol tables of docs/operations.md. Standard library only; every wait is bounded."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(os.environ.get("EFU_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("EFU_BUILD_DIR", SOURCE / "build"))
EFU = BUILD / "bin" / "efu"
UDPGEN = BUILD / "bin" / "efu-udpgen"

failures: list[str] = []


def check(condition: bool, message: str) -> bool:
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)
    return condition


def finish() -> int:
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


_PORTS_GIVEN = set()


def free_port(kind=socket.SOCK_STREAM) -> int:
    """A port nobody holds now, and never one this process was given before: the kernel may
    pick the same free port twice in a row, and a test that takes several (Carbon's three) needs
    them distinct."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port
    raise RuntimeError("no free port in 100 tries")


def wait_until(predicate, timeout_s: float, what: str, interval_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise TimeoutError(f"{what}: not within {timeout_s} s")


def wait_ready(proc: subprocess.Popen, probe, what: str, log: Path, timeout_s: float = 60,
               interval_s: float = 0.1):
    """Waits until probe() is true; fails at once, with the log's tail, if the server exits."""
    def ready():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited {proc.returncode}: {log.read_text()[-2000:]}")
        return probe()
    wait_until(ready, timeout_s, what, interval_s)


def stop_process(proc: subprocess.Popen, timeout_s: float = 30):
    """SIGTERM to a server this test started (by its handle), SIGKILL if it does not end."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


class Efu:
    """efu --module udp --broker none on 127.0.0.1, with its log and --stats-json in a temp dir."""

    def __init__(self, extra: list[str], tmp: Path, module: str = "udp",
                 env: dict[str, str] | None = None):
        self.udp_port = free_port(socket.SOCK_DGRAM)
        self.stats_json = tmp / "stats.json"
        self.err_path, self.out_path = tmp / "efu.err", tmp / "efu.out"
        self.cmd = [str(EFU), "--module", module, "--broker", "none", "--bind", "127.0.0.1",
                    "--port", str(self.udp_port), "--stats-json", str(self.stats_json),
                    "--stats-interval", "0.2", "--ring-size", "65536", *extra]
        self.module = module
        with open(self.err_path, "w") as err, open(self.out_path, "w") as out:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=err,
                                         env=None if env is None else dict(os.environ, **env))
        try:
            wait_until(lambda: "info running" in self.err() or self.proc.poll() is not None,
                       30, "efu to start")
        except TimeoutError:
            self.kill()
            raise
        if self.proc.poll() is not None:
            raise RuntimeError(f"efu exited {self.proc.returncode} at start:\n{self.err()}")

    def err(self) -> str:
        return self.err_path.read_text()

    def out(self) -> str:
        return self.out_path.read_text()

    def log_value(self, pattern: str) -> str:
        m = re.search(pattern, self.err())
        if not m:
            raise RuntimeError(f"'{pattern}' not in the efu log")
        return m.group(1)

    def wait(self, timeout_s: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout_s: float = 30) -> dict:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.wait(timeout_s)
        if code is None:
            self.kill()
            raise RuntimeError(f"efu did not stop within {timeout_s} s")
        if code != 0:
            raise RuntimeError(f"efu exited {code}:\n{self.err()[-3000:]}")
        return self.stats()

    def stats(self) -> dict:
        return json.loads(self.stats_json.read_text())

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait(timeout=10)


class Client:
    """Like the reference's SocketDriver.SimpleSocket: a request is the command + '\\n' in one
    send(), the reply is one recv(2048)."""

    def __init__(self, port: int, timeout_s: float = 5):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)

    def ask(self, command: str | bytes) -> bytes:
        data = command if isinstance(command, bytes) else (command + "\n").encode()
        self.sock.sendall(data)
        return self.sock.recv(2048)

    def at_eof(self, timeout_s: float = 5) -> bool:
        """True if the server closed the connection (EOF or reset) within the time."""
        self.sock.settimeout(timeout_s)
        try:
            return self.sock.recv(2048) == b""
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self):
        self.sock.close()


class Traffic:
    """efu-udpgen to efu's UDP port, then a few empty datagrams (receive.dropped.empty), so that
    in efu's final stats (which read the socket's kernel drop count at stop)
    sent == receive.packets + receive.dropped.kernel + receive.dropped.empty + receive.truncated."""

    EMPTIES = 3
    # What happened to each datagram that reached efu's socket: one of these counts it.
    SEEN = ("receive.packets", "receive.dropped.kernel", "receive.dropped.empty",
            "receive.truncated")

    def __init__(self, port: int, count: int, rate_pps: int, size: int = 1472):
        self.port, self.count = port, count
        self.proc = subprocess.Popen(
            [str(UDPGEN), "--host", "127.0.0.1", "--port", str(port), "--count", str(count),
             "--size", str(size), "--rate-pps", str(rate_pps), "--batch", "16",
             "--stats-interval", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.sent = None

    def running(self) -> bool:
        return self.proc.poll() is None

    def finish(self, timeout_s: float = 120) -> int:
        out, err = self.proc.communicate(timeout=timeout_s)
        if self.proc.returncode != 0:
            raise RuntimeError(f"efu-udpgen failed: {err}")
        line = [l for l in out.splitlines() if "sent packets=" in l][-1]
        self.sent = int(re.search(r"sent packets=(\d+)", line).group(1))
        time.sleep(0.3)  # let efu-rx drain its socket
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _ in range(self.EMPTIES):
                s.sendto(b"", ("127.0.0.1", self.port))
                time.sleep(0.05)
        return self.sent

    def check_accounting(self, stats: dict, label: str):
        """Everything sent is received or in a loss counter; everything received is processed
        or counted as ring-full."""
        g = lambda k: stats.get(k, 0)
        sent = self.sent + self.EMPTIES
        seen = sum(g(name) for name in self.SEEN)
        check(seen == sent,
              f"{label}: sent {sent} == received {g('receive.packets')} + kernel drops "
              f"{g('receive.dropped.kernel')} + empty {g('receive.dropped.empty')} + truncated "
              f"{g('receive.truncated')}")
        check(g("receive.packets") == g("process.packets") + g("receive.dropped.ring_full"),
              f"{label}: received {g('receive.packets')} == processed {g('process.packets')} + "
              f"ring full {g('receive.dropped.ring_full')}")
        lost_by_host = g("receive.dropped.kernel") + g("receive.dropped.ring_full")
        check(g("udp.packets") == g("process.packets"),
              f"{label}: the plugin saw every processed packet ({g('udp.packets')})")
        print(f"     {label}: {self.sent} datagrams, lost by the host {lost_by_host}")


# ---- docs/operations.md ---------------------------------------------------------------------

DOC = SOURCE / "docs" / "operations.md"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _code(cell: str) -> str | None:
    m = re.fullmatch(r"`([^`]*)`", cell)
    return m.group(1) if m else None


def doc_tables() -> tuple[list[tuple[int, str, str]], list[tuple[str, str]]]:
    """The command table (number, request, reply) and the table of other replies (request,
    reply) from docs/operations.md. A request that is prose, not code, is returned as is."""
    commands, others = [], []
    header = None
    for line in DOC.read_text().splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells
            continue
        if set(line) <= set("|- "):
            continue
        if header[:3] == ["#", "request", "reply"]:
            commands.append((int(cells[0]), _code(cells[1]), _code(cells[2])))
        elif header == ["request", "reply"]:
            others.append((_code(cells[0]) or cells[0], _code(cells[1])))
    return commands, others


def template_regex(template: str, values: dict[str, str]) -> re.Pattern:
    """A documented reply as a regex: literal text exactly, each {name} as values[name] (itself
    a regex)."""
    out, pos = "", 0
    for m in re.finditer(r"\{(\w+)\}", template):
        out += re.escape(template[pos:m.start()]) + "(?:" + values[m.group(1)] + ")"
        pos = m.end()
    return re.compile(out + re.escape(template[pos:]))


def tmpdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
