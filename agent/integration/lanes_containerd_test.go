package integration_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/critest"
)

// preStopPod is a pod of one container that exits on SIGTERM, with an exec
// preStop hook of 1 s. Its shell waits on a background sleep, so that it
// runs its trap the moment the signal arrives: what is measured is the
// node's stop, not the granularity of a sleep loop.
func preStopPod(name, uid string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  uid: %s
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 10
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, 'trap "exit 0" TERM; sleep 3600 & wait']
    lifecycle:
      preStop:
        exec:
          command: [sleep, "1"]
`, name, agenttest.CtrdNamespace, uid, critest.BusyboxImage)
}

// exitWatch follows the containers of the pods uids from one poll of
// ListContainers every 25 ms, and reads the runtime's FinishedAt of each
// once it exited (the agent removes them soon after): the instant each
// died, whatever the poll's latency.
type exitWatch struct {
	t        *testing.T
	rt       internalapi.RuntimeService
	uids     map[string]bool
	finished map[string]time.Time // by container ID
	running  map[string]bool
}

func (w *exitWatch) poll() {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), 10*time.Second)
	defer cancel()
	cs, err := w.rt.ListContainers(ctx, nil)
	if err != nil {
		w.t.Fatalf("ListContainers: %v", err)
	}
	w.running = map[string]bool{}
	for _, c := range cs {
		if !w.uids[c.Labels[cri.PodUIDLabel]] {
			continue
		}
		switch c.State {
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
			w.running[c.Id] = true
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			if _, ok := w.finished[c.Id]; ok {
				continue
			}
			at := time.Now() // if it is removed before its status is read
			if st, err := w.rt.ContainerStatus(ctx, c.Id, false); err == nil && st.GetStatus().GetFinishedAt() > 0 {
				at = time.Unix(0, st.GetStatus().GetFinishedAt())
			}
			w.finished[c.Id] = at
		}
	}
}

// Thirty pods with a 1 s exec preStop hook, removed at once, all stop; the
// time from the first removal to the last container's exit (the runtime's
// FinishedAt; it includes the manifest scan of up to 100 ms) is logged:
// the figure is 3.0 s when the hooks share one lane of 10 slots,
// and about 1 s when every kill runs its hook at once. Run it with
//
//	PODLIFE_CRI_ENDPOINT=... go test -run TestContainerdThirtyPreStops -v ./agent/integration
func TestContainerdThirtyPreStops(t *testing.T) {
	const pods = 30
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	w := &exitWatch{t: t, rt: e.RT, uids: map[string]bool{}, finished: map[string]time.Time{}}
	names := make([]string, pods)
	for i := range pods {
		uid := e.NewUID()
		w.uids[uid] = true
		names[i] = fmt.Sprintf("prestop-%d.yaml", i)
		writeManifest(t, manifests, names[i], preStopPod(fmt.Sprintf("prestop-%d", i), uid))
	}
	deadline := time.Now().Add(3 * time.Minute) // 30 pods on a shared, small CI machine
	for w.poll(); len(w.running) < pods; w.poll() {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pods run after 3 min", len(w.running), pods)
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	for _, name := range names {
		if err := os.Remove(filepath.Join(manifests, name)); err != nil {
			t.Fatal(err)
		}
	}
	agenttest.CtrdEventually(t, "every container of the 30 pods stopped", func() (bool, string) {
		w.poll()
		return len(w.finished) == pods, fmt.Sprintf("%d exited, %d still run", len(w.finished), len(w.running))
	})
	var first, last time.Duration
	for _, at := range w.finished {
		d := at.Sub(start)
		if first == 0 || d < first {
			first = d
		}
		last = max(last, d)
	}
	t.Logf("MEASURED: %d pods with a 1 s exec preStop hook stopped %v after their manifests were removed (the first container exited after %v)",
		pods, last.Round(10*time.Millisecond), first.Round(10*time.Millisecond))
	for uid := range w.uids {
		a.WaitGone(uid)
	}
	t.Logf("MEASURED: waits for a lane slot: %s", laneWaits(t, a))
}

// laneWaits sums podlife_cri_lane_wait_seconds by lane: how many calls
// waited how long in all for a slot.
func laneWaits(t *testing.T, a *agenttest.CtrdAgent) string {
	t.Helper()
	families, err := a.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != "podlife_cri_lane_wait_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			out = append(out, fmt.Sprintf("%s %d calls %.3fs", m.GetLabel()[0].GetValue(), h.GetSampleCount(), h.GetSampleSum()))
		}
	}
	if len(out) == 0 {
		t.Errorf("no podlife_cri_lane_wait_seconds in the agent's metrics")
	}
	return strings.Join(out, ", ")
}

// hangingRegistry is a registry on 127.0.0.1 that accepts connections,
// reads the requests and never answers: a pull from it never progresses.
// containerd pulls from a loopback registry over plain HTTP.
type hangingRegistry struct {
	addr string
	mu   sync.Mutex
	open int // connections accepted and not closed by the client
	seen int // connections accepted in all
}

func newHangingRegistry(t *testing.T) *hangingRegistry {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &hangingRegistry{addr: l.Addr().String()}
	var conns sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		_ = l.Close()
		conns.Wait()
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.open++
			r.seen++
			r.mu.Unlock()
			conns.Go(func() {
				defer func() { _ = c.Close() }()
				go func() {
					<-done
					_ = c.Close()
				}()
				// Read until the client gives up; never write.
				_, _ = io.Copy(io.Discard, c)
				r.mu.Lock()
				r.open--
				r.mu.Unlock()
			})
		}
	}()
	return r
}

// counts are the connections open now and accepted in all.
func (r *hangingRegistry) counts() (open, seen int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.open, r.seen
}

// processes counts the node's processes whose command line is argv.
func processes(t *testing.T, argv ...string) int {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == want {
			n++
		}
	}
	return n
}

// lanePod is a manifest of n containers that exit on SIGTERM, each with
// extra (indented as a container's fields), grace 5 s, image image with
// pull policy policy.
func lanePod(name, uid string, n int, image, policy, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  uid: %s\n", name, agenttest.CtrdNamespace, uid)
	b.WriteString("spec:\n  restartPolicy: Always\n  terminationGracePeriodSeconds: 5\n  containers:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: c%d\n    image: %s\n    imagePullPolicy: %s\n", i, image, policy)
		b.WriteString("    command: [sh, -c, 'trap \"exit 0\" TERM; while true; do sleep 0.2; done']\n")
		b.WriteString(extra)
	}
	return b.String()
}

// The acceptance: a pod with 10 exec readiness probes that hang
// (timeoutSeconds 3600), another whose 10 containers have postStart hooks
// that hang (podlife, as the kubelet, runs a pod's postStart hooks one
// container after the other, so one hangs at a time), and a pull from a
// registry that never answers. A third pod is then created, started and
// killed: it is, and the time from its kill (the manifest's removal) to
// its container's exit, against its grace period plus 2 s, is logged.
// With one lane for every change, exec and pull (10 slots), the probes
// alone held every slot and the third pod never even started.
func TestContainerdLanesIsolateAKill(t *testing.T) {
	reg := newHangingRegistry(t)
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)

	probesUID, hooksUID, pullUID := e.NewUID(), e.NewUID(), e.NewUID()
	writeManifest(t, manifests, "probes.yaml", lanePod("probes", probesUID, 10, critest.BusyboxImage, "Never", `    readinessProbe:
      exec:
        command: [sleep, "3601"]
      timeoutSeconds: 3600
      periodSeconds: 1
