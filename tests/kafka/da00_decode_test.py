"""efu's da00 messages decode with the facility's own package (ess-streaming-data-types).

Runs da00_dump (tests/kafka/da00_dump.cpp), which writes messages made by TofHistogram and
Da00Builder to files, and checks every variable with deserialise_da00 against values worked out
by hand from the reference system's histogram semantics. No broker is needed.
Usage: da00_decode_test.py --dump <da00_dump executable>. Exit 0 and "da00_decode: ok" on
success; every mismatch is printed.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from streaming_data_types import deserialise_da00

P0 = 1_700_000_000_000_000_000
EDGES = list(range(0, 1001, 100))  # period 1000 ns in 10 bins of 100 ns

# Pulse 0: 10 at 300 ns, 9 at 800 ns (8 at 1200 ns is beyond the period); pulse 1: 5 at 300 ns,
# 7 at 999 ns (1 at -5 ns is before the offset); pulse 2: 3 at 0 ns. Published at the 4th pulse.
HISTOGRAM = {
    "timestamp_ns": P0 + 142_857_143,  # the window's last pulse
    "frame_time": ("ns", ["frame_time"], np.int32, EDGES),
    "reference_time": ("ns", ["reference_time"], np.int32, [0, 71_428_571, 142_857_143]),
    "frame_total": ("counts", ["reference_time"], np.uint64, [10 + 9, 5 + 7, 3]),
}
SIGNAL = {
    "sum": [3, 0, 0, 10 + 5, 0, 0, 0, 0, 9, 7],
    "average": [3, 0, 0, (10 + 5) // 2, 0, 0, 0, 0, 9, 7],
}

DTYPES = {
    "int8": (np.int8, [-128, 127]),
    "uint8": (np.uint8, [0, 255]),
    "int16": (np.int16, [-32768, 32767]),
    "uint16": (np.uint16, [0, 65535]),
    "int32": (np.int32, [-2**31, 2**31 - 1]),
    "uint32": (np.uint32, [0, 2**32 - 1]),
    "int64": (np.int64, [-2**63, 2**63 - 1]),
    "uint64": (np.uint64, [0, 2**64 - 1]),
    "float32": (np.float32, [0.5, -1.25]),
    "float64": (np.float64, [1e-300, -2.5]),
}


def check_variable(errors, where, v, unit, axes, dtype, values, shape=None):
    want = np.array(values, dtype=dtype)
    if shape is not None:
        want = want.reshape(shape)
    if v.unit != unit or v.axes != axes:
        errors.append(f"{where}: unit {v.unit!r} axes {v.axes!r}, want {unit!r} {axes!r}")
    if not isinstance(v.data, np.ndarray) or v.data.dtype != want.dtype:
        errors.append(f"{where}: data {v.data!r}, want dtype {want.dtype}")
    elif v.data.shape != want.shape or not np.array_equal(v.data, want):
        errors.append(f"{where}: data {v.data.tolist()}, want {want.tolist()}")
    if tuple(v.shape) != want.shape:
        errors.append(f"{where}: shape {v.shape}, want {want.shape}")


def check_histogram(errors, path, aggregation):
    m = deserialise_da00(path.read_bytes())
    where = path.name
    if m.source_name != "cbm_monitor" or m.timestamp_ns != HISTOGRAM["timestamp_ns"]:
        errors.append(f"{where}: source {m.source_name!r} timestamp {m.timestamp_ns}")
    names = [v.name for v in m.data]
    if names != ["frame_time", "signal", "reference_time", "frame_total"]:
        errors.append(f"{where}: variables {names}")
        return
    by_name = {v.name: v for v in m.data}
    for name in ("frame_time", "reference_time", "frame_total"):
        unit, axes, dtype, values = HISTOGRAM[name]
        check_variable(errors, f"{where} {name}", by_name[name], unit, axes, dtype, values)
    check_variable(errors, f"{where} signal", by_name["signal"], "A", ["frame_time"], np.int32,
                   SIGNAL[aggregation])


def check_dtypes(errors, path):
    m = deserialise_da00(path.read_bytes())
    if m.source_name != "dtypes" or m.timestamp_ns != 123456789:
        errors.append(f"dtypes: source {m.source_name!r} timestamp {m.timestamp_ns}")
    by_name = {v.name: v for v in m.data}
    if sorted(by_name) != sorted(list(DTYPES) + ["grid"]):
        errors.append(f"dtypes: variables {sorted(by_name)}")
        return
    for name, (dtype, values) in DTYPES.items():
        unit = None if name == "float64" else "u"
        check_variable(errors, f"dtypes {name}", by_name[name], unit, ["x"], dtype, values)
    check_variable(errors, "dtypes grid", by_name["grid"], "counts", ["y", "x"], np.int64,
                   [1, 2, 3, 4, 5, 6], shape=(2, 3))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dump", required=True, help="the da00_dump executable")
    a = p.parse_args()
    errors = []
    with tempfile.TemporaryDirectory(prefix="efu-da00-") as tmp:
        subprocess.run([a.dump, tmp], check=True, timeout=60)
        out = Path(tmp)
        check_histogram(errors, out / "histogram_sum.da00", "sum")
        check_histogram(errors, out / "histogram_average.da00", "average")
        check_dtypes(errors, out / "dtypes.da00")
    for e in errors:
        print("FAIL:", e)
    if errors:
        sys.exit(1)
    print("da00_decode: ok")


if __name__ == "__main__":
    main()
