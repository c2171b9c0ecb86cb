#!/usr/bin/env python3
"""The container images and docker/compose.yaml end to end, with podman and podman-compose.

docker/images builds the three images (the debootstrap base, cached once per machine; Kafka
from scripts/kafka's Maven jars on Debian's JRE; efu from the .deb that package_deb made, so
nothing is compiled in a container). podman-compose then runs the stack of docker/compose.yaml
on the host's network, on ports of this test's own: Kafka, efu (multiblade, the shipped Freia
geometry), and once efu's UDP port is bound, the generator's 10 pulses. Asserts:
- the generator sent everything (no send errors) and wrote its ground truth;
- efu's final counters (--stats-json, written when compose stops it) account for every packet
  sent, and no Kafka delivery failed;
- the ev44 events read back from the container's Kafka on the host are the ground truth: every
  neutron once, pulse and pixel exact, TOF within the tick quantisation, message_ids
  consecutive.
Skips (exit 77) when podman or podman-compose is not installed or cannot run here. Every wait is
bounded; nothing asserts on elapsed time.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from confluent_kafka.admin import AdminClient

from support.checks import check, fail, finish, require
from support.e2e import check_events_against_truth, check_host_accounting, events_of, read_truth
from support.kafka import read_events
from support.ports import udp_port_bound
from support.waits import wait_for

# As in tests/multiblade/end_to_end.py: the event time is the neutron time up to ESS tick
# quantisation (half a tick, <= 5.7 ns).
TOF_TOLERANCE_NS = 6
# A jumbo datagram's payload (8972 B) after the 30-byte ESS header, in 20-byte VMM3a readouts: a
# lost packet leaves at most two wrong events per readout it held (end_to_end.py).
MAX_READOUTS_PER_PACKET = (8972 - 30) // 20
EVENTS_TOPIC = "freia_detector"  # docker/compose.yaml: efu --events-topic


def skip(why):
    print("SKIP: " + why, flush=True)
    sys.exit(77)


def timed(what, cmd, env, timeout):
    """Runs cmd, failing the test with its output if it fails; prints how long it took."""
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        print(r.stdout[-3000:] + r.stderr[-3000:], flush=True)
    require(r.returncode == 0, "%s: exit %d (%.0f s)" % (what, r.returncode, time.monotonic() - t0))
    return r


def kafka_ready(bootstrap):
    try:
        md = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=2)
        return len(md.brokers) > 0
    except Exception:  # noqa: BLE001  (not up yet: any client error means "try again")
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--deb-dir", required=True)
    ap.add_argument("--kafka-port", type=int, required=True, help="the controller takes +1")
    ap.add_argument("--udp-port", type=int, required=True)
    args = ap.parse_args()

    if shutil.which("podman") is None:
        skip("podman is not installed (scripts/setup installs it)")
    if os.geteuid() != 0:
        skip("podman here runs as root only (rootless podman is not set up)")
    compose = os.path.join(os.path.dirname(sys.executable), "podman-compose")
    if not os.access(compose, os.X_OK):
        compose = shutil.which("podman-compose")
    if compose is None:
        skip("podman-compose is not installed (scripts/setup puts 1.6.0 in the venv)")
    debs = glob.glob(os.path.join(args.deb_dir, "efu_*.deb"))
    require(len(debs) == 1, "one efu_*.deb in %s: %s" % (args.deb_dir, debs))

    images = os.path.join(args.source_dir, "docker", "images")
    env = dict(os.environ)
    conf = subprocess.run([images, "env"], capture_output=True, text=True, check=True).stdout
    env["CONTAINERS_CONF"] = conf.strip().split("=", 1)[1]
    timed("docker/images all %s" % os.path.basename(debs[0]), [images, "all", debs[0]], env, 1500)

    out = tempfile.mkdtemp(prefix="efu-compose-")
    os.chmod(out, 0o1777)  # the image's user efu writes the truth and the counters here
    project = "efu-test-%d" % os.getpid()
    env.update(EFU_COMPOSE_KAFKA_PORT=str(args.kafka_port),
               EFU_COMPOSE_KAFKA_CONTROLLER_PORT=str(args.kafka_port + 1),
               EFU_COMPOSE_UDP_PORT=str(args.udp_port), EFU_COMPOSE_OUT=out)
    base = [compose, "-p", project, "-f", os.path.join(args.source_dir, "docker", "compose.yaml")]
    bootstrap = "127.0.0.1:%d" % args.kafka_port
    require(not kafka_ready(bootstrap), "nothing listens on the test's Kafka port %s yet" % bootstrap)
    require(not udp_port_bound(args.udp_port), "UDP port %d is free" % args.udp_port)
    try:
        timed("podman-compose up -d kafka efu", base + ["up", "-d", "kafka", "efu"], env, 300)
        wait_for(lambda: kafka_ready(bootstrap), "the container's Kafka on %s" % bootstrap, 120)
        wait_for(lambda: udp_port_bound(args.udp_port), "efu's UDP port %d bound" % args.udp_port, 60)
        timed("podman-compose up generator (10 pulses)", base + ["up", "--no-deps", "generator"],
              env, 300)
        with open(os.path.join(out, "summary.json")) as f:
            sent = json.load(f)
        check(sent["send_errors"] == 0, "generator send errors: %d" % sent["send_errors"])
        check(sent["neutrons"] > 0, "the generator sent %d neutrons" % sent["neutrons"])
        # efu drains its socket and flushes Kafka on SIGTERM, then writes its final counters.
        time.sleep(2)
        timed("podman-compose stop efu", base + ["stop", "efu"], env, 120)
        stats_path = os.path.join(out, "efu-stats.json")
        wait_for(lambda: os.path.exists(stats_path), "efu's final counters in " + stats_path, 30)
        with open(stats_path) as f:
            stats = json.load(f)
        drops = check_host_accounting(stats, sent["packets"])
        check(stats.get("kafka.delivery.failed", -1) == 0,
              "kafka.delivery.failed = %s" % stats.get("kafka.delivery.failed"))
        check(stats.get("events.formed", 0) == sent["neutrons"] or drops > 0,
              "events.formed %s == neutrons sent %d" % (stats.get("events.formed"), sent["neutrons"]))
        messages = read_events(bootstrap, EVENTS_TOPIC)
        events = events_of(messages, "multiblade")
        truth = read_truth(os.path.join(out, "truth.txt"), sent["neutrons"])
        check_events_against_truth(events, truth, drops, TOF_TOLERANCE_NS,
                                   distorted_per_lost_packet=2 * MAX_READOUTS_PER_PACKET,
                                   lost_packets=sent["packets"] - stats.get("process.packets", 0))
        print("ok   %d neutrons from the generator container read back from the Kafka container "
              "in %d ev44 messages" % (len(events), len(messages)), flush=True)
    finally:
        r = subprocess.run(base + ["logs", "efu"], env=env, capture_output=True, text=True,
                           timeout=60)
        print("--- efu container log (last lines)\n" + "\n".join(
            (r.stdout + r.stderr).splitlines()[-4:]), flush=True)
        subprocess.run(base + ["down", "-t", "20"], env=env, capture_output=True, timeout=180)
    shutil.rmtree(out, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