`))
	writeManifest(t, manifests, "hooks.yaml", lanePod("hooks", hooksUID, 10, critest.BusyboxImage, "Never", `    lifecycle:
      postStart:
        exec:
          command: [sleep, "3602"]
`))
	writeManifest(t, manifests, "pull.yaml", lanePod("pull", pullUID, 1, reg.addr+"/podlife/never:1", "Always", ""))

	agenttest.CtrdEventually(t, "the hanging probes, hook and pull are in flight", func() (bool, string) {
		probes, hooks := processes(t, "sleep", "3601"), processes(t, "sleep", "3602")
		open, _ := reg.counts()
		probed := len(e.RunningContainers(probesUID))
		return probed == 10 && probes >= cri.DefaultExecPerPod && hooks >= 1 && open >= 1,
			fmt.Sprintf("%d of 10 probed containers run; %d probe execs (want %d, the pod's share), %d hook execs, %d pulls", probed, probes, cri.DefaultExecPerPod, hooks, open)
	})
	if n := processes(t, "sleep", "3601"); n > cri.DefaultExecPerPod {
		t.Errorf("%d probe execs of one pod run at once, want at most its share of %d", n, cri.DefaultExecPerPod)
	}

	uid := e.NewUID()
	writeManifest(t, manifests, "third.yaml", lanePod("third", uid, 1, critest.BusyboxImage, "Never", ""))
	a.WaitRunning(uid, 1)
	w := e.Watch(uid, a.Obs.Poke(), "c0")
	killed := time.Now()
	if err := os.Remove(filepath.Join(manifests, "third.yaml")); err != nil {
		t.Fatal(err)
	}
	st := w.Exited("c0")
	if open, _ := reg.counts(); open < 1 {
		t.Errorf("the pull no longer hangs once the third pod was killed: the test did not test the pull lane")
	}
	took := agenttest.CtrdSince(killed, st.FinishedAt)
	t.Logf("MEASURED: the third pod (grace 5 s, a container that exits on SIGTERM) was killed %v after its manifest was removed, against its grace period plus 2 s = 7 s; exit code %d",
		took.Round(10*time.Millisecond), st.ExitCode)
	a.WaitGone(uid)
	e.WaitRuntimeGone(uid)

	for _, name := range []string{"probes.yaml", "hooks.yaml", "pull.yaml"} {
		if err := os.Remove(filepath.Join(manifests, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{probesUID, hooksUID, pullUID} {
		e.WaitRuntimeGone(u)
	}
}

// A pull from a registry that never answers is cancelled at the image
// pull progress deadline: containerd drops its request, and the pod's
// container waits with ErrImagePull (or, after it, ImagePullBackOff) and
// the deadline's message.
func TestContainerdPullDeadline(t *testing.T) {
	reg := newHangingRegistry(t)
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, func(c *config.Config) { c.ImagePullProgressDeadline.Duration = 2 * time.Second })
	uid := e.NewUID()
	writeManifest(t, manifests, "pull.yaml", lanePod("pull", uid, 1, reg.addr+"/podlife/never:1", "Always", ""))
	var sawErr bool
	agenttest.CtrdEventually(t, "the pull was cancelled with the deadline's message", func() (bool, string) {
		st, _ := a.PodStatus(types.UID(uid))
		for _, cs := range st.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "ErrImagePull" && strings.Contains(w.Message, "image pull progress deadline (2s)") {
				sawErr = true
			}
		}
		_, seen := reg.counts()
		return sawErr, fmt.Sprintf("%d requests to the registry; statuses %+v", seen, st.ContainerStatuses)
	})
	agenttest.CtrdEventually(t, "containerd dropped the request of the cancelled pull", func() (bool, string) {
		open, seen := reg.counts()
		return seen >= 1 && open < seen, fmt.Sprintf("%d of %d requests still open", open, seen)
	})
	if err := os.Remove(filepath.Join(manifests, "pull.yaml")); err != nil {
		t.Fatal(err)
	}
	e.WaitRuntimeGone(uid)
}
