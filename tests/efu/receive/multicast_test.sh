#!/usr/bin/env bash
# efu joins an IPv4 and an IPv6 multicast group and receives what is sent to it. Runs in a
# private network namespace so the host's interfaces and routes are untouched; skipped (exit 77)
# where namespaces cannot be made (not root).
#   multicast_test.sh <efu binary> <test plugin dir>
set -euo pipefail
efu=$1
plugins=$2
ns=efu-mcast-$$
if ! ip netns add "$ns" 2>/dev/null; then
  echo "multicast: cannot create a network namespace here (not root?); skipped"
  exit 77
fi
work=$(mktemp -d /tmp/efu-mcast.XXXXXX)
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up
in_ns ip link set lo multicast on
in_ns ip route add 224.0.0.0/4 dev lo
# IPv6 multicast is not looped back on lo; a veth pair inside the namespace carries it instead.
# No duplicate-address detection, so the link-local addresses are usable at once.
in_ns sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
in_ns ip link add efu-tx type veth peer name efu-rx
in_ns ip link set efu-tx up
in_ns ip link set efu-rx up
for _ in $(seq 50); do
  in_ns ip -6 addr show dev efu-tx | grep -q 'scope link' && break
  sleep 0.1
done

run_case() {
  local group=$1 family=$2 rx_if=$3
  local port=$((30000 + RANDOM % 20000))
  # A log of its own per case (so "running" is this case's), and efu runs until SIGTERM, which
  # drains its socket before the final counters: no timing decides the result.
  rm -f "$work/err"
  ip netns exec "$ns" "$efu" --module "$plugins/efu_counting.so" --broker none --bind "$group" \
    --multicast-interface "$rx_if" --port "$port" --stats-json "$work/stats.json" \
    >"$work/out" 2>"$work/err" &
  local pid=$!  # efu itself: ip netns exec execs it (a shell function here would fork)
  for _ in $(seq 300); do grep -q running "$work/err" 2>/dev/null && break; sleep 0.1; done
  grep -q running "$work/err" 2>/dev/null ||
    { kill -KILL "$pid"; cat "$work/err"; echo "FAIL: efu did not report running for $group within 30 s"; exit 1; }
  in_ns python3 - "$group" "$port" "$family" <<'PY'
import socket, struct, sys, time
group, port, family = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if family == "4":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
else:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, socket.if_nametoindex("efu-tx"))
for i in range(100):
    dest = (group, port) if family == "4" else (group, port, 0, socket.if_nametoindex("efu-tx"))
    s.sendto(struct.pack("<Q", i) + b"x" * 56, dest)
    time.sleep(0.001)
PY
  kill -TERM "$pid"
  if ! wait "$pid"; then cat "$work/err"; echo "FAIL: efu exited non-zero for $group"; exit 1; fi
  grep -q "joined multicast group $group" "$work/err" || { cat "$work/err"; echo "FAIL: no join for $group"; exit 1; }
  python3 - "$work/stats.json" "$group" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
# Every datagram sent was processed or counted lost by the host; gaps only where one was lost.
lost = sum(s.get(n, 0) for n in ("receive.dropped.kernel", "receive.dropped.ring_full",
                                 "receive.dropped.at_stop", "receive.truncated"))
if s.get("counting.packets", 0) + lost != 100 or s.get("counting.packets", 0) == 0 \
        or s.get("counting.gaps", 0) > lost:
    sys.exit(f"FAIL: {sys.argv[2]}: counting.packets={s.get('counting.packets')} lost={lost} "
             f"gaps={s.get('counting.gaps')}; expected packets + lost == 100 and gaps <= lost")
print(f"multicast: {sys.argv[2]}: {s['counting.packets']} of 100 received, {lost} counted lost")
PY
}
run_case 239.1.2.3 4 lo
run_case ff02::1:3 6 efu-rx
