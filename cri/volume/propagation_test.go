package volume

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// A volumeMount's propagation is the CRI's as the kubelet translates it.
func TestMountsPropagation(t *testing.T) {
	for _, tc := range []struct {
		mode *v1.MountPropagationMode
		want runtimeapi.MountPropagation
	}{
		{nil, runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{new(v1.MountPropagationNone), runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{new(v1.MountPropagationHostToContainer), runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER},
		{new(v1.MountPropagationBidirectional), runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL},
	} {
		pod := crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", MountPropagation: tc.mode})
		ms, err := Mounts("", pod, &pod.Spec.Containers[0], map[string]Volume{"a": {hostPath: "/host/a"}}, false)
		if err != nil || len(ms) != 1 || ms[0].Propagation != tc.want {
			t.Errorf("mode %v: mounts %v, %v; want propagation %v", tc.mode, ms, err, tc.want)
		}
		if got := NeedsSharedRoot(pod); got != (tc.want != runtimeapi.MountPropagation_PROPAGATION_PRIVATE) {
			t.Errorf("mode %v: NeedsSharedRoot %v", tc.mode, got)
		}
	}
}

// onSharedMount reads the propagation of the mount a path is on: the
// longest mount point above it, the last one mounted when two are at the
// same place, with mountinfo's escapes.
func TestOnSharedMount(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a b", "pods")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	esc := filepath.Join(dir, `a\040b`)
	escSub := filepath.Join(esc, "pods")
	for _, tc := range []struct {
		name, mountinfo string
		want            bool
	}{
		{"root shared", "1 0 8:1 / / rw shared:1 - ext4 /dev/sda1 rw\n", true},
		{"root private", "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n", false},
		{"a private mount above it", "1 0 8:1 / / rw shared:1 - ext4 /dev/sda1 rw\n2 1 0:5 / " + esc + " rw - tmpfs t rw\n", false},
		{"a shared bind on top", "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 8:1 /x " + escSub + " rw - ext4 /dev/sda1 rw\n3 2 8:1 /x " + escSub + " rw shared:7 master:2 - ext4 /dev/sda1 rw\n", true},
		{"a sibling does not count", "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 8:1 / " + escSub + "x rw shared:3 - ext4 /dev/sda1 rw\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := filepath.Join(t.TempDir(), "mountinfo")
			if err := os.WriteFile(info, []byte(tc.mountinfo), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := onSharedMount(sub, info)
			if err != nil || got != tc.want {
				t.Errorf("onSharedMount: %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
