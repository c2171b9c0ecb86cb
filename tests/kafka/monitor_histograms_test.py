#!/usr/bin/env python3
"""efu-monitor's da00 view (scripts/efu_monitor/histograms.py), without Kafka.

Messages are made with the facility's package (serialise_da00), as efu's live histograms and the
beam monitors send them. Asserts:
- da00 messages are told from ev44 by their file identifier;
- the signal of every message is summed per source, over bin edges (frame_time) and over one
  coordinate per bin (pixel_id); a source whose axis changes starts again, counted;
- a message without a signal, or not da00 at all, is counted as bad and changes nothing;
- the PNG is written, and the command line takes --histograms and --histogram-image.
"""
import os
import sys
import tempfile

import numpy as np
from streaming_data_types import serialise_da00, serialise_ev44
from streaming_data_types.dataarray_da00 import Variable

sys.path.insert(0, os.path.join(os.environ["EFU_SOURCE_DIR"], "scripts"))
from efu_monitor.cli import parse_args  # noqa: E402
from efu_monitor.histograms import HistogramView, is_da00  # noqa: E402
sys.path.insert(0, os.path.join(os.environ["EFU_SOURCE_DIR"], "tests"))
from support.checks import check, finish  # noqa: E402


def tof_message(source, timestamp, edges, counts):
    return serialise_da00(source, timestamp, [
        Variable(name="frame_time", data=np.asarray(edges, dtype=np.int32), axes=["frame_time"],
                 shape=(len(edges),), unit="ns"),
        Variable(name="signal", data=np.asarray(counts, dtype=np.uint32), axes=["frame_time"],
                 shape=(len(counts),), unit="counts"),
    ])


def pixel_message(source, timestamp, counts):
    ids = np.arange(1, len(counts) + 1, dtype=np.int32)
    return serialise_da00(source, timestamp, [
        Variable(name="pixel_id", data=ids, axes=["pixel_id"], shape=(len(ids),)),
        Variable(name="signal", data=np.asarray(counts, dtype=np.uint32), axes=["pixel_id"],
                 shape=(len(counts),), unit="counts"),
    ])


def main():
    ev44 = serialise_ev44("multiblade", 0, [1000], [0], [5], [7])
    first = tof_message("freia_tof", 10, [0, 100, 200, 300], [1, 2, 3])
    check(is_da00(first) and not is_da00(ev44), "da00 and ev44 told apart by identifier")

    view = HistogramView()
    view.add(first)
    view.add(tof_message("freia_tof", 20, [0, 100, 200, 300], [4, 0, 6]))
    view.add(pixel_message("freia_pixels", 20, [0, 5, 0, 1]))
    view.add(pixel_message("freia_pixels", 30, [2, 0, 0, 1]))
    tof = view.sources["freia_tof"]
    check(list(tof.signal) == [5, 2, 9], "TOF signal summed: %s" % list(tof.signal))
    check(list(tof.axis) == [0, 100, 200, 300] and tof.axis_name == "frame_time"
          and tof.unit == "ns", "TOF axis kept with its unit")
    check(tof.messages == 2 and tof.last_timestamp_ns == 20, "TOF messages and last timestamp")
    pixels = view.sources["freia_pixels"]
    check(list(pixels.signal) == [2, 5, 0, 2], "pixel signal summed: %s" % list(pixels.signal))
    check(view.messages == 4 and view.bad == 0, "4 messages, none bad")

    view.add(tof_message("freia_tof", 40, [0, 50, 100], [7, 8]))  # new binning: starts again
    tof = view.sources["freia_tof"]
    check(list(tof.signal) == [7, 8] and tof.reset == 1 and tof.messages == 1,
          "a changed axis restarts the sum and is counted: %s" % list(tof.signal))

    no_signal = serialise_da00("odd", 1, [
        Variable(name="frame_time", data=np.asarray([0, 1], dtype=np.int32), axes=["frame_time"],
                 shape=(2,))])
    view.add(no_signal)
    view.add(ev44)
    check(view.bad == 2 and view.messages == 5 and "odd" not in view.sources,
          "no signal, and ev44, counted as bad: bad %d" % view.bad)
    summary = view.summary()
    check("freia_pixels: 2 msgs, 9 counts" in summary, "summary: " + summary)

    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "histograms.png")
        view.save(png, "test")
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "PNG written")
        args = parse_args(["--histograms", "live", "--histogram-image", png])
        check(args.histograms == "live" and args.histogram_image == png,
              "--histograms and --histogram-image parsed")
    print("ok: efu-monitor's da00 view")


if __name__ == "__main__":
    main()
    sys.exit(finish())
