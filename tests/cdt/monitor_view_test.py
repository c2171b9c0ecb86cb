#!/usr/bin/env python3
"""efu-monitor's CDT view (scripts/efu_monitor/cdt.py), without Kafka.

Asserts:
- known pixel ids land on the panel cells worked out by hand: the worked examples of
  docs/cdt.md's pixel formulas and every panel's first and last pixel;
- every pixel of a panel lands on it once (a cuboid cell once per strip, 32 times);
- efu-cdt-gen --shape ring draws a ring on every configured module's face: its ground-truth
  pixels, projected, fall in the ring's cells, on every face the instrument file's modules
  cover; an off-centre --shape spot lands where it was put on every panel (which way is up);
- the PNG is written, and the command line takes --cdt instead of --width/--height.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.environ["EFU_SOURCE_DIR"], "scripts"))
from efu_monitor import cdt  # noqa: E402
from efu_monitor.cli import parse_args  # noqa: E402
from support.checks import check, finish  # noqa: E402
from support.ports import free_udp_port  # noqa: E402

FILES = {"dream": "DreamInst.json", "magic": "MagicInst.json", "heimdal": "HeimdalInst.json"}

# (instrument, pixel id, panel, x, y), by hand from docs/cdt.md:
CELLS = [
    # FwEndCap sector 2, sumo 5, A 40, C 37: x = 142, y = 88.
    ("dream", 24_783, "FwEndCap", 142, 88),
    ("dream", 1, "FwEndCap", 0, 0),
    ("dream", 71_680, "FwEndCap", 279, 255),
    ("dream", 71_681, "BwEndCap", 0, 0),
    ("dream", 229_376, "BwEndCap", 615, 255),
    # DreamMantle MU 2, cassette 3, A 45, C 100: counter 1, wire 13, strip 100; column
    # 12*2 + 2*3 + 1 = 31 -> x = 32*31 + 13 = 1005, y = strip.
    ("dream", 437_093, "DreamMantle", 1005, 100),
    ("dream", 229_377, "DreamMantle", 0, 0),
    # last: strip 255, wire 31, column 59
    ("dream", 720_896, "DreamMantle", 1919, 255),
    # HR cuboid 11 at (3, 2), rotation 1, A 37, C 70: grid (53, 714); 714 = 112*6 + 42, the
    # table's row 0 at the top: y = 111 - 42 = 69.
    ("dream", 1_202_326, "HR", 53, 69),
    ("dream", 1_122_305, "HR", 0, 111),
    ("dream", 1_523_712, "HR", 111, 0),
    ("dream", 720_897, "SANS", 0, 111),
    ("dream", 1_122_304, "SANS", 111, 0),
    # PADetector sector 2, A 50, C 140: x = 83, y = 194.
    ("magic", 295_508, "PADetector", 83, 194),
    ("magic", 376_832, "PADetector", 255, 511),
    ("magic", 1, "FRDetector", 0, 0),
    ("magic", 245_760, "FRDetector", 1919, 127),
    # HeimdalMantle MU 3, cassette 4, A 40, C 20: counter 1, wire 8, strip 20; column 45
    # -> x = 32*45 + 8 = 1448, y = 20.
    ("heimdal", 76_654, "HeimdalMantle", 1448, 20),
    ("heimdal", 1, "HeimdalMantle", 0, 0),
    ("heimdal", 294_912, "HeimdalMantle", 4607, 63),
]


def counts_of(instrument, pixel_ids):
    return np.bincount(np.asarray(pixel_ids) - 1, minlength=cdt.pixel_count(instrument))


def check_cells():
    for instrument, pixel, name, x, y in CELLS:
        panels = cdt.project(instrument, counts_of(instrument, [pixel]))
        hit = [(n, int(c[1]), int(c[0])) for n, image in panels.items()
               for c in np.argwhere(image)]
        check(hit == [(name, x, y)],
              f"{instrument} pixel {pixel} lands on {name} ({x}, {y}): {hit}")


def check_every_pixel_once():
    for instrument in cdt.INSTRUMENTS:
        panels = cdt.project(instrument, np.ones(cdt.pixel_count(instrument), dtype=np.int64))
        for p in cdt.INSTRUMENTS[instrument]:
            per_cell = 32 if p.kind == "cuboid" else 1  # 32 strips deep
            image = panels[p.name]
            check(image.shape == (p.height, p.width) and np.all(image == per_cell),
                  f"{instrument} {p.name}: each of the {p.pixels} pixels on one cell of "
                  f"{p.width} x {p.height}, {per_cell} per cell")


def shape_truth(instrument, directory, shape):
    """The pixels of efu-cdt-gen with `shape` options (sent to a port nobody reads), and its
    module count."""
    truth = os.path.join(directory, instrument + ".txt")
    summary = os.path.join(directory, instrument + ".json")
    geometry = os.path.join(os.environ["EFU_SOURCE_DIR"], "modules", "cdt", "configs",
                            FILES[instrument])
    subprocess.run([os.path.join(os.environ["EFU_BUILD_DIR"], "bin", "efu-cdt-gen"),
                    "--geometry", geometry, "--port", str(free_udp_port()), "--pulses", "10",
                    "--neutrons-per-pulse", "6000", "--rate-pps", "20000", "--seed", "5",
                    "--ground-truth", truth, "--summary", summary] + shape,
                   check=True, stdout=subprocess.DEVNULL, timeout=60)
    pixels = np.loadtxt(truth, dtype=np.int64, comments="#", usecols=2)
    with open(summary) as f:
        return pixels, json.load(f)["modules"]


def check_ring(instrument, directory):
    """Every hit is in the ring's cells of its face (distance 0.25..0.35 of the face from its
    centre, the defaults, give or take a cell), and the faces hit are as many as the modules
    (a cuboid module has one or two faces)."""
    pixels, modules = shape_truth(instrument, directory, ["--shape", "ring"])
    panels = cdt.project(instrument, counts_of(instrument, pixels))
    faces, on_ring, total = 0, 0, 0
    for p in cdt.INSTRUMENTS[instrument]:
        image = panels[p.name]
        fw, fh = p.face
        y, x = np.indices(image.shape)
        dist = np.hypot((x % fw + 0.5) / fw - 0.5, (y % fh + 0.5) / fh - 0.5)
        ring = (dist > 0.25 - 1.0 / min(fw, fh)) & (dist < 0.35 + 1.0 / min(fw, fh))
        on_ring += int(image[ring].sum())
        total += int(image.sum())
        per_face = image.reshape(p.height // fh, fh, p.width // fw, fw).sum(axis=(1, 3))
        faces += int(np.count_nonzero(per_face))
    check(total == len(pixels), f"{instrument}: all {len(pixels)} neutrons on the panels")
    check(on_ring == total, f"{instrument}: {on_ring} of {total} hits on the faces' rings")
    want = expected_faces(instrument)
    check(faces == want, f"{instrument}: {faces} faces hit, expected {want} ({modules} modules)")


def expected_faces(instrument):
    """The faces the instrument file's modules cover: a sector per endcap or PA entry (two
    endcap FENs may share one), a cassette per mantle entry, one or two cuboids per cuboid
    entry (Index, and Index2 unless 255)."""
    with open(os.path.join(os.environ["EFU_SOURCE_DIR"], "modules", "cdt", "configs",
                           FILES[instrument])) as f:
        entries = json.load(f)["Config"]
    faces = set()
    for e in entries:
        kind, index, index2 = e["Type"], e.get("Index", 0), e.get("Index2", 0)
        if kind in ("HR", "SANS"):
            faces.update({(kind, index)} | ({(kind, index2)} if index2 != 255 else set()))
        elif kind in ("DreamMantle", "FRDetector", "HeimdalMantle"):
            faces.add((kind, index, index2))
        else:
            faces.add((kind, index))
    return len(faces)


def check_spot(instrument, directory):
    """A small spot at 0.2 across and 0.8 up every face: the hits' mean face position is there
    on every panel (the generator's faces and the monitor's panels agree on which way is up)."""
    pixels, _ = shape_truth(instrument, directory, ["--shape", "spot", "--spot-x", "0.2",
                                                    "--spot-y", "0.8", "--spot-radius", "0.04"])
    panels = cdt.project(instrument, counts_of(instrument, pixels))
    for p in cdt.INSTRUMENTS[instrument]:
        image = panels[p.name]
        if not check(image.sum() > 0, f"{instrument} {p.name}: the spot has hits"):
            continue
        fw, fh = p.face
        y, x = np.indices(image.shape)
        mean_x = float((image * ((x % fw + 0.5) / fw)).sum() / image.sum())
        mean_y = float((image * ((y % fh + 0.5) / fh)).sum() / image.sum())
        check(abs(mean_x - 0.2) < 0.04 and abs(mean_y - 0.8) < 0.04,
              f"{instrument} {p.name}: spot at ({mean_x:.3f}, {mean_y:.3f}) of its faces, "
              f"expected (0.2, 0.8)")


def check_png(directory):
    png = os.path.join(directory, "dream.png")
    pixels = [c[1] for c in CELLS if c[0] == "dream"]
    cdt.save(png, "dream", counts_of("dream", pixels), "test")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the CDT view is written as a PNG")
    args = parse_args(["--image", png, "--cdt", "magic"])
    check(args.cdt == "magic", "--image with --cdt needs no --width/--height")
    try:
        parse_args(["--image", png])
        check(False, "--image without --cdt or a size is refused")
    except SystemExit as e:
        check(e.code == 2, "--image without --cdt or a size is refused (exit 2)")


def main():
    check_cells()
    check_every_pixel_once()
    with tempfile.TemporaryDirectory() as directory:
        for instrument in FILES:
            check_ring(instrument, directory)
            check_spot(instrument, directory)
        check_png(directory)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
