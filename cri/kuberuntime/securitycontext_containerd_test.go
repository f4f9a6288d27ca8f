package kuberuntime

// The security contexts on a real containerd. They skip unless
// $PODLIFE_CRI_ENDPOINT names a runtime (internal/critest).

import (
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The pod of issue 20: runAsNonRoot with runAsUser 65534, every
// capability dropped, no privilege escalation, a read-only root. The
// container reads its own /proc/self/status and tries to write to /; the
// test reads what it printed from its log. The same pod without
// runAsUser, on busybox (whose image user is root), is refused with the
// kubelet's message before a container is created.
func TestContainerdIssuePod(t *testing.T) {
	e, statuses := newCtrdSyncerWith(t, Options{})
	issuePod := func(name string, runAsUser *int64) *v1.Pod {
		c := busybox("app", []string{"sh", "-c",
			`grep -E '^(Uid|CapEff|NoNewPrivs):' /proc/self/status; if touch /written 2>/dev/null; then echo ROOT-WRITABLE; else echo ROOT-READONLY; fi; exec sleep 3600`})
		c.SecurityContext = &v1.SecurityContext{
			Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}},
			AllowPrivilegeEscalation: new(false),
			ReadOnlyRootFilesystem:   new(true),
		}
		pod := e.pod(name, 0, c)
		pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: new(true), RunAsUser: runAsUser}
		return pod
	}
	pod := issuePod("nonroot", new(int64(65534)))
	e.run(pod)
	out := e.containerOutput(pod, "ROOT-")
	fields := map[string]string{}
	for line := range strings.Lines(out) {
		k, v, _ := strings.Cut(line, ":")
		fields[k] = strings.Join(strings.Fields(v), " ")
	}
	for k, want := range map[string]string{"Uid": "65534 65534 65534 65534", "CapEff": "0000000000000000", "NoNewPrivs": "1"} {
		if fields[k] != want {
			t.Errorf("%s: %q in /proc/self/status, want %q", k, fields[k], want)
		}
	}
	if !strings.Contains(out, "ROOT-READONLY") {
		t.Errorf("the root filesystem is writable:\n%s", out)
	}

	root := issuePod("root", nil)
	_, err := e.s.SyncPod(t.Context(), 0, root, nil, nil)
	want := `container has runAsNonRoot and image will run as root (pod: "root_podlife-cri-it(` + string(root.UID) + `)", container: app)`
	if err == nil || err.Error() != want {
		t.Fatalf("SyncPod error %v, want %q", err, want)
	}
	st := statuses.last(t, root.UID)
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || w.Message != want {
		t.Errorf("state %+v, want waiting in CreateContainerConfigError", st.ContainerStatuses[0].State)
	}
	p, err := readPod(t.Context(), e.rt, root.UID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Containers) != 0 {
		t.Errorf("%d containers created for the refused pod", len(p.Containers))
	}
}

// The sandbox's sysctls (slash-separated in the spec), the RuntimeDefault
// seccomp profile and a shared PID namespace reach containerd: the
// container reads its sysctl back, runs under a seccomp filter, and sees
// the sandbox's pause process (tools/containerd-up.sh's shell) as PID 1.
func TestContainerdSysctlsAndSharedPIDs(t *testing.T) {
	e, _ := newCtrdSyncerWith(t, Options{})
	c := busybox("app", []string{"sh", "-c", `echo "seccomp=$(grep '^Seccomp:' /proc/self/status | tr -d ' \t') shm=$(cat /proc/sys/kernel/shm_rmid_forced) pid1=$(tr '\0' ' ' < /proc/1/cmdline)"; exec sleep 3600`})
	pod := e.pod("sysctls", 0, c)
	pod.Spec.SecurityContext = &v1.PodSecurityContext{
		Sysctls:        []v1.Sysctl{{Name: "kernel/shm_rmid_forced", Value: "1"}},
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
	}
	pod.Spec.ShareProcessNamespace = new(true)
	e.run(pod)
	out := e.containerOutput(pod, "shm=")
	if !strings.Contains(out, "seccomp=Seccomp:2 ") || !strings.Contains(out, "shm=1 ") || !strings.Contains(out, `pid1=/bin/sh -c trap "exit 0" TERM INT`) {
		t.Errorf("container output %q, want seccomp filtering (mode 2), shm=1 and the pause process as PID 1", out)
	}
}

// containerOutput is the stdout of the pod's first running container, from
// its CRI log, once a line containing marker is there.
func (e *ctrdSyncer) containerOutput(pod *v1.Pod, marker string) string {
	e.t.Helper()
	p, err := readPod(e.t.Context(), e.rt, pod.UID)
	if err != nil {
		e.t.Fatal(err)
	}
	ids := p.RunningIDs()
	if len(ids) == 0 {
		e.t.Fatal("no container runs")
	}
	st, err := e.rt.ContainerStatus(e.t.Context(), ids[0], false)
	if err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(ctrdTimeout)
	for {
		data, _ := os.ReadFile(st.GetStatus().GetLogPath())
		var out strings.Builder
		for line := range strings.Lines(string(data)) {
			// <time> <stream> <tag> <message>
			if parts := strings.SplitN(line, " ", 4); len(parts) == 4 && parts[1] == "stdout" {
				out.WriteString(parts[3])
			}
		}
		if strings.Contains(out.String(), marker) {
			return out.String()
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no %q in the container's log after %s: %q", marker, ctrdTimeout, data)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
