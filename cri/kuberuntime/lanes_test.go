package kuberuntime

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/internal/crifake"
)

// Through the lanes (cri.Limit), a pod's kill runs its preStop hook and
// stops its container while every exec slot of the node is held by other
// pods' execs that never end (hung exec probes): the syncer runs a
// preStop hook under cri.ForKill.
func TestKillBesideHungExecs(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	l := cri.Limit(h.rt, h.imgs, cri.Lanes{Changes: 2, ExecPerPod: 1, ExecPerNode: 2, Pulls: 1})
	h.s = NewSyncer(l.Runtime, l.Images, Options{Statuses: h.statuses, Events: h.events, Clock: h.clock})
	t.Cleanup(h.s.Close)

	release := make(chan struct{})
	hung := make(chan string, 10)
	var mu sync.Mutex
	var execs []string
	h.rt.OnExec = func(ctx context.Context, id string, cmd []string) error {
		if cmd[0] == "hang" {
			hung <- id
			select {
			case <-release:
			case <-ctx.Done():
			}
			return ctx.Err()
		}
		mu.Lock()
		execs = append(execs, h.container(id).GetMetadata().GetName()+" "+cmd[0])
		mu.Unlock()
		return nil
	}
	pod := crifake.MakePod("victim", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	pod.Spec.TerminationGracePeriodSeconds = new(int64(20))
	pod.Spec.Containers[0].Lifecycle = preStopExec("drain")
	h.mustSync(pod)

	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(release)
	for _, uid := range []types.UID{"prober-1", "prober-2"} {
		wg.Go(func() {
			_, _, _ = l.Runtime.ExecSync(cri.ForPod(context.Background(), uid), "probed-"+string(uid), []string{"hang"}, time.Hour)
		})
	}
	for range 2 {
		crifake.WaitFor(t, hung, "the hung execs to hold every exec slot")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.s.SyncTerminatingPod(ctx, pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod while every exec slot is held: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(execs, []string{"a drain"}) {
		t.Errorf("execs %q, want the preStop hook of a", execs)
	}
	if calls := h.rt.StopCalls(); len(calls) != 1 {
		t.Errorf("stops %v, want a's", calls)
	}
}

// A postStart exec hook runs with a deadline, its budget
// (cri.PostStartTimeout): the kubelet gives it none, and the CRI client
// none to an ExecSync without a timeout.
func TestPostStartHookHasABudget(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	var left time.Duration
	var hasDeadline bool
	h.rt.OnExec = func(ctx context.Context, _ string, _ []string) error {
		var d time.Time
		d, hasDeadline = ctx.Deadline()
		left = time.Until(d)
		return nil
	}
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"warm"}}}}
	h.mustSync(pod)
	if !hasDeadline || left > cri.PostStartTimeout || left < cri.PostStartTimeout-time.Minute {
		t.Errorf("the postStart hook's exec ran with deadline %v (set: %v), want within %v", left, hasDeadline, cri.PostStartTimeout)
	}
}
