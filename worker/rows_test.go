package worker

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/spec"
)

// unreachableRows are the rows that can fire in the table on its own
// (spec.Reachable) but never in the engine.
var unreachableRows = map[string]string{
	// Core.Timer returns before firing for a UID without a record, and
	// Machine.SyncKnownPods fires only for the records it holds.
	"AbsentRequeueIgnored":       "Core.Timer ignores UIDs without a record",
	"AbsentSyncKnownPodsIgnored": "SyncKnownPods fires only for existing records",
	// Every row that finishes a record has the Exit effect, and Core.forget
	// withdraws the pod's timer (a StopTimer effect, which the shell carries
	// out before it releases the lock), so no timer can fire for a finished
	// record.
	"FinishedRequeueIgnored": "the timer is withdrawn when the record finishes",
}

// rowCase is one scenario of TestEveryReachableRowFires: it drives an
// engine, asserts what the engine did, and names the rows it must fire.
type rowCase struct {
	name string
	rows []string
	run  func(t *testing.T, opts Options)
}

// TestEveryReachableRowFires runs scenarios that together fire every row
// of the table the engine can reach, each checked by an Observer, and
// compares the union with the rows spec.Reachable says can fire, minus
// unreachableRows.
func TestEveryReachableRowFires(t *testing.T) {
	reach := spec.Reachable(spec.Table)
	all := map[string]bool{}
	for _, c := range rowCases() {
		t.Run(c.name, func(t *testing.T) {
			log := newRowLog()
			c.run(t, Options{Observer: log})
			got := log.fired()
			for _, r := range c.rows {
				if !got[r] {
					t.Errorf("row %s did not fire; fired: %v", r, slices.Sorted(maps.Keys(got)))
				}
			}
			for r := range got {
				if !reach.Fired[r] {
					t.Errorf("row %s fired, but the table says it cannot", r)
				}
			}
			for _, r := range log.rejected {
				t.Errorf("rejected: %s", r)
			}
			maps.Copy(all, got)
		})
	}
	if t.Failed() {
		return
	}
	for r, why := range unreachableRows {
		if !reach.Fired[r] {
			t.Errorf("excluded row %s (%s) cannot fire in the table anyway; drop it from unreachableRows", r, why)
		}
		if all[r] {
			t.Errorf("excluded row %s (%s) fired", r, why)
		}
	}
	var missing []string
	for r := range reach.Fired {
		if !all[r] && unreachableRows[r] == "" {
			missing = append(missing, r)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%d reachable rows never fired:\n%s", len(missing), strings.Join(missing, "\n"))
	}
	t.Logf("%d rows fired; %d reachable in the table, %d excluded", len(all), len(reach.Fired), len(unreachableRows))
}

func rowCases() []rowCase {
	var cases []rowCase
	cases = append(cases, firstSightCases()...)
	cases = append(cases, waitingCases()...)
	cases = append(cases, runningCases()...)
	cases = append(cases, terminationRequestedCases()...)
	cases = append(cases, terminatingCases()...)
	cases = append(cases, terminatedCases()...)
	cases = append(cases, finishedCases()...)
	return cases
}

// typeEvents names the table event of each update type: a plain resync
// (SyncPodSync) is an Update as far as the lifecycle is concerned.
var typeEvents = map[UpdateType]string{SyncPodCreate: "Create", SyncPodUpdate: "Update", SyncPodSync: "Update", SyncPodKill: "Kill"}

// firstSightCases: T1-T4.
func firstSightCases() []rowCase {
	var cases []rowCase
	for _, ty := range []UpdateType{SyncPodCreate, SyncPodUpdate, SyncPodSync} {
		ev := typeEvents[ty]
		cases = append(cases, rowCase{
			name: "first " + ty.String() + ", resync, kill, finish, tombstone removed",
			rows: []string{"Absent" + ev + "Admit", "WaitingDequeueStart", "RunningSyncPodDone", "RunningSyncKnownPodsIgnored",
				"RunningRequeue", "RunningDequeueSync", "RunningKillTerminate", "TerminationRequestedDequeueTerminate",
				"TerminatingTerminatingDone", "TerminatedDequeueCleanup", "TerminatedTerminatedDone",
				"FinishedSyncKnownPodsIgnored", "FinishedSyncKnownPodsRemove"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				pod := newPod("a", "web", false)
				e.update(UpdatePodOptions{UpdateType: ty, Pod: pod})
				e.wantState("a", fsm.Running)
				if got := e.w.SyncKnownPods([]*v1.Pod{pod}); got["a"] != (PodWorkerSync{State: SyncPod, HasConfig: true}) {
					t.Fatalf("SyncKnownPods: %+v", got)
				}
				e.advance(e.resync() * 3 / 2)
				calls := e.syncer.calls("a")
				if len(calls) != 2 || calls[0].updateType != ty || calls[1].updateType != SyncPodSync {
					t.Fatalf("calls %+v, want SyncPod(%s) then a resync SyncPod(sync)", calls, ty)
				}
				kpo, done := notify(nil)
				e.update(killOp(pod, kpo))
				wantClosed(t, done, "kill")
				e.wantState("a", fsm.Finished)
				e.wantFns("a", "SyncPod", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
				e.wantGraces("a", 30)
				if got := e.w.SyncKnownPods([]*v1.Pod{pod}); got["a"] != (PodWorkerSync{State: TerminatedPod, HasConfig: true}) {
					t.Fatalf("SyncKnownPods kept %+v, want the tombstone", got)
				}
				if got := e.w.SyncKnownPods(nil); len(got) != 0 {
					t.Fatalf("SyncKnownPods(nil) kept %+v", got)
				}
				e.wantState("a", fsm.Absent)
			},
		})
	}
	terminating := []struct {
		name  string
		op    func(*v1.Pod) UpdatePodOptions
		row   string
		grace int64
	}{
		{"create of a deleted pod", func(p *v1.Pod) UpdatePodOptions { return createOp(deleting(p, 7)) }, "AbsentCreateAdmitTerminating", 7},
		{"update of a failed pod", func(p *v1.Pod) UpdatePodOptions { return updateOp(inPhase(p, v1.PodFailed)) }, "AbsentUpdateAdmitTerminating", 30},
		{"sync of a deleted pod", func(p *v1.Pod) UpdatePodOptions { return syncOp(deleting(p, 0)) }, "AbsentUpdateAdmitTerminating", 1},
		{"kill", func(p *v1.Pod) UpdatePodOptions {
			return killOp(p, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(3)})
		}, "AbsentKillAdmitTerminating", 3},
	}
	for _, c := range terminating {
		cases = append(cases, rowCase{
			name: "first sight: " + c.name + " terminates without SyncPod",
			rows: []string{c.row, "TerminationRequestedDequeueTerminate", "TerminatingTerminatingDone", "TerminatedDequeueCleanup", "TerminatedTerminatedDone"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				e.update(c.op(newPod("a", "web", false)))
				e.wantState("a", fsm.Finished)
				e.wantFns("a", "SyncTerminatingPod", "SyncTerminatedPod")
				e.wantGraces("a", c.grace)
			},
		})
	}
	for _, ty := range []UpdateType{SyncPodCreate, SyncPodUpdate, SyncPodSync, SyncPodKill} {
		cases = append(cases, rowCase{
			name: "first sight of a pod terminal in the API and the runtime: " + ty.String(),
			rows: []string{"Absent" + typeEvents[ty] + "PreTerminated", "TerminatedDequeueCleanup", "TerminatedTerminatedDone"},
			run: func(t *testing.T, opts Options) {
				cache := newFakeCache()
				cache.set("a", exitedStatus("a"))
				opts.StatusCache = cache
				e := start(t, opts)
				kpo, done := notify(nil)
				e.update(UpdatePodOptions{UpdateType: ty, Pod: inPhase(newPod("a", "web", false), v1.PodSucceeded), KillPodOptions: kpo})
				wantClosed(t, done, "kill options of a terminated pod")
				e.wantState("a", fsm.Finished)
				e.wantFns("a", "SyncTerminatedPod")
			},
		})
	}
	cases = append(cases,
		rowCase{
			name: "runtime-only pod is terminated, then its record is deleted",
			rows: []string{"AbsentRuntimeKillOrphan", "TerminationRequestedDequeueTerminateRuntime", "TerminatingTerminatingFailed",
				"TerminatingRequeue", "TerminatingDequeueRetryRuntime", "TerminatingTerminatingDoneRuntime"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				e.syncer.script("r", "SyncTerminatingRuntimePod", outcome{err: errSync})
				kpo, done := notify(nil)
				e.update(runtimeKillOp("r", "ghost", kpo))
				e.wantState("r", fsm.Terminating)
				wantOpen(t, done, "runtime kill before its sync succeeded")
				e.advance(e.backoff() * 3 / 2)
				e.wantState("r", fsm.Absent)
				wantClosed(t, done, "runtime kill")
				e.wantFns("r", "SyncTerminatingRuntimePod", "SyncTerminatingRuntimePod")
			},
		},
		rowCase{
			name: "runtime-only update of another type than kill is dropped",
			rows: []string{"AbsentRuntimeUpdateIgnored"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				err := e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodSync, RunningPod: runningPod("r", "ghost")})
				if !errors.Is(err, ErrInvalidUpdate) {
					t.Fatalf("err %v, want ErrInvalidUpdate", err)
				}
				e.settle()
				e.wantState("r", fsm.Absent)
				e.wantFns("r")
			},
		},
	)
	return cases
}

