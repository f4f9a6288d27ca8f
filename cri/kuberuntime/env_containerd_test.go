package kuberuntime

// What a container on a real containerd sees of its environment and its
// resources. They skip unless $PODLIFE_CRI_ENDPOINT names a runtime
// (internal/critest):
//
//	PODLIFE_CRI_ENDPOINT=unix:///…/containerd.sock go test -race -count=1 -run Containerd ./cri/

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podlife/podlife/internal/crifake"
	"github.com/podlife/podlife/internal/critest"
)

// newCtrdSyncerWith is newCtrdSyncer with options; the syncer's statuses
// go to the log returned.
func newCtrdSyncerWith(t *testing.T, opts Options) (*ctrdSyncer, *statusLog) {
	t.Helper()
	critest.Exclusive(t)
	rt, images := critest.Connect(t)
	statuses := &statusLog{}
	opts.Statuses, opts.LogRoot = statuses, t.TempDir()
	s := NewSyncer(rt, images, opts)
	t.Cleanup(s.Close)
	return &ctrdSyncer{t: t, s: s, rt: rt}, statuses
}

// The container's environment has the pod's IP (its sandbox's), its name,
// its memory limit and the node's CPU for the limit it does not set, and
// its command line the variables expanded; it has its oom_score_adj.
func TestContainerdEnvironment(t *testing.T) {
	e, _ := newCtrdSyncerWith(t, Options{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}})
	c := busybox("app", []string{"sh", "-c", `printf '%s\n' "$0" "$@" > /tmp/args; exec sleep 3600`, "$(POD_NAME)", "at $(POD_IP)", "$$(POD_IP)"})
	c.Env = []v1.EnvVar{
		crifake.FieldEnv("POD_IP", "status.podIP"),
		crifake.FieldEnv("POD_NAME", "metadata.name"),
		crifake.ResourceEnv("MEM_LIMIT_MI", "", "limits.memory", "1Mi"),
		crifake.ResourceEnv("CPU_LIMIT", "", "limits.cpu", ""),
		{Name: "GREETING", Value: "hello $(POD_NAME)"},
	}
	c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	pod := e.pod("env", 0, c)
	e.run(pod)

	p, err := readPod(t.Context(), e.rt, pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := e.rt.PodSandboxStatus(t.Context(), p.ReadySandbox().Id, false)
	if err != nil {
		t.Fatal(err)
	}
	podIP := sb.GetStatus().GetNetwork().GetIp()
	if podIP == "" {
		t.Fatal("the sandbox has no IP")
	}
	id := p.RunningIDs()[0]
	stdout, stderr, err := e.rt.ExecSync(t.Context(), id, []string{"env"}, 10*time.Second)
	if err != nil {
		t.Fatalf("env: %v (%s)", err, stderr)
	}
	env := map[string]string{}
	for line := range strings.Lines(string(stdout)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		env[k] = v
	}
	for k, want := range map[string]string{
		"POD_IP": podIP, "POD_NAME": "env", "MEM_LIMIT_MI": "64", "CPU_LIMIT": "3", "GREETING": "hello env",
	} {
		if env[k] != want {
			t.Errorf("%s=%q in the container, want %q", k, env[k], want)
		}
	}
	// Burstable (a limit, no request), with no memory request to weigh.
	stdout, stderr, err = e.rt.ExecSync(t.Context(), id, []string{"cat", "/proc/1/oom_score_adj"}, 10*time.Second)
	if err != nil || strings.TrimSpace(string(stdout)) != "999" {
		t.Errorf("oom_score_adj %q, %v (%s); want 999", stdout, err, stderr)
	}
	// The shell writes its arguments as it starts: wait for them.
	for deadline := time.Now().Add(ctrdTimeout); ; time.Sleep(100 * time.Millisecond) {
		stdout, stderr, err = e.rt.ExecSync(t.Context(), id, []string{"cat", "/tmp/args"}, 10*time.Second)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("args: %v (%s)", err, stderr)
		}
	}
	want := []string{"env", "at " + podIP, "$(POD_IP)"}
	if got := strings.Split(strings.TrimSuffix(string(stdout), "\n"), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the shell's arguments %q, want %q", got, want)
	}
}

// A container that allocates more than its memory limit is killed by the
// kernel, and its status says OOMKilled, exit code 137.
func TestContainerdOOMKilled(t *testing.T) {
	e, statuses := newCtrdSyncerWith(t, Options{})
	// dd's one 64 MiB block is a buffer it fills: more than the limit.
	c := busybox("hog", []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"})
	c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("32Mi")}
	pod := e.pod("oom", 0, c)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	deadline := time.Now().Add(ctrdTimeout)
	for {
		terminal, err := e.s.SyncPod(t.Context(), 0, pod, nil, nil)
		if err != nil {
			t.Fatalf("SyncPod: %v", err)
		}
		if terminal {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod did not end within %v", ctrdTimeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	st := statuses.last(t, pod.UID)
	term := st.ContainerStatuses[0].State.Terminated
	if term == nil || term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Errorf("hog's state %+v, want terminated OOMKilled with exit code 137", st.ContainerStatuses[0].State)
	}
	if st.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", st.Phase)
	}
}
