#!/usr/bin/env bash
# Runs the upstream node e2e suite (k8s.io/kubernetes test/e2e_node, the
# suite the kubelet's own CI runs) against podlife or, as the reference, a
# kubelet: its NodeConformance specs without Serial, Disruptive, Flaky, Slow
# or Feature:* (the labels of tools/conformance.sh), only its own (not those
# it imports from test/e2e/common, which tools/conformance.sh runs):
#
#   sudo tools/node-e2e.sh                     # podlife, the whole selection
#   sudo tools/node-e2e.sh --node kubelet      # the same against a kubelet
#   sudo tools/node-e2e.sh --ci                # the sized part CI runs
#   tools/node-e2e.sh --list                   # the selection, no cluster
#
# It is tools/conformance.sh --suite node; the options are that script's
# (--node, --focus, --ci, --procs, --timeout, --seed, --report, --list), and so are
# the steps, the summary and the exit status. What the node must provide (the
# root directory /var/lib/kubelet, /configz, a static pod directory, the
# ports 10248 and 10255 on localhost) is said there.
set -euo pipefail
for arg in "$@"; do
  [[ "$arg" != --suite ]] || { echo "node-e2e: --suite is this script's own (node)" >&2; exit 2; }
done
exec "$(dirname "${BASH_SOURCE[0]}")/conformance.sh" --suite node "$@"
