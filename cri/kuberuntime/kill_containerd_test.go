package kuberuntime

// Termination on a real containerd: what a container sees of its preStop
// hook, of the stop after it, of its stop signal, and in which order a
// pod's sidecars stop. They skip unless $PODLIFE_CRI_ENDPOINT names a
// runtime (internal/critest):
//
//	PODLIFE_CRI_ENDPOINT=unix:///…/containerd.sock go test -race -count=1 -run Containerd ./cri/
//
// Orders are read from the runtime's own FinishedAt timestamps.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/critest"
)

// ctrdTimeout bounds each wait for an outcome that should come within
// seconds.
const ctrdTimeout = 60 * time.Second

// ctrdTrap is a shell that runs onTerm on SIGTERM, at the latest when its
// current 0.2 s sleep ends. It touches /tmp/trapped once the trap is set:
// until then, as PID 1, it ignores SIGTERM (see trapped).
func ctrdTrap(onTerm string) []string {
	return []string{"sh", "-c", `trap '` + onTerm + `' TERM; touch /tmp/trapped; while true; do sleep 0.2; done`}
}

// trapped waits until every running container of the pod (each a
// ctrdTrap) set its trap: a termination right after the start would
// otherwise find a shell that ignores SIGTERM, and kill it at the end of
// the grace period.
func (e *ctrdSyncer) trapped(pod *v1.Pod) {
	e.t.Helper()
	p, err := readPod(e.t.Context(), e.rt, pod.UID)
	if err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(ctrdTimeout)
	for _, id := range p.RunningIDs() {
		for {
			_, _, err := e.rt.ExecSync(e.t.Context(), id, []string{"test", "-f", "/tmp/trapped"}, 10*time.Second)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("container %s set no trap after %v: %v", id, ctrdTimeout, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// ctrdSyncer is a syncer on the runtime.
type ctrdSyncer struct {
	t *testing.T
	s *Syncer
	// rt is the runtime's client, for the tests' own reads.
	rt cri.Runtime
}

func newCtrdSyncer(t *testing.T) *ctrdSyncer {
	t.Helper()
	critest.Exclusive(t)
	rt, images := critest.Connect(t)
	s := NewSyncer(rt, images, Options{LogRoot: t.TempDir()})
	t.Cleanup(s.Close)
	return &ctrdSyncer{t: t, s: s, rt: rt}
}

// pod is a pod of busybox containers, each with its command, in a
// namespace of its own; it is removed from the runtime when the test ends.
func (e *ctrdSyncer) pod(name string, grace int64, containers ...v1.Container) *v1.Pod {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "podlife-cri-it", UID: types.UID("term-" + hex.EncodeToString(b))},
		Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, Containers: containers},
	}
	// The pod is stopped before the test gives the runtime up (the lock of
	// critest.Exclusive): a pod left running would be an orphan to the
	// next test's agent. Under load a stop can outlast one try.
	e.t.Cleanup(func() {
		for try := 1; ; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), ctrdTimeout)
			err := e.s.SyncTerminatingPod(ctx, pod, nil, new(int64(0)), nil)
			cancel()
			if err == nil {
				break
			}
			if try == 3 {
				e.t.Errorf("cleanup: pod %s (%s) not stopped after %d tries: %v", pod.Name, pod.UID, try, err)
				break
			}
		}
		e.s.RemoveDeadPod(pod.UID) // Close (the cleanup before) waits for it
	})
	return pod
}

func busybox(name string, command []string) v1.Container {
	return v1.Container{Name: name, Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever, Command: command}
}

