package worker

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// TestOneCallPerPodPodsInParallel: two pods' SyncPods run at the same time;
// an update for a pod whose SyncPod runs waits for it to return.
func TestOneCallPerPodPodsInParallel(t *testing.T) {
	e := start(t, Options{})
	a, b := newPod("a", "web", false), newPod("b", "db", false)
	ga := e.hold("a", "SyncPod", outcome{})
	gb := e.hold("b", "SyncPod", outcome{})
	e.send(createOp(a))
	e.send(createOp(b))
	ga.wait()
	gb.wait() // both in flight at once
	next := e.syncer.entered("a", "SyncPod")
	e.send(updateOp(withVersion(a, "2")))
	e.send(syncOp(withVersion(a, "3")))
	select {
	case <-next:
		t.Fatal("a second SyncPod of a began while the first runs")
	default:
	}
	ga.release()
	<-next // a's next SyncPod runs while b's is still blocked
	gb.release()
	e.settle()
	e.wantFns("a", "SyncPod", "SyncPod")
	e.wantFns("b", "SyncPod")
	if c := e.syncer.calls("a")[1]; c.version != "3" {
		t.Fatalf("a's second SyncPod got version %q, want the latest (3)", c.version)
	}
	e.syncer.mu.Lock()
	maxFlight := e.syncer.maxFlight
	e.syncer.mu.Unlock()
	if maxFlight != 2 {
		t.Fatalf("at most %d calls ran at once, want 2", maxFlight)
	}
}

// callLanguage is the order of sync calls of one UID incarnation
// (reference 1.9): SyncPod* (SyncTerminatingPod+ SyncTerminatedPod+ |
// SyncTerminatingRuntimePod+), or one of its special cases: nothing at all
// (a static pod terminated while it waited, an orphan that never started)
// or SyncTerminatedPod+ alone (a pod first seen terminal). One path is
// missing from the reference's list: a runtime-only pod whose config
// arrives while its SyncTerminatingRuntimePod is being retried terminates
// as that pod (table: T12 sets HasConfig, then TerminatingDequeueRetry),
// as the kubelet does: SyncTerminatingRuntimePod+ SyncTerminatingPod+
// SyncTerminatedPod+. See TestRuntimeOnlyPodConfigArrivesWhileTerminating.
var callLanguage = regexp.MustCompile(`^((SyncPod )*(SyncTerminatingPod )+(SyncTerminatedPod )+` +
	`|(SyncTerminatingRuntimePod )+((SyncTerminatingPod )+(SyncTerminatedPod )+)?` +
	`|(SyncTerminatedPod )+` +
	`|)$`)

// TestConcurrentUpdatesStress: many goroutines update, resync and kill many
// pods at once while SyncKnownPods and the queries run. Every pod ends
// finished, its calls follow the reference's order and never overlap (the
// fake syncer checks), every KillPod returns, and the race detector stays quiet.
func TestConcurrentUpdatesStress(t *testing.T) {
	e := start(t, Options{})
	const n, updates = 24, 12
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = newPod(fmt.Sprintf("p%02d", i), fmt.Sprintf("pod%02d", i), i%4 == 0)
	}
	var wg sync.WaitGroup
	for i, pod := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.w.UpdatePod(createOp(pod)); err != nil {
				t.Error(err)
			}
			for j := range updates {
				o := updateOp(withVersion(pod, fmt.Sprint(j)))
				if (i+j)%3 == 0 {
					o = syncOp(pod)
				}
				if err := e.w.UpdatePod(o); err != nil {
					t.Error(err)
				}
			}
			if i%5 == 0 { // a kill through the runtime-only path, as housekeeping sends
				if err := e.w.UpdatePod(runtimeKillOp(string(pod.UID), pod.Name, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(1)})); err != nil {
					t.Error(err)
				}
			}
			if err := e.w.KillPod(context.Background(), pod, i%2 == 0, int64p(int64(i%7)), nil); err != nil {
				t.Error(err)
			}
			if e.w.CouldHaveRunningContainers(pod.UID) {
				t.Errorf("pod %s could still run after KillPod returned", pod.UID)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			e.w.SyncKnownPods(pods)
			for _, p := range pods {
				e.w.ShouldPodContentBeRemoved(p.UID)
				e.w.IsPodForMirrorPodTerminatingByFullName(kubetypes.FullName(p.Name, p.Namespace))
			}
		}
	}()
	wg.Wait()
	e.settle()
	for _, p := range pods {
		e.wantState(p.UID, fsm.Finished)
		got := strings.Join(append(e.syncer.fns(p.UID), ""), " ")
		if !callLanguage.MatchString(got) {
			t.Errorf("pod %s: call order %q", p.UID, got)
		}
		// A static pod killed before its worker took the create never runs;
		// any other pod must have stopped its containers.
		if !kubetypes.IsStatic(p) && !strings.Contains(got, "SyncTerminatingPod SyncTerminatedPod") {
			t.Errorf("pod %s: call order %q has no termination", p.UID, got)
		}
	}
	if got := e.w.SyncKnownPods(nil); len(got) != 0 {
		t.Fatalf("SyncKnownPods kept %d finished orphans", len(got))
	}
	for _, p := range pods {
		e.wantState(p.UID, fsm.Absent)
	}
}

// TestCallLanguageOfScenarios checks the order of calls of the scenario
// classes of reference 1.9 against the same language.
func TestCallLanguageOfScenarios(t *testing.T) {
	cases := []struct {
		name string
		uid  types.UID
		run  func(e *env)
		want string
	}{
		{"killed before it ever synced", "a", func(e *env) {
			e.update(killOp(newPod("a", "web", false), nil))
		}, "SyncTerminatingPod SyncTerminatedPod "},
		{"runtime-only orphan with a failure", "r", func(e *env) {
			e.syncer.script("r", "SyncTerminatingRuntimePod", outcome{err: errSync})
			e.update(runtimeKillOp("r", "ghost", nil))
			e.advance(e.backoff() * 3 / 2)
		}, "SyncTerminatingRuntimePod SyncTerminatingRuntimePod "},
		{"pre-terminated pod", "a", func(e *env) {
			e.w.cache.(*fakeCache).set("a", exitedStatus("a"))
			e.update(createOp(inPhase(newPod("a", "web", false), v1.PodFailed)))
		}, "SyncTerminatedPod "},
		{"failures in every phase", "a", func(e *env) {
			pod := newPod("a", "web", false)
			for _, fn := range []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"} {
				e.syncer.script("a", fn, outcome{err: errSync})
			}
			e.update(createOp(pod))
			e.advance(e.backoff() * 3 / 2)
			e.update(killOp(pod, nil))
			e.advance(e.backoff() * 3 / 2)
			e.advance(e.backoff() * 3 / 2)
		}, "SyncPod SyncPod SyncTerminatingPod SyncTerminatingPod SyncTerminatedPod SyncTerminatedPod "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, Options{StatusCache: newFakeCache()})
			c.run(e)
			got := strings.Join(append(e.syncer.fns(c.uid), ""), " ")
			if got != c.want || !callLanguage.MatchString(got) {
				t.Fatalf("calls %q, want %q (in the reference's language)", got, c.want)
			}
		})
	}
}
