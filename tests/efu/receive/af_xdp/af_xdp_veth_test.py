"""efu --receive-backend af_xdp on a veth pair between two network namespaces the test creates.

  af_xdp_veth_test.py --efu BIN --udpgen BIN --plugins DIR --xdp-object FILE

The generator (efu-udpgen) sends from namespace "tx"; efu receives with its XDP program and
AF_XDP socket on the veth end in namespace "rx". Checked:
  - every datagram sent to efu is accounted for: what the udp plugin saw plus every loss counter
    (kernel, ring full, truncated, fragments, malformed frames) equals what was sent, and the
    plugin's loss equals the generator's skips plus the host's drops;
  - sizes: 64 B, 8972 B jumbo (multi-buffer where the kernel allows it, else counted as kernel
    drops), larger than --max-datagram (receive.truncated), IP-fragmented (receive.xdp.errors.
    fragment);
  - both ways of handing payloads on: read in place in the UMEM frames (the default; jumbo
    datagrams as chains of frames gathered on the processing thread) and copied into the pool
    (--xdp-in-place off), with the payload's bytes checked (udp --verify-payload) and, in place,
    few enough frames that every one is reused many times;
  - IPv4 and IPv6, --bind to one address, UDP checksum verification;
  - malformed neighbours (empty, above --max-datagram, fragmented) sent amid a valid stream cost
    it nothing: its loss is the generator's skips, its payloads intact, each kind in its counter;
  - traffic that is not efu's still reaches the kernel: ping (IPv4, IPv6), another UDP port, and
    efu's port on an address efu does not receive on.
Each traffic case runs in namespaces of its own; a case that fails runs once more in new ones,
and only a second failure fails the test (a first failure is printed as RETRIED at the end).
Exit 0 = pass, 1 = fail, 77 = skipped (no network namespaces here, or the kernel refuses XDP).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from support.checks import check, failures, finish
from support.efu import Efu, EfuExited
from support.loss import lost_datagrams, rejected_datagrams

SKIP = 77
PORT = 9000
OTHER_PORT = 9001
RX_IF, TX_IF = "efu-rx0", "efu-tx0"
RX4, RX4_OTHER, TX4 = "10.200.0.2", "10.200.0.3", "10.200.0.1"
RX6, TX6 = "fd00:200::2", "fd00:200::1"
COUNT = 20_000
RATE_PPS = 50_000

def run(*cmd: str, check_rc: bool = True, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if check_rc and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


class Namespaces:
    """Two network namespaces joined by a veth pair, removed again on exit."""

    def __init__(self) -> None:
        tag = f"efu-afxdp-{os.getpid()}"
        self.rx, self.tx = tag + "-rx", tag + "-tx"
        self.made: list[str] = []

    def __enter__(self) -> "Namespaces":
        for ns in (self.rx, self.tx):
            if run("ip", "netns", "add", ns, check_rc=False).returncode != 0:
                print("af_xdp: cannot create a network namespace here (not root?); skipped")
                self.__exit__()
                sys.exit(SKIP)
            self.made.append(ns)
        # Before the veth exists (its IPv6 settings are copied from the defaults): no duplicate
        # address detection and no router solicitations, so the only frames on the wire during
        # the traffic are the test's and the wire's drops (tx_dropped) are only of those.
        for ns in (self.rx, self.tx):
            self.sh(ns, "sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0",
                    "net.ipv6.conf.default.accept_dad=0",
                    "net.ipv6.conf.default.router_solicitations=0")
        # Made inside the namespaces, so nothing appears in the host's.
        run("ip", "-n", self.rx, "link", "add", RX_IF, "type", "veth", "peer", "name", TX_IF,
            "netns", self.tx)
        for ns, dev, v4, v6 in ((self.rx, RX_IF, RX4, RX6), (self.tx, TX_IF, TX4, TX6)):
            # No link-local address either (the permanent neighbour entries below make
            # neighbour discovery unnecessary).
            run("ip", "-n", ns, "link", "set", dev, "addrgenmode", "none")
            run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", ns, "link", "set", dev, "mtu", "9000")
            run("ip", "-n", ns, "addr", "add", v4 + "/24", "dev", dev)
            run("ip", "-n", ns, "addr", "add", v6 + "/64", "dev", dev, "nodad")
            run("ip", "-n", ns, "link", "set", dev, "up")
        run("ip", "-n", self.rx, "addr", "add", RX4_OTHER + "/24", "dev", RX_IF)
        # Permanent neighbour entries: no datagram waits for ARP or neighbour discovery, whose
        # queue for unresolved neighbours drops what does not fit without telling anyone.
        mac = {ns: json.loads(run("ip", "-n", ns, "-j", "link", "show", "dev", dev).stdout)[0]
               ["address"] for ns, dev in ((self.rx, RX_IF), (self.tx, TX_IF))}
        for ns, dev, peer, addresses in ((self.tx, TX_IF, self.rx, (RX4, RX4_OTHER, RX6)),
                                         (self.rx, RX_IF, self.tx, (TX4, TX6))):
            for address in addresses:
                run("ip", "-n", ns, "neigh", "replace", address, "lladdr", mac[peer],
                    "nud", "permanent", "dev", dev)
        return self

    def wire_drops(self) -> int:
        """What the veth "wire" dropped on its own: the sending end's tx_dropped counts datagrams
        that found the receiving end's queue full, before any XDP program or socket saw them."""
        link = json.loads(run("ip", "-n", self.tx, "-s", "-j", "link", "show", "dev",
                              TX_IF).stdout)[0]
        return int(link["stats64"]["tx"]["dropped"])

    def __exit__(self, *exc) -> None:
        for ns in self.made:
            run("ip", "netns", "del", ns, check_rc=False)

    @staticmethod
    def sh(ns: str, *cmd: str, **kw) -> subprocess.CompletedProcess:
        return run("ip", "netns", "exec", ns, *cmd, **kw)


