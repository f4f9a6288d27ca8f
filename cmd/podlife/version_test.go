package main

import (
	"runtime/debug"
	"testing"
)

// --version prints the Kubernetes release of the k8s.io/api podlife was
// built with, in the kubelet's form, unless a build stamped one.
func TestKubernetesVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"k8s.io/api v0.37.2", &debug.BuildInfo{Deps: []*debug.Module{{Path: "k8s.io/apimachinery", Version: "v0.37.1"}, {Path: "k8s.io/api", Version: "v0.37.2"}}}, true, "v1.37.2"},
		{"no k8s.io/api", &debug.BuildInfo{}, true, unstamped},
		{"no build info", nil, false, unstamped},
	} {
		if got := kubernetesVersion(tc.info, tc.ok); got != tc.want {
			t.Errorf("%s: kubernetesVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
}
