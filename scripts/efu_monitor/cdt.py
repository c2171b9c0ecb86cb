"""The hit map of a CDT instrument (DREAM, MAGIC, HEIMDAL): one panel per module type.

An ev44 pixel id of a CDT instrument is `offset + 1 + x + nx * y` on its module type's grid
(docs/cdt.md, "Pixel space" and "Pixel formulas"; efu's modules/cdt/geometry.h, the reference's
getPixelOffset() and the instruments' ICDs). The tables below are those offsets and grids. Each
type's grid is then shown in the projection the instrument's people draw it in:

- endcaps (SUMO sectors) and MAGIC's PA detector: the grid as it is, sectors side by side
  (x = column of cassette counters, y = 16 * strip + wire);
- cuboids (HR, SANS): the 7 x 7 picture of 16 x 16 cuboid faces, placed and turned as in the
  instrument's cuboid table, summed over the 32 strips in depth (grid y mod 112; the table's
  row 0, the grid's y = 0, at the top);
- mantles (DREAM, MAGIC FR, HEIMDAL): unrolled, around the mantle across (each counter column
  of a mounting unit's cassettes, its 32 wires in depth side by side: 32 * column + wire) and the
  strip, along the beam, up.

Every panel is tiled by module faces of one size (FACE): a SUMO sector, a PA sector, a cuboid
face, a mantle cassette (2 counters x 32 wires across, the strips up). efu-cdt-gen --shape draws
its spot or ring on each of these faces.
"""
import numpy as np

CUBOID_SIDE = 112  # 7 faces of 16


class Panel:
    """One module type: its pixel range and how a pixel lands on the panel."""

    def __init__(self, name, offset, nx, ny, kind, face, title, group=0, wrap=1):
        self.name, self.offset, self.nx, self.ny = name, offset, nx, ny
        self.kind, self.face, self.title = kind, face, title
        self.group = group  # a thicker line every `group` columns (a mantle's mounting unit)
        self.wrap = wrap    # drawn as this many rows of consecutive columns
        self.width, self.height = {
            "grid": (nx, ny),
            "cuboid": (CUBOID_SIDE, CUBOID_SIDE),
            "mantle": (32 * 60, nx),      # DREAM mantle, FR: 60 counter columns, nx strips
            "heimdal": (32 * nx, 64),     # 144 counter columns, 64 strips
        }[kind]

    @property
    def pixels(self):
        return self.nx * self.ny

    def place(self, local):
        """Panel (x, y) of local pixel indexes (pixel - offset - 1), as arrays."""
        gx, gy = local % self.nx, local // self.nx
        if self.kind == "grid":
            return gx, gy
        if self.kind == "cuboid":  # y = 112 * strip + 16 * row + v, row 0 at the top
            return gx, CUBOID_SIDE - 1 - gy % CUBOID_SIDE
        if self.kind == "mantle":  # x = strip, y = 60 * wire + column
            return 32 * (gy % 60) + gy // 60, gx
        return 32 * gx + gy // 64, gy % 64  # heimdal: x = column, y = 64 * wire + strip


# Offsets and grids: docs/cdt.md's pixel space table (geometry.cpp checks they tile the space).
INSTRUMENTS = {
    "dream": [
        Panel("FwEndCap", 0, 280, 256, "grid", (56, 256),
              "forward endcap: 5 SUMO sectors (column x 16*strip+wire)"),
        Panel("BwEndCap", 71_680, 616, 256, "grid", (56, 256),
              "backward endcap: 11 SUMO sectors (column x 16*strip+wire)"),
        Panel("DreamMantle", 229_376, 256, 1920, "mantle", (64, 256),
              "mantle unrolled: 5 MU x 6 cassettes x (2 counters x 32 wires) x strip", 384),
        Panel("SANS", 720_896, 112, 3584, "cuboid", (16, 16),
              "SANS cuboids, faces as mounted (summed over strips)"),
        Panel("HR", 1_122_304, 112, 3584, "cuboid", (16, 16),
              "high-resolution cuboids, faces as mounted (summed over strips)"),
    ],
    "magic": [
        Panel("FRDetector", 0, 128, 1920, "mantle", (64, 128),
              "FR detector unrolled: 5 MU x 6 cassettes x (2 counters x 32 wires) x strip", 384),
        Panel("PADetector", 245_760, 256, 512, "grid", (32, 512),
              "PA detector: 8 sectors (column x 16*strip+wire)"),
    ],
    "heimdal": [
        Panel("HeimdalMantle", 0, 144, 2048, "heimdal", (64, 64),
              "mantle unrolled: 12 MU x 6 cassettes x (2 counters x 32 wires) x strip, "
              "3 MU a row", 384, wrap=4),
    ],
}

