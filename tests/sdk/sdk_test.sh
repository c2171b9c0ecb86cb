#!/usr/bin/env bash
# The SDK end to end: install efu, build the example plugin out of tree against the installed
# CMake package, and run the installed efu with it.
#   sdk_test.sh <efu build dir> <example plugin source dir>
set -euo pipefail
build_dir=$1
example_src=$2
work=$(mktemp -d /tmp/efu-sdk-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
[[ -f $work/prefix/include/efu/plugin.h ]] || fail "plugin.h not installed"
[[ -f $work/prefix/lib/cmake/efu/efuConfig.cmake ]] || fail "efuConfig.cmake not installed"

# Only the SDK's headers are installed (common/CMakeLists.txt lists them), none of the host's.
# (efu/schemas/ holds the generated FlatBuffers headers of the wire formats, installed by
# schemas/CMakeLists.txt.)
for private in spsc_ring.h packet_pool.h outputs.h cpu_relax.h kafka; do
  [[ ! -e $work/prefix/include/efu/$private ]] || fail "host-private efu/$private installed"
done
installed=$(cd "$work/prefix/include" && find efu -name '*.h' -not -path 'efu/schemas/*' | sort)
sdk="efu/counter_group.h efu/counters.h efu/da00/tof_histogram.h efu/errors.h efu/event_buffer.h
efu/ess/byte_reader.h
efu/ess/ess_time.h
efu/ess/header_writer.h efu/ess/logical_geometry.h efu/ess/packet_assembler.h
efu/ess/readout_blocks.h efu/ess/readout_header.h efu/gen/ess_stream.h efu/gen/faults.h
efu/gen/generator_options.h efu/gen/pacer.h efu/gen/packet_sender.h efu/gen/random.h
efu/gen/result_files.h efu/json_config.h efu/log_limiter.h efu/options.h efu/plugin.h
efu/plugin_files.h efu/vmm3a/clusters.h efu/vmm3a/data_path.h efu/vmm3a/hit.h
efu/vmm3a/hit_sort.h efu/vmm3a/hybrid_calibration.h efu/vmm3a/hybrid_location.h
efu/vmm3a/hybrid_map.h efu/vmm3a/options.h efu/vmm3a/readout.h efu/vmm3a/readout_parser.h
efu/vmm3a/time_groups.h"
[[ $installed == "$(tr ' ' '\n' <<<"$sdk" | grep . | sort)" ]] ||
  fail "installed headers are not the SDK's:"$'\n'"$installed"
# Each of them compiles on its own against the installed tree alone (no source tree on the
# include path), so none includes a header that was not installed.
mkdir -p "$work/headers"
{
  echo 'cmake_minimum_required(VERSION 3.25)'
  echo 'project(efu_sdk_headers LANGUAGES CXX)'
  echo 'find_package(efu 0.1 REQUIRED)'
  echo 'add_library(sdk_headers OBJECT)'
  echo 'target_link_libraries(sdk_headers PRIVATE efu::common)'
  echo 'target_compile_features(sdk_headers PRIVATE cxx_std_20)'
  for h in $installed; do
    src=$(tr '/.' '__' <<<"$h").cpp
    echo "#include <$h>" >"$work/headers/$src"
    echo "target_sources(sdk_headers PRIVATE $src)"
  done
} >"$work/headers/CMakeLists.txt"
cmake -S "$work/headers" -B "$work/headers-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$work/headers.log" 2>&1 && cmake --build "$work/headers-build" >>"$work/headers.log" 2>&1 ||
  { cat "$work/headers.log"; fail "an installed header does not compile on its own"; }

cmake -S "$example_src" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure out of tree"; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build out of tree"; }
[[ -f $work/build/efu_example.so ]] || fail "efu_example.so not built"
# Built with the installed headers alone: the source tree's include folder is on no command.
[[ -f $work/build/compile_commands.json ]] || fail "no compile_commands.json"
! grep -q "common/include" "$work/build/compile_commands.json" ||
  fail "the out-of-tree build includes the source tree's headers"

