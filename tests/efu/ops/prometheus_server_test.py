#!/usr/bin/env python3
"""efu's /metrics against a real Prometheus server (Debian prometheus, started here on a free port
with a scrape configuration for efu). Asserts:
- `promtool check metrics` accepts efu's exposition;
- Prometheus scraped efu (up == 1) and its HTTP API returns efu_receive_packets_total (and the
  other packet counters) equal to efu's --stats-json, with the instrument and module labels;
- per-thread CPU is exported;
- the data path kept exact counts (sent == received + every loss counter)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from support.checks import check, finish
from support.ops import Client, Traffic, udp_efu, wait_until_accounted
from support.ports import free_port
from support.waits import stop_process, wait_ready, wait_until, workdir

INSTRUMENT = "opsprom"


def http_get(url: str, timeout_s: float = 5) -> str:
    with urllib.request.urlopen(url, timeout=timeout_s) as r:
        return r.read().decode()


class Prometheus:
    def __init__(self, root: Path, target: str):
        self.root = root
        self.port = free_port()
        root.mkdir(parents=True, exist_ok=True)
        (root / "prometheus.yml").write_text(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: efu
    static_configs:
      - targets: ['{target}']
""")
        self.log = open(root / "prometheus.log", "w")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={root}/prometheus.yml",
             f"--storage.tsdb.path={root}/data", f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT)

        def ready():
            try:
                return "Ready" in http_get(f"http://127.0.0.1:{self.port}/-/ready", 1)
            except OSError:
                return False
        wait_ready(self.proc, ready, "prometheus", root / "prometheus.log", interval_s=0.2)

    def query(self, expr: str) -> list[dict]:
        url = (f"http://127.0.0.1:{self.port}/api/v1/query?"
               + urllib.parse.urlencode({"query": expr}))
        body = json.loads(http_get(url))
        return body["data"]["result"] if body.get("status") == "success" else []

    def value(self, expr: str) -> float | None:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None

    def stop(self):
        stop_process(self.proc)
        self.log.close()


def main() -> int:
    tmp = workdir("efu-ops-prometheus-")
    command_port = free_port()
    efu = udp_efu(["--metrics", "127.0.0.1:0", "--instrument", INSTRUMENT,
                   "--stats-interval", "0.5", "--command-port", str(command_port)], tmp)
    prometheus = None
    try:
        metrics_url = efu.log_value(r"metrics: serving (http://\S+/metrics)")
        target = metrics_url.split("/")[2]

        prometheus = Prometheus(tmp / "prometheus", target)
        c = Client(command_port)
        traffic = Traffic(efu.udp_port, 100_000, 25_000)
        traffic.finish()
        # Settled: the published counters account for every datagram sent (a fixed sleep was not
        # enough on a loaded machine, and the later comparisons need values that no longer move).
        received = wait_until_accounted(c, traffic, 30)
        check(received > 0, f"efu received {received} packets")
        exposition = http_get(metrics_url)
        r = subprocess.run(["promtool", "check", "metrics"], input=exposition, capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 0, f"promtool check metrics accepts efu's /metrics "
                                 f"(exit {r.returncode}) {r.stdout}{r.stderr}")
        check("efu_thread_cpu_seconds_total{" in exposition and "efu_receive_packets_total{" in exposition,
              "the exposition has the packet counters and per-thread CPU")
        selector = f'efu_receive_packets_total{{instrument="{INSTRUMENT}",module="udp"}}'
        scraped = wait_until(lambda: (lambda v: v if v == received else None)(prometheus.value(selector)),
                             40, f"Prometheus to have scraped receive.packets == {received}",
                             interval_s=0.5)
        check(scraped == received, f"Prometheus API: {selector} == {received}")
        check(prometheus.value('up{job="efu"}') == 1.0, "Prometheus: up{job=\"efu\"} == 1")
        cpu = prometheus.query(f'efu_thread_cpu_seconds_total{{instrument="{INSTRUMENT}"}}')
        threads = sorted({s["metric"].get("thread") for s in cpu})
        check("efu-rx" in threads and "efu-proc0" in threads,
              f"per-thread CPU is scraped for efu-rx and efu-proc0 ({threads})")
        time.sleep(1.5)  # one more scrape of the settled values
        scraped_values = {name: prometheus.value(f'efu_{name.replace(".", "_")}_total'
                                                 f'{{instrument="{INSTRUMENT}"}}')
                          for name in ("receive.packets", "process.packets", "udp.packets",
                                       "receive.dropped.kernel", "receive.dropped.ring_full",
                                       "receive.dropped.empty")}

        check(c.ask("EXIT") == b"<OK>", "EXIT")
        code = efu.wait(30)
        check(code == 0, f"efu exits 0 (code {code})")
        stats = efu.stats()
        for name, value in scraped_values.items():
            check(value == stats.get(name), f"Prometheus {name} {value} == --stats-json {stats.get(name)}")
        traffic.check_accounting(stats, "prometheus")
    finally:
        efu.kill()
        if prometheus is not None:
            prometheus.stop()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
