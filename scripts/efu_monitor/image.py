"""A 2D image of pixel hits received in the last N seconds."""
import collections
import time

import numpy as np


class PixelImage:
    """Counts pixel ids on a width x height grid, row-major: id = first_pixel + x + width * y
    (ESS logical geometry numbers pixels from 1)."""

    def __init__(self, width, height, seconds, first_pixel=1):
        self._width = width
        self._height = height
        self._seconds = seconds
        self._first = first_pixel
        self._chunks = collections.deque()  # (arrival time, pixel ids)
        self.off_grid = 0  # hits of the last counts() outside the grid

    def add(self, pixel_ids):
        now = time.monotonic()
        self._chunks.append((now, np.asarray(pixel_ids, dtype=np.int64)))
        while self._chunks and now - self._chunks[0][0] > self._seconds:
            self._chunks.popleft()

    def counts(self):
        size = self._width * self._height
        hits = np.zeros(size, dtype=np.int64)
        self.off_grid = 0
        for _, ids in self._chunks:
            index = ids - self._first
            inside = index[(index >= 0) & (index < size)]  # others are not on this grid
            self.off_grid += len(index) - len(inside)
            hits += np.bincount(inside, minlength=size)
        return hits.reshape(self._height, self._width)

    def subtitle(self, counts):
        """The counts' total; call after counts(), which counts the hits off the grid."""
        off = f", {self.off_grid} off the grid" if self.off_grid else ""
        return f"{int(counts.sum())} events received in the last {self._seconds:g} s{off}"

    def save(self, path, x_label="x", y_label="y", title=None, row_groups=None):
        """Writes a PNG sized to the grid's shape, so the image fills the figure. `row_groups`
        = (rows, name) draws a line every `rows` rows and names each band ("cassette 0", ...)."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        counts = self.counts()
        # Square pixels; the figure follows the grid's aspect within readable bounds.
        aspect = self._height / self._width
        plot_w = 5.0 if aspect >= 1 else 8.0
        plot_h = min(max(plot_w * aspect, 2.5), 7.0)
        fig, ax = plt.subplots(figsize=(plot_w + 1.8, plot_h + 1.0), layout="constrained")
        im = ax.imshow(counts, origin="lower", interpolation="nearest", aspect="auto",
                       extent=(-0.5, self._width - 0.5, -0.5, self._height - 0.5))
        fig.colorbar(im, ax=ax, label="hits", fraction=0.08, pad=0.02)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.set_title(f"{title or 'pixel hits'}\n{self.subtitle(counts)}", fontsize=10)
        if row_groups:
            rows, name = row_groups
            right = ax.secondary_yaxis("right")
            centres = [g * rows + (rows - 1) / 2 for g in range(self._height // rows)]
            right.set_yticks(centres, [f"{name} {g}" for g in range(len(centres))])
            right.tick_params(length=0)
            for g in range(1, self._height // rows):
                ax.axhline(g * rows - 0.5, color="white", linewidth=0.6, alpha=0.7)
        fig.savefig(path, format="png", dpi=100)
        plt.close(fig)