def start_efu(a, nets: Namespaces, tmp: Path, name: str, extra: list[str], ring: int = 65536,
              frames: int = 16384) -> Efu:
    """efu --module udp --receive-backend af_xdp in the rx namespace, its files in tmp/<name>;
    exits 77 (skipped) if the kernel refuses XDP or AF_XDP."""
    work = tmp / name
    work.mkdir(exist_ok=True)
    try:
        efu = Efu(["--module", str(Path(a.plugins) / "efu_udp.so"), "--broker", "none",
                   "--receive-backend", "af_xdp", "--interface", RX_IF, "--port", str(PORT),
                   "--ring-size", str(ring), "--xdp-frames", str(frames), "--stats-interval", "0.5",
                   *extra], work, binary_path=a.efu, prefix=["ip", "netns", "exec", nets.rx],
                  ready_text=" running", ready_timeout_s=20)
    except EfuExited as e:
        error = next((l for l in e.log.splitlines() if l.startswith("efu: error:")), "")
        if e.code == 2 and "the kernel" in error:
            print(f"af_xdp: the kernel refuses XDP/AF_XDP here; skipped\n  {error}")
            sys.exit(SKIP)
        raise
    efu.startup = efu.log()
    return efu


def udpgen(a, nets: Namespaces, host: str, size: int, count: int, *extra: str) -> dict:
    r = Namespaces.sh(nets.tx, a.udpgen, "--host", host, "--port", str(PORT), "--size", str(size),
                      "--count", str(count), "--rate-pps", str(RATE_PPS), "--batch", "16", *extra,
                      timeout=120)
    line = next(l for l in r.stdout.splitlines() if l.startswith("efu-udpgen: sent"))
    fields = dict(kv.split("=") for kv in line.split()[2:])
    print(f"  sent {fields['packets']} x {size} B to {host} (skipped {fields['skipped']})")
    return {"packets": int(fields["packets"]), "skipped": int(fields["skipped"])}


