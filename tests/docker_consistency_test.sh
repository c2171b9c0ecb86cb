#!/usr/bin/env bash
# Keeps docker/ honest without a Docker engine:
#   - docker/Dockerfile builds with scripts/setup and scripts/build (one way to build, not two);
#   - every --option that compose.yaml passes to efu or efu-udpgen is documented in README.md
#     or docs/*.md (so a renamed option cannot silently break the demo);
#   - the runtime (last) stage of the Dockerfile runs as a non-root USER.
#
#   tests/docker_consistency_test.sh [repo-root]
set -uo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
dockerfile=$root/docker/Dockerfile
compose=$root/docker/compose.yaml
failures=0

fail() {
  echo "docker_consistency: $*" >&2
  failures=$((failures + 1))
}

for f in "$dockerfile" "$compose"; do
  [[ -f $f ]] || { echo "docker_consistency: $f is missing" >&2; exit 1; }
done

# --- Dockerfile: build stage uses the project's scripts ----------------------------------------

# Instructions only: drop comment lines, join continuation lines.
instructions=$(grep -vE '^[[:space:]]*#' "$dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta')

stage_count=$(grep -ciE '^[[:space:]]*FROM[[:space:]]' <<<"$instructions")
if ((stage_count < 2)); then
  fail "docker/Dockerfile has $stage_count stage(s); expected a multi-stage build (build + runtime)"
fi

# Everything before the last FROM is build stages; from the last FROM on is the runtime stage.
last_from=$(grep -niE '^[[:space:]]*FROM[[:space:]]' <<<"$instructions" | tail -n 1 | cut -d: -f1)
last_from=${last_from:-1}
build_part=$(head -n $((last_from - 1)) <<<"$instructions")
runtime_part=$(tail -n +"$last_from" <<<"$instructions")

for script in scripts/setup scripts/build; do
  if ! grep -E '^[[:space:]]*RUN[[:space:]]' <<<"$build_part" | grep -qE "(^|[[:space:]/.])$script([[:space:]]|$)"; then
    fail "docker/Dockerfile: no RUN in the build stage calls $script"
  fi
done

# --- Dockerfile: runtime stage runs as a non-root user -----------------------------------------

runtime_user=$(grep -iE '^[[:space:]]*USER[[:space:]]' <<<"$runtime_part" | tail -n 1 |
  awk '{print $2}')
if [[ -z $runtime_user ]]; then
  fail "docker/Dockerfile: the runtime stage has no USER instruction (it would run as root)"
else
  user_part=${runtime_user%%:*}
  if [[ $user_part == root || $user_part == 0 ]]; then
    fail "docker/Dockerfile: the runtime stage runs as USER $runtime_user; expected a non-root user"
  fi
fi

# --- compose.yaml: options passed to efu / efu-udpgen are documented ---------------------------

# Print the --options used by services that run the efu image (built from docker/Dockerfile,
# image efu*, or the shared efu anchor); other services (kafka) have their own tools' options.
options=$(awk '
  function flush() {
    if (svc != "" && block ~ /(efu-image|image:[[:space:]]*efu|dockerfile:[[:space:]]*docker\/Dockerfile)/) {
      rest = block
      while (match(rest, /(^|[^A-Za-z0-9_-])--[A-Za-z0-9][A-Za-z0-9_-]*/)) {
        opt = substr(rest, RSTART, RLENGTH)
        sub(/^[^-]+/, "", opt)
        print opt
        rest = substr(rest, RSTART + RLENGTH)
      }
    }
    svc = ""; block = ""
  }
  /^[[:space:]]*#/ { next }
  /^services:/ { in_services = 1; next }
  /^[^[:space:]]/ { if (in_services) flush(); in_services = 0; next }
  in_services && /^  [A-Za-z0-9_.-]+:[[:space:]]*$/ { flush(); svc = $1; next }
  in_services && svc != "" { block = block "\n" $0 }
  END { flush() }
' "$compose" | sort -u)

if [[ -z $options ]]; then
  fail "docker/compose.yaml: found no --options for the efu services (parser out of date?)"
fi

docs=()
[[ -f $root/README.md ]] && docs+=("$root/README.md")
for d in "$root"/docs/*.md; do [[ -f $d ]] && docs+=("$d"); done
if ((${#docs[@]} == 0)); then
  fail "no README.md or docs/*.md to check the compose options against"
else
  while IFS= read -r opt; do
    [[ -n $opt ]] || continue
    if ! grep -qE -- "(^|[^A-Za-z0-9_-])${opt}([^A-Za-z0-9_-]|$)" "${docs[@]}"; then
      fail "docker/compose.yaml uses option $opt, which README.md and docs/*.md do not mention"
    fi
  done <<<"$options"
fi

if ((failures)); then
  echo "docker_consistency: FAILED ($failures problem(s))" >&2
  exit 1
fi
echo "docker_consistency: ok"
