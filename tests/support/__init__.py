"""What the Python tests share, one module per concern:

  checks  the one check() (and require(), fail(), finish()) of every test
  loss    the one definition of loss, as efu states it: lost.datagrams, rejected.datagrams,
          lost.events (efu/loss.h)
  waits   bounded waits: for a condition, for text in a log
  ports   free ports, and whether a UDP port is bound
  efu     the one way to run efu: arguments, log, readiness, SIGTERM, --stats-json
  kafka   a broker of a test's own (scripts/kafka on a port), reading a topic back, and efu's
          Kafka accounting
  e2e     the detector end-to-end runs: generator -> efu -> Kafka against the ground truth
  ops     efu --module udp for the operations tests, the command-port client, UDP traffic

ctest puts tests/ on PYTHONPATH for every Python test (efu_add_python_test in
tests/CMakeLists.txt), and a test imports `from support.checks import check`; no code changes
its import path itself. A script outside tests/ that uses this package says PYTHONPATH=tests in its usage
line (or its wrapper sets it). This file imports nothing on purpose: checks, loss, waits, ports,
efu and ops use the standard library only, so the af_xdp test (the system's python3, as root)
can import them; only kafka and e2e need the venv's confluent-kafka and
ess-streaming-data-types.
"""
