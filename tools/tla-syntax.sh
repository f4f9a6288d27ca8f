#!/usr/bin/env bash
# Offline TLA+ syntax check for tla/*.tla using the tree-sitter-tlaplus grammar
# (npm, no network needed once tools/tlaparse/node_modules is installed).
#
#   tools/tla-syntax.sh            # check tla/*.tla
#   tools/tla-syntax.sh FILE.tla.. # check the given files instead
#
# 1. installs tools/tlaparse/node_modules from the committed lockfile if needed;
# 2. self-test: testdata/good.tla must pass and testdata/bad.tla must fail;
# 3. parses the spec files.
# Without node/npm it prints "skipped" and exits 0, unless CI=true (exit 1).
# This is a syntax check only; tools/tlc.sh runs SANY/TLC for the real thing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/tools/tlaparse"
parse=(node "$dir/parse.mjs")
# Relative FILE arguments are resolved against the caller's directory;
# the default tla/*.tla set is reported relative to the repo root.
caller="$PWD"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [[ "${CI:-}" == "true" ]]; then
    echo "tla-syntax: FAIL: node/npm not found (required when CI=true)" >&2
    exit 1
  fi
  echo "tla-syntax: skipped: node/npm not found"
  exit 0
fi

# Install (or refresh) the pinned grammar when missing or older than the lockfile.
wasm="$dir/node_modules/@tlaplus/tree-sitter-tlaplus/tree-sitter-tlaplus.wasm"
stamp="$dir/node_modules/.package-lock.json"
if [[ ! -f "$wasm" || ! -d "$dir/node_modules/web-tree-sitter" || ! -f "$stamp" \
      || "$dir/package-lock.json" -nt "$stamp" ]]; then
  echo "tla-syntax: installing tools/tlaparse dependencies (npm ci)"
  (cd "$dir" && npm ci --legacy-peer-deps --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) || {
    echo "tla-syntax: FAIL: npm ci in tools/tlaparse failed" >&2
    exit 1
  }
fi

# Self-test: the checker must accept good.tla and reject bad.tla.
cd "$dir"
if ! out="$("${parse[@]}" testdata/good.tla 2>&1)"; then
  printf '%s\n' "$out" >&2
  echo "tla-syntax: FAIL: self-test: testdata/good.tla was rejected" >&2
  exit 1
fi
rc=0
out="$("${parse[@]}" testdata/bad.tla 2>&1)" || rc=$?
if [[ $rc -ne 1 ]] || ! grep -q 'bad.tla:[0-9]*:[0-9]*: syntax error' <<<"$out"; then
  printf '%s\n' "$out" >&2
  echo "tla-syntax: FAIL: self-test: testdata/bad.tla was not reported as a syntax error (exit $rc)" >&2
  exit 1
fi
echo "tla-syntax: self-test ok (good.tla accepted, bad.tla rejected)"

cd "$caller"
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  cd "$root"
  shopt -s nullglob
  files=(tla/*.tla)
  shopt -u nullglob
  if [[ ${#files[@]} -eq 0 ]]; then
    echo "tla-syntax: skipped: no tla/*.tla files yet"
    exit 0
  fi
fi

if "${parse[@]}" "${files[@]}"; then
  echo "tla-syntax: ok (${#files[@]} file(s))"
else
  echo "tla-syntax: FAIL: syntax errors above" >&2
  exit 1
fi