// waitingCases: a static pod parked behind another UID with its full name.
func waitingCases() []rowCase {
	cases := []rowCase{{
		name: "parked static pod takes updates, stays parked, starts after the holder finished",
		rows: []string{"WaitingDequeuePark", "WaitingRequeue", "WaitingUpdate", "WaitingCreate",
			"WaitingRuntimeUpdateIgnored", "WaitingSyncKnownPodsIgnored", "WaitingRequeueIgnored", "WaitingDequeueStart"},
		run: func(t *testing.T, opts Options) {
			e := start(t, opts)
			a, b := newPod("a", "etcd", true), newPod("b", "etcd", true)
			e.update(createOp(a))
			e.update(createOp(b))
			e.wantState("a", fsm.Running)
			e.wantState("b", fsm.Waiting)
			e.advance(e.backoff() * 3 / 2) // b tries again and is parked again
			e.update(updateOp(b))
			e.update(syncOp(b))
			e.update(createOp(withVersion(b, "2")))
			if err := e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, RunningPod: runningPod("b", "etcd")}); !errors.Is(err, ErrInvalidUpdate) {
				t.Fatalf("runtime-only update: err %v", err)
			}
			if got := e.w.SyncKnownPods([]*v1.Pod{a, b}); got["b"] != (PodWorkerSync{State: SyncPod, HasConfig: true, Static: true}) {
				t.Fatalf("SyncKnownPods: %+v", got)
			}
			e.locked(func(c *Core) { // the timer fires before b's worker took the update
				e.coreUpdate(c, createOp(withVersion(b, "3")))
				c.Timer("b")
			})
			e.settle()
			e.wantState("b", fsm.Waiting)
			e.wantFns("b")
			e.update(killOp(a, nil))
			e.wantState("a", fsm.Finished)
			e.wantState("b", fsm.Waiting) // until its back-off timer fires
			e.advance(e.backoff() * 3 / 2)
			e.wantState("b", fsm.Running)
			calls := e.syncer.calls("b")
			if len(calls) != 1 || calls[0].updateType != SyncPodCreate || calls[0].version != "3" {
				t.Fatalf("b's calls %+v, want one SyncPod of the latest create", calls)
			}
		},
	}, {
		name: "parked static pod that is orphaned is removed without any sync",
		rows: []string{"WaitingSyncKnownPodsRemove"},
		run: func(t *testing.T, opts Options) {
			e := start(t, opts)
			a, b := newPod("a", "etcd", true), newPod("b", "etcd", true)
			e.update(createOp(a))
			e.update(createOp(b))
			if got := e.w.SyncKnownPods([]*v1.Pod{a}); len(got) != 1 {
				t.Fatalf("SyncKnownPods kept %+v", got)
			}
			e.advance(e.backoff() * 3 / 2)
			e.wantState("b", fsm.Absent)
			e.wantFns("b")
		},
	}}
	terminate := []struct {
		name string
		op   func(b *v1.Pod, kpo *KillPodOptions) UpdatePodOptions
		row  string
	}{
		{"kill", func(b *v1.Pod, kpo *KillPodOptions) UpdatePodOptions { return killOp(b, kpo) }, "WaitingKillTerminate"},
		{"create of a deleted pod", func(b *v1.Pod, kpo *KillPodOptions) UpdatePodOptions {
			o := createOp(deleting(b, 5))
			o.KillPodOptions = kpo
			return o
		}, "WaitingCreateTerminate"},
		{"update of a deleted pod", func(b *v1.Pod, kpo *KillPodOptions) UpdatePodOptions {
			o := updateOp(deleting(b, 5))
			o.KillPodOptions = kpo
			return o
		}, "WaitingUpdateTerminate"},
		{"sync of a succeeded pod", func(b *v1.Pod, kpo *KillPodOptions) UpdatePodOptions {
			o := syncOp(inPhase(b, v1.PodSucceeded))
			o.KillPodOptions = kpo
			return o
		}, "WaitingUpdateTerminate"},
		{"runtime-only kill", func(_ *v1.Pod, kpo *KillPodOptions) UpdatePodOptions { return runtimeKillOp("b", "etcd", kpo) }, "WaitingRuntimeKillTerminate"},
	}
	for _, c := range terminate {
		cases = append(cases, rowCase{
			name: "parked static pod terminated by " + c.name + " never runs",
			rows: []string{c.row, "TerminationRequestedDequeueNeverStart"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				a, b := newPod("a", "etcd", true), newPod("b", "etcd", true)
				e.update(createOp(a))
				e.update(createOp(b))
				kpo, done := notify(nil)
				e.update(c.op(b, kpo))
				e.wantState("b", fsm.Finished)
				e.wantFns("b")
				wantClosed(t, done, "completion channel of a static pod that never started")
				e.wantState("a", fsm.Running)
			},
		})
	}
	return cases
}

