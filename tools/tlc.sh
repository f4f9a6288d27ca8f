#!/usr/bin/env bash
# Run SANY and TLC on the model-checking and trace-validation configs in tla/.
#
# usage: tools/tlc.sh [--config NAME]... [--dump OUT_DIR]
#            model checking: SANY and TLC on every tla/MC*.cfg (the pod
#            lifecycle's and the container table's MCContainer*.cfg) but those
#            with a line starting "\* OUTSIDE CI" (MCThreePods: too long for
#            CI), or only the configs named by --config, e.g. --config
#            MCPodLifecycle or --config MCThreePods; may be repeated), then,
#            without --config, tla/TracePodLifecycle.cfg against
#            tla/trace.ndjson if that file exists
#        tools/tlc.sh --sany
#            SANY on every tla/*.tla, nothing else
#        tools/tlc.sh [--trace-config NAME] --trace FILE...
#            trace validation: every FILE must be a behaviour of the model
#            of the trace config NAME (default TracePodLifecycle, the pod
#            traces of package trace; TraceContainerLifecycle for the
#            container traces of trace/container); an empty FILE (no line,
#            or only blank lines) is refused before TLC runs
#        tools/tlc.sh [--trace-config NAME] --trace-reject FILE...
#            the opposite: TLC must reject every FILE, by a deadlock (a line
#            that matches no step) or a failed ASSUME (e.g. an empty trace);
#            a FILE that TLC accepts, or any other TLC error, is a failure
#
# For a config X.cfg the module is X.tla. SANY and TLC run as
#   java -cp "$TLA2TOOLS_JAR" tla2sany.SANY X.tla
#   java -XX:+UseParallelGC -cp "$TLA2TOOLS_JAR" tlc2.TLC -workers auto -lncheck final -config X.cfg X.tla
# (-workers 1 for Trace*.cfg). Trace modules read the fixed file name
# trace.ndjson from their own directory; --trace and --trace-reject copy each
# FILE there. Everything runs in a temporary copy of tla/, so TLC's states/
# directories and trace-explorer files never land in the repo.
#
#   --dump OUT_DIR   also pass -dump OUT_DIR/<config>.dump to the MC runs.
#
# SANY exits 0 on semantic errors, so it is judged by what it prints
# ("*** Errors", "Semantic errors", "Parse Error", "Fatal errors", "Could not",
# ...); its error lines are printed. TLC is judged by its exit status and its
# output: any "Error:" line, invariant or property violation, deadlock, or a
# missing "Model checking completed. No error has been found." fails the run.
# Each model-checking run prints one summary line from TLC's own figures:
#   tlc: MCPodLifecycle: 247790 distinct states, 22770924 states generated, depth 31, 402 s
#
# Environment:
#   TLA2TOOLS_JAR          path to a pinned tla2tools.jar (required; without it
#                          the script prints one line starting with
#                          "tlc: SKIPPED:" and exits 77, the automake code for
#                          a skipped test)
#   COMMUNITY_MODULES_JAR  optional CommunityModules-deps.jar added to the class
#                          path (needed if a spec EXTENDS IOUtils, ...)
#   TLC_JAVA_OPTS          optional extra JVM options for TLC (e.g. -Xmx4g)
#   TLC_SUMMARY            optional file to which the summary lines (one per
#                          MC config, one per trace mode) are appended
#
# Exit status: 0 ok, 1 a failure, 2 a usage error, 77 skipped (no jar).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die_usage() {
  echo "tlc: $*" >&2
  echo "usage: tools/tlc.sh [--config NAME]... [--dump OUT_DIR] | --sany | [--trace-config NAME] (--trace FILE... | --trace-reject FILE...)" >&2
  exit 2
}

