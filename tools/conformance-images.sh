#!/usr/bin/env bash
# Makes the container images the node conformance selection of
# tools/conformance.sh uses, without a registry, and imports them into a
# containerd started by tools/containerd-up.sh (namespace k8s.io, the CRI
# plugin's), under the exact names the specs ask for
# (k8s.io/kubernetes/test/utils/image/manifest.go of the pinned release):
#
#   tools/conformance-images.sh --containerd DIR|unix:///DIR/containerd.sock [--bin BIN]
#   tools/conformance-images.sh --out DIR [--bin BIN]      # the archives only
#
# Each image is a one-layer OCI archive made as tools/busybox-image.sh makes
# its: a directory tarred with fixed times and owners, a config, a manifest
# and an index naming the image by io.containerd.image.name. What goes in:
#
#   registry.k8s.io/e2e-test-images/busybox:1.37.0-2
#       Debian's busybox-static with every applet in /bin, /etc/passwd and
#       /etc/group as the busybox image has them (root ... nobody 65534); Cmd
#       sh. Debian builds busybox without nmeter, which the node e2e suite's
#       container lifecycle specs run for a clock with milliseconds: /bin/nmeter
#       is tools/conformance/nmeter (that part of it, built here with go)
#   registry.k8s.io/e2e-test-images/agnhost:2.66.1 and :2.55
#       one tree, but each tag its own config (a label with its version), so
#       each has its own image ID, as the real ones do: a spec that changes a
#       container's image from one tag to the other changes what the runtime
#       sees. In it: /agnhost (built by conformance-build.sh from k8s.io/kubernetes),
#       /agnhost-2 linked to it, /uploads, the porter's localhost.crt/.key,
#       user-defined-in-image (1000) in group-defined-in-image (50000), the
#       busybox applets for the shell tools the specs exec (sh, nc, wget, ...)
#       in place of the Alpine base, and Debian's curl (the lifecycle hooks
#       curl their target) and bash (probe specs run /bin/bash), copied from
#       this host with the libraries ldd names; Entrypoint /agnhost, Cmd pause
#   registry.k8s.io/e2e-test-images/nonewprivs:1.4
#       /usr/local/bin/nnp (k8s.io/kubernetes/test/images/nonewprivs) setuid
#       root on the busybox layer; Cmd nnp
#   registry.k8s.io/e2e-test-images/nonroot:1.5
#       the busybox layer, User 1234
#   registry.k8s.io/pause:3.10.2
#       /pause, a busybox shell that waits for TERM or INT (as
#       containerd-up.sh's sandbox image), User 65535:65535 as the real one
#   registry.k8s.io/e2e-test-images/nginx:1.27.0-2
#       Debian's nginx (package nginx), copied from this host with its
#       libraries, on the busybox layer: the node e2e suite's mirror pods run
#       it. A configuration of its own: port 80, pid /var/run/nginx.pid (as
#       the image's, which specs read), logs to stdout and stderr, workers as
#       nobody; Cmd nginx -g "daemon off;"
#   registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1
#       what the hostnameOverride specs run of its Debian base: sh (Debian's
#       dash) and hostname (Debian's hostname, whose -f resolves through
#       glibc as theirs must), copied from this host with the shared
#       libraries ldd names, and an nsswitch.conf; Cmd sh
#
# Not made: invalid.registry.k8s.io/... and gcr.io/k8s-authenticated-test/... (the specs
# expect those pulls to fail).
#
# BIN is the directory of conformance-build.sh (default: what it prints; it
# builds if needed). Needs go, tar, sha256sum and Debian's busybox-static
# (BUSYBOX overrides /bin/busybox); importing needs root and ctr.
# Diagnostics go to stderr; the last line of stdout is the archive directory.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$tools")"
TOOL=conformance-images
log() { echo "$TOOL: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

usage="usage: conformance-images.sh (--containerd DIR | --out DIR) [--bin BIN]"
containerd="" out="" bin=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --containerd | --out | --bin)
      [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value; $usage"
      case "$1" in
        --containerd) containerd="$2" ;;
        --out) out="$2" ;;
        --bin) bin="$2" ;;
      esac
      shift 2
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unknown argument $1; $usage" ;;
  esac
done
[[ -n "$containerd" || -n "$out" ]] || die "$usage"

