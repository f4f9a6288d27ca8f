package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// propagationPod is the upstream node e2e's pod of mount_rro_linux_test.go
// without its recursiveReadOnly mounts: a privileged init container mounts
// a tmpfs in an emptyDir with Bidirectional propagation, the next one (a
// private mount of the same volume, and a HostToContainer one) sees it
// through the host (a read-only mount that is not recursive leaves the
// tmpfs writable, as the e2e's "ro" mount), a third unmounts it.
func propagationPod(uid string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: propagation
  namespace: %[1]s
  uid: %[2]s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  initContainers:
  - name: mount
    image: %[3]s
    imagePullPolicy: Never
    command: [sh, -euxc, "mkdir -p /mnt/tmpfs && mount -t tmpfs none /mnt/tmpfs && echo propagated > /mnt/tmpfs/f"]
    securityContext: {privileged: true}
    volumeMounts: [{name: mnt, mountPath: /mnt, mountPropagation: Bidirectional}]
  - name: test
    image: %[3]s
    imagePullPolicy: Never
    command: [sh, -euxc, "grep -q propagated /mnt-rw/tmpfs/f && grep -q propagated /mnt-slave/tmpfs/f && ! touch /mnt-ro/g && touch /mnt-ro/tmpfs/g"]
    volumeMounts:
    - {name: mnt, mountPath: /mnt-rw}
    - {name: mnt, mountPath: /mnt-slave, mountPropagation: HostToContainer}
    - {name: mnt, mountPath: /mnt-ro, readOnly: true, mountPropagation: None}
  - name: unmount
    image: %[3]s
    imagePullPolicy: Never
    command: [umount, /mnt/tmpfs]
    securityContext: {privileged: true}
    volumeMounts: [{name: mnt, mountPath: /mnt, mountPropagation: Bidirectional}]
  containers:
  - name: completion
    image: %[3]s
    imagePullPolicy: Never
    command: [echo, OK]
  volumes:
  - {name: mnt, emptyDir: {}}
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage)
}

// Bidirectional and HostToContainer propagation on containerd, as the
// kubelet's: the agent puts its pods root on a shared mount, a mount made
// in a privileged container reaches the host's emptyDir directory and the
// containers that mount it next; the pod succeeds. A container that is not
// privileged is refused Bidirectional, with the API server's words.
func TestContainerdMountPropagation(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) { root = c.RootDir })
	uid := e.NewUID()
	writeManifest(t, manifests, "propagation.yaml", propagationPod(uid))
	p := a.WaitPod(uid, "the pod ends", func(p api.PodInfo) bool { return p.Phase == v1.PodSucceeded || p.Phase == v1.PodFailed })
	st, _ := a.PodStatus(types.UID(uid))
	if p.Phase != v1.PodSucceeded {
		t.Fatalf("pod %s: %+v\n%s", p.Phase, st.InitContainerStatuses, a.Logs.String())
	}
	for _, cs := range st.InitContainerStatuses {
		if term := cs.State.Terminated; term == nil || term.ExitCode != 0 {
			t.Errorf("init container %s: %+v", cs.Name, cs.State)
		}
	}
	// This machine's / is a private mount: the pods root is a shared bind
	// mount of its own now.
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var shared []string
	for line := range strings.Lines(string(info)) {
		if f := strings.Fields(line); len(f) > 6 && f[4] == filepath.Join(root, "pods") {
			shared = append(shared, strings.Join(f[6:slices.Index(f, "-")], " "))
		}
	}
	if !slices.ContainsFunc(shared, func(opts string) bool { return strings.Contains(opts, "shared:") }) {
		t.Errorf("mounts at the pods root: %q, want a shared one", shared)
	}

	refused := e.NewUID()
	writeManifest(t, manifests, "refused.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: refused, namespace: %s, uid: %s}
spec:
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: [sleep, "3600"]
    volumeMounts: [{name: mnt, mountPath: /mnt, mountPropagation: Bidirectional}]
  volumes:
  - {name: mnt, emptyDir: {}}
`, agenttest.CtrdNamespace, refused, critest.BusyboxImage))
	want := "mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers"
	agenttest.CtrdEventually(t, "the refusal", func() (bool, string) {
		lines := a.Logs.Lines("FailedMount", want)
		return len(lines) > 0, fmt.Sprint(a.Logs.Lines("FailedMount"))
	})
	if n := len(e.Sandboxes(refused)); n != 0 {
		t.Errorf("%d sandboxes of the refused pod", n)
	}
}
