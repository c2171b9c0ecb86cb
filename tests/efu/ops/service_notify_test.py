#!/usr/bin/env python3
"""efu's systemd notifications (Type=notify), with a notify socket of the test's own in place of
systemd: READY=1 comes once efu receives (its UDP socket bound, the plugin loaded, the command
port listening), STOPPING=1 when a stop begins; a configuration error sends no READY=1."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from support.checks import check, finish
from support.efu import binary
from support.ops import Client, udp_efu
from support.ports import free_port
from support.waits import workdir

EFU = binary("efu")


def receive_all(sock: socket.socket, timeout_s: float) -> list[str]:
    sock.settimeout(timeout_s)
    messages = []
    try:
        while True:
            messages.append(sock.recv(4096).decode())
    except socket.timeout:
        return messages


def main() -> int:
    tmp = workdir("efu-ops-notify-")
    path = str(tmp / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(path)

    command_port = free_port()
    efu = udp_efu(["--command-port", str(command_port)], tmp, env={"NOTIFY_SOCKET": path})
    try:
        first = receive_all(notify, 2)
        check(first == ["READY=1"], f"efu sent READY=1 once, when it was running ({first})")
        # At READY=1 the command port already answers.
        check(Client(command_port).ask("CMD_GET_COUNT") == b"CMD_GET_COUNT 11",
              "the command port answers once READY=1 was sent")
        efu.proc.send_signal(signal.SIGTERM)
        code = efu.wait(30)
        check(code == 0, f"efu exits 0 on SIGTERM (code {code})")
        last = receive_all(notify, 1)
        check(last == ["STOPPING=1"], f"efu sent STOPPING=1 when the stop began ({last})")
    finally:
        efu.kill()

    bad = subprocess.run([str(EFU), "--module", "udp", "--broker", "none", "--port", "0",
                          "--command-port", "70000"], env=dict(os.environ, NOTIFY_SOCKET=path),
                         capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2, f"a bad --command-port exits 2 ({bad.returncode}: {bad.stderr.strip()})")
    check(bad.stderr.startswith("efu: error: --command-port: 70000 is out of range"),
          f"one error line names the option: {bad.stderr.strip()}")
    check(receive_all(notify, 0.5) == [], "a configuration error sends no READY=1")
    notify.close()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
