package integration_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/cri/securitycontext"
	"github.com/podlife/podlife/internal/critest"
)

// rroPod is a pod whose container mounts an emptyDir read-only with
// recursiveReadOnly mode and sleeps.
func rroPod(name, uid string, mode v1.RecursiveReadOnlyMode) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s, uid: %s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: [sleep, "3600"]
    volumeMounts:
    - {name: mnt, mountPath: /mnt-rro, readOnly: true, recursiveReadOnly: %s}
    - {name: mnt, mountPath: /mnt-ro, readOnly: true}
    - {name: mnt, mountPath: /mnt-rw}
  volumes:
  - {name: mnt, emptyDir: {}}
`, name, agenttest.CtrdNamespace, uid, critest.BusyboxImage, mode)
}

// Recursive read-only mounts on containerd, as the kubelet resolves them
// (the upstream node e2e's mount_rro_linux_test.go): IfPossible runs, and
// the status says whether the runtime made it recursive; Enabled on a
// runtime that cannot fails the container with CreateContainerConfigError
// and the kubelet's message, and runs on one that can.
func TestContainerdRecursiveReadOnly(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	status, err := e.RT.Status(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	supported := securitycontext.FeaturesOf(status).RecursiveReadOnly[""]
	t.Logf("the runtime supports recursive read-only mounts: %v", supported)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	modeOf := func(b bool) v1.RecursiveReadOnlyMode {
		if b {
			return v1.RecursiveReadOnlyEnabled
		}
		return v1.RecursiveReadOnlyDisabled
	}

	possible, enabled := e.NewUID(), e.NewUID()
	writeManifest(t, manifests, "possible.yaml", rroPod("possible", possible, v1.RecursiveReadOnlyIfPossible))
	writeManifest(t, manifests, "enabled.yaml", rroPod("enabled", enabled, v1.RecursiveReadOnlyEnabled))
	a.WaitRunning(possible, 1)
	st, _ := a.PodStatus(types.UID(possible))
	want := map[string]string{"/mnt-rro": string(modeOf(supported)), "/mnt-ro": string(v1.RecursiveReadOnlyDisabled), "/mnt-rw": "<nil>"}
	got := map[string]string{}
	for _, m := range st.ContainerStatuses[0].VolumeMounts {
		got[m.MountPath] = "<nil>"
		if m.RecursiveReadOnly != nil {
			got[m.MountPath] = string(*m.RecursiveReadOnly)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("volumeMounts statuses %v, want %v", got, want)
	}

	if supported {
		a.WaitRunning(enabled, 1)
		return
	}
	wantMsg := `failed to resolve recursive read-only mode: volume "mnt" requested recursive read-only mode, but it is not supported by the runtime`
	agenttest.CtrdEventually(t, "Enabled refused", func() (bool, string) {
		st, ok := a.PodStatus(types.UID(enabled))
		if !ok || len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Waiting == nil {
			return false, fmt.Sprintf("%+v", st.ContainerStatuses)
		}
		w := st.ContainerStatuses[0].State.Waiting
		return w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, wantMsg), fmt.Sprintf("%+v", w)
	})
}
