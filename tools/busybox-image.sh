#!/usr/bin/env bash
# Builds a one-layer OCI image archive from a static busybox, without a
# registry or an image builder: CI and the CRI integration tests cannot pull
# images, so tools/containerd-up.sh makes its own and imports them with
# `ctr images import`.
#
#   tools/busybox-image.sh OUT.tar NAME:TAG [ENTRYPOINT...]
#
# The layer holds /bin/busybox (default /bin/busybox from Debian's
# busybox-static; override with $BUSYBOX), a /bin/<applet> symlink for every
# applet it has (sh, sleep, cat, ...), and the empty directories a container
# expects (/etc, /tmp, /proc, ...). With ENTRYPOINT words, they become the
# image's Entrypoint and Cmd is empty; without, Cmd is ["sh"]. PATH is
# /bin. The archive is an OCI image layout (oci-layout, index.json,
# blobs/sha256/...) in a tar; the index names the image both by
# io.containerd.image.name (the full NAME:TAG, which ctr keeps as is) and by
# org.opencontainers.image.ref.name (the TAG, as the OCI spec wants).
# The output is byte-for-byte reproducible for the same busybox.
set -euo pipefail

die() {
  echo "busybox-image.sh: $*" >&2
  exit 1
}

[[ $# -ge 2 ]] || die "usage: busybox-image.sh OUT.tar NAME:TAG [ENTRYPOINT...]"
out="$1" ref="$2"
shift 2
[[ "$ref" == *:* && "${ref##*:}" != */* ]] || die "image name must have a tag (NAME:TAG): $ref"
tag="${ref##*:}"

busybox="${BUSYBOX:-/bin/busybox}"
[[ -x "$busybox" ]] || die "$busybox not found: install the Debian package busybox-static (or set BUSYBOX)"
# A dynamically linked busybox would need its libc inside the image.
# (ldd, from libc-bin, fails on a static executable.)
if command -v ldd >/dev/null && ldd "$busybox" >/dev/null 2>&1; then
  die "$busybox is dynamically linked; install busybox-static (or set BUSYBOX to a static one)"
fi
for cmd in tar sha256sum; do
  command -v "$cmd" >/dev/null || die "$cmd not found"
done

case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  armv7l) arch=arm ;;
  ppc64le) arch=ppc64le ;;
  s390x) arch=s390x ;;
  riscv64) arch=riscv64 ;;
  *) die "unsupported machine $(uname -m)" ;;
esac

# shellcheck source=tools/json-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/json-lib.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
layer="$work/layer" oci="$work/oci"
mkdir -p "$layer/bin" "$oci/blobs/sha256"
for d in dev etc proc root sys tmp var; do
  mkdir -p "$layer/$d"
done
chmod 0755 "$layer" "$layer"/*
chmod 1777 "$layer/tmp"
chmod 0700 "$layer/root"
cp "$busybox" "$layer/bin/busybox"
chmod 0755 "$layer/bin/busybox"
while IFS= read -r applet; do
  [[ -n "$applet" && "$applet" != busybox && "$applet" != */* ]] || continue
  ln -s busybox "$layer/bin/$applet"
done < <("$busybox" --list)
for applet in sh sleep; do
  [[ -L "$layer/bin/$applet" ]] || die "$busybox has no $applet applet"
done

# blob FILE: moves FILE into blobs/sha256 and prints "DIGEST SIZE".
blob() {
  local sum size
  sum="$(sha256sum "$1" | cut -d' ' -f1)"
  size="$(stat -c %s "$1")"
  mv "$1" "$oci/blobs/sha256/$sum"
  echo "sha256:$sum $size"
}

# Deterministic layer: sorted names, fixed times and owners.
tar_flags=(--format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner)
(cd "$layer" && tar "${tar_flags[@]}" -cf "$work/layer.tar" bin dev etc proc root sys tmp var)
read -r layer_digest layer_size < <(blob "$work/layer.tar")

if [[ $# -gt 0 ]]; then
  process="\"Entrypoint\":$(json_array "$@")"
else
  process="\"Cmd\":[\"sh\"]"
fi
printf '{"created":"1970-01-01T00:00:00Z","architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"],%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"tools/busybox-image.sh"}]}' \
  "$arch" "$process" "$layer_digest" >"$work/config.json"
read -r config_digest config_size < <(blob "$work/config.json")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
  "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$work/manifest.json"
read -r manifest_digest manifest_size < <(blob "$work/manifest.json")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":%s,"org.opencontainers.image.ref.name":%s}}]}' \
  "$manifest_digest" "$manifest_size" "$arch" "$(json_str "$ref")" "$(json_str "$tag")" >"$oci/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"

mkdir -p "$(dirname "$out")"
(cd "$oci" && tar "${tar_flags[@]}" -cf "$work/image.tar" oci-layout index.json blobs)
mv "$work/image.tar" "$out"
echo "busybox-image.sh: $out: $ref ($manifest_digest)" >&2
