#!/usr/bin/env bash
# Docs must not drift from the code: every host option in `efu --help` is documented in
# docs/host.md, and every option docs/host.md documents in its table exists.
#   docs_options_test.sh <efu binary> <repo root>
set -euo pipefail
efu=$1
doc=$2/docs/host.md
help=$("$efu" --help)
status=0
for opt in $(sed -n '/^Host options:/,$p' <<<"$help" | grep -oE '^  --[a-z0-9-]+' | tr -d ' '); do
  grep -q -- "\`$opt" "$doc" || { echo "docs/host.md does not document $opt"; status=1; }
done
for opt in $(grep -oE '^\| `--[a-z0-9-]+' "$doc" | grep -oE -- '--[a-z0-9-]+'); do
  grep -qE -- "^  $opt " <<<"$help" || { echo "docs/host.md documents $opt, which efu --help does not have"; status=1; }
done
((status == 0)) && echo "docs_options: ok"
exit $status
