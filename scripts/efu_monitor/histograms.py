"""da00 histograms: the beam monitors' (on the events topic) and efu's live histograms
(efu --histograms TOPIC), summed per source over the messages read, drawn as a PNG at exit."""
import numpy as np

from streaming_data_types import deserialise_da00


def is_da00(payload):
    """Whether a FlatBuffers message carries the da00 file identifier (bytes 4..8)."""
    return len(payload) >= 8 and payload[4:8] == b"da00"


class SourceHistogram:
    """One source's summed signal over its axis: `axis` holds the bin edges (one more value than
    the signal, as frame_time) or one coordinate per bin (as pixel_id)."""

    def __init__(self, axis_name, axis, unit):
        self.axis_name = axis_name
        self.axis = axis
        self.unit = unit or ""
        self.signal = None
        self.messages = 0
        self.reset = 0  # times the axis changed, which starts the sum again
        self.last_timestamp_ns = 0


class HistogramView:
    """Sums the `signal` variable of every da00 message per source."""

    def __init__(self):
        self.sources = {}
        self.messages = 0
        self.bad = 0

    def add(self, payload):
        try:
            array = deserialise_da00(payload)
        except Exception:  # a foreign or broken message: count, keep going
            self.bad += 1
            return None
        variables = {v.name: v for v in array.data}
        signal = variables.get("signal")
        if signal is None or not signal.axes or signal.axes[0] not in variables:
            self.bad += 1
            return None
        axis_var = variables[signal.axes[0]]
        axis = np.asarray(axis_var.data).ravel()
        values = np.asarray(signal.data, dtype=np.float64).ravel()
        h = self.sources.get(array.source_name)
        if h is None or not np.array_equal(h.axis, axis) or len(h.signal) != len(values):
            old = h
            h = SourceHistogram(axis_var.name, axis, axis_var.unit)
            if old is not None:
                h.reset = old.reset + 1
            h.signal = np.zeros(len(values))
            self.sources[array.source_name] = h
        h.signal += values
        h.messages += 1
        h.last_timestamp_ns = int(array.timestamp_ns)
        self.messages += 1
        return array

    def live_line(self):
        return " | da00 %d msgs, %d sources" % (self.messages, len(self.sources))

    def summary(self):
        parts = ["%s: %d msgs, %g counts" % (name, h.messages, h.signal.sum())
                 for name, h in sorted(self.sources.items())]
        bad = ", %d not da00 with a signal" % self.bad if self.bad else ""
        return "histograms: %d da00 messages%s%s%s" % (
            self.messages, bad, "; " if parts else "", "; ".join(parts))

    def save(self, path, title=None):
        """One panel per source: a step plot over bin edges, or counts per coordinate."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = sorted(self.sources)
        rows = max(len(names), 1)
        fig, axes = plt.subplots(rows, 1, figsize=(8, 2.6 * rows), layout="constrained",
                                 squeeze=False)
        for ax, name in zip(axes[:, 0], names):
            h = self.sources[name]
            if len(h.axis) == len(h.signal) + 1:
                ax.stairs(h.signal, h.axis, fill=True)
            else:
                ax.plot(h.axis, h.signal, drawstyle="steps-mid", linewidth=0.8)
            unit = " [%s]" % h.unit if h.unit else ""
            ax.set_xlabel(h.axis_name + unit)
            ax.set_ylabel("counts")
            ax.set_title("%s: %d messages, %g counts" % (name, h.messages, h.signal.sum()),
                         fontsize=10)
        if not names:
            axes[0, 0].set_title("no da00 histograms received")
        if title:
            fig.suptitle(title)
        fig.savefig(path, format="png", dpi=100)
        plt.close(fig)
