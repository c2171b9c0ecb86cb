#!/bin/bash
# The Kafka image's entrypoint (docker/kafka.Dockerfile): writes the KRaft single-node config,
# formats the storage on first start, then execs the broker, so a stop's SIGTERM reaches it.
# The settings are scripts/kafka's.
set -euo pipefail
host=${KAFKA_HOST:-127.0.0.1}
port=${KAFKA_PORT:-9092}
ctrl=${KAFKA_CONTROLLER_PORT:-9093}
state=/var/lib/kafka
read -r -a heap <<<"${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"
java_opts=("${heap[@]}" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
  -Dlog4j2.configurationFile=$state/log4j2.properties)

mkdir -p "$state/data"
cat >"$state/server.properties" <<CONF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$host:$ctrl
listeners=PLAINTEXT://$host:$port,CONTROLLER://$host:$ctrl
advertised.listeners=PLAINTEXT://$host:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$state/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
message.max.bytes=16777216
CONF
# The log goes to stdout (the container's log), warnings and up except Kafka's own INFO lines.
cat >"$state/log4j2.properties" <<CONF
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.apache.name = org.apache
logger.apache.level = WARN
logger.apachekafka.name = org.apache.kafka
logger.apachekafka.level = INFO
CONF

if [[ ! -f $state/data/meta.properties ]]; then
  cluster_id=$(java "${java_opts[@]}" -cp '/opt/kafka/libs/*' kafka.tools.StorageTool random-uuid |
    tail -n 1)
  java "${java_opts[@]}" -cp '/opt/kafka/libs/*' kafka.tools.StorageTool format \
    -t "$cluster_id" -c "$state/server.properties"
fi
echo "kafka-entrypoint: starting the broker on $host:$port (controller $ctrl)"
exec java "${java_opts[@]}" -cp '/opt/kafka/libs/*' kafka.Kafka "$state/server.properties"