LISTENER = r"""
import json, select, socket, sys, time
want = json.loads(sys.argv[1])
socks = {}
for name, (family, addr, port) in want["listen"].items():
    s = socket.socket(socket.AF_INET6 if family == 6 else socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    socks[s] = name
counts = {name: 0 for name in want["listen"]}
print("listening", flush=True)
deadline = time.monotonic() + want["seconds"]
while time.monotonic() < deadline and any(counts[n] < want["expect"] for n in counts):
    ready, _, _ = select.select(list(socks), [], [], 0.1)
    for s in ready:
        s.recv(65536)
        counts[socks[s]] += 1
print(json.dumps(counts), flush=True)
"""

SENDER = r"""
import json, socket, sys, time
for family, addr, port, n in json.loads(sys.argv[1]):
    s = socket.socket(socket.AF_INET6 if family == 6 else socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(n):
        s.sendto(b"not for efu %d" % i, (addr, port))
        time.sleep(0.002)
"""


def kernel_traffic(nets: Namespaces, listen: dict, send: list, expect: int) -> dict:
    """Listens in rx (the kernel's sockets), sends from tx; returns datagrams per listener."""
    listener = subprocess.Popen(
        ["ip", "netns", "exec", nets.rx, sys.executable, "-c", LISTENER,
         json.dumps({"listen": listen, "expect": expect, "seconds": 10})],
        stdout=subprocess.PIPE, text=True)
    assert listener.stdout.readline().strip() == "listening"
    Namespaces.sh(nets.tx, sys.executable, "-c", SENDER, json.dumps(send))
    out, _ = listener.communicate(timeout=30)
    return json.loads(out.strip().splitlines()[-1])


def explain_failures(efu: Efu, stats: dict, failures_before: int) -> None:
    """After a case with failed checks: every non-zero receive/udp counter and efu's last lines."""
    if len(failures) == failures_before:
        return
    shown = {k: v for k, v in sorted(stats.items())
             if k.startswith(("receive.", "udp.", "process.")) and v}
    print("  counters: " + json.dumps(shown))
    print("  efu's log ends:\n    " + "\n    ".join(efu.log().splitlines()[-15:]))


def check_accounting(stats: dict, sent: int, skipped: int, wire: int, label: str) -> None:
    """wire: datagrams the veth pair dropped before efu could see them (Namespaces.wire_drops)."""
    rejected = rejected_datagrams(stats)
    lost = lost_datagrams(stats) + rejected
    shown = {k: v for k, v in sorted(stats.items()) if v and (
        k.startswith(("receive.dropped.", "receive.xdp.errors.", "receive.xdp.dropped."))
        or k == "receive.truncated")}
    print(f"  {label}: udp.packets={stats.get('udp.packets')} lost.datagrams="
          f"{lost_datagrams(stats)} rejected.datagrams={rejected} ({shown}) wire drops={wire}")
    check(stats.get("udp.packets", 0) + lost + wire == sent,
          f"{label}: udp.packets {stats.get('udp.packets')} + lost and rejected datagrams {lost} "
          f"+ wire drops {wire} == sent {sent}")
    # Every frame efu took is passed on (receive.packets, ring-full ones included) or rejected.
    frames = stats.get("receive.xdp.frames", 0)
    check(frames == stats.get("receive.packets", 0) + rejected,
          f"{label}: receive.xdp.frames {frames} == receive.packets + rejected.datagrams {rejected}")
    check(stats.get("receive.packets") ==
          stats.get("process.packets", 0) + stats.get("receive.dropped.ring_full", 0),
          f"{label}: receive.packets == process.packets + ring_full")
    # The plugin's loss is the generator's skips plus what the host dropped. A host drop of the
    # very last datagrams of a sequence run is invisible to sequence accounting (docs/udp-link-
    # test.md §3), so with host drops the plugin's loss lies between the two.
    host_drops = lost_datagrams(stats) + wire
    lost = stats.get("udp.lost", -1)
    if host_drops == 0:
        check(lost == skipped, f"{label}: udp.lost {lost} == skipped {skipped}")
    else:
        check(skipped <= lost <= skipped + host_drops,
              f"{label}: skipped {skipped} <= udp.lost {lost} <= skipped + host and wire drops "
              f"{skipped + host_drops}")