// run syncs the pod until its containers (and sidecars) all run.
func (e *ctrdSyncer) run(pod *v1.Pod) {
	e.t.Helper()
	want := len(pod.Spec.Containers)
	for i := range pod.Spec.InitContainers {
		if cri.IsSidecar(&pod.Spec.InitContainers[i]) {
			want++
		}
	}
	deadline := time.Now().Add(ctrdTimeout)
	for {
		if _, err := e.s.SyncPod(e.t.Context(), 0, pod, nil, nil); err != nil {
			e.t.Fatalf("SyncPod(%s): %v", pod.Name, err)
		}
		p, err := readPod(e.t.Context(), e.rt, pod.UID)
		if err != nil {
			e.t.Fatal(err)
		}
		if len(p.RunningIDs()) == want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("pod %s: %d of %d containers run after %v", pod.Name, len(p.RunningIDs()), want, ctrdTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exited returns the pod's containers by name, all exited.
func (e *ctrdSyncer) exited(pod *v1.Pod) map[string]*runtimeapi.ContainerStatus {
	e.t.Helper()
	p, err := readPod(e.t.Context(), e.rt, pod.UID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*runtimeapi.ContainerStatus{}
	for _, c := range p.Containers {
		if c.State != runtimeapi.ContainerState_CONTAINER_EXITED {
			e.t.Fatalf("container %s is %v after the termination", c.GetMetadata().GetName(), c.State)
		}
		out[c.GetMetadata().GetName()] = c
	}
	return out
}

func (e *ctrdSyncer) terminate(pod *v1.Pod, grace *int64) {
	e.t.Helper()
	if err := e.s.SyncTerminatingPod(e.t.Context(), pod, nil, grace, nil); err != nil {
		e.t.Fatalf("SyncTerminatingPod(%s): %v", pod.Name, err)
	}
}

func finishedAt(c *runtimeapi.ContainerStatus) time.Time { return time.Unix(0, c.FinishedAt) }

// The preStop exec hook runs, in the container, before its SIGTERM: the
// container's TERM handler finds the hook's file and exits 0, or exits 3.
func TestContainerdPreStopExecBeforeStop(t *testing.T) {
	e := newCtrdSyncer(t)
	c := busybox("app", ctrdTrap(`[ -f /tmp/drained ] && exit 0; exit 3`))
	c.Lifecycle = preStopExec("sh", "-c", "echo drained > /tmp/drained")
	pod := e.pod("prestop-exec", 30, c)
	e.run(pod)
	e.trapped(pod)
	e.terminate(pod, nil)
	if st := e.exited(pod)["app"]; st.ExitCode != 0 {
		t.Errorf("app exited %d (%s), want 0: its TERM handler did not find the file the preStop hook wrote", st.ExitCode, st.Reason)
	}
}

// A preStop sleep hook: the container gets its SIGTERM once the sleep is
// over, not before.
func TestContainerdPreStopSleepThenStop(t *testing.T) {
	e := newCtrdSyncer(t)
	c := busybox("app", ctrdTrap("exit 0"))
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 2}}}
	pod := e.pod("prestop-sleep", 30, c)
	e.run(pod)
	e.trapped(pod)
	start := time.Now()
	e.terminate(pod, nil)
	st := e.exited(pod)["app"]
	if took := finishedAt(st).Sub(start); st.ExitCode != 0 || took < 2*time.Second {
		t.Errorf("app exited %d, %v after the kill; want 0 (its TERM handler), after the 2 s hook", st.ExitCode, took)
	}
}

// A second termination with a shorter grace period cuts a long sleep hook:
// the container, which ignores SIGTERM, is killed 2 s (the minimum) after
// the shorter grace period, not after its 300 s hook.
func TestContainerdShortenedGraceCutsHook(t *testing.T) {
	e := newCtrdSyncer(t)
	c := busybox("app", []string{"sleep", "1000"}) // PID 1 without a handler: only SIGKILL ends it
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 300}}}
	pod := e.pod("prestop-cut", 300, c)
	e.run(pod)

	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() { first <- e.s.SyncTerminatingPod(ctx, pod, nil, nil, nil) }()
	time.Sleep(time.Second) // the hook runs
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("first SyncTerminatingPod = %v, want Canceled", err)
	}
	second := time.Now()
	e.terminate(pod, new(int64(1)))
	st := e.exited(pod)["app"]
	took := finishedAt(st).Sub(second)
	t.Logf("app exited %d %v after the kill with grace 1", st.ExitCode, took.Round(time.Millisecond))
	if st.ExitCode != 137 || took < 2*time.Second || took > 60*time.Second {
		t.Errorf("app exited %d, %v after the kill with grace 1; want 137 (SIGKILL) after the 1 s of the hook left and the 2 s minimum, long before the hook's 300 s",
			st.ExitCode, took)
	}
}

// A preStop exec hook that outlives the grace period still runs after the
// container's SIGTERM, as under the kubelet, which stops waiting for the
// hook but does not end it: the container's TERM handler waits for the
// hook to see /tmp/term and exits 0, within the 2 s minimum the stop gives
// it; a hook cut off at the grace period leaves it to SIGKILL (137).
func TestContainerdPreStopHookRunsThroughTheStop(t *testing.T) {
	e := newCtrdSyncer(t)
	c := busybox("app", ctrdTrap(`touch /tmp/term; while [ ! -f /tmp/seen ]; do sleep 0.1; done; exit 0`))
	c.Lifecycle = preStopExec("sh", "-c", `while true; do [ -f /tmp/term ] && touch /tmp/seen; sleep 0.1; done`)
	pod := e.pod("prestop-through-stop", 1, c)
	e.run(pod)
	e.trapped(pod)
	e.terminate(pod, nil)
	if st := e.exited(pod)["app"]; st.ExitCode != 0 {
		t.Errorf("app exited %d (%s), want 0: the preStop hook no longer ran after the stop signal", st.ExitCode, st.Reason)
	}
}

