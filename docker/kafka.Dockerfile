# A single-node Apache Kafka (KRaft: broker and controller in one process) from the Maven jars
# scripts/kafka fetches, on Debian's own Java runtime: no registry image.
#   docker/images kafka
# which runs, with the jar cache as the named build context kafka-libs:
#   podman build -f docker/kafka.Dockerfile \
#     --build-context kafka-libs=${EFU_CACHE:-$HOME/.cache/efu}/kafka-<version>/libs \
#     -t localhost/efu-kafka docker/
# Environment at run time (docker/kafka-entrypoint.sh): KAFKA_HOST (listen address, default
# 127.0.0.1), KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_HEAP_OPTS.
ARG BASE=debian:bookworm
FROM ${BASE}
# Java first: this layer stays cached when only the jars change.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --user-group --home-dir /var/lib/kafka --shell /usr/sbin/nologin kafka \
 && install -d -o kafka -g kafka /var/lib/kafka
COPY --from=kafka-libs . /opt/kafka/libs/
COPY kafka-entrypoint.sh /usr/local/bin/kafka-entrypoint
# The broker's data lives in the container (a throw-away single node); mount a volume on
# /var/lib/kafka to keep it.
USER kafka
WORKDIR /var/lib/kafka
EXPOSE 9092
ENTRYPOINT ["/usr/local/bin/kafka-entrypoint"]
