#!/usr/bin/env python3
"""Beyond one machine, measured on this one (benchmarks/results/cluster/).

  benchmarks/cluster/cluster_bench.py --build build-cluster --cluster-port 19584 \
      --single-port 19590 [--pulses 2000] [--neutrons-per-pulse 1000] [--failovers 2] [--json F]

1. Throughput, same run, same generator settings: one efu (all of Freia) fed by one
   efu-multiblade-gen as fast as it goes, into a single broker (scripts/kafka on --single-port),
   against two efu processes (rings 0-3 and 4-7, as tests/cluster/cluster_failover.py) fed by
   two generators, into the 3-node cluster (scripts/kafka --nodes 3 on --cluster-port; topic
   replication 3, min.insync.replicas 2, efu's acks=all). events/s = events in the topic /
   (the broker's append time of the last message - the generators' start). The topics use
   LogAppendTime, so each message carries the time its leader appended it.
2. Failover: one efu at a steady rate into the cluster; the partition leader is SIGKILLed at
   t_kill; the delay is the first append time after t_kill (so by the new leader) - t_kill.
   The node is restarted before the next round, which kills whichever node leads then.

Both brokers and the cluster are started and stopped here. Needs the venv (confluent-kafka,
ess-streaming-data-types): run it with ~/.cache/efu/venv/bin/python. Bounded: every wait has a
limit.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(SOURCE, "tests"), os.path.join(SOURCE, "scripts")]

from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from streaming_data_types import deserialise_ev44  # noqa: E402

from support.efu import Efu, binary  # noqa: E402
from support.ports import free_udp_port  # noqa: E402


def kafka(port, nodes, *args, timeout=240):
    env = dict(os.environ, EFU_KAFKA_PORT=str(port))
    r = subprocess.run([os.path.join(SOURCE, "scripts", "kafka"), "--nodes", str(nodes), *args],
                       env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("scripts/kafka --nodes %d %s: %s%s" % (nodes, " ".join(args),
                                                                   r.stdout, r.stderr))
    return r.stdout.strip()


def leader(port, topic):
    try:
        value = int(kafka(port, 3, "leader", topic, timeout=30))
    except (RuntimeError, ValueError):
        return None
    return value if value >= 1 else None


def create_topic(bootstrap, topic, replicas):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    config = {"message.timestamp.type": "LogAppendTime"}
    if replicas > 1:
        config["min.insync.replicas"] = "2"
    admin.create_topics([NewTopic(topic, 1, replicas, config=config)])[topic].result(timeout=30)


def append_times(bootstrap, topic, timeout_s=120):
    """(append time ms, events) of every message in partition 0, up to the high watermark."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-" + uuid.uuid4().hex,
                  "enable.auto.commit": False, "fetch.max.bytes": 64 << 20})
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        c.assign([TopicPartition(topic, 0, low)])
        out, offset, deadline = [], low, time.monotonic() + timeout_s
        while offset < high and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None or m.error():
                continue
            out.append((m.timestamp()[1], len(deserialise_ev44(m.value()).pixel_id)))
            offset = m.offset() + 1
        return out
    finally:
        c.close()


def half_config(work, rings, name):
    with open(os.path.join(SOURCE, "modules", "multiblade", "configs", "freia.json")) as f:
        doc = json.load(f)
    if rings is not None:
        doc["Config"] = [c for c in doc["Config"] if c["Ring"] in rings]
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def start_efu(build, work, name, config, bootstrap, topic):
    port = free_udp_port()
    wd = os.path.join(work, name)
    os.makedirs(wd, exist_ok=True)
    efu = Efu(["--module", "multiblade", "--geometry", config, "--source-name", name,
               "--bind", "127.0.0.1", "--port", str(port), "--broker", bootstrap,
               "--events-topic", topic, "--status-topic", topic + "_status_" + name,
               "--log-level", "warn", "--cluster-timeout-ms", "600000"],
              wd, binary_path=binary("efu", build), ready_udp_port=port, ready_timeout_s=30)
    return efu, port


def generator(build, config, port, pulses, neutrons, rate, seed):
    return subprocess.Popen([str(binary("efu-multiblade-gen", build)), "--host", "127.0.0.1",
                             "--port", str(port), "--geometry", config, "--pulses", str(pulses),
                             "--neutrons-per-pulse", str(neutrons), "--noise-per-pulse", "0",
                             "--queues", "2", "--rate-pps", str(rate), "--seed", str(seed)],
                            stdout=subprocess.DEVNULL)


