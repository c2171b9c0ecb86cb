#!/usr/bin/env python3
"""The command port against a real efu (--module udp --broker none), with a client of our own
that behaves like the reference's efushell scripts (one send per request, one recv(2048) per
reply). Replies are checked byte for byte against the protocol as docs/operations.md writes it.

  command_port_test.py protocol|malformed|clients|never-reads|hammer|exit

- protocol:    every documented command and reply, the efushell scripts' own request sequences,
               then EXIT: exit code 0, final counters, --stats-json.
- malformed:   malformed lines and an over-long one: the documented error replies and counters.
- clients:     more clients than allowed, and an idle client closed after the idle time-out.
- never-reads: a client that sends and never reads while UDP traffic flows: other clients are
               served, stats go on, the slow client is closed, the data path counts are exact.
- hammer:      clients asking as fast as they can while UDP traffic flows: exact counts.
- exit:        EXIT while an idle and a never-reading client are connected: a prompt, clean stop.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

from operations_doc import doc_tables, template_regex
from support.checks import check, finish
from support.efu import Efu, binary
from support.ops import Client, Traffic, udp_efu, value_of, wait_until_accounted
from support.ports import free_port
from support.waits import wait_until, workdir

EFU = binary("efu")

INSTRUMENT = "opsport"
PREFIX = f"efu.{INSTRUMENT}.0."


def start_efu(tmp, extra=()):
    port = free_port()
    efu = udp_efu(["--command-port", str(port), "--instrument", INSTRUMENT, *extra], tmp)
    return efu, port


def wait_for_value(client: Client, name: str, predicate, timeout_s=10) -> int:
    """Values are as of the last stats interval: wait until one satisfies `predicate`."""
    return wait_until(lambda: (lambda v: v if predicate(v) else None)(value_of(client, name)),
                      timeout_s, f"{name} to reach the expected value")


def exit_efu(efu: Efu, client: Client, label: str) -> dict:
    reply = client.ask("EXIT")
    check(reply == b"<OK>", f"{label}: EXIT replies <OK> ({reply!r})")
    code = efu.wait(20)
    check(code == 0, f"{label}: efu exits 0 after EXIT (code {code})")
    if code is None:
        efu.kill()
        raise SystemExit(finish())
    out = efu.out()
    check("efu: final counters" in out, f"{label}: efu printed its final counters")
    check("stopping (command port EXIT)" in efu.log(), f"{label}: the log names EXIT as the reason")
    return efu.stats()


# ---- protocol --------------------------------------------------------------------------------

def case_protocol(tmp):
    commands, others = doc_tables()
    check(len(commands) == 11 and [c[0] for c in commands] == list(range(1, 12)),
          f"docs/operations.md lists 11 numbered commands ({[c[0] for c in commands]})")
    names_in_order = [req.split()[0] for _, req, _ in commands]
    version = subprocess.run([str(EFU), "--version"], capture_output=True, text=True,
                             timeout=10).stdout.split()[1]

    efu, port = start_efu(tmp)
    traffic = Traffic(efu.udp_port, 2000, 20000)
    traffic.finish()
    c = Client(port)
    received = wait_until_accounted(c, traffic)
    check(received > 0, f"STAT_GET_NAME receive.packets {received} > 0 of {traffic.sent} sent")
    time.sleep(0.5)  # two more intervals: no counter of the data path moves any more

    word = r"[^\s\[\]:]+"
    values = {"module": "udp", "prefix": PREFIX.replace(".", r"\."), "value": r"-1|[0-9]+",
              "version": version.replace(".", r"\."), "date": r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
              "time": r"[0-9]{2}:[0-9]{2}:[0-9]{2}", "host": word, "user": word, "kernel": r"\S+",
              "hash": r"\S+", "mask": "0", "count": r"[0-9]+"}
    replies = {}
    count = None
    names = []
    for number, request, reply_template in commands:
        if request == "EXIT":
            continue  # last
        if request == "STAT_GET {i}":
            count = count or int(c.ask("STAT_GET_COUNT").split()[1])
            for i in range(1, count + 1):
                reply = c.ask(f"STAT_GET {i}").decode()
                names.append(reply.split()[1][len(PREFIX):] if len(reply.split()) == 3 else "")
                ok = template_regex(reply_template, dict(values, name=r"[a-z0-9_.]+")).fullmatch(reply)
                check(bool(ok), f"STAT_GET {i}: {reply!r} matches '{reply_template}'")
            continue
        if request == "STAT_GET_NAME {name}":
            for name in names:
                for sent in (name, PREFIX + name):
                    reply = c.ask(f"STAT_GET_NAME {sent}").decode()
                    ok = template_regex(reply_template, dict(values, name=sent.replace(".", r"\."),
                                                             value="[0-9]+")).fullmatch(reply)
                    check(bool(ok), f"STAT_GET_NAME {sent}: {reply!r} matches '{reply_template}'")
            continue
        if request == "CMD_GET {n}":
            for n in range(1, 12):
                reply = c.ask(f"CMD_GET {n}").decode()
                expected = template_regex(reply_template, {"command": names_in_order[n - 1]})
                check(bool(expected.fullmatch(reply)), f"CMD_GET {n}: {reply!r}")
            continue
        reply = c.ask(request).decode()
        replies[request] = reply
        ok = template_regex(reply_template, values).fullmatch(reply)
        check(bool(ok), f"#{number} {request}: {reply!r} matches '{reply_template}'")
    count = int(replies["STAT_GET_COUNT"].split()[1])

    for request, reply_template in others:
        if request.startswith(("a ", "an ")):
            continue  # prose rows: the malformed and clients cases send those
        reply = c.ask(request).decode()
        check(reply == reply_template, f"{request!r}: {reply!r} == {reply_template!r}")

    # What the efushell scripts do, as they do it.
    words = c.ask("VERSION_GET").decode().split()
    check(len(words) == 7, f"efubriefstat.py: VERSION_GET has exactly 7 words ({words})")
    uptime = c.ask("STAT_GET_NAME main.uptime").decode().split()
    check(len(uptime) == 3 and uptime[2].isdigit(), f"efubriefstat.py: main.uptime {uptime}")
    first = c.ask("STAT_GET 1").split()
    check(len(first) == 3 and int(first[2]) >= 0, f"isefurunning.py: STAT_GET 1 {first}")
    check(c.ask("RUNTIMESTATS").split()[1].isdigit(), "isefurunning.py: RUNTIMESTATS is a number")
    metrics = {}
    for i in range(1, count + 1):
        r = c.ask(f"STAT_GET {i}").split()
        metrics[r[1].decode()] = int(r[2])
    check(metrics.get(PREFIX + "receive.packets") == received,
          f"verifymetrics.py: {PREFIX}receive.packets:{received}")
    check(all(b"Error:" not in c.ask(q) for q in ("RUNTIMESTATS", "VERSION_GET",
                                                    "DETECTOR_INFO_GET", "CALIB_MODE_GET",
                                                    "CMD_GET_COUNT")),
          "efustatus.py: none of its requests is answered with Error:")

    stats = exit_efu(efu, c, "protocol")
    check(count == len(stats), f"STAT_GET_COUNT {count} == the {len(stats)} counters of --stats-json")
    check(names == sorted(stats), "STAT_GET numbers the counters of --stats-json in name order")
    for name in ("receive.packets", "process.packets", "udp.packets", "udp.lost"):
        check(metrics.get(PREFIX + name) == stats[name],
              f"STAT_GET value of {name} {metrics.get(PREFIX + name)} == --stats-json {stats[name]}")
    traffic.check_accounting(stats, "protocol")


# ---- malformed -------------------------------------------------------------------------------

def doc_reply(others, prose_start: str) -> str:
    return next(reply for request, reply in others if request.startswith(prose_start))


def case_malformed(tmp):
    _, others = doc_tables()
    efu, port = start_efu(tmp)
    c = Client(port)
    bad_command = [b"NO_SUCH\n", b"stat_get_count\n", b" \n", b"\r\n\t", b"\x00", b"\xff\xfe\n"]
    bad_args = [b"STAT_GET\n", b"STAT_GET abc\n", b"CMD_GET 99\n", b"EXIT now\n",
                b"CALIB_MODE_SET 1\n", b"STAT_GET_COUNT x y\n"]
    for request in bad_command:
        reply = c.ask(request)
        check(reply == b"Error: <BADCMD>", f"{request!r}: {reply!r}")
    only_separators = doc_reply(others, "a request of only separators")
    check(c.ask(b" \n").decode() == only_separators, f"only separators: '{only_separators}'")
    for request in bad_args:
        reply = c.ask(request)
        check(reply == b"Error: <BADARGS>", f"{request!r}: {reply!r}")
    check(c.ask("STAT_GET_COUNT").startswith(b"STAT_GET_COUNT "),
          "the connection still serves after malformed requests")

    too_long = doc_reply(others, "a request of more than 1024 bytes")
    over_long_requests = 3
    for size in (1025, 5000, 200_000)[:over_long_requests]:
        long_client = Client(port)
        try:
            long_client.sock.sendall(b"STAT_GET_COUNT " + b"x" * (size - 15))
        except (BrokenPipeError, ConnectionResetError):
            pass  # efu may close before the client has written everything
        try:
            reply = long_client.sock.recv(2048)
        except ConnectionResetError:
            reply = b"<reset>"
        check(reply.decode(errors="replace") == too_long, f"{size}-byte request: {reply[:40]!r}")
        check(long_client.at_eof(5), f"{size}-byte request: efu closed the connection")
        long_client.close()
    check(c.ask("STAT_GET_COUNT").startswith(b"STAT_GET_COUNT "),
          "other clients are served after an over-long request")

    expected = {"command.malformed.bad_command": len(bad_command) + 1,
                "command.malformed.bad_args": len(bad_args),
                "command.malformed.too_long": over_long_requests}
    for name, want in expected.items():
        got = wait_for_value(c, name, lambda v, w=want: v == w, 5)
        check(got == want, f"{name} == {want} over the command port")
    stats = exit_efu(efu, c, "malformed")
    for name, want in expected.items():
        check(stats.get(name) == want, f"{name} {stats.get(name)} == {want} in --stats-json")
    check(stats.get("command.clients.accepted") == 1 + over_long_requests,
          f"command.clients.accepted {stats.get('command.clients.accepted')}")


# ---- clients ---------------------------------------------------------------------------------

MAX_CLIENTS = 8


def case_clients(tmp):
    _, others = doc_tables()
    busy = doc_reply(others, "a ninth client")
    efu, port = start_efu(tmp, ["--command-idle-timeout", "1"])
    clients = [Client(port) for _ in range(MAX_CLIENTS)]
    for i, cl in enumerate(clients):
        check(cl.ask("CMD_GET_COUNT") == b"CMD_GET_COUNT 11", f"client {i + 1} of {MAX_CLIENTS} served")
    rejected = 5
    for i in range(rejected):
        extra = Client(port)
        extra.sock.settimeout(5)
        reply = extra.sock.recv(2048)
        check(reply.decode() == busy, f"client {MAX_CLIENTS + 1 + i}: {reply!r} == {busy!r}")
        check(extra.at_eof(5), f"client {MAX_CLIENTS + 1 + i}: closed by efu")
        extra.close()
    clients.pop().close()
    time.sleep(0.3)
    again = Client(port)
    check(again.ask("CMD_GET_COUNT") == b"CMD_GET_COUNT 11", "a client is served again once one left")

    # Idle clients are closed after --command-idle-timeout 1 s; a client that keeps asking is not.
    for cl in clients:
        cl.close()
    again.close()
    time.sleep(0.3)
    idle, busy_client = Client(port), Client(port)
    idle.sock.setblocking(False)
    start, closed, alive = time.monotonic(), False, True
    while time.monotonic() - start < 3:
        alive = alive and busy_client.ask("CMD_GET_COUNT") == b"CMD_GET_COUNT 11"
        try:
            closed = closed or idle.sock.recv(2048) == b""
        except BlockingIOError:
            pass
        except ConnectionResetError:
            closed = True
        time.sleep(0.3)
    check(closed, "an idle client is closed by efu within 3 s (--command-idle-timeout 1)")
    check(alive, "a client that asks every 0.3 s stays connected past the idle time-out")
    stats = exit_efu(efu, busy_client, "clients")
    check(stats.get("command.clients.rejected") == rejected,
          f"command.clients.rejected {stats.get('command.clients.rejected')} == {rejected}")
    check(stats.get("command.clients.accepted") == MAX_CLIENTS + 3,
          f"command.clients.accepted {stats.get('command.clients.accepted')} == {MAX_CLIENTS + 3}")
    check(stats.get("command.clients.closed_idle", 0) >= 1,
          f"command.clients.closed_idle {stats.get('command.clients.closed_idle')} >= 1")


# ---- never-reads, hammer, exit ---------------------------------------------------------------

class NeverReads(threading.Thread):
    """Sends a request every few ms and never reads a reply. Its receive buffer is small and fixed
    (the kernel would otherwise let it grow to tcp_rmem's maximum), so efu's replies fill the
    buffers within a second or two."""

    def __init__(self, port: int, seconds: float):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect(("127.0.0.1", port))
        # One ordinary exchange first: efu has accepted the connection before the flood starts
        # (requests that pile up before the first read would be read as one over-long request).
        self.sock.settimeout(5)
        self.sock.sendall(b"CMD_GET_COUNT\n")
        self.first_reply = self.sock.recv(2048)
        self.sock.setblocking(False)
        self.seconds = seconds
        self.sent_bytes = 0
        self.closed_by_efu = False
        self.blocked = False

    def run(self):
        request = b"VERSION_GET\n"
        pending = b""
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            pending = pending or request
            try:
                n = self.sock.send(pending)
                self.sent_bytes += n
                pending = pending[n:]
            except BlockingIOError:
                self.blocked = True
            except (BrokenPipeError, ConnectionResetError):
                self.closed_by_efu = True
                return
            time.sleep(0.002)


class Hammer(threading.Thread):
    """Asks and reads as fast as it can until told to stop."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.client = Client(port)
        self.requests = 0
        self.errors = 0
        self.stop_flag = threading.Event()

    def run(self):
        queries = ["STAT_GET_COUNT", "STAT_GET 3", "STAT_GET_NAME receive.packets", "RUNTIMESTATS",
                   "VERSION_GET"]
        while not self.stop_flag.is_set():
            try:
                reply = self.client.ask(queries[self.requests % len(queries)])
            except OSError:
                self.errors += 1
                return
            self.requests += 1
            if not reply or b"Error" in reply:
                self.errors += 1


def count_stats_lines(efu: Efu) -> int:
    return efu.log().count(" info stats: ")


def case_never_reads(tmp):
    efu, port = start_efu(tmp, ["--command-idle-timeout", "2"])
    traffic = Traffic(efu.udp_port, 150_000, 30_000)
    slow = NeverReads(port, 8)
    slow.start()
    polling = Client(port)
    served, masks = 0, set()
    lines_before = count_stats_lines(efu)
    t0 = time.monotonic()
    while (traffic.running() or slow.is_alive()) and time.monotonic() - t0 < 60:
        reply = polling.ask("RUNTIMESTATS")
        served += reply.startswith(b"RUNTIMESTATS ")
        masks.add(int(reply.split()[1]))
        time.sleep(0.1)
    elapsed = time.monotonic() - t0
    traffic.finish()
    lines = count_stats_lines(efu) - lines_before
    check(served > 0, f"another client was served while one never read ({served} replies)")
    check(3 in masks, f"RUNTIMESTATS showed receiving and processing (bits 1, 2) during traffic {masks}")
    check(lines >= int(elapsed / 0.2 / 4), f"stats kept their interval: {lines} lines in {elapsed:.1f} s")
    check(slow.closed_by_efu, "efu closed the never-reading client")
    stats = exit_efu(efu, polling, "never-reads")
    # Closed as slow (its replies did not drain), or, if efu's command thread was kept off its
    # core long enough for more than 1024 bytes of requests to pile up, as one over-long
    # request (each read is one request): either way efu closed it and counted why.
    slow_closed = stats.get("command.clients.closed_slow", 0)
    too_long = stats.get("command.malformed.too_long", 0)
    check(slow_closed + too_long >= 1,
          f"command.clients.closed_slow {slow_closed} + command.malformed.too_long {too_long} >= 1")
    traffic.check_accounting(stats, "never-reads")


def case_hammer(tmp):
    efu, port = start_efu(tmp)
    traffic = Traffic(efu.udp_port, 150_000, 30_000)
    hammers = [Hammer(port) for _ in range(3)]
    for h in hammers:
        h.start()
    traffic.finish()
    for h in hammers:
        h.stop_flag.set()
        h.join(10)
    answered = sum(h.requests for h in hammers)
    check(answered > 100, f"hammering clients got {answered} replies")
    check(sum(h.errors for h in hammers) == 0, "no hammering client saw an error or a closed socket")
    c = Client(port)
    stats = exit_efu(efu, c, "hammer")
    check(stats.get("command.requests", 0) >= answered,
          f"command.requests {stats.get('command.requests')} >= {answered} answered")
    traffic.check_accounting(stats, "hammer")


def case_exit(tmp):
    efu, port = start_efu(tmp)
    traffic = Traffic(efu.udp_port, 20_000, 20_000)
    traffic.finish()
    idle = Client(port)
    slow = NeverReads(port, 3)
    slow.start()
    slow.join(10)
    c = Client(port)
    wait_until_accounted(c, traffic)
    start = time.monotonic()
    stats = exit_efu(efu, c, "exit")
    check(time.monotonic() - start < 15, "efu stopped promptly with an idle and a never-reading client")
    check(idle.at_eof(5), "the idle client saw the connection close")
    final = efu.out()
    check(f"packets received {stats['receive.packets']}" in final,
          "the final summary on stdout agrees with --stats-json")
    traffic.check_accounting(stats, "exit")


def main() -> int:
    case = sys.argv[1] if len(sys.argv) > 1 else ""
    cases = {"protocol": case_protocol, "malformed": case_malformed, "clients": case_clients,
             "never-reads": case_never_reads, "hammer": case_hammer, "exit": case_exit}
    if case not in cases:
        print(f"usage: {sys.argv[0]} {'|'.join(cases)}", file=sys.stderr)
        return 2
    cases[case](workdir(f"efu-ops-{case}-"))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
