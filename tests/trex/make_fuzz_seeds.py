#!/usr/bin/env python3
"""Writes the seed corpora of the trex fuzz targets (tests/trex/CMakeLists.txt) into
tests/fuzz/corpus/trex_packets/, trex_let_packets/ and trex_loaders/ (run it after a format
changes).

Packets are written from the formats' definitions (docs/architecture.md §5), byte by byte; the
packet seeds are datagram series as tests/fuzz/plugin_fuzz.cpp reads them (2-byte little-endian
length, then the datagram). The loader seeds are the facility's files (modules/trex/configs/) and
a calibration, each behind the byte that picks the loader.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
TREX = 0x40


def ess_header(payload_len, seq=0, queue=0, pulse=(1_700_000_000, 1000),
               prev=(1_699_999_999, 82_000_000)):
    head = struct.pack("<BB3sBHBBIIIII", 0, 1, b"ESS", TREX, 32 + payload_len, queue, 0,
                       pulse[0], pulse[1], prev[0], prev[1], seq)
    return head + b"\0\0"


def vmm3(fiber, fen, vmm, channel, adc, low=5000):
    # fiber, fen, length=20, time high, time low, bc, otadc, geo, tdc, vmm, channel
    return struct.pack("<BBHIIHHBBBB", fiber, fen, 20, 1_700_000_000, low, 0, adc & 0x3ff, 0, 0,
                       vmm, channel)


def packet(readouts, seq=0):
    body = b"".join(readouts)
    return ess_header(len(body), seq) + body


def datagrams(*packets):
    return b"".join(struct.pack("<H", len(p)) + p for p in packets)


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    # trex.json, vessel 0 (ring 0, FEN 0): wires vmm 0/1, grids vmm 2..5.
    event = [vmm3(0, 0, 1, 10, 300, 5000), vmm3(1, 0, 1, 11, 200, 5002),
             vmm3(0, 0, 3, 20, 300, 5001), vmm3(0, 0, 3, 21, 100, 5003)]
    write("trex_packets", "one_event", datagrams(packet(event)))
    write("trex_packets", "shuffled_two_packets",
          datagrams(packet(event[::-1], 0), packet([vmm3(0, 1, 0, 40, 300, 9000),
                                                    vmm3(0, 1, 4, 3, 300, 9001)], 1)))
    write("trex_packets", "rejections",
          datagrams(packet([vmm3(20, 0, 0, 32, 300), vmm3(0, 9, 0, 32, 300),
                            vmm3(0, 0, 0, 10, 300), vmm3(0, 0, 0, 32, 10),
                            vmm3(0, 0, 0, 32, 300, 88_052_500)])))
    # let.json: rings 0 and 1, FEN 0: grids hybrid 0 (vmm 0), wires hybrid 1 (vmm 2, 3).
    let_event = [vmm3(2, 0, 2, 33, 300), vmm3(2, 0, 0, 0, 300, 5001),
                 vmm3(0, 0, 3, 62, 300, 9000), vmm3(0, 0, 0, 1, 300, 9001)]
    write("trex_let_packets", "two_events", datagrams(packet(let_event)))
    for name in ("trex.json", "let.json"):
        with open(os.path.join(ROOT, "modules", "trex", "configs", name), "rb") as f:
            write("trex_loaders", name.replace(".json", "_config"), b"g" + f.read())
    vmm = {"adc_offset": [0] * 64, "adc_slope": [1] * 64, "tdc_offset": [0] * 64,
           "tdc_slope": [1] * 64}
    calibration = {"Detector": "TREX", "Version": 1, "Calibrations": [{"VMMHybridCalibration": {
        "HybridId": "E5533333222222221111111100000000", "CalibrationDate": "2026-01-01",
        "vmm0": vmm, "vmm1": vmm}}]}
    write("trex_loaders", "calibration", b"c" + json.dumps(calibration).encode())


if __name__ == "__main__":
    main()
