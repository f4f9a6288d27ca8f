package prober

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The first run comes initialDelaySeconds after the start, the next ones
// every periodSeconds; failureThreshold failures in a row are recorded as
// one change, and a failed liveness probe then stops until its container
// is replaced.
func TestLivenessSchedule(t *testing.T) {
	f := newFixture(t)
	f.runner.set("live", Failure)
	pod := probePod(v1.Container{Name: "app",
		LivenessProbe: execProbe("live", v1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 10, FailureThreshold: 3})})
	f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", SandboxID: "sb", StartedAt: epoch}})
	if n := f.clock.Waiters(); n != 1 {
		t.Fatalf("%d timers after the start, want 1", n)
	}
	f.step(4*time.Second, 0, 1)
	f.step(time.Second, 1, 1)
	f.step(9*time.Second, 1, 1)
	f.step(time.Second, 2, 1)
	if len(f.updates.get()) != 0 {
		t.Fatalf("a change after 2 failures of 3: %v", f.updates.get())
	}
	f.step(10*time.Second, 3, 0)
	f.eventually("the failure to be reported", func() bool { return len(f.updates.get()) == 1 })
	u := f.updates.get()[0]
	if u.Kind != Liveness || u.Result != Failure || u.ContainerID != "c1" || u.ContainerName != "app" || u.Pod != pod {
		t.Errorf("update %+v", u)
	}
	if r, ok := f.m.Results().Get(Liveness, "c1"); !ok || r != Failure {
		t.Errorf("liveness result %v, %v; want Failure", r, ok)
	}
	f.step(time.Hour, 3, 0) // on hold: no more runs
}

// A start long past counts: the first run is due at once.
func TestInitialDelayPast(t *testing.T) {
	f := newFixture(t)
	pod := probePod(v1.Container{Name: "app", ReadinessProbe: execProbe("ready", v1.Probe{InitialDelaySeconds: 30})})
	f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", StartedAt: epoch.Add(-time.Minute)}})
	f.step(0, 1, 1)
}

// Liveness and readiness wait for the startup probe's success; the
// container is started only then.
func TestStartupGates(t *testing.T) {
	f := newFixture(t)
	f.runner.set("start", Failure)
	pod := probePod(v1.Container{Name: "app",
		StartupProbe:   execProbe("start", v1.Probe{PeriodSeconds: 1, FailureThreshold: 5}),
		LivenessProbe:  execProbe("live", v1.Probe{PeriodSeconds: 1}),
		ReadinessProbe: execProbe("ready", v1.Probe{PeriodSeconds: 1}),
	})
	f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", StartedAt: epoch}})
	f.step(0, 1, 1)
	f.step(time.Second, 2, 1)
	st := runningStatus(pod, "c1")
	f.m.Apply(pod, &st)
	if cs := st.ContainerStatuses[0]; *cs.Started || cs.Ready {
		t.Errorf("before the startup probe succeeded: started %v, ready %v", *cs.Started, cs.Ready)
	}
	if f.runner.count("live")+f.runner.count("ready") != 0 {
		t.Fatalf("liveness or readiness probed before the startup probe succeeded")
	}
	f.runner.set("start", Success)
	f.step(time.Second, 3, 2) // startup succeeds: liveness and readiness take over
	f.step(0, 5, 2)
	f.step(time.Second, 7, 2)
	if n := f.runner.count("start"); n != 3 {
		t.Errorf("startup probed %d times, want 3: it stops once it succeeded", n)
	}
	st = runningStatus(pod, "c1")
	f.m.Apply(pod, &st)
	if cs := st.ContainerStatuses[0]; !*cs.Started || !cs.Ready {
		t.Errorf("after the startup and readiness probes succeeded: started %v, ready %v", *cs.Started, cs.Ready)
	}
}

