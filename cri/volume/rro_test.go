package volume

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// Recursive read-only mounts as the kubelet resolves them, on a runtime
// that supports them or not: the CRI mount's flag, the container status'
// mode, and the kubelet's error (the upstream e2e spec matches it), and
// the API server's refusals for a static pod.
func TestRecursiveReadOnly(t *testing.T) {
	rro := func(mode v1.RecursiveReadOnlyMode, ro bool) v1.VolumeMount {
		return v1.VolumeMount{Name: "mnt", MountPath: "/mnt", ReadOnly: ro, RecursiveReadOnly: &mode}
	}
	disabled, enabled := v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyEnabled
	for _, tc := range []struct {
		name       string
		mount      v1.VolumeMount
		supported  bool
		wantRRO    bool
		wantStatus *v1.RecursiveReadOnlyMode
		wantErr    string
		wantCheck  string
	}{
		{name: "rw", mount: v1.VolumeMount{Name: "mnt", MountPath: "/mnt"}},
		{name: "ro", mount: v1.VolumeMount{Name: "mnt", MountPath: "/mnt", ReadOnly: true}, wantStatus: &disabled},
		{name: "Disabled", mount: rro(v1.RecursiveReadOnlyDisabled, true), supported: true, wantStatus: &disabled},
		{name: "IfPossible, supported", mount: rro(v1.RecursiveReadOnlyIfPossible, true), supported: true, wantRRO: true, wantStatus: &enabled},
		{name: "IfPossible, not supported", mount: rro(v1.RecursiveReadOnlyIfPossible, true), wantStatus: &disabled},
		{name: "Enabled, supported", mount: rro(v1.RecursiveReadOnlyEnabled, true), supported: true, wantRRO: true, wantStatus: &enabled},
		{name: "Enabled, not supported", mount: rro(v1.RecursiveReadOnlyEnabled, true), wantStatus: &disabled,
			wantErr: `failed to resolve recursive read-only mode: volume "mnt" requested recursive read-only mode, but it is not supported by the runtime`},
		{name: "Enabled without readOnly", mount: rro(v1.RecursiveReadOnlyEnabled, false), supported: true,
			wantErr: "but it is not read-only", wantCheck: "recursiveReadOnly: Forbidden: may only be specified when readOnly is true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.VolumePod([]v1.Volume{crifake.EmptyDir("mnt")}, tc.mount)
			c := &pod.Spec.Containers[0]
			ms, err := Mounts("", pod, c, map[string]Volume{"mnt": {hostPath: "/host/mnt"}}, tc.supported)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Mounts: %v; want %q", err, tc.wantErr)
			case tc.wantErr == "" && (err != nil || len(ms) != 1 || ms[0].RecursiveReadOnly != tc.wantRRO):
				t.Errorf("Mounts: %v, %v; want recursive read-only %v", ms, err, tc.wantRRO)
			}
			st := MountStatuses(c, tc.supported)
			if len(st) != 1 || (st[0].RecursiveReadOnly == nil) != (tc.wantStatus == nil) ||
				(tc.wantStatus != nil && *st[0].RecursiveReadOnly != *tc.wantStatus) || st[0].ReadOnly != tc.mount.ReadOnly {
				t.Errorf("MountStatuses: %+v; want recursiveReadOnly %v", st, tc.wantStatus)
			}
			err = Check(pod)
			if tc.wantCheck == "" && err != nil || tc.wantCheck != "" && (err == nil || !strings.Contains(err.Error(), tc.wantCheck)) {
				t.Errorf("Check: %v; want %q", err, tc.wantCheck)
			}
		})
	}
}
