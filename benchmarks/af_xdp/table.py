"""Prints af_xdp_bench's JSON as a Markdown table with ratios against recvmmsg in the same run.

  table.py RESULTS.json
"""
import json
import sys

rows = json.load(open(sys.argv[1]))
by = {(r["mode"], r["size"], r["path"]): r for r in rows}
paths = ["recvmmsg", "efu-socket", "xdp-bare", "xdp-parse", "efu-af_xdp", "efu-af_xdp-copy"]
print("| mode | size B | receiver | rx CPU ns/datagram | M datagrams/s per rx core | "
      "× recvmmsg | × efu-socket | M datagrams/s wall | sender+kernel CPU ns/datagram | "
      "kernel drops / sent |")
print("|---|---|---|---|---|---|---|---|---|---|")
for mode in ("drain", "stream"):
    for size in sorted({r["size"] for r in rows}):
        base = by.get((mode, size, "recvmmsg"))
        sock = by.get((mode, size, "efu-socket"))
        for path in paths:
            r = by.get((mode, size, path))
            if r is None:
                continue
            rate = r["datagrams_per_s_per_rx_core"]
            vs_base = rate / base["datagrams_per_s_per_rx_core"] if base else float("nan")
            vs_sock = rate / sock["datagrams_per_s_per_rx_core"] if sock else float("nan")
            print(f"| {mode} | {size} | {path} | {r['rx_cpu_ns_per_datagram']:.0f} | "
                  f"{rate / 1e6:.2f} | {vs_base:.2f} | {vs_sock:.2f} | "
                  f"{r['datagrams_per_s_wall'] / 1e6:.2f} | "
                  f"{r['sender_cpu_ns'] / max(r['sent'], 1):.0f} | {r['kernel_drops']} / {r['sent']} |")
