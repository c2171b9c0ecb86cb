"""Running efu --module udp, efu-udpgen and udp-baseline-rx on loopback, and reading CPU use.

Shared by scripts/udp-sweep, benchmarks/udp/loss-free-rate and tests/udp. Every wait is bounded.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")

# The host tuning of the UDP measurements in docs/architecture.md §9; a link test should have at
# least this.
STUDY_TUNING = {
    "net.core.rmem_max": 12582912,
    "net.core.wmem_max": 12582912,
    "net.core.netdev_max_backlog": 5000,
}
STUDY_MTU = 9000
STUDY_TXQUEUELEN = 10000

# Per datagram on 10 GbE beyond the user data: UDP 8 + IPv4 20 (+ Ethernet header 14, FCS 4,
# preamble+SFD 8, inter-frame gap 12 = 38 on the wire); the Ethernet payload is at least 46 bytes.
UDP_IP_OVERHEAD = 28
ETHERNET_OVERHEAD = 38
ETHERNET_MIN_PAYLOAD = 46


def theoretical_user_gbps(size: int, line_gbps: float = 10.0) -> float:
    """User-data rate of a saturated link at one datagram per frame (jumbo MTU, no fragments)."""
    frame = max(size + UDP_IP_OVERHEAD, ETHERNET_MIN_PAYLOAD) + ETHERNET_OVERHEAD
    return line_gbps * size / frame


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


@dataclass
class Binaries:
    efu: Path
    udpgen: Path
    baseline: Path | None

    @staticmethod
    def find(build: Path) -> "Binaries":
        efu = build / "bin" / "efu"
        udpgen = build / "bin" / "efu-udpgen"
        for p in (efu, udpgen):
            if not os.access(p, os.X_OK):
                raise SystemExit(f"udp link test: '{p}' is not an executable; expected a build "
                                 f"directory with bin/efu and bin/efu-udpgen (--build)")
        baseline = build / "bin" / "udp-baseline-rx"
        return Binaries(efu, udpgen, baseline if os.access(baseline, os.X_OK) else None)


def udp_sockets_bound(port: int) -> int:
    """How many sockets are bound to UDP `port` (any address), from /proc/net/udp{,6}."""
    want = f":{port:04X}"
    count = 0
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                next(f)
                count += sum(1 for line in f if line.split()[1].endswith(want))
        except FileNotFoundError:
            continue
    return count


def udp_port_bound(port: int) -> bool:
    """True if some socket is bound to UDP `port` (any address)."""
    return udp_sockets_bound(port) > 0


def wait_until(predicate, timeout_s: float, what: str, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with code {proc.returncode} first")
        time.sleep(0.02)
    raise TimeoutError(f"{what}: not within {timeout_s} s")


@dataclass
class ThreadTimes:
    name: str
    user_ticks: int
    sys_ticks: int


def thread_times(pid: int) -> dict[int, ThreadTimes]:
    """utime/stime (fields 14, 15) of every thread of `pid`, by tid."""
    out = {}
    task_dir = Path(f"/proc/{pid}/task")
    for task in task_dir.iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(task.name)] = ThreadTimes(name, int(fields[11]), int(fields[12]))
    return out


def host_cpu_ticks() -> list[int]:
    """The aggregate 'cpu' line of /proc/stat: user nice system idle iowait irq softirq steal..."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


@dataclass
class CpuWindow:
    """CPU use between start() and stop() of one process's threads and of the host."""
    pid: int
    t0: float = 0
    before: dict = field(default_factory=dict)
    host_before: list = field(default_factory=list)
    elapsed_s: float = 0
    threads: dict = field(default_factory=dict)  # name -> (user_s, sys_s); same names summed
    softirq_pct: float = 0  # share of all CPUs' time in softirq
    system_pct: float = 0

    def start(self):
        self.before = thread_times(self.pid)
        self.host_before = host_cpu_ticks()
        self.t0 = time.monotonic()

    def stop(self):
        after = thread_times(self.pid)
        host_after = host_cpu_ticks()
        self.elapsed_s = time.monotonic() - self.t0
        for tid, t in after.items():
            b = self.before.get(tid, ThreadTimes(t.name, 0, 0))
            u, s = self.threads.get(t.name, (0.0, 0.0))
            self.threads[t.name] = (u + (t.user_ticks - b.user_ticks) / CLK_TCK,
                                    s + (t.sys_ticks - b.sys_ticks) / CLK_TCK)
        delta = [a - b for a, b in zip(host_after, self.host_before)]
        total = sum(delta[:8]) or 1
        self.softirq_pct = 100.0 * delta[6] / total
        self.system_pct = 100.0 * delta[2] / total

    def pct(self, name_prefix: str) -> tuple[float, float]:
        """User and system % of one core, summed over threads whose name starts with the prefix."""
        u = sum(v[0] for k, v in self.threads.items() if k.startswith(name_prefix))
        s = sum(v[1] for k, v in self.threads.items() if k.startswith(name_prefix))
        e = self.elapsed_s or 1
        return 100.0 * u / e, 100.0 * s / e