efu=$work/prefix/bin/efu
# Found by name on EFU_PLUGIN_PATH, with its own options in --help.
EFU_PLUGIN_PATH=$work/build "$efu" --list-modules >"$work/list.txt"
grep -q "example" "$work/list.txt" || { cat "$work/list.txt"; fail "--list-modules misses example"; }
EFU_PLUGIN_PATH=$work/build "$efu" --module example --help >"$work/help.txt"
grep -q -- "--example-config" "$work/help.txt" || fail "--help misses the plugin option"

# A bad config file stops efu with exit 2 and one line naming the file and the JSON path.
echo '{"ChannelsPerFiber": 100, "MaxPixel": "many"}' >"$work/bad.json"
set +e
EFU_PLUGIN_PATH=$work/build "$efu" --module example --broker none --bind 127.0.0.1 --port 0 \
  --example-config "$work/bad.json" >/dev/null 2>"$work/bad.err"
rc=$?
set -e
[[ $rc == 2 ]] || { cat "$work/bad.err"; fail "bad config: exit $rc, want 2"; }
grep -q "bad.json': /MaxPixel: \"many\" is not an integer" "$work/bad.err" ||
  { cat "$work/bad.err"; fail "bad config: message does not name the file and JSON path"; }

# Runs, receives, forms events; the installed efu finds its installed udp plugin too.
echo '{"ChannelsPerFiber": 100, "MaxPixel": 1024}' >"$work/example.json"
# A port nobody holds now (the kernel's pick for a bound and released socket); efu runs until
# SIGTERM, which drains its socket before the final counters, so no timing decides the result.
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
EFU_PLUGIN_PATH=$work/build "$efu" --module example --broker none --bind 127.0.0.1 \
  --port "$port" --example-config "$work/example.json" \
  --stats-json "$work/stats.json" >"$work/run.out" 2>"$work/run.err" &
pid=$!
for _ in $(seq 300); do grep -q running "$work/run.err" 2>/dev/null && break; sleep 0.1; done
grep -q running "$work/run.err" || { kill -KILL "$pid"; cat "$work/run.err"; fail "efu did not report running within 30 s"; }
# An ESS v1 header (type 0x10, total length 68, queue 0, pulse = previous pulse = 0x65000000 s,
# sequence 0) and three 12-byte blocks: (fiber 0, tof 100, channel 4 -> pixel 5),
# (fiber 0, tof 200, channel 5 -> pixel 6), (fiber 9, tof 300, channel 99999 -> rejected).
printf '%b' \
  '\x00\x01ESS\x10\x44\x00\x00\x00\x00\x00\x00\x65\x00\x00\x00\x00\x00\x00\x00\x65\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' \
  '\x00\x00\x0c\x00\x64\x00\x00\x00\x04\x00\x00\x00' \
  '\x00\x00\x0c\x00\xc8\x00\x00\x00\x05\x00\x00\x00' \
  '\x09\x00\x0c\x00\x2c\x01\x00\x00\x9f\x86\x01\x00' >"$work/packet.bin"
[[ $(stat -c %s "$work/packet.bin") == 68 ]] || fail "test packet is not 68 bytes"
python3 - "$port" "$work/packet.bin" <<'PY'
import socket, sys
data = open(sys.argv[2], "rb").read()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(data, ("127.0.0.1", int(sys.argv[1])))
s.sendto(b"\x01\x02\x03", ("127.0.0.1", int(sys.argv[1])))
PY
kill -TERM "$pid"
wait "$pid" || { cat "$work/run.err"; fail "efu exited non-zero"; }
python3 - "$work/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
want = {"receive.packets": 2, "example.blocks.received": 3, "example.errors.pixel": 1,
        "parser.essheader.errors.length": 1, "parser.essheader.packets": 1,
        "events.discarded": 2}
bad = {k: (s.get(k), v) for k, v in want.items() if s.get(k) != v}
if bad:
    sys.exit(f"FAIL: counters (got, want): {bad}")
PY
echo "sdk: example plugin built out of tree and run by the installed efu: ok"