# The names and tags of test/utils/image/manifest.go (v1.37.2). When bumping
# the Kubernetes release, compare them with that file.
E2E=registry.k8s.io/e2e-test-images
BUSYBOX_REF=$E2E/busybox:1.37.0-2
AGNHOST_REFS=("$E2E/agnhost:2.66.1" "$E2E/agnhost:2.55")
NONEWPRIVS_REF=$E2E/nonewprivs:1.4
NONROOT_REF=$E2E/nonroot:1.5
PAUSE_REF=registry.k8s.io/pause:3.10.2
GLIBC_DNS_REF=$E2E/glibc-dns-testing:2.1.1
NGINX_REF=$E2E/nginx:1.27.0-2

busybox="${BUSYBOX:-/bin/busybox}"
[[ -x "$busybox" ]] || die "$busybox not found: install the Debian package busybox-static (or set BUSYBOX)"
if command -v ldd >/dev/null && ldd "$busybox" >/dev/null 2>&1; then
  die "$busybox is dynamically linked; install busybox-static (or set BUSYBOX to a static one)"
fi
for cmd in go tar sha256sum ldd; do
  command -v "$cmd" >/dev/null || die "$cmd not found"
done

if [[ -z "$bin" ]]; then
  bin="$("$tools/conformance-build.sh" | tail -n 1)"
fi
for b in agnhost nnp localhost.crt localhost.key; do
  [[ -f "$bin/$b" ]] || die "$bin/$b missing: run tools/conformance-build.sh"
done

case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  ppc64le) arch=ppc64le ;;
  s390x) arch=s390x ;;
  *) die "unsupported machine $(uname -m)" ;;
esac

# shellcheck source=tools/json-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/json-lib.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -n "$out" ]]; then
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
else
  out="$work/images"
  mkdir -p "$out"
fi

# nmeter: the applet Debian's busybox lacks (tools/conformance/nmeter),
# static as the images have no libc.
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$work/nmeter" ./tools/conformance/nmeter) ||
  die "building tools/conformance/nmeter failed"

# busybox_root DIR: DIR becomes the busybox image's tree: /bin/busybox and
# its applets, nmeter, the usual empty directories, and the users of the
# busybox image.
busybox_root() {
  local root="$1" applet d
  mkdir -p "$root/bin"
  for d in dev etc home proc root sys tmp usr var var/www; do
    mkdir -p "$root/$d"
  done
  chmod 0755 "$root" "$root"/* "$root/var/www"
  chmod 1777 "$root/tmp"
  chmod 0700 "$root/root"
  cp "$busybox" "$root/bin/busybox"
  chmod 0755 "$root/bin/busybox"
  while IFS= read -r applet; do
    [[ -n "$applet" && "$applet" != busybox && "$applet" != */* ]] || continue
    ln -s busybox "$root/bin/$applet"
  done < <("$busybox" --list)
  [[ -e "$root/bin/nmeter" ]] || install -m 0755 "$work/nmeter" "$root/bin/nmeter"
  cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
EOF
  cat >"$root/etc/group" <<'EOF'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
wheel:x:10:root
mail:x:12:
www-data:x:33:
operator:x:37:
users:x:100:
nogroup:x:65534:
EOF
  chmod 0644 "$root/etc/passwd" "$root/etc/group"
}

