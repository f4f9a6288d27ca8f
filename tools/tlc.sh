#!/usr/bin/env bash
# Run SANY and TLC on the model-checking and trace-validation configs in tla/.
#
# usage: tools/tlc.sh [--dump OUT_DIR]        check every tla/MC*.cfg, plus every
#                                            tla/Trace*.cfg against tla/trace.ndjson
#                                            if that file exists
#        tools/tlc.sh --trace FILE...         trace validation only: run every
#                                            tla/Trace*.cfg once per FILE
#
# For a config X.cfg the module is X.tla. Each config is checked with
#   java -cp "$TLA2TOOLS_JAR" tla2sany.SANY X.tla
#   java -XX:+UseParallelGC -cp "$TLA2TOOLS_JAR" tlc2.TLC -workers auto -config X.cfg X.tla
# (-workers 1 for Trace*.cfg). Trace modules read the fixed file name
# trace.ndjson from their own directory; --trace copies each FILE there.
# Everything runs in a temporary copy of tla/, so TLC's states/ directories and
# trace-explorer files never land in the repo.
#
#   --dump OUT_DIR   also pass -dump OUT_DIR/<config>.dump to the MC runs.
#
# Environment:
#   TLA2TOOLS_JAR          path to a pinned tla2tools.jar (required; without it
#                          the script prints one "skipped" line and exits 0)
#   COMMUNITY_MODULES_JAR  optional CommunityModules-deps.jar added to the class
#                          path (needed if a spec EXTENDS Json, IOUtils, ...)
#   TLC_JAVA_OPTS          optional extra JVM options for TLC (e.g. -Xmx4g)
#
# Exits non-zero on any SANY error, TLC error, invariant/property violation or
# deadlock (TLC reports all of these through its exit status and "Error:" lines).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die_usage() {
  echo "tlc: $*" >&2
  echo "usage: tools/tlc.sh [--dump OUT_DIR] | tools/tlc.sh --trace FILE..." >&2
  exit 2
}

