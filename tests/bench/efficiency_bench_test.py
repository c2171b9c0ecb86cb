#!/usr/bin/env python3
"""benchmarks/host/efficiency_bench.py and wait_policy_bench.py, briefly, on loopback.

efficiency_bench with two detectors (CSPEC through the caen plugin, and the udp instrument),
1-second runs and a coarse zero-loss search: it must exit 0, print one table row per detector,
and every run in its --json must account for every datagram the generator sent (processed +
lost = sent), with readouts counted for each packet processed. wait_policy_bench with one
detector, one rate and both policies: the same accounting per run. The figures themselves
(CPU per readout, rates) are what the benchmark reports; they are not asserted here.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from support.checks import check, finish, require

ROOT = pathlib.Path(os.environ["EFU_SOURCE_DIR"])
BUILD = os.environ["EFU_BUILD_DIR"]
HOST = ROOT / "benchmarks/host"


def run(script, *args):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "runs.json"
        p = subprocess.run([sys.executable, str(HOST / script), "--build", BUILD, *args,
                            "--json", str(out)], capture_output=True, text=True, timeout=150)
        require(p.returncode == 0, f"{script} exits 0 (stderr: {p.stderr.strip()[-400:]})")
        return p.stdout, json.loads(out.read_text())


def check_runs(name, runs, readouts_per_packet):
    for r in runs:
        what = f"{name} {r['detector']} at {r['rate_pps'] or 'saturation'}"
        check(r["sent"] > 0, f"{what}: the generator sent datagrams ({r['sent']})")
        check(r["processed"] + r["lost"] == r["sent"] and r["accounted"],
              f"{what}: processed {r['processed']} + lost {r['lost']} = sent {r['sent']}")
        want = readouts_per_packet[r["detector"]]
        check(want(r["processed"], r["readouts"]),
              f"{what}: {r['readouts']} readouts for {r['processed']} packets")


def main():
    # CSPEC's generator fills packets with 372 readouts (a pulse's last one may hold fewer); the
    # udp instrument counts each datagram as its one readout.
    per_packet = {
        "cspec": lambda packets, readouts: 0 < readouts <= 372 * packets,
        "udp": lambda packets, readouts: readouts == packets,
        "loki": lambda packets, readouts: 0 < readouts <= 372 * packets,
    }
    table, doc = run("efficiency_bench.py", "--detectors", "cspec,udp", "--duration", "1",
                     "--search-duration", "1", "--step", "0.5")
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    check([row.split("|")[1].strip() for row in rows[1:]] == ["cspec", "udp"],
          f"efficiency_bench prints a row per detector: {rows[1:]}")
    check({r["detector"] for r in doc["runs"]} == {"cspec", "udp"},
          "efficiency_bench's --json has both detectors' runs")
    check(all(r["rate_pps"] == 0 for r in doc["runs"][:1]), "the first run is at saturation")
    check_runs("efficiency_bench", doc["runs"], per_packet)

    _, doc = run("wait_policy_bench.py", "--detectors", "loki", "--rates", "5000",
                 "--policies", "adaptive,spin", "--duration", "1")
    check(sorted(r["policy"] for r in doc["runs"]) == ["adaptive", "spin"],
          "wait_policy_bench ran both policies")
    check_runs("wait_policy_bench", doc["runs"], per_packet)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