# add_host_program ROOT PATH [NAME]: copies the host's program PATH (from a
# Debian package) to ROOT/bin/NAME, with the shared libraries and loader ldd
# names for it at their paths.
add_host_program() {
  local root="$1" prog="$2" name="${3:-$(basename "$2")}" lib
  [[ -x "$prog" ]] || die "$prog not found (install its Debian package: $(dpkg -S "$prog" 2>/dev/null | cut -d: -f1 || echo '?'))"
  mkdir -p "$root/bin"
  rm -f "$root/bin/$name" # a busybox applet's link: cp would write through it
  cp "$prog" "$root/bin/$name"
  chmod 0755 "$root/bin/$name"
  while IFS= read -r lib; do
    [[ -n "$lib" ]] || continue
    [[ -e "$lib" ]] || die "$prog needs $lib, which is missing"
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done < <(ldd "$prog" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
}

# blob DIR FILE: moves FILE into DIR/blobs/sha256 and prints "DIGEST SIZE".
blob() {
  local sum size
  sum="$(sha256sum "$2" | cut -d' ' -f1)"
  size="$(stat -c %s "$2")"
  mv "$2" "$1/blobs/sha256/$sum"
  echo "sha256:$sum $size"
}

# archive NAME ROOT CONFIG REF...: writes $out/NAME.tar, an OCI image layout
# of one layer (the tree ROOT) whose config holds the JSON members CONFIG
# (e.g. "Entrypoint":[...],"Cmd":[...]), named by every REF.
archive() {
  local name="$1" root="$2" config="$3" oci="$work/oci-$1" ref sep="" manifests=""
  shift 3
  local tar_flags=(--format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner)
  mkdir -p "$oci/blobs/sha256"
  (cd "$root" && tar "${tar_flags[@]}" -cf "$work/$name-layer.tar" .)
  local layer_digest layer_size config_digest config_size manifest_digest manifest_size
  read -r layer_digest layer_size < <(blob "$oci" "$work/$name-layer.tar")
  printf '{"created":"1970-01-01T00:00:00Z","architecture":"%s","os":"linux","config":{%s},"rootfs":{"type":"layers","diff_ids":["%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"tools/conformance-images.sh"}]}' \
    "$arch" "$config" "$layer_digest" >"$work/$name-config.json"
  read -r config_digest config_size < <(blob "$oci" "$work/$name-config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
    "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$work/$name-manifest.json"
  read -r manifest_digest manifest_size < <(blob "$oci" "$work/$name-manifest.json")
  for ref in "$@"; do
    [[ "$ref" == *:* && "${ref##*:}" != */* ]] || die "image name must have a tag (NAME:TAG): $ref"
    manifests+="$sep$(printf '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":%s,"org.opencontainers.image.ref.name":%s}}' \
      "$manifest_digest" "$manifest_size" "$arch" "$(json_str "$ref")" "$(json_str "${ref##*:}")")"
    sep=","
  done
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' "$manifests" >"$oci/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"
  (cd "$oci" && tar "${tar_flags[@]}" -cf "$out/$name.tar.tmp" oci-layout index.json blobs)
  mv "$out/$name.tar.tmp" "$out/$name.tar"
  rm -rf "$oci" "$root"
  log "$out/$name.tar: $* ($manifest_digest)"
}

path_env='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'

# busybox: the default test image of the e2e framework on Linux.
busybox_root "$work/busybox"
archive busybox "$work/busybox" "$path_env,\"Cmd\":[\"sh\"],\"WorkingDir\":\"/\"" "$BUSYBOX_REF"

# agnhost_root DIR: the agnhost image's tree: the specs' server, client and
# probe target.
agnhost_root() {
  local r="$1"
  busybox_root "$r"
  cp "$bin/agnhost" "$r/agnhost"
  chmod 0755 "$r/agnhost"
  ln -s agnhost "$r/agnhost-2"
  mkdir -p "$r/uploads"
  cp "$bin/localhost.crt" "$bin/localhost.key" "$r/"
  echo "user-defined-in-image:x:1000:1000:Linux User,,,:/home/user-defined-in-image:/bin/sh" >>"$r/etc/passwd"
  mkdir -p "$r/home/user-defined-in-image"
  chown 1000:1000 "$r/home/user-defined-in-image" 2>/dev/null || true
  printf '%s\n' "user-defined-in-image:x:1000:" "group-defined-in-image:x:50000:user-defined-in-image" >>"$r/etc/group"
  add_host_program "$r" /usr/bin/curl
  add_host_program "$r" /bin/bash
}
for ref in "${AGNHOST_REFS[@]}"; do
  tag="${ref##*:}"
  agnhost_root "$work/agnhost-$tag"
  archive "agnhost-$tag" "$work/agnhost-$tag" "$path_env,\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"pause\"],\"WorkingDir\":\"/\",\"ExposedPorts\":{\"80/tcp\":{},\"8080/tcp\":{},\"8081/tcp\":{},\"9376/tcp\":{},\"5000/tcp\":{}},\"Labels\":{\"org.opencontainers.image.version\":$(json_str "$tag")}" "$ref"
done

# nonewprivs: a setuid-root program that prints its effective uid.
r="$work/nonewprivs"
busybox_root "$r"
mkdir -p "$r/usr/local/bin"
cp "$bin/nnp" "$r/usr/local/bin/nnp"
chmod 4755 "$r/usr/local/bin/nnp"
archive nonewprivs "$r" "$path_env,\"Cmd\":[\"nnp\"],\"WorkingDir\":\"/\"" "$NONEWPRIVS_REF"

# nonroot: an image whose USER is a non-root uid.
busybox_root "$work/nonroot"
archive nonroot "$work/nonroot" "$path_env,\"User\":\"1234\",\"Cmd\":[\"sh\"],\"WorkingDir\":\"/\"" "$NONROOT_REF"

# pause: the specs' pause containers (the sandbox image is containerd-up.sh's).
r="$work/pause"
busybox_root "$r"
printf '#!/bin/sh\n# A pause process: holds on until TERM or INT (a shell as PID 1 gets only\n# the signals it traps).\ntrap "exit 0" TERM INT\nsleep 2147483647 &\nwait\n' >"$r/pause"
chmod 0755 "$r/pause"
archive pause "$r" "\"Env\":[\"PATH=/bin\"],\"User\":\"65535:65535\",\"Entrypoint\":[\"/pause\"],\"WorkingDir\":\"/\"" "$PAUSE_REF"

# nginx: a web server that runs until stopped (the node e2e suite's mirror
# pods).
r="$work/nginx"
busybox_root "$r"
add_host_program "$r" /usr/sbin/nginx
mkdir -p "$r/etc/nginx" "$r/var/run" "$r/var/log/nginx" "$r/var/lib/nginx" "$r/usr/share/nginx/html"
cat >"$r/etc/nginx/nginx.conf" <<'EOF2'
user nobody nogroup;
worker_processes 1;
pid /var/run/nginx.pid;
error_log stderr;
events {
  worker_connections 64;
}
http {
  access_log /dev/stdout;
  server {
    listen 80;
    root /usr/share/nginx/html;
  }
}
EOF2
echo '<html><body>nginx</body></html>' >"$r/usr/share/nginx/html/index.html"
archive nginx "$r" "$path_env,\"Cmd\":[\"nginx\",\"-g\",\"daemon off;\"],\"WorkingDir\":\"/\",\"ExposedPorts\":{\"80/tcp\":{}},\"StopSignal\":\"SIGQUIT\"" "$NGINX_REF"

# glibc-dns-testing: hostname and hostname -f through glibc.
r="$work/glibc-dns-testing"
mkdir -p "$r/etc" "$r/tmp" "$r/proc" "$r/sys" "$r/dev" "$r/root"
chmod 1777 "$r/tmp"
add_host_program "$r" /bin/dash sh
add_host_program "$r" /bin/hostname
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$r/etc/nsswitch.conf"
archive glibc-dns-testing "$r" "\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],\"Cmd\":[\"sh\"],\"WorkingDir\":\"/\"" "$GLIBC_DNS_REF"

if [[ -n "$containerd" ]]; then
  [[ $(id -u) -eq 0 ]] || die "importing into containerd needs root"
  # shellcheck source=tools/containerd-lib.sh
  source "$tools/containerd-lib.sh"
  dir="$(instance_dir "$containerd")"
  [[ -f "$dir/podlife-containerd.env" ]] || die "$dir is not a tools/containerd-up.sh directory (no podlife-containerd.env)"
  sock="$(sed -n 's/^SOCK=//p' "$dir/podlife-containerd.env")"
  snapshotter="$(sed -n 's/^SNAPSHOTTER=//p' "$dir/podlife-containerd.env")"
  ctr_bin="$(sed -n 's/^CONTAINERD_BIN=//p' "$dir/podlife-containerd.env")"
  ctr=(ctr)
  [[ -z "$ctr_bin" ]] || ctr=("$ctr_bin/ctr")
  ctr+=(--address "$sock" -n k8s.io)
  imgs=(busybox nonewprivs nonroot pause nginx glibc-dns-testing)
  for ref in "${AGNHOST_REFS[@]}"; do imgs+=("agnhost-${ref##*:}"); done
  for img in "${imgs[@]}"; do
    "${ctr[@]}" images import --snapshotter "$snapshotter" "$out/$img.tar" >&2
  done
  have="$("${ctr[@]}" images ls -q)"
  refs=("$BUSYBOX_REF" "${AGNHOST_REFS[@]}" "$NONEWPRIVS_REF" "$NONROOT_REF" "$PAUSE_REF" "$NGINX_REF" "$GLIBC_DNS_REF")
  for ref in "${refs[@]}"; do
    grep -qxF "$ref" <<<"$have" || die "image $ref missing after import; have: $have"
  done
  log "imported into $sock (k8s.io): ${refs[*]}"
fi
echo "$out"