dump_dir=""
traces=()
trace_mode=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dump)
      [[ $# -ge 2 ]] || die_usage "--dump needs an OUT_DIR"
      dump_dir="$2"; shift 2 ;;
    --trace)
      trace_mode=true; shift
      while [[ $# -gt 0 && "$1" != --* ]]; do traces+=("$1"); shift; done ;;
    -h|--help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0 ;;
    *) die_usage "unknown argument: $1" ;;
  esac
done
if $trace_mode && [[ ${#traces[@]} -eq 0 ]]; then
  die_usage "--trace needs at least one FILE"
fi

if [[ -z "${TLA2TOOLS_JAR:-}" ]]; then
  echo "tlc: skipped: TLA2TOOLS_JAR is not set (download a pinned tla2tools.jar release, e.g. v1.8.0, and export TLA2TOOLS_JAR=/path/to/tla2tools.jar)"
  exit 0
fi
[[ -f "$TLA2TOOLS_JAR" ]] || { echo "tlc: FAIL: TLA2TOOLS_JAR=$TLA2TOOLS_JAR: no such file" >&2; exit 1; }
command -v java >/dev/null 2>&1 || { echo "tlc: FAIL: java not found" >&2; exit 1; }

classpath="$(realpath "$TLA2TOOLS_JAR")"
if [[ -n "${COMMUNITY_MODULES_JAR:-}" ]]; then
  [[ -f "$COMMUNITY_MODULES_JAR" ]] || { echo "tlc: FAIL: COMMUNITY_MODULES_JAR=$COMMUNITY_MODULES_JAR: no such file" >&2; exit 1; }
  classpath="$classpath:$(realpath "$COMMUNITY_MODULES_JAR")"
fi
for t in "${traces[@]}"; do
  [[ -f "$t" ]] || { echo "tlc: FAIL: trace file $t: no such file" >&2; exit 1; }
done
if [[ -n "$dump_dir" ]]; then
  mkdir -p "$dump_dir"
  dump_dir="$(cd "$dump_dir" && pwd)"
fi

shopt -s nullglob
mc_cfgs=("$root"/tla/MC*.cfg)
trace_cfgs=("$root"/tla/Trace*.cfg)
shopt -u nullglob

tmp="$(mktemp -d "${TMPDIR:-/tmp}/podlife-tlc.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

summary=()
failures=0
runs=0

# fresh_copy NAME: a private copy of tla/ under $tmp; prints its path.
fresh_copy() {
  local dir="$tmp/$1"
  mkdir -p "$dir"
  cp -R "$root/tla/." "$dir/"
  echo "$dir"
}

# check_config DIR CFG LABEL [TLC-ARGS...]: SANY then TLC on CFG (a file name in
# DIR); records one summary line under LABEL.
check_config() {
  local dir="$1" cfg="$2" label="$3"; shift 3
  local mod="${cfg%.cfg}" log="$tmp/$label.log" rc=0 start states
  runs=$((runs + 1))
  start=$SECONDS
  if [[ ! -f "$dir/$mod.tla" ]]; then
    summary+=("FAIL  $label: no module $mod.tla next to $cfg")
    failures=$((failures + 1))
    return
  fi

  echo "==> tlc: $label: SANY $mod.tla"
  (cd "$dir" && java -cp "$classpath" tla2sany.SANY -error-codes "$mod.tla") >"$log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]] || grep -qE '\*\*\* Errors:|\*\*\*Parse Error\*\*\*|Fatal errors' "$log"; then
    cat "$log"
    summary+=("FAIL  $label: SANY reported errors (exit $rc)")
    failures=$((failures + 1))
    return
  fi

  echo "==> tlc: $label: TLC $* -config $cfg $mod.tla"
  # shellcheck disable=SC2086 # TLC_JAVA_OPTS is a list of JVM flags
  (cd "$dir" && java -XX:+UseParallelGC ${TLC_JAVA_OPTS:-} -cp "$classpath" tlc2.TLC "$@" -config "$cfg" "$mod.tla") 2>&1 | tee "$log" || rc=$?
  states="$(grep -oE '[0-9][0-9,]* distinct states found' "$log" | tail -n 1 || true)"
  states="${states:+, $states}"
  local why=""
  if [[ $rc -ne 0 ]]; then
    why="TLC exit $rc"
  elif grep -qE '^Error:' "$log"; then
    why="TLC printed an Error: line"
  elif ! grep -q 'No error has been found' "$log"; then
    why="TLC did not report 'No error has been found'"
  fi
  if [[ -n "$why" ]]; then
    summary+=("FAIL  $label: $why$states ($((SECONDS - start))s)")
    failures=$((failures + 1))
  else
    summary+=("ok    $label$states ($((SECONDS - start))s)")
  fi
}

if ! $trace_mode; then
  if [[ ${#mc_cfgs[@]} -gt 0 ]]; then
    mcdir="$(fresh_copy mc)"
    for c in "${mc_cfgs[@]}"; do
      cfg="$(basename "$c")"
      args=(-workers auto)
      [[ -n "$dump_dir" ]] && args+=(-dump "$dump_dir/${cfg%.cfg}.dump")
      check_config "$mcdir" "$cfg" "$cfg" "${args[@]}"
    done
  fi
  # Trace configs run against a committed tla/trace.ndjson, if there is one.
  if [[ -f "$root/tla/trace.ndjson" ]]; then
    traces=("$root/tla/trace.ndjson")
  elif [[ ${#trace_cfgs[@]} -gt 0 ]]; then
    for c in "${trace_cfgs[@]}"; do
      summary+=("skip  $(basename "$c"): no tla/trace.ndjson (use tools/tlc.sh --trace FILE)")
    done
  fi
fi

n=0
for t in "${traces[@]}"; do
  n=$((n + 1))
  tdir="$(fresh_copy "trace$n")"
  cp "$t" "$tdir/trace.ndjson"
  for c in "${trace_cfgs[@]}"; do
    cfg="$(basename "$c")"
    check_config "$tdir" "$cfg" "${cfg}[$(basename "$t")]" -workers 1
  done
done
if $trace_mode && [[ ${#trace_cfgs[@]} -eq 0 ]]; then
  echo "tlc: FAIL: --trace given but there is no tla/Trace*.cfg" >&2
  exit 1
fi

if [[ $runs -eq 0 && ${#summary[@]} -eq 0 ]]; then
  echo "tlc: nothing to check: no tla/MC*.cfg or tla/Trace*.cfg"
  exit 0
fi
echo "==> tlc: summary"
printf '  %s\n' "${summary[@]}"
if [[ $failures -gt 0 ]]; then
  echo "tlc: FAIL: $failures of $runs run(s) failed" >&2
  exit 1
fi
echo "tlc: ok ($runs run(s))"