// A failed startup probe is reported like a failed liveness probe, and
// liveness never runs.
func TestStartupFailure(t *testing.T) {
	f := newFixture(t)
	f.runner.set("start", Failure)
	pod := probePod(v1.Container{Name: "app",
		StartupProbe:  execProbe("start", v1.Probe{PeriodSeconds: 1, FailureThreshold: 2}),
		LivenessProbe: execProbe("live", v1.Probe{PeriodSeconds: 1}),
	})
	f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", StartedAt: epoch}})
	f.step(0, 1, 1)
	f.step(time.Second, 2, 0)
	f.eventually("the failure to be reported", func() bool { return len(f.updates.get()) == 1 })
	if u := f.updates.get()[0]; u.Kind != Startup || u.Result != Failure {
		t.Errorf("update %+v, want a startup failure", u)
	}
	f.step(time.Hour, 2, 0)
}

// Readiness needs successThreshold successes in a row, and flips back
// after failureThreshold failures; each change is reported once.
func TestReadinessTransitions(t *testing.T) {
	f := newFixture(t)
	pod := probePod(v1.Container{Name: "app",
		ReadinessProbe: execProbe("ready", v1.Probe{PeriodSeconds: 1, SuccessThreshold: 2, FailureThreshold: 2})})
	f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", StartedAt: epoch}})
	f.step(0, 1, 1)
	if _, ok := f.m.Results().Get(Readiness, "c1"); ok {
		t.Fatal("a readiness result after 1 success of 2")
	}
	f.step(time.Second, 2, 1)
	f.runner.set("ready", Failure)
	f.step(time.Second, 3, 1)
	f.step(time.Second, 4, 1)
	f.runner.set("ready", Success)
	f.step(time.Second, 5, 1)
	f.step(time.Second, 6, 1)
	var got []Result
	for _, u := range f.updates.get() {
		got = append(got, u.Result)
	}
	if want := []Result{Success, Failure, Success}; !equal(got, want) {
		t.Errorf("readiness changes %v, want %v", got, want)
	}
}

func equal(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A container's probes and results go when it no longer runs, or its pod
// is removed; a terminating pod keeps its readiness probes only.
func TestProbesFollowContainers(t *testing.T) {
	f := newFixture(t)
	pod := probePod(v1.Container{Name: "app",
		LivenessProbe: execProbe("live", v1.Probe{PeriodSeconds: 1}), ReadinessProbe: execProbe("ready", v1.Probe{PeriodSeconds: 1})})
	running := []Running{{Name: "app", ID: "c1", StartedAt: epoch}}
	f.m.UpdatePod(pod, running)
	f.step(0, 2, 2)
	f.m.UpdatePod(pod, running) // seen again: nothing new
	f.step(time.Second, 4, 2)
	f.m.UpdatePod(pod, nil)
	if n, r := f.clock.Waiters(), f.m.Results().len(); n != 0 || r != 0 {
		t.Fatalf("after the container exited: %d timers, %d results; want none", n, r)
	}
	f.step(time.Hour, 4, 0)

	running[0].ID = "c2"
	f.m.UpdatePod(pod, running)
	f.step(0, 6, 2)
	f.m.PodTerminating(pod.UID)
	f.step(time.Second, 7, 1)
	if n := f.runner.count("live"); n != 3 {
		t.Errorf("liveness probed %d times, want 3 (2 of c1, 1 of c2): not once termination was requested", n)
	}
	f.m.UpdatePod(pod, running) // a sync of the terminating pod starts no liveness probe
	f.step(time.Second, 8, 1)
	f.m.RemovePod(pod.UID)
	if n, r := f.clock.Waiters(), f.m.Results().len(); n != 0 || r != 0 {
		t.Fatalf("after the pod was removed: %d timers, %d results; want none", n, r)
	}
}

// Apply sets started and ready from the results, and the pod's Ready and
// ContainersReady conditions after them.
func TestApply(t *testing.T) {
	withProbe := v1.Container{Name: "app", ReadinessProbe: execProbe("ready", v1.Probe{})}
	for _, tc := range []struct {
		name      string
		c         v1.Container
		results   map[Kind]Result
		notRunnig bool
		wantReady bool
	}{
		{name: "no readiness probe", c: v1.Container{Name: "app"}, wantReady: true},
		{name: "no result yet", c: withProbe},
		{name: "readiness success", c: withProbe, results: map[Kind]Result{Readiness: Success}, wantReady: true},
		{name: "readiness failure", c: withProbe, results: map[Kind]Result{Readiness: Failure}},
		{name: "ready but not started", results: map[Kind]Result{Readiness: Success},
			c: v1.Container{Name: "app", ReadinessProbe: withProbe.ReadinessProbe, StartupProbe: execProbe("start", v1.Probe{})}},
		{name: "ready and started", results: map[Kind]Result{Readiness: Success, Startup: Success}, wantReady: true,
			c: v1.Container{Name: "app", ReadinessProbe: withProbe.ReadinessProbe, StartupProbe: execProbe("start", v1.Probe{})}},
		{name: "liveness failure leaves readiness", c: v1.Container{Name: "app", LivenessProbe: execProbe("live", v1.Probe{})},
			results: map[Kind]Result{Liveness: Failure}, wantReady: true},
		{name: "not running", c: v1.Container{Name: "app"}, notRunnig: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(Config{Runner: newScripted()})
			defer m.Stop()
			for k, r := range tc.results {
				m.results.set(k, "c1", r)
			}
			pod := probePod(tc.c)
			st := runningStatus(pod, "c1")
			if tc.notRunnig {
				st.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}
				st.ContainerStatuses[0].Ready = false
			}
			m.Apply(pod, &st)
			if got := st.ContainerStatuses[0].Ready; got != tc.wantReady {
				t.Errorf("ready = %v, want %v", got, tc.wantReady)
			}
			want := conditionStatus(tc.wantReady)
			for _, c := range st.Conditions {
				if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Status != want {
					t.Errorf("condition %s = %s, want %s", c.Type, c.Status, want)
				}
			}
		})
	}
}

