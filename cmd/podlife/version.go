package main

import (
	"runtime/debug"
	"strings"

	"k8s.io/component-base/version"
)

// unstamped is component-base's gitVersion when no build stamped it.
const unstamped = "v0.0.0-master+$Format:%H$"

// kubernetesVersion is the Kubernetes release whose kubelet podlife stands
// in for, as `kubelet --version` prints it (kubeadm's preflight reads it):
// the one a release build stamps (-X k8s.io/component-base/version.gitVersion=v1.X.Y,
// as Kubernetes' own build does), else the release that goes with the
// k8s.io/api podlife was built with (v0.X.Y is Kubernetes v1.X.Y).
func kubernetesVersion(info *debug.BuildInfo, ok bool) string {
	if v := version.Get().GitVersion; v != unstamped {
		return v
	}
	if ok {
		for _, m := range info.Deps {
			if m.Path == "k8s.io/api" && strings.HasPrefix(m.Version, "v0.") {
				return "v1." + strings.TrimPrefix(m.Version, "v0.")
			}
		}
	}
	return unstamped
}
