#!/usr/bin/env bash
# Generated-code drift check.
#
# Copies the repo's tracked and untracked-but-not-ignored files to a temporary
# directory, runs `go generate ./...` there, and compares the result with the
# copy taken before generating (i.e. with the working tree). Any difference
# (changed, added or removed file) fails: the committed generated files are
# stale. The working tree itself is never modified.
set -euo pipefail

root="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/podlife-gen.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/before"

# Snapshot the working tree (skip tracked files deleted from the working tree).
cd "$root"
git ls-files -co --exclude-standard -z |
  while IFS= read -r -d '' f; do
    if [[ -e "$f" || -L "$f" ]]; then printf '%s\0' "$f"; fi
  done |
  xargs -0 -r cp -P -p --parents -t "$tmp/before" --
cp -a "$tmp/before" "$tmp/after"

echo "verify-generated: running go generate ./... in a copy of the repo"
if ! (cd "$tmp/after" && go generate ./...); then
  echo "verify-generated: FAIL: go generate ./... failed" >&2
  exit 1
fi

if diff -r "$tmp/before" "$tmp/after" >"$tmp/diff" 2>&1; then
  echo "verify-generated: generated files are up to date"
  exit 0
fi

echo "verify-generated: FAIL: go generate ./... changes these files:" >&2
b="$tmp/before" a="$tmp/after"
diff -rq "$b" "$a" 2>&1 |
  sed -E -e "s#^Files $b/(.*) and $a/.* differ\$#  changed: \1#" \
         -e "s#^Only in $a/?([^:]*): (.*)\$#  added:   \1/\2#" \
         -e "s#^Only in $b/?([^:]*): (.*)\$#  removed: \1/\2#" \
         -e 's#(added: +|removed: )/#\1#' >&2 || true
echo "--- diff (first 200 lines)" >&2
head -n 200 "$tmp/diff" | sed -e "s#$tmp/before#working-tree#g" -e "s#$tmp/after#generated#g" >&2
echo "verify-generated: run: go generate ./... and commit the result" >&2
exit 1