// runningCases: updates to a started pod and the outcomes of SyncPod.
func runningCases() []rowCase {
	type step struct {
		name string
		op   func(p *v1.Pod) UpdatePodOptions
		rows []string
		fns  []string
	}
	plain := []string{"RunningDequeueSync", "RunningSyncPodDone"}
	term := []string{"TerminationRequestedDequeueTerminate", "TerminatingTerminatingDone", "TerminatedDequeueCleanup", "TerminatedTerminatedDone"}
	steps := []step{
		{"create", createOp, append([]string{"RunningCreate"}, plain...), []string{"SyncPod", "SyncPod"}},
		{"update", updateOp, append([]string{"RunningUpdate"}, plain...), []string{"SyncPod", "SyncPod"}},
		{"sync", syncOp, append([]string{"RunningUpdate"}, plain...), []string{"SyncPod", "SyncPod"}},
		{"create of a deleted pod", func(p *v1.Pod) UpdatePodOptions { return createOp(deleting(p, 4)) },
			append([]string{"RunningCreateTerminate"}, term...), []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
		{"update of a deleted pod", func(p *v1.Pod) UpdatePodOptions { return updateOp(deleting(p, 4)) },
			append([]string{"RunningUpdateTerminate"}, term...), []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
		{"sync of a failed pod", func(p *v1.Pod) UpdatePodOptions { return syncOp(inPhase(p, v1.PodFailed)) },
			append([]string{"RunningUpdateTerminate"}, term...), []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
		{"kill", func(p *v1.Pod) UpdatePodOptions { return killOp(p, nil) },
			append([]string{"RunningKillTerminate"}, term...), []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
		{"runtime-only kill of the known pod", func(*v1.Pod) UpdatePodOptions { return runtimeKillOp("a", "web", nil) },
			append([]string{"RunningRuntimeKillTerminate"}, term...), []string{"SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
	}
	var cases []rowCase
	for _, s := range steps {
		cases = append(cases, rowCase{
			name: "running pod receives " + s.name,
			rows: s.rows,
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				pod := newPod("a", "web", false)
				e.update(createOp(pod))
				e.update(s.op(pod))
				e.wantFns("a", s.fns...)
			},
		})
	}
	cases = append(cases,
		rowCase{
			name: "running pod ignores a runtime-only update",
			rows: []string{"RunningRuntimeUpdateIgnored"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				e.update(createOp(newPod("a", "web", false)))
				if err := e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, RunningPod: runningPod("a", "web")}); !errors.Is(err, ErrInvalidUpdate) {
					t.Fatalf("err %v, want ErrInvalidUpdate", err)
				}
				e.settle()
				e.wantState("a", fsm.Running)
				e.wantFns("a", "SyncPod")
			},
		},
		rowCase{
			name: "failed SyncPod is retried after the back-off",
			rows: []string{"RunningSyncPodFailed", "RunningRequeue", "RunningDequeueSync", "RunningSyncPodDone"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				e.syncer.script("a", "SyncPod", outcome{err: errSync})
				e.update(createOp(newPod("a", "web", false)))
				e.advance(e.backoff() * 3 / 2)
				e.wantFns("a", "SyncPod", "SyncPod")
				e.wantState("a", fsm.Running)
			},
		},
		rowCase{
			name: "SyncPod reports the pod terminal",
			rows: []string{"RunningSyncPodTerminal", "TerminatingDequeueRetry", "TerminatingTerminatingDone"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				e.syncer.script("a", "SyncPod", outcome{terminal: true})
				e.update(createOp(newPod("a", "web", false)))
				e.wantState("a", fsm.Finished)
				e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
				e.wantGraces("a", -1)
			},
		},
	)
	return cases
}

// terminationRequestedCases: an orphaned pod whose SyncPod is still running
// (T23 does not cancel it) stays TerminationRequested until SyncPod returns.
func terminationRequestedCases() []rowCase {
	type variant struct {
		name string
		out  outcome
		rows []string
		fns  []string
	}
	variants := []variant{
		{"SyncPod then succeeds", outcome{}, []string{"RunningRequeueIgnored", "TerminationRequestedSyncPodDone", "TerminationRequestedDequeueTerminate"},
			[]string{"SyncPod", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
		{"SyncPod then reports the pod terminal", outcome{terminal: true}, []string{"TerminationRequestedRequeueIgnored", "TerminationRequestedSyncPodTerminal", "TerminatingDequeueRetry"},
			[]string{"SyncPod", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
		{"SyncPod then fails", outcome{err: errSync}, []string{"TerminationRequestedSyncPodFailed", "TerminationRequestedDequeueTerminate"},
			[]string{"SyncPod", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"}},
	}
	var cases []rowCase
	for _, v := range variants {
		cases = append(cases, rowCase{
			name: "orphaned while SyncPod runs; " + v.name,
			rows: append([]string{"RunningSyncKnownPodsTerminate", "TerminationRequestedCreateRestart", "TerminationRequestedUpdate",
				"TerminationRequestedKill", "TerminationRequestedRuntimeKill",
				"TerminationRequestedRuntimeUpdateIgnored", "TerminationRequestedSyncKnownPodsIgnored",
				"TerminationRequestedSyncKnownPodsDrive", "FinishedSyncKnownPodsRemove"}, v.rows...),
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				pod := newPod("a", "web", false)
				e.update(createOp(pod)) // the resync timer is set
				g := e.hold("a", "SyncPod", v.out)
				e.send(updateOp(withVersion(pod, "2")))
				g.wait()
				timerFirst := v.rows[0] == "RunningRequeueIgnored"
				if timerFirst {
					e.step(e.resync() * 3 / 2)
				}
				if got := e.w.SyncKnownPods(nil); got["a"] != (PodWorkerSync{State: TerminatingPod, Orphan: true, HasConfig: true}) {
					t.Fatalf("SyncKnownPods: %+v", got)
				}
				if !timerFirst && v.rows[0] == "TerminationRequestedRequeueIgnored" {
					e.step(e.resync() * 3 / 2)
				}
				e.wantState("a", fsm.TerminationRequested)
				e.send(createOp(pod))
				e.send(updateOp(pod))
				e.send(syncOp(pod))
				kpo, done := notify(int64p(60)) // longer than 30: ignored
				e.send(killOp(pod, kpo))
				e.send(runtimeKillOp("a", "web", nil))
				if err := e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodSync, RunningPod: runningPod("a", "web")}); !errors.Is(err, ErrInvalidUpdate) {
					t.Fatalf("runtime-only sync: err %v", err)
				}
				e.w.SyncKnownPods([]*v1.Pod{pod})
				e.w.SyncKnownPods(nil)
				e.wantState("a", fsm.TerminationRequested)
				wantOpen(t, done, "kill before the pod terminated")
				if n := e.syncer.begun("a"); n != 2 {
					t.Fatalf("%d calls while SyncPod runs, want 2", n)
				}
				g.release()
				e.settle()
				wantClosed(t, done, "kill")
				e.wantState("a", fsm.Finished)
				e.wantFns("a", v.fns...)
				e.wantGraces("a", 30)
				if got := e.w.SyncKnownPods([]*v1.Pod{pod}); len(got) != 0 {
					t.Fatalf("restart requested: the tombstone should go, kept %+v", got)
				}
			},
		})
	}
	cases = append(cases,
		rowCase{
			name: "shorter grace periods while SyncPod of an orphan runs cancel it",
			rows: []string{"TerminationRequestedUpdateShorten", "TerminationRequestedKillShorten",
				"TerminationRequestedRuntimeKillShorten", "TerminationRequestedSyncPodFailed"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				pod := newPod("a", "web", false)
				g := e.hold("a", "SyncPod", outcome{})
				e.send(createOp(pod))
				g.wait()
				e.w.SyncKnownPods(nil) // grace 30 from the spec
				e.locked(func(c *Core) {
					e.coreUpdate(c, updateOp(deleting(pod, 20)))
					e.coreUpdate(c, syncOp(deleting(pod, 15)))
					e.coreUpdate(c, killOp(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(10)}))
					e.coreUpdate(c, runtimeKillOp("a", "web", &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(5)}))
				})
				e.settle() // g is never released: the cancellation ends SyncPod
				e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
				if c := e.syncer.calls("a")[0]; !errors.Is(c.err, context.Canceled) || !c.ctxDone {
					t.Fatalf("SyncPod returned %v (ctx done %v), want a cancellation", c.err, c.ctxDone)
				}
				e.wantGraces("a", 5)
			},
		},
		rowCase{
			name: "killed and orphaned before the worker took the kill",
			rows: []string{"AbsentKillAdmitTerminating", "TerminationRequestedSyncKnownPodsRemove"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				kpo, done := notify(nil)
				e.locked(func(c *Core) {
					e.coreUpdate(c, killOp(newPod("a", "web", false), kpo))
					if got := c.SyncKnownPods(nil); len(got) != 0 {
						t.Errorf("SyncKnownPods kept %+v", got)
					}
				})
				e.settle()
				wantClosed(t, done, "kill of a removed record")
				e.wantState("a", fsm.Absent)
				e.wantFns("a")
			},
		},
	)
	return cases
}

// terminatingCases: inputs while SyncTerminatingPod runs.
func terminatingCases() []rowCase {
	type kind struct {
		name string
		ev   string // the table event: a resync is an Update
		op   func(p *v1.Pod, grace int64) UpdatePodOptions
	}
	kinds := []kind{
		{"Update", "Update", func(p *v1.Pod, g int64) UpdatePodOptions { return updateOp(deleting(p, g)) }},
		{"Sync", "Update", func(p *v1.Pod, g int64) UpdatePodOptions { return syncOp(deleting(p, g)) }},
		{"Kill", "Kill", func(p *v1.Pod, g int64) UpdatePodOptions {
			return killOp(p, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: &g})
		}},
		{"RuntimeKill", "RuntimeKill", func(_ *v1.Pod, g int64) UpdatePodOptions {
			return runtimeKillOp("a", "web", &KillPodOptions{PodTerminationGracePeriodSecondsOverride: &g})
		}},
	}
	var cases []rowCase
	for _, k := range kinds {
		cases = append(cases, rowCase{
			name: "pod terminal by itself: " + k.name + " sets, keeps and shortens the grace period",
			rows: []string{"Terminating" + k.ev + "FirstGrace", "Terminating" + k.ev, "Terminating" + k.ev + "Shorten",
				"TerminatingTerminatingFailed", "TerminatingDequeueRetry"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				pod := newPod("a", "web", false)
				e.syncer.script("a", "SyncPod", outcome{terminal: true})
				g := e.hold("a", "SyncTerminatingPod", outcome{})
				e.send(createOp(pod))
				g.wait() // SyncPod reported terminal: no grace period yet
				e.send(k.op(pod, 20))
				e.send(k.op(pod, 25))
				e.wantState("a", fsm.Terminating)
				if n := e.syncer.begun("a"); n != 2 {
					t.Fatalf("%d calls before the shorter grace period, want 2", n)
				}
				e.send(k.op(pod, 10))
				e.settle()
				e.wantState("a", fsm.Finished)
				e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatingPod", "SyncTerminatedPod")
				e.wantGraces("a", -1, 10)
			},
		})
	}
	cases = append(cases,
		rowCase{
			name: "terminating pod: restart request, orphaning and a due timer while SyncTerminatingPod runs",
			rows: []string{"TerminatingRequeueIgnored", "TerminatingCreateRestart", "TerminatingRuntimeUpdateIgnored",
				"TerminatingSyncKnownPodsIgnored", "TerminatingSyncKnownPodsDrive"},
			run: func(t *testing.T, opts Options) {
				e := start(t, opts)
				pod := newPod("a", "web", false)
				e.update(createOp(pod))
				g := e.hold("a", "SyncTerminatingPod", outcome{})
				e.send(killOp(pod, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(5)}))
				g.wait()
				e.step(e.resync() * 3 / 2)
				e.send(createOp(pod))
				if err := e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, RunningPod: runningPod("a", "web")}); !errors.Is(err, ErrInvalidUpdate) {
					t.Fatalf("runtime-only update: err %v", err)
				}
				e.w.SyncKnownPods([]*v1.Pod{pod})
				if got := e.w.SyncKnownPods(nil); got["a"] != (PodWorkerSync{State: TerminatingPod, Orphan: true, HasConfig: true}) {
					t.Fatalf("SyncKnownPods: %+v", got)
				}
				g.release()
				e.settle()
				e.wantState("a", fsm.Finished)
				e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
				e.wantGraces("a", 5)
				if !e.w.ShouldPodContentBeRemoved("a") {
					t.Fatal("an orphan that terminated: content should be removed")
				}
			},
		},
	)
	return cases
}

