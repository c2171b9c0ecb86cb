"""Command line: options, the consume loop and the final summary line."""
import argparse
import sys
import time

from efu_monitor.consumer import TopicReader
from efu_monitor.stats import EventStats, StatusView
from efu_monitor import cdt
from efu_monitor.image import PixelImage
from efu_monitor.dump import JsonDump
from efu_monitor.histograms import HistogramView, is_da00
from efu_monitor.merge import MergeView


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="efu-monitor",
        description="Live view of efu's ev44 events, da00 histograms and x5f2 status on Kafka.")
    p.add_argument("--broker", default="127.0.0.1:9092", help="bootstrap HOST:PORT")
    p.add_argument("--instrument", default="efu",
                   help="topics <instrument>_detector and <instrument>_status")
    p.add_argument("--events-topic", help="ev44 topic (default <instrument>_detector)")
    p.add_argument("--status-topic", help="x5f2 topic (default <instrument>_status)")
    p.add_argument("--from-beginning", action="store_true",
                   help="read from the earliest offset instead of only new messages")
    p.add_argument("--duration", type=float, default=0,
                   help="stop after S seconds (0: run until Ctrl-C)")
    p.add_argument("--max-messages", type=int, default=0,
                   help="stop after N ev44 messages (0: no limit)")
    p.add_argument("--dump-json", metavar="FILE",
                   help="write each ev44 message as one JSON line ('-' for stdout)")
    p.add_argument("--image", metavar="FILE", help="write a PNG of pixel hits at exit")
    p.add_argument("--image-seconds", type=float, default=10,
                   help="the image covers hits received in the last N seconds")
    p.add_argument("--width", type=int, default=0, help="image width in pixels")
    p.add_argument("--height", type=int, default=0, help="image height in pixels")
    p.add_argument("--first-pixel", type=int, default=1,
                   help="pixel id of the image's x=0, y=0 (ESS geometry: 1)")
    p.add_argument("--x-label", default="x", help="image x axis label, in the detector's terms")
    p.add_argument("--y-label", default="y", help="image y axis label, in the detector's terms")
    p.add_argument("--title", help="image title")
    p.add_argument("--row-groups", metavar="ROWS:NAME",
                   help="mark bands of ROWS rows on the image, named NAME 0, NAME 1, ...")
    p.add_argument("--cdt", choices=sorted(cdt.INSTRUMENTS),
                   help="draw the image as this CDT instrument's module-type panels "
                        "(docs/cdt.md, Monitor); no --width/--height")
    p.add_argument("--merge", nargs="?", const="", metavar="SOURCES",
                   help="several efu processes on one topic: merge their events by pulse time "
                        "and check each source's message_ids; SOURCES (a,b,...) are waited for "
                        "before a pulse is complete (docs/kafka.md)")
    p.add_argument("--histograms", metavar="TOPIC",
                   help="also read the da00 histograms of this topic (efu --histograms TOPIC); "
                        "da00 on the events topic (beam monitors) is always read")
    p.add_argument("--histogram-image", metavar="FILE",
                   help="write a PNG of every da00 source's histogram, summed, at exit")
    p.add_argument("--quiet", action="store_true", help="no live view, only the summary")
    args = p.parse_args(argv)
    args.events_topic = args.events_topic or args.instrument + "_detector"
    args.status_topic = args.status_topic or args.instrument + "_status"
    if args.image and not args.cdt and (args.width <= 0 or args.height <= 0):
        p.error("--image needs --width and --height (> 0), or --cdt")
    if args.row_groups:
        rows, _, name = args.row_groups.partition(":")
        if not rows.isdigit() or int(rows) <= 0 or not name:
            p.error(f"--row-groups '{args.row_groups}': expected ROWS:NAME, e.g. 32:cassette")
        args.row_groups = (int(rows), name)
    if args.duration < 0 or args.max_messages < 0 or args.image_seconds <= 0:
        p.error("--duration and --max-messages must be >= 0, --image-seconds > 0")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    events = EventStats()
    status = StatusView()
    image = None
    if args.image and args.cdt:  # every pixel id of the instrument, 1.., in one row
        image = PixelImage(cdt.pixel_count(args.cdt), 1, args.image_seconds, 1)
    elif args.image:
        image = PixelImage(args.width, args.height, args.image_seconds, args.first_pixel)
    dump = JsonDump(args.dump_json) if args.dump_json else None
    merger = MergeView(filter(None, args.merge.split(","))) if args.merge is not None else None
    histograms = HistogramView()
    topics = [args.events_topic, args.status_topic]
    if args.histograms and args.histograms not in topics:
        topics.append(args.histograms)
    reader = TopicReader(args.broker, topics, args.from_beginning)
    started = time.monotonic()
    next_view = started + 1.0
    try:
        while True:
            now = time.monotonic()
            if args.duration and now - started >= args.duration:
                break
            if args.max_messages and events.messages >= args.max_messages:
                break
            msg = reader.poll(0.1)
            if msg is not None:
                topic, payload = msg
                if is_da00(payload):
                    histograms.add(payload)
                elif topic == args.events_topic:
                    ev = events.add(payload)
                    if ev is not None:
                        if dump:
                            dump.write(ev)
                        if image:
                            image.add(ev.pixel_id)
                        if merger:
                            merger.add(ev)
                elif topic == args.status_topic:
                    status.add(payload)
            if not args.quiet and now >= next_view:
                print(events.live_line() + status.live_line()
                      + (histograms.live_line() if histograms.messages else ""), flush=True)
                events.start_interval()
                next_view = now + 1.0
    except KeyboardInterrupt:
        pass
    finally:
        reader.close()
        if dump:
            dump.close()
    if image and args.cdt:
        counts = image.counts().ravel()
        cdt.save(args.image, args.cdt, counts, image.subtitle(counts), args.title)
    elif image:
        image.save(args.image, args.x_label, args.y_label, args.title, args.row_groups)
    if args.histogram_image:
        histograms.save(args.histogram_image, args.title)
    print(events.summary() + " " + status.summary(), flush=True)
    if histograms.messages or args.histograms:
        print(histograms.summary(), flush=True)
    if merger:
        print(merger.summary(), flush=True)
    return 0