// Sidecars stop after the regular containers, the later sidecar first.
func TestContainerdSidecarsStopInReverseOrder(t *testing.T) {
	e := newCtrdSyncer(t)
	always := v1.ContainerRestartPolicyAlways
	pod := e.pod("sidecars", 30, busybox("main", ctrdTrap("sleep 1; exit 0")))
	for _, name := range []string{"first", "second"} {
		s := busybox(name, ctrdTrap("exit 0"))
		s.RestartPolicy = &always
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, s)
	}
	e.run(pod)
	e.trapped(pod)
	e.terminate(pod, nil)
	cs := e.exited(pod)
	m, s2, s1 := finishedAt(cs["main"]), finishedAt(cs["second"]), finishedAt(cs["first"])
	t.Logf("main exited at +0, second at +%v, first at +%v", s2.Sub(m).Round(time.Millisecond), s1.Sub(m).Round(time.Millisecond))
	if !m.Before(s2) || !s2.Before(s1) {
		t.Errorf("finished: main %v, second %v, first %v; want main, then second, then first", m, s2, s1)
	}
	for name, c := range cs {
		if c.ExitCode != 0 {
			t.Errorf("%s exited %d, want 0 (its TERM handler)", name, c.ExitCode)
		}
	}
}

// lifecycle.stopSignal reaches the container: a shell that exits 7 on
// SIGUSR1 and 9 on SIGTERM exits 7, and 2 on SIGINT.
func TestContainerdStopSignal(t *testing.T) {
	e := newCtrdSyncer(t)
	for _, tc := range []struct {
		sig  v1.Signal
		want int32
	}{{v1.SIGUSR1, 7}, {v1.SIGINT, 2}} {
		t.Run(string(tc.sig), func(t *testing.T) {
			c := busybox("app", []string{"sh", "-c", `trap "exit 7" USR1; trap "exit 2" INT; trap "exit 9" TERM; while true; do sleep 0.2; done`})
			c.Lifecycle = &v1.Lifecycle{StopSignal: &tc.sig}
			pod := e.pod("stopsignal-"+strings.ToLower(string(tc.sig)), 30, c)
			pod.Spec.OS = &v1.PodOS{Name: v1.Linux}
			e.run(pod)
			p, err := readPod(t.Context(), e.rt, pod.UID)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := cri.RuntimeSignal(tc.sig)
			if got := p.Containers[0].GetStopSignal(); got != want {
				// containerd honours ContainerConfig.StopSignal from 2.3 on;
				// an older one uses the image's and does not report it.
				critest.Unsupported(t, critest.FeatureStopSignal, fmt.Sprintf("it reports stop signal %v for a container created with %v", got, want))
			}
			e.terminate(pod, nil)
			if st := e.exited(pod)["app"]; st.ExitCode != tc.want {
				t.Errorf("app exited %d, want %d: it got another signal than %s", st.ExitCode, tc.want, tc.sig)
			}
		})
	}
}

// A failing postStart hook kills the container, which the next sync
// restarts.
func TestContainerdPostStartFailureKills(t *testing.T) {
	e := newCtrdSyncer(t)
	c := busybox("app", ctrdTrap("exit 0"))
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 4"}}}}
	pod := e.pod("poststart", 30, c)
	_, err := e.s.SyncPod(t.Context(), 0, pod, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "exited with 4") {
		t.Fatalf("SyncPod = %v, want the hook's exit code 4", err)
	}
	st := e.exited(pod)["app"]
	if st.ExitCode != 0 {
		t.Errorf("app exited %d, want 0 (its TERM handler: killed by the agent)", st.ExitCode)
	}
}

// A failing postStart hook that prints 1 MiB: its error (the log line, the
// container's PostStartHookError message) holds the first 10 KiB of the
// output, as the kubelet's exec prober keeps it, and the exit code.
func TestContainerdPostStartOutputCut(t *testing.T) {
	e := newCtrdSyncer(t)
	c := busybox("app", ctrdTrap("exit 0"))
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{
		Command: []string{"sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' y; exit 4"}}}}
	pod := e.pod("poststart-chatty", 30, c)
	_, err := e.s.SyncPod(t.Context(), 0, pod, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "exited with 4") {
		t.Fatalf("SyncPod = %.300v, want the hook's exit code 4", err)
	}
	msg := err.Error()
	kept := strings.Repeat("y", 10<<10)
	if !strings.Contains(msg, `message: "`+kept+`"`) || len(msg) > 11<<10 {
		t.Errorf("the hook's error is %d bytes, want it to end with the output's first 10 KiB", len(msg))
	}
}