// terminatedCases: inputs while SyncTerminatedPod runs, and its failure.
func terminatedCases() []rowCase {
	return []rowCase{{
		name: "terminated pod: inputs while SyncTerminatedPod runs",
		rows: []string{"TerminatedRequeueIgnored", "TerminatedCreateRestart", "TerminatedUpdate", "TerminatedKill",
			"TerminatedRuntimeKill", "TerminatedRuntimeUpdateIgnored", "TerminatedSyncKnownPodsIgnored", "TerminatedSyncKnownPodsDrive"},
		run: func(t *testing.T, opts Options) {
			e := start(t, opts)
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			g := e.hold("a", "SyncTerminatedPod", outcome{})
			e.send(killOp(pod, nil))
			g.wait()
			e.step(e.resync() * 3 / 2)
			e.send(createOp(pod))
			e.send(updateOp(pod))
			e.send(syncOp(pod))
			kpo, done := notify(int64p(1))
			e.send(killOp(pod, kpo))
			wantClosed(t, done, "kill of a terminated pod")
			rkpo, rdone := notify(nil)
			e.send(runtimeKillOp("a", "web", rkpo))
			wantClosed(t, rdone, "runtime-only kill of a terminated pod")
			if err := e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodSync, RunningPod: runningPod("a", "web")}); !errors.Is(err, ErrInvalidUpdate) {
				t.Fatalf("runtime-only sync: err %v", err)
			}
			if got := e.w.SyncKnownPods([]*v1.Pod{pod}); got["a"] != (PodWorkerSync{State: TerminatedPod, HasConfig: true}) {
				t.Fatalf("SyncKnownPods: %+v", got)
			}
			e.w.SyncKnownPods(nil)
			e.wantState("a", fsm.Terminated)
			g.release()
			e.settle()
			e.wantState("a", fsm.Finished)
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
		},
	}, {
		name: "failed SyncTerminatedPod is retried after the back-off",
		rows: []string{"TerminatedTerminatedFailed", "TerminatedRequeue", "TerminatedDequeueCleanup", "TerminatedTerminatedDone"},
		run: func(t *testing.T, opts Options) {
			e := start(t, opts)
			pod := newPod("a", "web", false)
			e.syncer.script("a", "SyncTerminatedPod", outcome{err: errSync})
			e.update(killOp(pod, nil))
			e.wantState("a", fsm.Terminated)
			e.advance(e.backoff() * 3 / 2)
			e.wantState("a", fsm.Finished)
			e.wantFns("a", "SyncTerminatingPod", "SyncTerminatedPod", "SyncTerminatedPod")
		},
	}, {
		name: "static pod first seen terminal in the API and the runtime never runs",
		rows: []string{"AbsentCreatePreTerminated", "TerminatedDequeueNeverStart"},
		run: func(t *testing.T, opts Options) {
			cache := newFakeCache()
			cache.set("s", exitedStatus("s"))
			opts.StatusCache = cache
			e := start(t, opts)
			e.update(createOp(inPhase(newPod("s", "etcd", true), v1.PodSucceeded)))
			e.wantState("s", fsm.Finished)
			e.wantFns("s")
		},
	}, {
		name: "pod first seen terminal is orphaned before the worker took it",
		rows: []string{"AbsentUpdatePreTerminated", "TerminatedSyncKnownPodsRemove"},
		run: func(t *testing.T, opts Options) {
			cache := newFakeCache()
			cache.set("a", exitedStatus("a"))
			opts.StatusCache = cache
			e := start(t, opts)
			e.locked(func(c *Core) {
				e.coreUpdate(c, updateOp(inPhase(newPod("a", "web", false), v1.PodFailed)))
				c.SyncKnownPods(nil)
			})
			e.settle()
			e.wantState("a", fsm.Absent)
			e.wantFns("a")
		},
	}}
}

