#!/usr/bin/env bash
# Record TLC's distinct-state counts for the explorer's Go test.
#
# usage: TLA2TOOLS_JAR=... tools/tlc-counts.sh CONFIG...
#
# Runs tools/tlc.sh --config CONFIG for each CONFIG and updates
# tla/tlc-counts.txt, a list of blocks, one per run of this script: a
# header saying when, on which jar and how loaded a machine, then
# tools/tlc.sh's summary line per config ("tlc: NAME: N distinct states, M
# states generated, depth D, T s"). A config run again leaves its earlier
# block (a block left with no config goes); the others are kept.
# explore's TestExploreShippedConfigs and explore/container's
# TestShippedCounts compare the explorers' counts with every config listed
# there, and only those: the counts are TLC's, recorded by this script,
# never typed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || { echo "usage: $0 CONFIG..." >&2; exit 2; }
: "${TLA2TOOLS_JAR:?set TLA2TOOLS_JAR to tla2tools.jar}"
summary="$(mktemp "${TMPDIR:-/tmp}/podlife-tlc-counts.XXXXXX")"
trap 'rm -f "$summary"' EXIT
args=()
for c in "$@"; do args+=(--config "$c"); done
load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
TLC_SUMMARY="$summary" tools/tlc.sh "${args[@]}"
out="$(mktemp "${TMPDIR:-/tmp}/podlife-tlc-counts.XXXXXX")"
trap 'rm -f "$summary" "$out"' EXIT
{
  # The earlier blocks without the configs of this run.
  if [[ -f tla/tlc-counts.txt ]]; then
    awk -v run=" $* " '
      /^# written by/ { flush(); n = 0; hdr[n++] = $0; next }
      /^#/ { hdr[n++] = $0; next }
      /^tlc: / { name = $2; sub(/:$/, "", name); if (index(run, " " name " ") == 0) body = body $0 "\n"; next }
      function flush() { if (body != "") { for (i = 0; i < n; i++) print hdr[i]; printf "%s", body }; body = "" }
      END { flush() }' tla/tlc-counts.txt
  fi
  echo "# written by tools/tlc-counts.sh $*; do not edit"
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD), $(nproc) cores, load at start $load"
  echo "# jar sha256 $(sha256sum "$TLA2TOOLS_JAR" | cut -c1-16)"
  grep -E '^ *tlc: MC[A-Za-z]+: [0-9]+ distinct states' "$summary" | sed 's/^ *//'
} > "$out"
cp "$out" tla/tlc-counts.txt
cat tla/tlc-counts.txt