mode=mc
dump_dir=""
configs=()
traces=()
trace_config=TracePodLifecycle
trace_config_given=""
set_mode() {
  [[ $mode == mc ]] || die_usage "$1 cannot be combined with --$mode"
  mode="${1#--}"
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dump)
      [[ $# -ge 2 ]] || die_usage "--dump needs an OUT_DIR"
      dump_dir="$2"; shift 2 ;;
    --config)
      [[ $# -ge 2 ]] || die_usage "--config needs a NAME"
      configs+=("${2%.cfg}"); shift 2 ;;
    --trace-config)
      [[ $# -ge 2 ]] || die_usage "--trace-config needs a NAME"
      trace_config="${2%.cfg}"; trace_config_given=1; shift 2 ;;
    --sany)
      set_mode "$1"; shift ;;
    --trace|--trace-reject)
      set_mode "$1"; shift
      while [[ $# -gt 0 && "$1" != --* ]]; do traces+=("$1"); shift; done
      [[ ${#traces[@]} -gt 0 ]] || die_usage "--$mode needs at least one FILE" ;;
    -h|--help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0 ;;
    *) die_usage "unknown argument: $1" ;;
  esac
done
if [[ $mode != trace* && -n "$trace_config_given" ]]; then
  die_usage "--trace-config is for --trace and --trace-reject"
fi
if [[ $mode != mc && ( ${#configs[@]} -gt 0 || -n "$dump_dir" ) ]]; then
  die_usage "--config and --dump are for model checking, not --$mode"
fi

shopt -s nullglob
mc_cfgs=()
for c in "$root"/tla/MC*.cfg; do
  grep -q '^\\\* OUTSIDE CI' "$c" || mc_cfgs+=("$c")
done
trace_cfgs=("$root/tla/$trace_config.cfg")
all_modules=("$root"/tla/*.tla)
shopt -u nullglob

if [[ ${#configs[@]} -gt 0 ]]; then
  mc_cfgs=()
  for c in "${configs[@]}"; do
    if [[ "$c" != MC* || ! -f "$root/tla/$c.cfg" ]]; then
      known=()
      for k in "$root"/tla/MC*.cfg; do known+=("$(basename "${k%.cfg}")"); done
      die_usage "--config $c: no tla/$c.cfg (the MC configs are: ${known[*]})"
    fi
    mc_cfgs+=("$root/tla/$c.cfg")
  done
fi
if [[ "$trace_config" != Trace* || ! -f "${trace_cfgs[0]}" ]]; then
  known=()
  for k in "$root"/tla/Trace*.cfg; do known+=("$(basename "${k%.cfg}")"); done
  die_usage "--trace-config $trace_config: no tla/$trace_config.cfg (the trace configs are: ${known[*]})"
fi

if [[ -z "${TLA2TOOLS_JAR:-}" ]]; then
  echo "tlc: SKIPPED: TLA2TOOLS_JAR is not set (download a pinned tla2tools.jar release, e.g. v1.8.0, and export TLA2TOOLS_JAR=/path/to/tla2tools.jar)"
  exit 77
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
if [[ $mode == trace ]]; then
  for t in "${traces[@]}"; do
    if ! grep -q '[^[:space:]]' "$t"; then
      echo "tlc: FAIL: trace file $t is empty (no line that is not blank): there is nothing to validate" >&2
      exit 1
    fi
  done
fi
if [[ -n "$dump_dir" ]]; then
  mkdir -p "$dump_dir"
  dump_dir="$(cd "$dump_dir" && pwd)"
fi
summary_file=""
if [[ -n "${TLC_SUMMARY:-}" ]]; then
  touch "$TLC_SUMMARY"
  summary_file="$(realpath "$TLC_SUMMARY")"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/podlife-tlc.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

summary=()   # the lines printed at the end (and appended to TLC_SUMMARY)
failures=0
runs=0

# note LINE: print a result line now and keep it for the end.
note() {
  echo "$1"
  summary+=("$1")
}
fail() {
  note "tlc: FAIL: $1"
  failures=$((failures + 1))
}

# fresh_copy NAME: a private copy of tla/ under $tmp; prints its path.
fresh_copy() {
  local dir="$tmp/$1"
  mkdir -p "$dir"
  cp -R "$root/tla/." "$dir/"
  echo "$dir"
}

# sany DIR MODULE: SANY on MODULE (a file name in DIR), judged by its output.
sany() {
  local dir="$1" mod="$2" log rc=0
  log="$tmp/sany-${mod%.tla}.log"
  (cd "$dir" && java -cp "$classpath" tla2sany.SANY "$mod") >"$log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]] || grep -qE "\*\*\* ?Errors|Semantic errors|Parse Error|Fatal errors|Could not|Couldn't|Cannot find|Lexical error|^Error" "$log"; then
    echo "tlc: SANY $mod: exit $rc; it says:" >&2
    # SANY's error report starts at the first of these lines.
    sed -n '/\*\*\* \{0,1\}Errors\|Semantic errors\|Parse Error\|Fatal errors\|Could not\|Cannot find\|Lexical error\|^Error/,$p' "$log" |
      grep -v '^[[:space:]]*$' | head -n 60 | sed 's/^/  /' >&2
    return 1
  fi
  echo "tlc: SANY $mod: ok"
}

# seconds TEXT: TLC's "Finished in 02min 37s" duration ("1d 02h", "01h 05min",
# "37s", "120ms") in whole seconds.
seconds() {
  local total=0 tok n
  for tok in $1; do
    n="${tok%%[a-z]*}"; n=$((10#${n:-0}))
    case "$tok" in
      *ms) ;;
      *min) total=$((total + n * 60)) ;;
      *d) total=$((total + n * 86400)) ;;
      *h) total=$((total + n * 3600)) ;;
      *s) total=$((total + n)) ;;
    esac
  done
  echo "$total"
}

# stats LOG: "N distinct states, M states generated, depth D, T s" from TLC's
# closing lines.
stats() {
  local log="$1" line gen dist depth fin
  line="$(grep -E '^[0-9,]+ states generated, [0-9,]+ distinct states found' "$log" | tail -n 1 || true)"
  gen="$(sed -E 's/^([0-9,]+) states generated.*/\1/' <<<"$line" | tr -d ,)"
  dist="$(sed -E 's/.* ([0-9,]+) distinct states found.*/\1/' <<<"$line" | tr -d ,)"
  depth="$(grep -oE 'The depth of the complete state graph search is [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+$' || true)"
  fin="$(grep -E '^Finished in ' "$log" | tail -n 1 | sed -E 's/^Finished in (.*) at .*/\1/' || true)"
  echo "${dist:-?} distinct states, ${gen:-?} states generated, depth ${depth:-?}, $(seconds "$fin") s"
}

# tlc DIR CFG LOG [TLC-ARGS...]: runs TLC on CFG in DIR, output to LOG;
# prints TLC's exit status.
tlc() {
  local dir="$1" cfg="$2" log="$3" rc=0; shift 3
  # shellcheck disable=SC2086 # TLC_JAVA_OPTS is a list of JVM flags
  (cd "$dir" && java -XX:+UseParallelGC ${TLC_JAVA_OPTS:-} -cp "$classpath" tlc2.TLC "$@" -config "$cfg" "${cfg%.cfg}.tla") >"$log" 2>&1 || rc=$?
  echo "$rc"
}

# errors LOG: TLC's Error: lines, indented.
errors() {
  grep -E '^Error:' "$1" | grep -v 'The behavior up to this point' | head -n 20 | sed 's/^/  /' || true
}

# verdict LOG RC: why TLC's run failed, or nothing when it passed.
verdict() {
  local log="$1" rc="$2"
  if grep -q 'Deadlock reached' "$log"; then echo "deadlock"
  elif grep -qE 'Invariant .* is violated|Temporal properties were violated|Action property .* is violated|is violated' "$log"; then echo "a property is violated"
  elif grep -qE '^Error: Assumption .* is false' "$log"; then echo "an assumption is false"
  elif grep -q '^Error:' "$log"; then echo "TLC printed an Error: line"
  elif [[ $rc -ne 0 ]]; then echo "TLC exit $rc"
  elif ! grep -q 'Model checking completed. No error has been found.' "$log"; then echo "TLC did not print 'Model checking completed. No error has been found.'"
  fi
}

# trace_line FILE K: the K-th line of the trace (blank lines skipped, as
# ndJsonDeserialize does), shortened.
trace_line() {
  grep -v '^[[:space:]]*$' "$1" | sed -n "${2}p" | cut -c1-240
}

# rejection LOG MODULE_FILE TRACE: what TLC's rejection of TRACE says.
rejection() {
  local log="$1" module="$2" trace="$3" l from to why
  if grep -q 'Deadlock reached' "$log"; then
    # The last state of the error trace has l = the first unmatched line.
    l="$(grep -oE '^/\\ l = [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+$' || true)"
    # A trace module may print why the line does not match ("line N: ...").
    why="$(grep -E '^"line [0-9]+' "$log" | head -n 1 | sed -E 's/^"(.*)"$/\1/; s/\\"/"/g' | cut -c1-400 || true)"
    if [[ -n "$why" ]]; then
      echo "deadlock: $why"
    elif [[ -n "$l" ]] && trace_line "$trace" "$l" | grep -q '"event" *: *"SyncKnownPods"'; then
      echo "deadlock: the SyncKnownPods call whose first line is line $l matches no step of the model: $(trace_line "$trace" "$l")"
    elif [[ -n "$l" ]]; then
      echo "deadlock: line $l matches no step of the model: $(trace_line "$trace" "$l")"
    else
      echo "deadlock"
    fi
  elif grep -qE '^Error: Assumption line [0-9]+' "$log"; then
    from="$(grep -oE '^Error: Assumption line [0-9]+' "$log" | head -n 1 | grep -oE '[0-9]+$')"
    to="$(grep -E '^Error: Assumption line' "$log" | head -n 1 | sed -E 's/.* to line ([0-9]+),.*/\1/')"
    echo "assumption failed (line $from of $(basename "$module")): $(sed -n "${from},${to}p" "$module" | tr -s ' \n' ' ' | cut -c1-200)"
  fi
}

# check_mc DIR CFG [TLC-ARGS...]: SANY and TLC on an MC config.
check_mc() {
  local dir="$1" cfg="$2" name="${2%.cfg}" log rc why; shift 2
  log="$tmp/$name.log"
  runs=$((runs + 1))
  if [[ ! -f "$dir/$name.tla" ]]; then
    fail "$name: no module $name.tla next to $cfg"
    return
  fi
  if ! sany "$dir" "$name.tla"; then
    fail "$name: SANY reported errors"
    return
  fi
  echo "==> tlc: $name: TLC $* -config $cfg $name.tla"
  # TLC's progress is worth seeing on the long runs: show its output.
  local status=()
  {
    # shellcheck disable=SC2086 # TLC_JAVA_OPTS is a list of JVM flags
    (cd "$dir" && java -XX:+UseParallelGC ${TLC_JAVA_OPTS:-} -cp "$classpath" tlc2.TLC "$@" -config "$cfg" "$name.tla") 2>&1 |
      tee "$log" | grep -vE '^(Parsing file|Semantic processing of module|Linting of module) '
    status=("${PIPESTATUS[@]}")
  } || true
  rc="${status[0]:-1}"
  why="$(verdict "$log" "$rc")"
  if [[ -n "$why" ]]; then
    fail "$name: $why ($(stats "$log"))"
    errors "$log"
  else
    note "tlc: $name: $(stats "$log")"
  fi
}

# check_trace DIR CFG TRACE: TLC on a trace config; the trace must pass
# (mode trace) or be rejected (mode trace-reject).
check_trace() {
  local dir="$1" cfg="$2" trace="$3" name="${2%.cfg}" log rc why said label
  label="${name}[$(basename "$trace")]"
  log="$tmp/$name-$(basename "$trace").log"
  runs=$((runs + 1))
  rc="$(tlc "$dir" "$cfg" "$log" -workers 1)"
  why="$(verdict "$log" "$rc")"
  said="$(rejection "$log" "$dir/$name.tla" "$trace")"
  if [[ $mode == trace-reject ]]; then
    if [[ -z "$why" ]]; then
      fail "$label: ACCEPTED: TLC found the trace to be a behaviour of the model ($(stats "$log")); it must reject it"
    elif [[ -n "$said" ]]; then
      echo "tlc: $label: rejected as expected: $said"
      rejected=$((rejected + 1))
    else
      fail "$label: TLC failed, but not by a deadlock or an assumption: $why"
      errors "$log"
    fi
    return
  fi
  if [[ -n "$said" ]]; then
    fail "$label: $said"
  elif [[ -n "$why" ]]; then
    fail "$label: $why"
    errors "$log"
  else
    echo "tlc: $label: accepted, $(stats "$log")"
    accepted=$((accepted + 1))
  fi
}

# run_traces: every trace config on every trace in $traces.
run_traces() {
  local n=0 t dir c
  accepted=0 rejected=0
  for c in "${trace_cfgs[@]}"; do
    dir="$(fresh_copy sany-trace)"
    if ! sany "$dir" "$(basename "${c%.cfg}").tla"; then
      runs=$((runs + 1))
      fail "$(basename "$c"): SANY reported errors"
      return
    fi
  done
  for t in "${traces[@]}"; do
    n=$((n + 1))
    dir="$(fresh_copy "trace$n")"
    cp "$t" "$dir/trace.ndjson"
    for c in "${trace_cfgs[@]}"; do
      check_trace "$dir" "$(basename "$c")" "$t"
    done
  done
  local total=$((${#traces[@]} * ${#trace_cfgs[@]}))
  if [[ $mode == trace-reject ]]; then
    note "tlc: traces-reject: $rejected of $total run(s) rejected as they must be"
  else
    note "tlc: traces: $accepted of $total run(s) accepted"
  fi
}

case "$mode" in
  sany)
    dir="$(fresh_copy sany)"
    for m in "${all_modules[@]}"; do
      runs=$((runs + 1))
      sany "$dir" "$(basename "$m")" || fail "SANY $(basename "$m") reported errors"
    done
    [[ $failures -gt 0 ]] || note "tlc: sany: ${#all_modules[@]} module(s) ok"
    ;;
  mc)
    if [[ ${#mc_cfgs[@]} -gt 0 ]]; then
      mcdir="$(fresh_copy mc)"
      for c in "${mc_cfgs[@]}"; do
        cfg="$(basename "$c")"
        # Liveness is checked once, on the whole state graph (periodic
        # checks cost more than the exploration on these specs).
        args=(-workers auto -lncheck final)
        [[ -n "$dump_dir" ]] && args+=(-dump "$dump_dir/${cfg%.cfg}.dump")
        check_mc "$mcdir" "$cfg" "${args[@]}"
      done
    fi
    # Trace configs run against a committed tla/trace.ndjson, if there is one.
    if [[ ${#configs[@]} -eq 0 && -f "$root/tla/trace.ndjson" && ${#trace_cfgs[@]} -gt 0 ]]; then
      traces=("$root/tla/trace.ndjson")
      mode=trace
      run_traces
    fi
    ;;
  trace|trace-reject)
    run_traces
    ;;
esac

if [[ $runs -eq 0 ]]; then
  echo "tlc: nothing to check: no tla/MC*.cfg"
  exit 0
fi
if [[ -n "$summary_file" ]]; then
  printf '%s\n' "${summary[@]}" >>"$summary_file"
fi
echo "==> tlc: summary"
printf '  %s\n' "${summary[@]}"
if [[ $failures -gt 0 ]]; then
  echo "tlc: FAIL: $failures of $runs run(s) failed" >&2
  exit 1
fi
echo "tlc: ok ($runs run(s))"
