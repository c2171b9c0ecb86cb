#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets in tests/fuzz/ (run it after a format changes).

Every seed is written from the formats' definitions (docs/architecture.md §5), byte by byte,
not with efu's own writers, so a seed is also a check that the parsers accept what the definition
says.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
TICKS = 88_052_500


def ess_header(version, det_type, payload_len, queue=0, seq=0, pulse=(1_700_000_000, 1000),
               prev=(1_699_999_999, 88_000_000)):
    size = (30 if version == 0 else 32) + payload_len
    head = struct.pack("<BB3sBHBBIIIII", 0, version, b"ESS", det_type, size, queue, 0,
                       pulse[0], pulse[1], prev[0], prev[1], seq)
    return head + (b"\0\0" if version == 1 else b"")


def vmm3(fiber, fen, vmm, channel, adc, t=(1_700_000_000, 5000)):
    # fiber, fen, length=20, time high, time low, bc, otadc, geo, tdc, vmm, channel
    return struct.pack("<BBHIIHHBBBB", fiber, fen, 20, t[0], t[1], 0, adc & 0x3ff, 0, 0, vmm,
                       channel)


def datagrams(*packets):
    return b"".join(struct.pack("<H", len(p)) + p for p in packets)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    # ess_header: one datagram (the target parses Freia's type, 0x48).
    readouts = vmm3(0, 0, 0, 20, 300) + vmm3(0, 0, 1, 30, 400)
    write("ess_header", "v1_freia_two_readouts", ess_header(1, 0x48, 40) + readouts)
    write("ess_header", "v0_heartbeat", ess_header(0, 0x48, 0))
    write("ess_header", "v1_caen_block", ess_header(1, 0x48, 24) +
          struct.pack("<BBHIIBBHHHHH", 0, 0, 24, 1_700_000_000, 7, 0, 1, 0, 100, 200, 300, 400))
    write("ess_header", "bad_cookie", ess_header(1, 0x48, 0).replace(b"ESS", b"ESX"))

    # multiblade packets: cassette 0 of the shipped configs/freia.json is ring 0 (fibers 0, 1),
    # FEN 0, hybrid 0 (VMM 0 wires on channels 16..47, VMM 1 strips).
    hits = b"".join(vmm3(f, 0, v, c, 200, (1_700_000_000, 1000 + 10 * c))
                    for f in (0, 1) for v in (0, 1) for c in (16, 17, 18))
    p0 = ess_header(1, 0x48, len(hits), seq=0) + hits
    p1 = ess_header(1, 0x48, len(hits), seq=1) + hits
    write("multiblade_packets", "two_packets", datagrams(p0, p1))
    write("multiblade_packets", "heartbeat_then_data",
          datagrams(ess_header(1, 0x48, 0, seq=5), ess_header(1, 0x48, len(hits), seq=6) + hits))

    # udp: efu's format, a 64-bit little-endian sequence number then filler.
    write("udp_packets", "in_order", datagrams(*[struct.pack("<Q", i) + b"\xa5" * 56
                                                 for i in range(6)]))
    write("udp_packets", "gap_and_repeat", datagrams(*[struct.pack("<Q", i) + b"\x00" * 8
                                                       for i in (0, 1, 5, 5, 3, 1 << 40)]))


if __name__ == "__main__":
    main()