def case_ipv4(a, nets: Namespaces, tmp: Path) -> None:
    print("== IPv4, --bind to one address: 8972 B, 64 B, fragmented; ping and other traffic")
    failures_before = len(failures)
    # Two processing threads: each datagram, chained ones too, is routed by the plugin's key.
    efu = start_efu(a, nets, tmp, "ipv4", ["--bind", RX4, "--verify-payload", "on",
                                     "--processing-threads", "2"], ring=1024, frames=1024)
    wire_before = nets.wire_drops()
    multi_buffer = "multi-buffer frames" in efu.startup
    print("  " + next(l for l in efu.startup.splitlines() if "af_xdp: " + RX_IF in l))
    check("payloads read in place" in efu.startup, "the default: payloads read in place")
    try:
        jumbo = udpgen(a, nets, RX4, 8972, COUNT, "--skip-every", "1000")
        small = udpgen(a, nets, RX4, 64, COUNT)
        # Larger than the MTU: IP fragments. The first fragment of each reaches efu and is
        # counted; the others carry no port and go to the kernel.
        fragmented = udpgen(a, nets, RX4, 12000, 100)
        ping4 = Namespaces.sh(nets.tx, "ping", "-c", "3", "-i", "0.2", "-W", "2", RX4,
                              check_rc=False)
        ping6 = Namespaces.sh(nets.tx, "ping", "-6", "-c", "3", "-i", "0.2", "-W", "2", RX6,
                              check_rc=False)
        other = kernel_traffic(
            nets, {"other_port": [4, "0.0.0.0", OTHER_PORT], "other_address": [4, RX4_OTHER, PORT]},
            [[4, RX4, OTHER_PORT, 20], [4, RX4_OTHER, PORT, 20]], 20)
    finally:
        stats = efu.stop(sig=signal.SIGINT)
    wire = nets.wire_drops() - wire_before
    check(ping4.returncode == 0, f"ping {RX4} while efu runs: exit {ping4.returncode}")
    check(ping6.returncode == 0, f"ping -6 {RX6} while efu runs: exit {ping6.returncode}")
    check(other["other_port"] == 20, f"another UDP port reaches the kernel: {other['other_port']} of 20")
    check(other["other_address"] == 20,
          f"efu's port on an address efu does not bind reaches the kernel: "
          f"{other['other_address']} of 20")
    sent = jumbo["packets"] + small["packets"] + fragmented["packets"]
    check_accounting(stats, sent, jumbo["skipped"], wire, "IPv4")
    # Whatever was lost on a loaded machine, the kinds of frame land in their own counters.
    check(stats.get("receive.xdp.errors.fragment", 0) + stats.get("receive.dropped.kernel", 0)
          + wire >= 100,
          f"the 100 fragmented datagrams are counted: fragment="
          f"{stats.get('receive.xdp.errors.fragment')}")
    if not multi_buffer:
        # Without multi-buffer AF_XDP (Linux < 6.6) a jumbo frame does not fit one UMEM frame.
        check(stats.get("receive.xdp.kernel.rx_dropped", 0) >= jumbo["packets"],
              "single-buffer socket: every 8972 B datagram counted as a kernel drop")
    for name in ("udp.corrupted", "receive.xdp.errors.address", "receive.xdp.errors.port",
                 "receive.xdp.errors.truncated", "receive.xdp.dropped.no_socket"):
        check(stats.get(name, 0) == 0, f"{name} {stats.get(name)} == 0")
    explain_failures(efu, stats, failures_before)


