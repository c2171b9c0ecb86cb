#!/usr/bin/env python3
"""What the operator interfaces cost the data path: efu --module udp receives the same paced
traffic (efu-udpgen on loopback) while
  base     no operator interface is on;
  hammer   three clients ask the command port as fast as they can;
  all      as hammer, plus --graphite to a port where nothing listens (reconnect attempts with
           backoff) and a client scraping /metrics ten times a second.
For each run it reports the CPU time of the data threads (efu-rx + efu-proc*) per packet, as a
ratio to the base runs of the same invocation (the machine may be shared: compare ratios, not
absolute figures), the CPU share of the interface threads, and the packets lost.

  PYTHONPATH=tests:scripts/udp_sweep benchmarks/ops/control_plane_load.py [--build build]
      [--rounds 2] [--count 400000] [--pps 80000]

(from the source directory: tests/support drives efu and the traffic, scripts/udp_sweep's
efu_link measures CPU time).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

import efu_link
from support.loss import lost_datagrams
from support.ops import Client, Traffic, udp_efu
from support.ports import free_port
from support.waits import workdir

ROOT = Path(__file__).resolve().parents[2]


def hammer(port: int, stop: threading.Event, counts: list):
    c = Client(port)
    n = 0
    while not stop.is_set():
        c.ask("STAT_GET_NAME receive.packets")
        n += 1
    counts.append(n)


def scrape(url: str, stop: threading.Event, counts: list):
    n = 0
    while not stop.is_set():
        with urllib.request.urlopen(url, timeout=5) as r:
            r.read()
        n += 1
        time.sleep(0.1)
    counts.append(n)


def run(mode: str, count: int, pps: int, build: str) -> dict:
    tmp = workdir(f"efu-ops-bench-{mode}-")
    extra = ["--stats-interval", "1"]
    command_port = free_port()
    if mode != "base":
        extra += ["--command-port", str(command_port)]
    if mode == "all":
        extra += ["--graphite", f"127.0.0.1:{free_port()}", "--metrics", "127.0.0.1:0"]
    efu = udp_efu(extra, tmp, build=build)
    stop, asked, scraped = threading.Event(), [], []
    workers = []
    if mode != "base":
        workers += [threading.Thread(target=hammer, args=(command_port, stop, asked)) for _ in range(3)]
    if mode == "all":
        url = efu.log_value(r"metrics: serving (http://\S+/metrics)")
        workers.append(threading.Thread(target=scrape, args=(url, stop, scraped)))
    for w in workers:
        w.start()
    cpu = efu_link.CpuWindow(efu.proc.pid)
    cpu.start()
    traffic = Traffic(efu.udp_port, count, pps, build=build)
    traffic.finish()
    cpu.stop()
    stop.set()
    for w in workers:
        w.join(10)
    stats = efu.stop()
    data_s = sum(u + s for name, (u, s) in cpu.threads.items()
                 if name.startswith(("efu-rx", "efu-proc")))
    iface_s = sum(u + s for name, (u, s) in cpu.threads.items()
                  if name.startswith(("efu-command", "efu-graphite", "civetweb")))
    lost = lost_datagrams(stats)
    return {"mode": mode, "us_per_packet": 1e6 * data_s / max(1, traffic.sent),
            "iface_pct": 100 * iface_s / cpu.elapsed_s, "lost": lost, "sent": traffic.sent,
            "requests": sum(asked), "scrapes": sum(scraped)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(ROOT / "build"))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--count", type=int, default=400_000)
    p.add_argument("--pps", type=int, default=80_000)
    a = p.parse_args()
    results = {m: [] for m in ("base", "hammer", "all")}
    for _ in range(a.rounds):
        for mode in results:  # interleaved, so drifting load hits every mode alike
            r = run(mode, a.count, a.pps, a.build)
            results[mode].append(r)
            print(f"  {mode:7s} {r['us_per_packet']:.3f} us/packet (data threads), interface "
                  f"threads {r['iface_pct']:.1f}% of a core, lost {r['lost']} of {r['sent']}, "
                  f"{r['requests']} requests, {r['scrapes']} scrapes", flush=True)
    base = statistics.median(r["us_per_packet"] for r in results["base"])
    print(f"\ndata-thread CPU per packet, median of {a.rounds} rounds, ratio to base "
          f"({a.count} packets of 1472 B at {a.pps} pps):")
    for mode, rs in results.items():
        med = statistics.median(r["us_per_packet"] for r in rs)
        print(f"  {mode:7s} {med:.3f} us/packet  x{med / base:.2f}  lost {sum(r['lost'] for r in rs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