// finishedCases: a finished record ignores everything but a restart.
func finishedCases() []rowCase {
	return []rowCase{{
		name: "finished pod ignores updates; a create requests a restart",
		rows: []string{"FinishedUpdateIgnored", "FinishedKillIgnored", "FinishedRuntimeKillIgnored",
			"FinishedRuntimeUpdateIgnored", "FinishedCreateRestart", "FinishedSyncKnownPodsRemove", "AbsentCreateAdmit"},
		run: func(t *testing.T, opts Options) {
			e := start(t, opts)
			pod := newPod("a", "web", false)
			e.update(createOp(pod))
			e.update(killOp(pod, nil))
			e.wantState("a", fsm.Finished)
			e.update(updateOp(pod))
			e.update(syncOp(pod))
			kpo, done := notify(nil)
			e.update(killOp(pod, kpo))
			wantClosed(t, done, "kill of a finished pod")
			rkpo, rdone := notify(nil)
			e.update(runtimeKillOp("a", "web", rkpo))
			wantClosed(t, rdone, "runtime-only kill of a finished pod")
			if err := e.w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, RunningPod: runningPod("a", "web")}); !errors.Is(err, ErrInvalidUpdate) {
				t.Fatalf("runtime-only update: err %v", err)
			}
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod")
			e.update(createOp(pod))
			e.wantState("a", fsm.Finished)
			if got := e.w.SyncKnownPods([]*v1.Pod{pod}); len(got) != 0 {
				t.Fatalf("SyncKnownPods kept %+v", got)
			}
			e.update(createOp(pod))
			e.wantState("a", fsm.Running)
			e.wantFns("a", "SyncPod", "SyncTerminatingPod", "SyncTerminatedPod", "SyncPod")
		},
	}}
}