def case_ipv6(a, nets: Namespaces, tmp: Path) -> None:
    print("== IPv4 and IPv6 (--bind ::), checksums verified, --max-datagram 6000, in place")
    failures_before = len(failures)
    # veth leaves UDP checksums to "hardware" that does not exist; computed in software here.
    Namespaces.sh(nets.tx, "ethtool", "-K", TX_IF, "tx", "off")
    # 1024 ring entries and 1024 fill-ring frames: the UMEM has a few thousand frames for
    # 22,000 datagrams, so every frame goes round the pipeline many times.
    efu = start_efu(a, nets, tmp, "ipv6", ["--bind", "::", "--verify-checksums", "on",
                                     "--max-datagram", "6000", "--verify-payload", "on"],
              ring=1024, frames=1024)
    wire_before = nets.wire_drops()
    try:
        v6 = udpgen(a, nets, RX6, 1473, COUNT, "--skip-every", "500")
        # In two frames each: a chain, its checksum verified over both pieces.
        chained = udpgen(a, nets, RX6, 5000, 2000, "--skip-every", "300")
        # Above --max-datagram (in a frame of two buffers) and above it in one frame.
        too_big = udpgen(a, nets, RX4, 6001, 50)
    finally:
        stats = efu.stop(sig=signal.SIGINT)
    wire = nets.wire_drops() - wire_before
    # too_big restarts the sequence (the plugin never sees it): it is all in receive.truncated.
    check_accounting(stats, v6["packets"] + chained["packets"] + too_big["packets"],
                     v6["skipped"] + chained["skipped"], wire, "IPv6")
    check(stats.get("receive.truncated", 0) + stats.get("receive.dropped.kernel", 0) + wire >= 50,
          f"datagrams above --max-datagram counted as truncated: {stats.get('receive.truncated')}")
    for name in ("receive.xdp.errors.checksum_udp", "receive.xdp.errors.checksum_ip",
                 "udp.corrupted"):
        check(stats.get(name, 0) == 0, f"{name} {stats.get(name)} == 0")
    check(stats.get("udp.packets", 0) > 0, f"IPv6 datagrams received: {stats.get('udp.packets')}")
    explain_failures(efu, stats, failures_before)


def case_copy(a, nets: Namespaces, tmp: Path) -> None:
    print("== --xdp-in-place off: payloads copied; 8000 B, 1472 B, above --max-datagram")
    failures_before = len(failures)
    efu = start_efu(a, nets, tmp, "copy", ["--xdp-in-place", "off", "--verify-payload", "on",
                                     "--max-datagram", "8000"])
    check("payloads copied from the UMEM" in efu.startup, "--xdp-in-place off: payloads copied")
    wire_before = nets.wire_drops()
    try:
        jumbo = udpgen(a, nets, RX4, 8000, COUNT, "--skip-every", "700")
        full = udpgen(a, nets, RX4, 1472, COUNT)
        too_big = udpgen(a, nets, RX4, 8001, 50)
    finally:
        stats = efu.stop(sig=signal.SIGINT)
    wire = nets.wire_drops() - wire_before
    check_accounting(stats, jumbo["packets"] + full["packets"] + too_big["packets"],
                     jumbo["skipped"], wire, "copy")
    check(stats.get("receive.truncated", 0) + stats.get("receive.dropped.kernel", 0) + wire >= 50,
          f"datagrams above --max-datagram counted as truncated: {stats.get('receive.truncated')}")
    check(stats.get("udp.corrupted", 0) == 0, f"udp.corrupted {stats.get('udp.corrupted')} == 0")
    explain_failures(efu, stats, failures_before)


NEIGHBOURS = r"""
import json, socket, sys, time
host, port, n = json.loads(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    for size in (0, 8001, 12000):  # empty, above --max-datagram, IP-fragmented
        s.sendto(bytes([0xee]) * size, (host, port))
    time.sleep(0.001)
"""