// runningStatus is the status of pod with its one container running as
// id, ready as far as the runtime knows.
func runningStatus(pod *v1.Pod, id string) v1.PodStatus {
	started := true
	return v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue},
			{Type: v1.PodReady, Status: v1.ConditionTrue},
		},
		ContainerStatuses: []v1.ContainerStatus{{
			Name: pod.Spec.Containers[0].Name, ContainerID: "cri://" + id, Ready: true, Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch)}},
		}},
	}
}

// 100 idle probes cost timers, not goroutines (on the real clock).
func TestIdleProbesCostNoGoroutine(t *testing.T) {
	m := NewManager(Config{Runner: newScripted()})
	defer m.Stop()
	before := runtime.NumGoroutine()
	for i := range 100 {
		pod := probePod(v1.Container{Name: "app", ReadinessProbe: execProbe("ready", v1.Probe{InitialDelaySeconds: 3600})})
		pod.UID = types.UID("uid-" + strconv.Itoa(i))
		m.UpdatePod(pod, []Running{{Name: "app", ID: "c" + strconv.Itoa(i), StartedAt: time.Now()}})
	}
	if after := runtime.NumGoroutine(); after-before >= 10 {
		t.Errorf("%d goroutines before 100 idle probes, %d after", before, after)
	}
}

// A run that succeeds with a warning (an httpGet probe's redirect to
// another host) counts as a success, whatever the probe's kind, and each
// such run gets a ProbeWarning event with the kubelet's message.
func TestWarningIsSuccessWithAnEvent(t *testing.T) {
	for _, kind := range []Kind{Liveness, Readiness, Startup} {
		t.Run(kind.String(), func(t *testing.T) {
			f := newFixture(t)
			f.runner.set("probe", Warning)
			c := v1.Container{Name: "app"}
			p := execProbe("probe", v1.Probe{PeriodSeconds: 1, FailureThreshold: 1})
			switch kind {
			case Liveness:
				c.LivenessProbe = p
			case Readiness:
				c.ReadinessProbe = p
			case Startup:
				c.StartupProbe = p
			}
			pod := probePod(c)
			f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", StartedAt: epoch}})
			waiters := 1
			if kind == Startup {
				waiters = 0 // done once it succeeded
			}
			f.step(0, 1, waiters)
			if r, ok := f.m.Results().Get(kind, "c1"); !ok || r != Success {
				t.Errorf("%s result %v, %v; want Success", kind, r, ok)
			}
			f.eventually("the update", func() bool { return len(f.updates.get()) == 1 })
			if u := f.updates.get()[0]; u.Result != Success {
				t.Errorf("update %+v, want a success", u)
			}
			want := "Warning ProbeWarning: " + kind.String() + " probe warning: scripted probe"
			if got := f.events.get(); len(got) != 1 || got[0] != want {
				t.Errorf("events %q, want [%q]", got, want)
			}
		})
	}
}

