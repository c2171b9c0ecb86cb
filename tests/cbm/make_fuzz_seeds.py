#!/usr/bin/env python3
"""Writes the seed corpora of the cbm fuzz targets (tests/fuzz/corpus/cbm_readout/ and
cbm_config/), byte by byte from the format's definition (docs/cbm.md "Readout"), not with efu's
writers. cbm_readout inputs are one selector byte (bit 0: 0 the shipped cbm.json, 1 beer.json;
bit 1: flush after the packet) and one ESS packet."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "fuzz", "corpus")
PULSE = (1_700_000_000, 1000)
PREV = (1_699_999_999, 81_762_000)


def ess_header(det_type, payload_len, seq=0, pulse=PULSE, prev=PREV):
    size = 32 + payload_len
    return struct.pack("<BB3sBHBBIIIII", 0, 1, b"ESS", det_type, size, 0, 0, pulse[0], pulse[1],
                       prev[0], prev[1], seq) + b"\0\0"


def readout(fiber, fen, rtype, channel, adc=0, tail=0, t=(1_700_000_000, 5000), length=20):
    # FiberId, FENId, DataLength, TimeHigh, TimeLow, Type, Channel, ADC, XPos|YPos or NADC|MCASum
    return struct.pack("<BBHIIBBHI", fiber, fen, length, t[0], t[1], rtype, channel, adc, tail)


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    # The shipped cbm.json: ring 11 (fibers 22, 23); FEN 0 ch 0 0D ev44, FEN 0 ch 1 0D da00,
    # FEN 1 ch 0 2D ev44 512x512, FEN 1 ch 1 IBM ev44, FEN 2 ch 0/1 IBM da00.
    good = (readout(22, 0, 1, 0) + readout(22, 0, 1, 1) + readout(23, 1, 2, 0, tail=3 | 2 << 16) +
            readout(22, 1, 3, 1, tail=1000 | 4 << 24) + readout(22, 2, 3, 0, tail=500 | 1 << 24) +
            readout(22, 2, 3, 1, tail=900 | 3 << 24))
    write("cbm_readout", "cbm_every_monitor", b"\x00" + ess_header(0x10, len(good)) + good)
    write("cbm_readout", "cbm_every_monitor_flush", b"\x02" + ess_header(0x10, len(good)) + good)
    bad = (readout(24, 0, 1, 0) + readout(22, 0, 0, 0) + readout(0, 0, 1, 0) + readout(22, 3, 1, 0) +
           readout(22, 0, 1, 9) + readout(22, 0, 2, 0) + readout(23, 1, 2, 0, tail=512) +
           readout(22, 0, 1, 0, t=(1_700_000_000, 88_052_500)) + readout(22, 0, 1, 0, length=19))
    write("cbm_readout", "cbm_rejections", b"\x00" + ess_header(0x10, len(bad)) + bad)
    write("cbm_readout", "cbm_heartbeat", b"\x00" + ess_header(0x10, 0, seq=1, pulse=(1_700_000_000, 7_000_000)))
    beer = readout(22, 0, 2, 0, tail=5 | 7 << 16) + readout(22, 1, 2, 1, tail=511 | 511 << 16)
    write("cbm_readout", "beer_2d", b"\x01" + ess_header(0x50, len(beer)) + beer)

    src = os.path.join(HERE, "..", "..", "modules", "cbm", "configs")
    for name in ("cbm.json", "beer.json"):
        with open(os.path.join(src, name), "rb") as f:
            write("cbm_config", name.replace(".json", ""), f.read())
    write("cbm_config", "ibm_average", b'{"Detector": "CBM", "MaxFENId": 0, "NormalizeIBMReadouts": false, '
          b'"Topology": [{"FEN": 0, "Channel": 0, "Type": "ibm", "Source": "a", "Schema": "DA00", '
          b'"MaxTofBin": 1000, "BinCount": 7, "AggregatedFrames": 3, "AggregationMode": 1}]}')
    write("cbm_config", "no_schema", b'{"Detector": "CBM", "MonitorRing": 3, "MaxFENId": 2, '
          b'"Topology": [{"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "cbm1", "MaxTofBin": 150000000, "BinCount": 1500}]}')


if __name__ == "__main__":
    main()
