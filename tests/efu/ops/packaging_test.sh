#!/usr/bin/env bash
# The systemd unit and the example configuration (packaging/, docs/operations.md):
#   - the configured unit has the settings the docs promise and systemd-analyze accepts it;
#   - efu accepts the example /etc/efu/<instance>.json (with the host-specific parts overridden).
#   packaging_test.sh <efu binary> <repo root> <configured efu@.service>
set -uo pipefail
efu=$(realpath "$1")
root=$2
unit=$3
failures=0
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
ok() { echo "ok   $*"; }

[[ -f $unit ]] || { echo "FAIL no configured unit at $unit"; exit 1; }
for line in 'Type=notify' 'NotifyAccess=main' 'Restart=on-failure' 'RestartPreventExitStatus=2' \
  'KillSignal=SIGTERM' 'User=efu'; do
  if grep -qx -- "$line" "$unit"; then ok "$line"; else fail "the unit lacks '$line'"; fi
done
exec_start=$(grep '^ExecStart=' "$unit")
if [[ $exec_start =~ ^ExecStart=/.*/efu\ --config\ /etc/efu/%i\.json$ ]]; then
  ok "$exec_start"
else
  fail "ExecStart is '$exec_start'; expected <bindir>/efu --config /etc/efu/%i.json"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  # The installed path does not exist here: verify the same unit pointing at this build's efu.
  sed "s#^ExecStart=[^ ]*/efu #ExecStart=$efu #" "$unit" >"$dir/efu@.service"
  ln -s efu@.service "$dir/efu@test.service"
  out=$(cd "$dir" && systemd-analyze verify "$dir/efu@test.service" 2>&1)
  rc=$?
  ours=$(grep -F "efu@" <<<"$out" || true)
  if ((rc == 0)) && [[ -z $ours ]]; then
    ok "systemd-analyze verify accepts the unit"
  else
    fail "systemd-analyze verify (exit $rc): $ours"
  fi
else
  echo "note: no systemd-analyze here; the unit's syntax was not verified"
fi

example=$root/packaging/freia.example.json
out=$("$efu" --config "$example" --broker none --port 0 --cpu "" --command-port 0 --metrics "" \
  --graphite "" --stats-json "" --stop-after 0.2 2>&1)
rc=$?
if ((rc == 0)); then ok "efu accepts $example"; else fail "efu --config $example exited $rc: $out"; fi

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "packaging: ok"
