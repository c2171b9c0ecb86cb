"""Ports on 127.0.0.1: free ones for a test's servers, and whether a UDP port is bound."""
from __future__ import annotations

import socket

_PORTS_GIVEN: set[int] = set()


def free_port(kind=socket.SOCK_STREAM) -> int:
    """A port nobody holds now, and never one this process was given before: the kernel may
    pick the same free port twice in a row, and a test that takes several (Carbon's three) needs
    them distinct."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port
    raise RuntimeError("no free port in 100 tries")


def free_udp_port() -> int:
    return free_port(socket.SOCK_DGRAM)


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
    return udp_sockets_bound(port) > 0
