"""efu_bench_run: one efu run fed by one generator on loopback, measured per thread.

What wait_policy_bench.py and efficiency_bench.py share: start efu (--broker none, so what is
measured is efu's own receive and processing, not librdkafka's threads) with all its threads on
one core, run a generator on another core at a fixed packet rate or as fast as it can, and read
back every efu thread's CPU time (/proc/<pid>/task/<tid>/schedstat) and efu's counters
(--stats-json, written at exit).

The window is from just before the generator starts to 0.3 s after it ends, so an idle efu's
ticks are in it, as they are in production.

Accounting: every datagram the generator sent is in receive.packets or receive.dropped.kernel,
and every one received is processed or lost (efu's loss gauges lost.datagrams and
rejected.datagrams, docs/ops.md). A benchmark reports this per run ('accounted'); it does not
assert it.
"""

import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import tempfile
import time


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def threads(pid):
    """{tid: name} of a process."""
    out = {}
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = (task / "comm").read_text().strip()
        except OSError:
            pass  # the thread ended meanwhile
    return out


def cpu_ns(pid, tid):
    """Run time of one thread in ns (schedstat), or 0 if it is gone."""
    try:
        return int(pathlib.Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
    except OSError:
        return 0


def snapshot(pid):
    return {tid: (name, cpu_ns(pid, tid)) for tid, name in threads(pid).items()}


def wait_for_thread(pid, name, timeout_s=20):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if name in threads(pid).values():
            return True
        time.sleep(0.05)
    return False


def sent_count(stdout):
    """The datagrams a generator says it sent: 'sent N packets' (efu-caen-gen, efu-cdt-gen,
    efu-multiblade-gen) or 'sent packets=N' (efu-udpgen)."""
    m = re.search(r"sent (?:packets=)?(\d+)", stdout)
    if not m:
        raise RuntimeError(f"no 'sent' line in the generator's output: {stdout.strip()!r}")
    return int(m.group(1))


def run(build, detector, rate, duration, efu_cpu, gen_cpu, efu_extra=(), gen_batch=1):
    """One run. `detector`: {module, efu_args, gen, gen_args, readouts}; `rate` packets/s, 0 for
    as fast as the generator can. Returns the figures as a dict (see the keys at the end)."""
    bindir = pathlib.Path(build) / "bin"
    port = free_udp_port()
    stats = tempfile.NamedTemporaryFile(prefix="efu_bench_", suffix=".json", delete=False).name
    cpu = str(efu_cpu)
    efu_cmd = ["taskset", "-c", cpu, str(bindir / "efu"), "--module", detector["module"],
               *detector["efu_args"], "--broker", "none", "--bind", "127.0.0.1",
               "--port", str(port), "--cpu", f"rx={cpu},proc={cpu}", *efu_extra,
               "--stats-json", stats, "--log-level", "warn"]
    efu = subprocess.Popen(efu_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        if not wait_for_thread(efu.pid, "efu-proc0"):
            raise RuntimeError(f"efu did not start: {' '.join(efu_cmd)}")
        time.sleep(0.5)  # past the start-up: the receive thread is in recvmmsg
        before = snapshot(efu.pid)
        t0 = time.monotonic()
        gen_cmd = ["taskset", "-c", str(gen_cpu), str(bindir / detector["gen"]),
                   *detector["gen_args"], "--port", str(port), "--batch", str(gen_batch),
                   "--duration", str(duration)]
        if rate > 0:
            gen_cmd += ["--rate-pps", str(rate)]
        gen = subprocess.run(gen_cmd, capture_output=True, text=True, timeout=duration + 60)
        if gen.returncode != 0:
            raise RuntimeError(f"generator failed: {gen.stderr.strip()}")
        gen_s = time.monotonic() - t0
        time.sleep(0.3)
        after = snapshot(efu.pid)
        window_s = time.monotonic() - t0
    finally:
        efu.send_signal(signal.SIGINT)
        try:
            efu.wait(timeout=30)
        except subprocess.TimeoutExpired:
            efu.kill()
            efu.wait()
    with open(stats) as f:
        c = json.load(f)
    os.unlink(stats)
    sent = sent_count(gen.stdout + gen.stderr)

    def thread_cpu(name):
        return sum(ns - before.get(tid, (name, 0))[1]
                   for tid, (n, ns) in after.items() if n == name)

    all_cpu = sum(ns - before.get(tid, ("", 0))[1] for tid, (_, ns) in after.items())
    readouts = c[detector["readouts"]]
    busy = c["process.busy_ns"]
    proc = thread_cpu("efu-proc0")
    rx = thread_cpu("efu-rx")
    lost = c["lost.datagrams"] + c["rejected.datagrams"]

    def per_readout(ns):
        return ns / readouts if readouts else float("nan")

    return {
        "rate_pps": rate, "sent": sent, "processed": c["process.packets"], "lost": lost,
        "lost_kernel": c["receive.dropped.kernel"],
        "lost_ring_full": c["receive.dropped.ring_full"],
        "accounted": c["process.packets"] + lost == sent,
        "pps": c["process.packets"] / gen_s, "sent_pps": sent / gen_s, "window_s": window_s,
        "readouts": readouts, "busy_ns": busy, "proc_cpu_ns": proc, "rx_cpu_ns": rx,
        "all_cpu_ns": all_cpu, "sleeps": c["process.sleeps"],
        "proc_over_busy": proc / busy if busy else float("nan"),
        "all_ns_per_readout": per_readout(all_cpu),
        "busy_ns_per_readout": per_readout(busy),
        "proc_ns_per_readout": per_readout(proc),
        "rx_ns_per_readout": per_readout(rx),
        "other_ns_per_readout": per_readout(all_cpu - proc - rx),
    }


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]