class Efu:
    """efu --module udp --broker none on 127.0.0.1:port, stopped gracefully (SIGTERM)."""

    def __init__(self, bins: Binaries, port: int, stats_json: Path, extra: list[str] = (),
                 log: Path | None = None):
        self.stats_json = stats_json
        if stats_json.exists():
            stats_json.unlink()
        cmd = [str(bins.efu), "--module", "udp", "--broker", "none", "--bind", "127.0.0.1",
               "--port", str(port), "--stats-json", str(stats_json), "--stats-interval", "1",
               "--log-level", "warn", *extra]
        self.cmd = cmd
        self.log = open(log, "w") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        # Every receive thread's socket (SO_REUSEPORT binds them one after another): traffic that
        # started between two binds would see the kernel move flows from one socket to another.
        sockets = int(extra[extra.index("--receive-threads") + 1]) \
            if "--receive-threads" in extra else 1
        wait_until(lambda: udp_sockets_bound(port) >= sockets, 20,
                   f"efu to bind {sockets} socket(s) to UDP port {port}", self.proc)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout_s: float = 30) -> dict:
        """SIGTERM, wait (bounded), return the --stats-json counters."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait(timeout=10)
            raise RuntimeError(f"efu did not stop within {timeout_s} s of SIGTERM")
        if self.log is not subprocess.DEVNULL:
            self.log.close()
        if rc != 0:
            raise RuntimeError(f"efu exited with code {rc}: {' '.join(self.cmd)}")
        return json.loads(self.stats_json.read_text())

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


SUMMARY_RE = re.compile(r"(\w+)=([0-9.]+|\w+)")


def parse_udpgen_summary(stdout: str) -> dict:
    """The summary line of efu-udpgen ("efu-udpgen: sent packets=... source_port=...") as a dict."""
    line = [l for l in stdout.splitlines() if "sent packets=" in l][-1]
    out = {}
    for k, v in SUMMARY_RE.findall(line):
        try:
            out[k] = float(v) if "." in v else int(v)
        except ValueError:
            out[k] = v
    return out


def run_udpgen(bins: Binaries, port: int, args: list[str], timeout_s: float = 120) -> dict:
    """Runs efu-udpgen to 127.0.0.1:port and returns its summary line as a dict."""
    return run_udpgens(bins, port, [args], timeout_s)[0]


def run_udpgens(bins: Binaries, port: int, arg_lists: list[list[str]],
                timeout_s: float = 120) -> list[dict]:
    """Runs one efu-udpgen per argument list at the same time (each from its own source port)
    and returns their summaries in the same order."""
    procs = []
    try:
        for args in arg_lists:
            cmd = [str(bins.udpgen), "--host", "127.0.0.1", "--port", str(port),
                   "--stats-interval", "0", *args]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        deadline = time.monotonic() + timeout_s
        results = []
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            if p.returncode != 0:
                raise RuntimeError(f"efu-udpgen failed ({p.returncode}): {err.strip()}")
            results.append(parse_udpgen_summary(out))
        return results
    finally:
        for p in procs:  # our own children, by their handles
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)


def parse_kv_line(line: str) -> dict:
    return {k: (float(v) if "." in v else int(v)) for k, v in SUMMARY_RE.findall(line)
            if re.fullmatch(r"[0-9.]+", v)}


def read_sysctl(name: str) -> int | None:
    try:
        return int(Path("/proc/sys/" + name.replace(".", "/")).read_text().split()[0])
    except (OSError, ValueError):
        return None


def interface_for(address: str) -> str:
    """The interface the kernel routes `address` through (lo for loopback)."""
    if address.startswith("127.") or address == "::1":
        return "lo"
    r = subprocess.run(["ip", "route", "get", address], capture_output=True, text=True, timeout=5)
    m = re.search(r"\bdev (\S+)", r.stdout)
    return m.group(1) if m else "?"


def tuning_warnings(address: str = "127.0.0.1") -> list[str]:
    """One line per kernel setting below the tuning of docs/architecture.md §9."""
    warnings = []
    for name, want in STUDY_TUNING.items():
        have = read_sysctl(name)
        if have is None:
            warnings.append(f"{name}: unreadable; want at least {want} (study)")
        elif have < want:
            warnings.append(f"{name} = {have} < {want} (study); sysctl -w {name}={want}")
    dev = interface_for(address)
    base = Path("/sys/class/net") / dev
    try:
        mtu = int((base / "mtu").read_text())
        txq = int((base / "tx_queue_len").read_text())
    except (OSError, ValueError):
        warnings.append(f"interface {dev}: MTU and txqueuelen unreadable")
        return warnings
    note = " (loopback: not the link under test; qualify the real NIC on a real link)" \
        if dev == "lo" else ""
    if mtu < STUDY_MTU:
        warnings.append(f"{dev}: MTU {mtu} < {STUDY_MTU} (study); ip link set dev {dev} mtu "
                        f"{STUDY_MTU}{note}")
    if txq < STUDY_TXQUEUELEN:
        warnings.append(f"{dev}: txqueuelen {txq} < {STUDY_TXQUEUELEN} (study); ip link set dev "
                        f"{dev} txqueuelen {STUDY_TXQUEUELEN}{note}")
    return warnings
