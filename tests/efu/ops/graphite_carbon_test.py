#!/usr/bin/env python3
"""efu's Graphite output against a real Carbon (Debian graphite-carbon's carbon-cache, started
here on free ports with a 1-second whisper retention), stopped and restarted while UDP traffic
flows. Asserts:
- every counter Carbon stored for the last interval equals efu's --stats-json (read back with
  whisper-fetch), and intervals after the restart were stored;
- the outage was counted (graphite.failed.connect, graphite.dropped.intervals) and efu
  reconnected (graphite.connects >= 2);
- the data path kept exact counts through it (sent == received + every loss counter)."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from support.checks import check, finish
from support.ops import Client, Traffic, udp_efu
from support.ports import free_port
from support.waits import stop_process, wait_ready, wait_until, workdir

INSTRUMENT = "opsgraphite"
PREFIX = f"efu.{INSTRUMENT}.0."


class Carbon:
    """carbon-cache in the foreground, all of its files under `root`."""

    def __init__(self, root: Path, line_port: int):
        self.root, self.line_port = root, line_port
        (root / "whisper").mkdir(parents=True, exist_ok=True)
        (root / "log").mkdir(exist_ok=True)
        (root / "storage-schemas.conf").write_text(
            "[everything]\npattern = .*\nretentions = 1s:2h\n")
        (root / "carbon.conf").write_text(f"""[cache]
STORAGE_DIR = {root}/
LOCAL_DATA_DIR = {root}/whisper/
CONF_DIR = {root}/
LOG_DIR = {root}/log/
PID_DIR = {root}/
USER =
MAX_CACHE_SIZE = inf
MAX_UPDATES_PER_SECOND = inf
MAX_CREATES_PER_MINUTE = inf
LINE_RECEIVER_INTERFACE = 127.0.0.1
LINE_RECEIVER_PORT = {line_port}
ENABLE_UDP_LISTENER = False
PICKLE_RECEIVER_INTERFACE = 127.0.0.1
PICKLE_RECEIVER_PORT = {free_port()}
CACHE_QUERY_INTERFACE = 127.0.0.1
CACHE_QUERY_PORT = {free_port()}
WHISPER_AUTOFLUSH = True
LOG_LISTENER_CONN_SUCCESS = False
""")
        self.proc = None

    def start(self):
        self.log = open(self.root / "carbon.out", "a")
        self.proc = subprocess.Popen(
            ["carbon-cache", f"--config={self.root}/carbon.conf", "--nodaemon",
             f"--pidfile={self.root}/carbon.pid", f"--logdir={self.root}/log", "start"],
            stdout=self.log, stderr=subprocess.STDOUT)

        def listening():
            try:
                socket.create_connection(("127.0.0.1", self.line_port), timeout=1).close()
                return True
            except OSError:
                return False
        wait_ready(self.proc, listening, "carbon-cache", self.root / "carbon.out")

    def stop(self):
        if self.proc:
            stop_process(self.proc)
        self.proc = None
        self.log.close()

    def series(self, metric: str) -> list[tuple[int, float]]:
        """Stored (time, value) points of one metric, nulls dropped."""
        path = self.root / "whisper" / (metric.replace(".", "/") + ".wsp")
        if not path.exists():
            return []
        r = subprocess.run(["whisper-fetch", "--json",
                            f"--from={int(time.time()) - 3600}", str(path)],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            return []
        data = json.loads(r.stdout)
        start, step = data["start"], data["step"]
        return [(start + i * step, v) for i, v in enumerate(data["values"]) if v is not None]


def main() -> int:
    tmp = workdir("efu-ops-graphite-")
    carbon = Carbon(tmp / "carbon", free_port())
    carbon.start()
    efu = None
    try:
        command_port = free_port()
        efu = udp_efu(["--graphite", f"127.0.0.1:{carbon.line_port}", "--instrument", INSTRUMENT,
                       "--stats-interval", "0.5", "--command-port", str(command_port)], tmp)
        c = Client(command_port)
        # Carbon stores efu's counters (zeros until traffic starts) before the traffic begins, so
        # however slowly that goes on a loaded machine, the outage below starts with the traffic
        # and ends (2.5 s later) well inside its 12 s.
        wait_until(lambda: carbon.series(PREFIX + "receive.packets"), 30,
                   "Carbon to store efu's receive.packets")
        traffic = Traffic(efu.udp_port, 300_000, 25_000)
        carbon.stop()                         # Carbon goes away in the middle of the traffic
        stopped_at = time.time()
        time.sleep(2.5)
        check(traffic.running(), "the outage fell inside the traffic")
        carbon.start()
        traffic.finish()
        # efu retries with backoff (1, 2, 4 s ...): it reconnects within seconds.
        wait_until(lambda: int(c.ask("STAT_GET_NAME graphite.connects").split()[2]) >= 2, 40,
                   "efu to reconnect to Carbon")
        time.sleep(1.5)
        check(c.ask("EXIT") == b"<OK>", "EXIT")
        code = efu.wait(30)
        check(code == 0, f"efu exits 0 (code {code})")
        stats = efu.stats()
        efu = None

        check(stats["graphite.failed.connect"] >= 1,
              f"the outage was counted: graphite.failed.connect {stats['graphite.failed.connect']}")
        check(stats["graphite.dropped.intervals"] >= 1,
              f"intervals not sent were counted: {stats['graphite.dropped.intervals']}")
        check(stats["graphite.connects"] >= 2, f"graphite.connects {stats['graphite.connects']} >= 2")
        traffic.check_accounting(stats, "graphite restart")

        # The last stored point of every counter is efu's final value. Left out: the graphite.*
        # counters, which count the sending of that last interval, and the command port's
        # connected-clients gauge, which drops to 0 when the port closes after it.
        expected = {k: v for k, v in stats.items()
                    if not k.startswith("graphite.") and k != "command.clients.connected"}

        def stored_final():
            mismatches = {}
            for name, value in expected.items():
                points = carbon.series(PREFIX + name)
                last = points[-1][1] if points else None
                if last != value:
                    mismatches[name] = (last, value)
            return mismatches
        deadline = time.monotonic() + 60
        mismatches = stored_final()
        while mismatches and time.monotonic() < deadline:
            time.sleep(1)
            mismatches = stored_final()
        check(not mismatches, f"Carbon holds efu's final value of all {len(expected)} counters"
              + (f"; differing (stored, efu): {mismatches}" if mismatches else ""))
        after = [t for t, _ in carbon.series(PREFIX + "receive.packets") if t > stopped_at + 2.5]
        check(len(after) >= 2, f"points after the restart were stored ({len(after)})")
    finally:
        if efu is not None:
            efu.kill()
        carbon.stop()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
