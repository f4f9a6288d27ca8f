# shellcheck shell=bash
# JSON string helpers for the image scripts (busybox-image.sh,
# conformance-images.sh), which write OCI configs and manifests by hand.
# Sourced; the caller defines die.

# json_str S: S as a JSON string literal.
json_str() {
  local s="$1"
  s="${s//\\/\\\\}"
  s="${s//\"/\\\"}"
  s="${s//$'\n'/\\n}"
  s="${s//$'\t'/\\t}"
  [[ "$s" != *[[:cntrl:]]* ]] || die "control character in $(printf '%q' "$1")"
  printf '"%s"' "$s"
}

# json_array WORD...: the words as a JSON array of strings.
json_array() {
  local sep="" w
  printf '['
  for w in "$@"; do
    printf '%s%s' "$sep" "$(json_str "$w")"
    sep=","
  done
  printf ']'
}