def case_neighbours(a, nets: Namespaces, tmp: Path) -> None:
    print("== malformed neighbours (empty, above --max-datagram, fragmented) amid a valid stream")
    failures_before = len(failures)
    efu = start_efu(a, nets, tmp, "neighbours", ["--max-datagram", "8000", "--verify-payload", "on",
                                           "--processing-threads", "2"])
    wire_before = nets.wire_drops()
    each = 300
    try:
        bad = subprocess.Popen(["ip", "netns", "exec", nets.tx, sys.executable, "-c", NEIGHBOURS,
                                json.dumps([RX4, PORT, each])])
        valid = udpgen(a, nets, RX4, 1472, COUNT, "--skip-every", "800")
        bad.wait(timeout=60)
    finally:
        stats = efu.stop(sig=signal.SIGINT)
    wire = nets.wire_drops() - wire_before
    check(bad.returncode == 0, f"the neighbours' sender exited {bad.returncode}")
    # Each fragmented datagram's first fragment reaches efu (the rest go to the kernel).
    check_accounting(stats, valid["packets"] + 3 * each, valid["skipped"], wire, "neighbours")
    kernel = stats.get("receive.dropped.kernel", 0) + wire
    for name in ("receive.dropped.empty", "receive.truncated", "receive.xdp.errors.fragment"):
        got = stats.get(name, 0)
        check(got == each if kernel == 0 else each - kernel <= got <= each,
              f"{name} {got}: expected {each} (host and wire drops {kernel})")
    check(stats.get("udp.corrupted", 0) == 0, f"udp.corrupted {stats.get('udp.corrupted')} == 0")
    explain_failures(efu, stats, failures_before)


def efu_error(a, nets: Namespaces, *args: str, prefix: list[str] = ()) -> tuple[int, list[str]]:
    """Runs efu with af_xdp in rx expecting it to refuse; returns its exit code and error lines."""
    r = Namespaces.sh(nets.rx, *prefix, a.efu, "--module", str(Path(a.plugins) / "efu_udp.so"),
                      "--broker", "none", "--receive-backend", "af_xdp", "--stop-after", "1",
                      *args, check_rc=False, timeout=30)
    return r.returncode, [l for l in (r.stdout + r.stderr).splitlines() if "error" in l]