# Rows of the figure, panels by name (the wide mantles get a row of their own).
LAYOUT = {
    "dream": [["FwEndCap", "BwEndCap"], ["DreamMantle"], ["SANS", "HR"]],
    "magic": [["FRDetector"], ["PADetector"]],
    "heimdal": [["HeimdalMantle"]],
}


def pixel_count(instrument):
    """The instrument's highest pixel id: the panels tile 1..pixel_count."""
    return max(p.offset + p.pixels for p in INSTRUMENTS[instrument])


def project(instrument, counts):
    """{panel name: 2D hits array [y, x]} from `counts`, hits per pixel id - 1 (a flat array of
    pixel_count(instrument) entries)."""
    counts = np.asarray(counts)
    panels = {}
    for p in INSTRUMENTS[instrument]:
        part = counts[p.offset:p.offset + p.pixels]
        local = np.nonzero(part)[0]
        x, y = p.place(local)
        image = np.zeros((p.height, p.width), dtype=np.int64)
        np.add.at(image, (y, x), part[local])
        panels[p.name] = image
    return panels


def panel_of(instrument, name):
    return next(p for p in INSTRUMENTS[instrument] if p.name == name)


def save(path, instrument, counts, subtitle, title=None):
    """A PNG of the instrument's panels, face boundaries drawn as thin lines."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = project(instrument, counts)
    rows = LAYOUT[instrument]
    fig = plt.figure(figsize=(14, 3.6 * len(rows) + 0.6), layout="constrained")
    fig.suptitle(f"{title or instrument.upper() + ' hit map'}\n{subtitle}", fontsize=11)
    grid = fig.add_gridspec(len(rows), max(len(r) for r in rows))
    for r, names in enumerate(rows):
        span = grid.ncols // len(names)
        for c, name in enumerate(names):
            panel = panel_of(instrument, name)
            cells = grid[r, c * span:(c + 1) * span].subgridspec(panel.wrap, 1)
            part = panel.width // panel.wrap
            for k in range(panel.wrap):
                ax = fig.add_subplot(cells[k, 0])
                _draw(fig, ax, panel, panels[name], k * part, (k + 1) * part)
                if k == 0:
                    ax.set_title(f"{panel.name}: {panel.title}", fontsize=9)
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def _draw(fig, ax, panel, image, first, end):
    """Columns first..end-1 of the panel's image."""
    im = ax.imshow(image[:, first:end], origin="lower", interpolation="nearest", aspect="auto",
                   extent=(first - 0.5, end - 0.5, -0.5, panel.height - 0.5))
    fig.colorbar(im, ax=ax, label="hits", fraction=0.05, pad=0.01)
    fw, fh = panel.face
    for x in range(first + fw, end, fw):
        group = panel.group and x % panel.group == 0
        ax.axvline(x - 0.5, color="white", linewidth=1.2 if group else 0.4,
                   alpha=0.9 if group else 0.5)
    for y in range(fh, panel.height, fh):
        ax.axhline(y - 0.5, color="white", linewidth=0.4, alpha=0.5)
    ax.set_xticks([])
    ax.set_yticks([])
