"""Integration tests of efu --module udp with efu-udpgen on 127.0.0.1 (no Kafka: --broker none).

  efu_udp_integration.py clean-link|skip-every|sweep-short --port P

Environment: EFU_BUILD_DIR (bin/efu, bin/efu-udpgen), EFU_SOURCE_DIR. Exit 0 = pass.
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(os.environ.get("EFU_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("EFU_BUILD_DIR", SOURCE / "build"))
sys.path.insert(0, str(SOURCE / "scripts" / "udp_sweep"))
import efu_link  # noqa: E402

# A rate efu sustains on a loaded 2-core box (see the toolchain notes: the sender alone manages
# ~0.3 Mpps at 1472 B on loopback). Small generator batches and a deep ring give efu slack when
# another process takes its core for a few ms.
COUNT = 1_000_000
SIZE = 1472
RATE_PPS = 100_000
GEN_SMOOTH = ["--batch", "16"]
EFU_SLACK = ["--ring-size", "65536"]

failures = []


def check(condition: bool, message: str):
    print(("ok   " if condition else "FAIL ") + message)
    if not condition:
        failures.append(message)


def run_efu_and_gen(port: int, gen_args: list[str], tmp: Path,
                    efu_extra: list[str] = ()) -> tuple[dict, dict]:
    bins = efu_link.Binaries.find(BUILD)
    efu = efu_link.Efu(bins, port, tmp / "stats.json", EFU_SLACK + list(efu_extra),
                       log=tmp / "efu.log")
    try:
        gen = efu_link.run_udpgen(bins, port, gen_args + GEN_SMOOTH, timeout_s=120)
        stats = efu.stop(timeout_s=30)
    except BaseException:
        efu.kill()
        print((tmp / "efu.log").read_text()[-3000:])
        raise
    print(f"efu-udpgen: {gen}")
    print("efu stats: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items())
                                    if k.startswith(("udp.", "receive.", "process."))))
    return gen, stats


def host_drops(stats: dict) -> int:
    """Datagrams the host counted as lost before the plugin saw them (kernel, ring, at stop)."""
    return sum(stats.get(name, 0) for name in
               ("receive.dropped.kernel", "receive.dropped.ring_full", "receive.dropped.at_stop"))


def test_clean_link(port: int, tmp: Path):
    # Accounting, not a loss-free rate (that is a benchmark's result): whatever a loaded machine
    # drops must be counted by the host, and everything else must arrive intact and in order.
    gen, stats = run_efu_and_gen(
        port, ["--count", str(COUNT), "--size", str(SIZE), "--rate-pps", str(RATE_PPS)], tmp,
        efu_extra=["--verify-payload", "on"])
    drops = host_drops(stats)
    check(gen["packets"] == COUNT, f"efu-udpgen sent {gen['packets']} == {COUNT}")
    check(stats.get("udp.packets") + drops == COUNT,
          f"udp.packets {stats.get('udp.packets')} + host drops {drops} == {COUNT}")
    check(stats.get("udp.bytes") == stats.get("udp.packets") * SIZE,
          f"udp.bytes {stats.get('udp.bytes')} == udp.packets * {SIZE}")
    check(stats.get("udp.expected") == COUNT, f"udp.expected {stats.get('udp.expected')} == {COUNT}")
    check(stats.get("udp.lost") == drops, f"udp.lost {stats.get('udp.lost')} == host drops {drops}")
    for name in ("udp.out_of_order", "udp.duplicates", "udp.restarts", "udp.runts", "udp.corrupted"):
        check(stats.get(name) == 0, f"{name} {stats.get(name)} == 0")


def test_skip_every(port: int, tmp: Path):
    count, k = COUNT, 1000
    gen, stats = run_efu_and_gen(
        port, ["--count", str(count), "--size", str(SIZE), "--rate-pps", str(RATE_PPS),
               "--skip-every", str(k)], tmp)
    drops = host_drops(stats)
    # The range sent is count + skipped numbers; floor(range / k) of them are skipped.
    seq_range = count + gen["skipped"]
    check(gen["skipped"] == seq_range // k, f"skipped {gen['skipped']} == floor({seq_range} / {k})")
    check(gen["skipped"] == 1001, f"skipped {gen['skipped']} == 1001 (range 1001001)")
    check(stats.get("udp.packets") + drops == count,
          f"udp.packets {stats.get('udp.packets')} + host drops {drops} == {count}")
    check(stats.get("udp.lost") == gen["skipped"] + drops,
          f"udp.lost {stats.get('udp.lost')} == skipped {gen['skipped']} + host drops {drops}")
    check(stats.get("udp.expected") == seq_range,
          f"udp.expected {stats.get('udp.expected')} == {seq_range}")


def test_sweep_short(port: int, tmp: Path):
    out = tmp / "sweep"
    r = subprocess.run([str(SOURCE / "scripts" / "udp-sweep"), "--short", "--build", str(BUILD),
                        "--port", str(port), "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    print(r.stdout + r.stderr)
    check(r.returncode == 0, f"udp-sweep --short exit code {r.returncode} == 0")
    csv_path, png_path = out / "udp-sweep.csv", out / "udp-sweep.png"
    check(csv_path.is_file(), f"{csv_path} exists")
    if csv_path.is_file():
        with open(csv_path) as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = reader.fieldnames or []
        sys.path.insert(0, str(SOURCE / "scripts" / "udp_sweep"))
        import sweep  # noqa: E402
        check(header == sweep.COLUMNS, f"CSV columns {header} == {sweep.COLUMNS}")
        check([int(r["size"]) for r in rows] == sweep.SHORT_SIZES,
              f"one row per size: {[r.get('size') for r in rows]} == {sweep.SHORT_SIZES}")
        for row in rows:
            empty = [k for k, v in row.items() if v in ("", None)]
            check(not empty, f"size {row['size']}: no empty column {empty}")
            check(int(row["received_packets"]) > 0, f"size {row['size']}: received packets > 0")
    check(png_path.is_file() and png_path.stat().st_size > 1000, f"{png_path} is a non-trivial file")
    if png_path.is_file():
        check(png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "PNG magic bytes")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=["clean-link", "skip-every", "sweep-short"])
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="udp-it-") as tmp:
        {"clean-link": test_clean_link, "skip-every": test_skip_every,
         "sweep-short": test_sweep_short}[a.case](a.port, Path(tmp))
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
