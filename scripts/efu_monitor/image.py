"""A 2D image of pixel hits received in the last N seconds."""
import collections
import time

import numpy as np


class PixelImage:
    def __init__(self, width, height, seconds):
        self._width = width
        self._height = height
        self._seconds = seconds
        self._chunks = collections.deque()  # (arrival time, pixel ids)

    def add(self, pixel_ids):
        now = time.monotonic()
        self._chunks.append((now, np.asarray(pixel_ids, dtype=np.int64)))
        while self._chunks and now - self._chunks[0][0] > self._seconds:
            self._chunks.popleft()

    def counts(self):
        size = self._width * self._height
        hits = np.zeros(size, dtype=np.int64)
        for _, ids in self._chunks:
            # Pixel ids are row-major, 0-based; those outside the image are ignored.
            inside = ids[(ids >= 0) & (ids < size)]
            hits += np.bincount(inside, minlength=size)
        return hits.reshape(self._height, self._width)

    def save(self, path):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        im = ax.imshow(self.counts(), origin="lower", interpolation="nearest")
        fig.colorbar(im, ax=ax, label="hits")
        ax.set_title("pixel hits, last {:g} s".format(self._seconds))
        fig.savefig(path, format="png")
        plt.close(fig)
