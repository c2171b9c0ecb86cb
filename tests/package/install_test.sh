#!/usr/bin/env bash
# The Debian package on a clean Debian 12: in a container of the debootstrap base
# (docker/images base), apt installs efu_<version>_<arch>.deb with its Depends and Recommends
# (the SDK's build tools), then
#   - `efu --version` prints the package's version and `efu --list-modules` lists every plugin
#     the package holds, found in the installed plugin folder;
#   - tests/sdk/example_plugin builds out of tree against the installed SDK (find_package(efu)
#     with no prefix given: the package's CMake config is on the default search path), and the
#     installed efu lists and loads it.
# Skips (exit 77) when podman is not installed or cannot run a container here.
#
#   install_test.sh <dir with the .deb> <source dir>
set -euo pipefail
deb_dir=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
skip() {
  echo "SKIP: $*"
  exit 77
}

command -v podman >/dev/null 2>&1 || skip "podman is not installed (scripts/setup installs it)"
((EUID == 0)) || skip "podman here runs as root only (rootless podman is not set up)"
eval "$("$src/docker/images" env)"
"$src/docker/images" base || fail "docker/images base"
debs=("$deb_dir"/efu_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || fail "expected one efu_*.deb in $deb_dir: ${debs[*]}"
deb=$(basename "${debs[0]}")
version=$(dpkg-deb -f "${debs[0]}" Version)
plugins=$(dpkg-deb -c "${debs[0]}" | grep -oE 'efu_[a-z0-9_]+\.so$' | sed 's/^efu_//; s/\.so$//' | sort)

# Downloaded .debs are kept between runs (once per machine, like the base image).
archives=${EFU_CACHE:-$HOME/.cache/efu}/containers/apt-archives
mkdir -p "$archives/partial"
log=$(mktemp /tmp/efu-install-test.XXXXXX)
trap 'rm -f "$log"' EXIT
began=$SECONDS
# shellcheck disable=SC2016  # expanded in the container
if ! podman run --rm --network host -v "$deb_dir:/deb:ro" -v "$src/tests/sdk/example_plugin:/src:ro" \
  -v "$archives:/var/cache/apt/archives" -e DEB="/deb/$deb" localhost/debian:bookworm bash -c '
  set -euo pipefail
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" >/tmp/apt.log 2>&1 ||
    { cat /tmp/apt.log; exit 1; }
  echo "== dpkg -s efu"; dpkg -s efu | grep -E "^(Status|Version):"
  echo "== getent efu"; getent passwd efu | cut -d: -f1,7
  echo "== efu --version"; efu --version
  echo "== efu --list-modules"; efu --list-modules
  cmake -S /src -B /tmp/example >/tmp/sdk.log 2>&1 &&
    cmake --build /tmp/example >>/tmp/sdk.log 2>&1 || { cat /tmp/sdk.log; exit 1; }
  echo "== example plugin"; ls /tmp/example/efu_example.so
  EFU_PLUGIN_PATH=/tmp/example efu --list-modules
  echo "== help"; EFU_PLUGIN_PATH=/tmp/example efu --module example --help | grep -c -- --example-config
' >"$log" 2>&1; then
  cat "$log"
  fail "installing the package and building the example plugin in the container"
fi
cat "$log"
section() { awk -v s="== $1" '$0 == s {on = 1; next} /^== / {on = 0} on' "$log"; }
section "dpkg -s efu" | grep -qx "Status: install ok installed" || fail "dpkg does not list efu as installed"
section "getent efu" | grep -qx "efu:/usr/sbin/nologin" || fail "postinst did not make the system user efu"
section "efu --version" | grep -qF "$version" || fail "efu --version does not print $version"
listed=$(section "efu --list-modules")
for p in $plugins; do
  grep -qw "$p" <<<"$listed" || fail "efu --list-modules misses the packaged plugin $p"
done
with_example=$(section "example plugin")
grep -qE '^  example +' <<<"$with_example" || fail "the installed efu does not list the example plugin"
[[ $(section help) -ge 1 ]] || fail "efu --module example --help lacks --example-config"
echo "ok   installed in a clean Debian 12 container, $(wc -w <<<"$plugins") plugins listed," \
  "example plugin built against the installed SDK ($((SECONDS - began)) s)"
