#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` in the build directory writes efu_<version>_<arch>.deb into
# <out dir> (the other package tests install it), and the package holds what it must:
#   - the binaries, every built plugin, libefu_common, the SDK headers and CMake package, the
#     systemd unit and the example config, under the build's install prefix;
#   - a Depends naming the Debian package of every shared library that a packaged binary or
#     plugin needs (resolved here with ldd and dpkg -S, independently of dpkg-shlibdeps);
#   - the postinst that makes the system user the unit runs as.
#
#   deb_test.sh <build dir> <out dir>
set -euo pipefail
build_dir=$(cd "$1" && pwd)
out=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok   $*"; }

for tool in cpack dpkg-deb dpkg-shlibdeps objdump; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (scripts/setup installs dpkg-dev)"
done
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build_dir/CMakeCache.txt")
arch=$(dpkg --print-architecture)
[[ -n $version && -n $prefix ]] || fail "no project version or install prefix in $build_dir/CMakeCache.txt"

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/cpack.log
(cd "$build_dir" && cpack -G DEB -B "$out") >"$log" 2>&1 || { cat "$log"; fail "cpack -G DEB"; }
rm -rf "$out/_CPack_Packages"
deb=$out/efu_${version}_${arch}.deb
[[ -f $deb ]] || { ls -l "$out"; fail "cpack made no $(basename "$deb")"; }
ok "cpack -G DEB wrote $(basename "$deb") ($(($(stat -c %s "$deb") / 1024)) KiB)"

[[ $(dpkg-deb -f "$deb" Package) == efu ]] || fail "Package is not efu"
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "Version is not $version"
[[ $(dpkg-deb -f "$deb" Architecture) == "$arch" ]] || fail "Architecture is not $arch"
ok "control: Package efu, Version $version, Architecture $arch"

contents=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
expect_file() {
  grep -qxF "$1" <<<"$contents" || fail "the package lacks $1"
}
p=${prefix%/}
expected=("$p/bin/efu" "$p/lib/libefu_common.so" "$p/include/efu/plugin.h"
  "$p/include/efu/options.h" "$p/lib/cmake/efu/efuConfig.cmake"
  "$p/lib/cmake/efu/efuConfigVersion.cmake" "$p/lib/cmake/efu/efuTargets.cmake"
  "$p/lib/cmake/efu/EfuPlugin.cmake" "$p/lib/systemd/system/efu@.service"
  "$p/share/efu/examples/freia.example.json")
# Every plugin and generator the build made.
for f in "$build_dir"/plugins/efu_*.so; do expected+=("$p/lib/efu/plugins/$(basename "$f")"); done
for f in "$build_dir"/bin/efu-*; do
  [[ -x $f ]] && expected+=("$p/bin/$(basename "$f")")
done
for f in "${expected[@]}"; do expect_file "$f"; done
ok "the package holds the ${#expected[@]} expected files (binaries, plugins, SDK, unit, example)"
unit=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ".$p/lib/systemd/system/efu@.service")
grep -qxF "ExecStart=$p/bin/efu --config /etc/efu/%i.json" <<<"$unit" ||
  fail "the unit's ExecStart does not run $p/bin/efu"
ok "efu@.service runs $p/bin/efu"

# Depends: for every ELF file in the package, the Debian package of each library it needs.
depends=$(dpkg-deb -f "$deb" Depends)
[[ -n $depends ]] || fail "the package has no Depends"
declared=$(tr ',|' '\n\n' <<<"$depends" | sed 's/(.*)//; s/[[:space:]]//g' | grep . | sort -u)
x=$out/extract
dpkg-deb -x "$deb" "$x"
needed_pkgs=()
declare -A checked=()  # each library once
cache=$(ldconfig -p)
while IFS= read -r elf; do
  while IFS= read -r lib; do
    [[ $lib == libefu_common.so* || -n ${checked[$lib]:-} ]] && continue  # in this package, or done
    checked[$lib]=1
    path=$(awk -v l="$lib" '$1 == l {print $NF; exit}' <<<"$cache")
    [[ -n $path ]] || fail "$(basename "$elf") needs $lib, which this machine does not have"
    real=$(readlink -f "$path")
    pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$real" 2>/dev/null || true)
    pkg=${pkg%%:*}
    [[ -n $pkg ]] || fail "no Debian package owns $path ($lib, needed by $(basename "$elf"))"
    needed_pkgs+=("$pkg")
    # Named, or a virtual package it provides (libspdlog1.10 provides libspdlog1.10-fmt9).
    provides=$(dpkg-query -W -f='${Provides}' "$pkg" 2>/dev/null || true)
    names=$(printf '%s\n%s\n' "$pkg" "$(tr ',' '\n' <<<"$provides" | sed 's/(.*)//; s/[[:space:]]//g')")
    grep -qxFf <(grep . <<<"$names") <<<"$declared" ||
      fail "$(basename "$elf") needs $lib from $pkg, which Depends does not name: $depends"
  done < <(objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}')
done < <(find "$x" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c \
  'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
((${#needed_pkgs[@]})) || fail "found no ELF file with a NEEDED entry in the package"
distinct=$(printf '%s\n' "${needed_pkgs[@]}" | sort -u | tr '\n' ' ')
ok "Depends names the package of every library needed: $distinct"

postinst=$(dpkg-deb -I "$deb" postinst)
grep -q 'useradd --system' <<<"$postinst" || fail "postinst does not make the system user efu"
ok "postinst makes the system user efu"
rm -rf "$x"
echo "package: $deb: ok"