def case_errors(a, nets: Namespaces) -> None:
    print("== start-up errors: one line naming what is missing, exit code 2")
    cases = [
        (["--interface", "nonexistent0"], [], "--interface: 'nonexistent0' is not an interface"),
        ([], [], "--interface: missing"),
        (["--interface", RX_IF, "--queue", "7"], [], "--queue: 7 is not a receive queue"),
        (["--interface", RX_IF, "--port", "0"], [], "--port: 0 is not valid"),
        (["--interface", RX_IF, "--xdp-mode", "fast"], [], "--xdp-mode: 'fast'"),
        (["--interface", RX_IF, "--xdp-frames", "1000"], [], "--xdp-frames: 1000"),
        (["--interface", RX_IF, "--xdp-in-place", "maybe"], [], "--xdp-in-place: 'maybe'"),
        (["--interface", RX_IF], ["setpriv", "--bounding-set", "-net_admin"],
         "lacks CAP_NET_ADMIN"),
    ]
    for args, prefix, expected in cases:
        rc, errors = efu_error(a, nets, *args, prefix=prefix)
        check(rc == 2 and len(errors) == 1 and errors[0].startswith("efu: error: ") and
              expected in errors[0], f"{' '.join(prefix + args) or '(no --interface)'}: exit {rc}, "
              f"{errors}")
    # A second efu on the same queue is refused; so is any efu while another XDP program is on
    # the interface (here efu's own program, attached with ip link), which stays untouched.
    with tempfile.TemporaryDirectory(prefix="efu-afxdp-") as tmp:
        first = start_efu(a, nets, Path(tmp), "first", [])
        try:
            rc, errors = efu_error(a, nets, "--interface", RX_IF)
        finally:
            first.stop(sig=signal.SIGINT)
    check(rc == 2 and len(errors) == 1 and "already has an AF_XDP socket" in errors[0],
          f"a second efu on queue 0 of {RX_IF}: exit {rc}, {errors}")
    # Killed, efu leaves nothing attached: its program hangs on a BPF link that dies with it.
    with tempfile.TemporaryDirectory(prefix="efu-afxdp-") as tmp:
        killed = start_efu(a, nets, Path(tmp), "killed", [])
        attached = "prog/xdp" in run("ip", "-n", nets.rx, "link", "show", "dev", RX_IF).stdout
        killed.kill()
    after = run("ip", "-n", nets.rx, "link", "show", "dev", RX_IF).stdout
    check(attached and "prog/xdp" not in after,
          f"efu's XDP program attached while it runs ({attached}), gone after SIGKILL "
          f"({'prog/xdp' not in after})")
    for ns, dev in ((nets.rx, RX_IF), (nets.tx, TX_IF)):  # a non-multi-buffer program: MTU 1500
        run("ip", "-n", ns, "link", "set", "dev", dev, "mtu", "1500")
    run("ip", "-n", nets.rx, "link", "set", "dev", RX_IF, "xdp", "obj", a.xdp_object, "sec", "xdp")
    try:
        rc, errors = efu_error(a, nets, "--interface", RX_IF)
        still = "prog/xdp" in run("ip", "-n", nets.rx, "link", "show", "dev", RX_IF).stdout
    finally:
        run("ip", "-n", nets.rx, "link", "set", "dev", RX_IF, "xdp", "off")
    check(rc == 2 and len(errors) == 1 and "already has an XDP program (id " in errors[0],
          f"another XDP program on {RX_IF}: exit {rc}, {errors}")
    check(still, "the other XDP program is still attached after efu refused to start")
    for ns, dev in ((nets.rx, RX_IF), (nets.tx, TX_IF)):
        run("ip", "-n", ns, "link", "set", "dev", dev, "mtu", "9000")


def run_traffic_case(name: str, case, a, tmp: Path):
    """Runs a traffic case in namespaces of its own. If it fails, it runs once more in new ones:
    a case moves 40,000 datagrams through two namespaces, XDP and efu's threads on a 2-core
    machine that CI shares, and one failure that did not repeat in about 20 runs here has been
    seen there. A second failure fails the test; a failure that does not repeat is printed
    with RETRIED at the end (returned as (name, the first run's failures)), never dropped."""
    before = len(failures)
    try:
        with Namespaces() as nets:
            case(a, nets, tmp)
    except (RuntimeError, subprocess.TimeoutExpired, StopIteration, KeyError, ValueError) as e:
        failures.append(f"{name}: {type(e).__name__}: {e}")
    if len(failures) == before:
        return None
    first = failures[before:]
    del failures[before:]
    print(f"af_xdp: the {name} case failed ({len(first)} check(s)); running it once more in new "
          f"namespaces to tell a passing disturbance from a defect")
    with Namespaces() as nets:
        case(a, nets, tmp)
    return (name, first) if len(failures) == before else None


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--efu", required=True)
    p.add_argument("--udpgen", required=True)
    p.add_argument("--plugins", required=True)
    p.add_argument("--xdp-object", required=True, help="efu's XDP program, as another program")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="efu-afxdp-") as tmp:
        # libxdp and bpftool look for bpffs; efu itself does not need it (BPF links, no pins).
        with Namespaces() as nets:
            case_errors(a, nets)
        retried = [run_traffic_case(name, case, a, Path(tmp))
                   for name, case in (("IPv4", case_ipv4), ("IPv6", case_ipv6),
                                      ("copy", case_copy), ("neighbours", case_neighbours))]
    for name, first in filter(None, retried):
        print(f"RETRIED {name}: its first run failed, its second passed; the first run's "
              f"failures were: {first}")
    if finish():
        return 1
    print("af_xdp: all checks passed" + (" (a case needed a second run, see RETRIED)"
                                         if any(retried) else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
