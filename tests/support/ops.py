"""What the operations tests (tests/efu/ops) and the control-plane benchmark share: efu --module
udp --broker none on a free port, a command-port client that behaves like the reference's
efushell SocketDriver, and efu-udpgen traffic with exact accounting. Standard library only;
every wait is bounded."""
from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

from support.checks import check
from support.efu import Efu, binary
from support.loss import LOST_DATAGRAMS, REJECTED_DATAGRAMS, lost_datagrams, rejected_datagrams
from support.ports import free_udp_port
from support.waits import wait_until


def udp_efu(extra: list[str], tmp: Path, module: str = "udp", env: dict[str, str] | None = None,
            build: Path | str | None = None) -> Efu:
    """efu --module <module> --broker none on 127.0.0.1 and a free UDP port (efu.udp_port),
    ready when its log says "running"."""
    port = free_udp_port()
    efu = Efu(["--module", module, "--broker", "none", "--bind", "127.0.0.1", "--port", str(port),
               "--stats-interval", "0.2", "--ring-size", "65536", *extra], tmp,
              binary_path=binary("efu", build), env=env, ready_text="info running")
    efu.udp_port = port
    return efu


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
    """efu-udpgen to efu's UDP port, then a few empty datagrams (rejected.datagrams), so that
    in efu's final stats (which read the socket's kernel drop count at stop)
    sent == process.packets + lost.datagrams + rejected.datagrams."""

    EMPTIES = 3
    # What efu publishes while it runs (command port), for seen(): a datagram that reached its
    # socket is received, lost or rejected; one dropped as ring full is received and lost both.
    LIVE = ("receive.packets", "receive.dropped.ring_full", LOST_DATAGRAMS, REJECTED_DATAGRAMS)

    @staticmethod
    def seen(values: dict) -> int:
        """The datagrams efu accounts for, from the LIVE values."""
        return (values["receive.packets"] - values["receive.dropped.ring_full"]
                + lost_datagrams(values) + rejected_datagrams(values))

    def __init__(self, port: int, count: int, rate_pps: int, size: int = 1472,
                 build: Path | str | None = None):
        self.port, self.count = port, count
        self.proc = subprocess.Popen(
            [str(binary("efu-udpgen", build)), "--host", "127.0.0.1", "--port", str(port),
             "--count", str(count), "--size", str(size), "--rate-pps", str(rate_pps),
             "--batch", "16", "--stats-interval", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
        """Everything sent is processed or lost or rejected; everything received is processed
        or counted as ring-full."""
        g = lambda k: stats.get(k, 0)  # noqa: E731
        sent = self.sent + self.EMPTIES
        lost, rejected = lost_datagrams(stats), rejected_datagrams(stats)
        check(g("process.packets") + lost + rejected == sent,
              f"{label}: sent {sent} == processed {g('process.packets')} + lost.datagrams {lost} "
              f"+ rejected.datagrams {rejected}")
        check(g("receive.packets") == g("process.packets") + g("receive.dropped.ring_full"),
              f"{label}: received {g('receive.packets')} == processed {g('process.packets')} + "
              f"ring full {g('receive.dropped.ring_full')}")
        check(g("udp.packets") == g("process.packets"),
              f"{label}: the plugin saw every processed packet ({g('udp.packets')})")
        print(f"     {label}: {self.sent} datagrams, lost by the host {lost}")


def value_of(client: Client, name: str) -> int:
    reply = client.ask(f"STAT_GET_NAME {name}").decode()
    parts = reply.split()
    if len(parts) != 3 or parts[0] != "STAT_GET_NAME":
        raise RuntimeError(f"unexpected reply {reply!r}")
    return int(parts[2])


def wait_until_accounted(client: Client, traffic: Traffic, timeout_s=10) -> int:
    """Waits until efu's published counters account for every datagram the traffic sent
    (received or in a loss counter: a loaded machine may drop some, never silently); returns
    receive.packets as then published."""
    def accounted():
        values = {n: value_of(client, n) for n in Traffic.LIVE}
        return values if Traffic.seen(values) == traffic.sent + traffic.EMPTIES else None
    return wait_until(accounted, timeout_s,
                      f"efu to account for the {traffic.sent} datagrams sent")["receive.packets"]