// A sidecar's readiness probe runs at once when its startup probe
// succeeds, not a readiness period later (the e2e "Probing restartable
// init container should be ready immediately after startupProbe
// succeeds"), and the startup success is reported, so that the agent syncs
// the pod and starts the next container.
func TestSidecarReadyRightAfterStartup(t *testing.T) {
	f := newFixture(t)
	f.runner.set("start", Failure)
	always := v1.ContainerRestartPolicyAlways
	side := v1.Container{Name: "side", Image: "img", RestartPolicy: &always,
		StartupProbe:   execProbe("start", v1.Probe{PeriodSeconds: 5, FailureThreshold: 120}),
		ReadinessProbe: execProbe("ready", v1.Probe{PeriodSeconds: 30}),
	}
	pod := probePod(v1.Container{Name: "main"})
	pod.Spec.InitContainers = []v1.Container{side}
	f.m.UpdatePod(pod, []Running{{Name: "side", ID: "s1", StartedAt: epoch}})
	f.step(0, 1, 1)
	f.step(5*time.Second, 2, 1)
	f.runner.set("start", Success)
	f.step(5*time.Second, 3, 1) // startup succeeds: readiness is due at once
	f.step(0, 4, 1)             // and runs; next due in 30 s
	if n := f.runner.count("ready"); n != 1 {
		t.Fatalf("readiness ran %d times right after the startup success, want 1", n)
	}
	f.eventually("the startup and readiness updates", func() bool { return len(f.updates.get()) == 2 })
	if u := f.updates.get()[0]; u.Kind != Startup || u.Result != Success || u.ContainerName != "side" {
		t.Errorf("first update %+v, want the sidecar's startup success", u)
	}
	started := true
	st := v1.PodStatus{Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{{Type: v1.ContainersReady}, {Type: v1.PodReady}},
		InitContainerStatuses: []v1.ContainerStatus{{Name: "side", ContainerID: "cri://s1", Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch)}}}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "main", ContainerID: "cri://m1", Ready: true, Started: &started,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(epoch)}}}},
	}
	f.m.Apply(pod, &st)
	if cs := st.InitContainerStatuses[0]; !*cs.Started || !cs.Ready {
		t.Errorf("sidecar started %v, ready %v; want both", *cs.Started, cs.Ready)
	}
	for _, c := range st.Conditions {
		if c.Status != v1.ConditionTrue {
			t.Errorf("condition %s = %s, want True", c.Type, c.Status)
		}
	}
}

// A probe's output goes into its Unhealthy event cut to the kubelet's 10
// KiB, whatever a Runner returns.
func TestUnhealthyEventOutputCut(t *testing.T) {
	f := newFixture(t)
	f.runner.set("probe", Failure)
	f.runner.output = strings.Repeat("x", 8<<20)
	pod := probePod(v1.Container{Name: "app", ReadinessProbe: execProbe("probe", v1.Probe{PeriodSeconds: 1, FailureThreshold: 1})})
	f.m.UpdatePod(pod, []Running{{Name: "app", ID: "c1", StartedAt: epoch}})
	f.step(0, 1, 1)
	f.eventually("the event", func() bool { return len(f.events.get()) == 1 })
	want := "Warning Unhealthy: Readiness probe failed: " + strings.Repeat("x", 10<<10)
	if got := f.events.get()[0]; got != want {
		t.Errorf("event of %d bytes, want %d bytes", len(got), len(want))
	}
}
