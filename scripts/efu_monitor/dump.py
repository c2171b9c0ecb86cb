"""ev44 messages as JSON lines."""
import json
import sys


class JsonDump:
    def __init__(self, path):
        self._out = sys.stdout if path == "-" else open(path, "w")

    def write(self, ev):
        self._out.write(json.dumps({
            "source_name": ev.source_name,
            "message_id": int(ev.message_id),
            "reference_time": [int(x) for x in ev.reference_time],
            "reference_time_index": [int(x) for x in ev.reference_time_index],
            "time_of_flight": [int(x) for x in ev.time_of_flight],
            "pixel_id": [int(x) for x in ev.pixel_id],
        }) + "\n")

    def close(self):
        if self._out is not sys.stdout:
            self._out.close()
        else:
            self._out.flush()