def throughput(args, work, bootstrap, replicas, halves, label):
    """events/s of len(halves) efu processes each fed by a generator at full speed."""
    topic = "bench_%s_%s" % (label, uuid.uuid4().hex[:8])
    create_topic(bootstrap, topic, replicas)
    efus, gens = [], []
    try:
        for i, rings in enumerate(halves):
            name = "%s_%d" % (label, i)
            config = half_config(work, rings, name)
            efu, port = start_efu(args.build, work, name, config, bootstrap, topic)
            efus.append((efu, config, port))
        t0 = time.time()
        for i, (_, config, port) in enumerate(efus):
            gens.append(generator(args.build, config, port, args.pulses,
                                  args.neutrons_per_pulse, 0, 11 + i))
        for g in gens:
            g.wait(timeout=300)
        stats = [efu.stop(timeout_s=120) for efu, _, _ in efus]
    finally:
        for efu, _, _ in efus:
            efu.kill()
    times = append_times(bootstrap, topic)
    events = sum(n for _, n in times)
    last = max(t for t, _ in times) / 1000.0
    return {
        "label": label, "processes": len(halves), "replicas": replicas,
        "events_in_topic": events, "messages": len(times),
        "events_made": sum(s["ev44.events"] for s in stats),
        "packets_lost_by_host": sum(s.get("receive.dropped.kernel", 0)
                                    + s.get("receive.dropped.ring_full", 0) for s in stats),
        "seconds": round(last - t0, 3), "events_per_s": round(events / (last - t0)),
    }


def failover(args, work, bootstrap):
    """Delay from SIGKILL of the partition leader to the first append by its successor."""
    topic = "bench_failover_" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic, 3)
    config = half_config(work, None, "failover")
    efu, port = start_efu(args.build, work, "failover", config, bootstrap, topic)
    rounds = []
    gen = None
    try:
        # Steady traffic for all rounds: 150 packets/s, about 1 ev44 message per 20 ms linger.
        gen = generator(args.build, config, port, 100000, 200, 150, 5)
        time.sleep(5)
        for _ in range(args.failovers):
            victim = None
            deadline = time.monotonic() + 60
            while victim is None and time.monotonic() < deadline:
                victim = leader(args.cluster_port, topic)
            t_kill = time.time()
            kafka(args.cluster_port, 3, "kill", str(victim))
            deadline = time.monotonic() + 60
            new = None
            while new in (None, victim) and time.monotonic() < deadline:
                new = leader(args.cluster_port, topic)
                time.sleep(0.2)
            time.sleep(3)  # traffic through the new leader
            times = [t for t, _ in append_times(bootstrap, topic)]
            after = [t for t in times if t >= t_kill * 1000]
            before = [t for t in times if t < t_kill * 1000]
            rounds.append({"killed": victim, "new_leader": new,
                           "last_append_before_kill_ms": round(t_kill * 1000 - max(before)),
                           "first_append_after_kill_ms": round(min(after) - t_kill * 1000)
                           if after else None})
            print("failover: %s" % rounds[-1], flush=True)
            kafka(args.cluster_port, 3, "restart", str(victim))
            time.sleep(3)
    finally:
        if gen is not None:
            gen.terminate()
            gen.wait(timeout=30)
        stats = efu.stop(timeout_s=120)
        efu.kill()
    return {"rounds": rounds, "efu": {k: stats.get(k) for k in (
        "ev44.events", "ev44.events.delivered", "kafka.delivery.failed",
        "kafka.delivery.uncertain", "kafka.leader.changes", "kafka.broker.disconnects",
        "kafka.broker.retries", "kafka.broker.request_timeouts", "kafka.errors.transport")}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--cluster-port", type=int, default=19584)
    ap.add_argument("--single-port", type=int, default=19590)
    ap.add_argument("--pulses", type=int, default=2000)
    ap.add_argument("--neutrons-per-pulse", type=int, default=1000)
    ap.add_argument("--failovers", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cluster-bench-")
    single = "127.0.0.1:%d" % args.single_port
    result = {"command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "load_before": os.getloadavg()}
    kafka(args.single_port, 1, "start")
    kafka(args.cluster_port, 3, "start")
    cluster = kafka(args.cluster_port, 3, "bootstrap")
    try:
        result["single"] = throughput(args, work, single, 1, [None], "single")
        print("throughput: %s" % result["single"], flush=True)
        result["cluster"] = throughput(args, work, cluster, 3, [range(0, 4), range(4, 8)],
                                       "cluster")
        print("throughput: %s" % result["cluster"], flush=True)
        result["failover"] = failover(args, work, cluster)
    finally:
        result["load_after"] = os.getloadavg()
        kafka(args.single_port, 1, "stop")
        kafka(args.cluster_port, 3, "stop")
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
