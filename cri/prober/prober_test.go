package prober

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

// Every probe run ends with its container or its manager.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   v1.Probe
		kind Kind
		want v1.Probe
	}{
		{"all unset", v1.Probe{}, Readiness,
			v1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}},
		{"all set", v1.Probe{InitialDelaySeconds: 4, PeriodSeconds: 2, TimeoutSeconds: 5, SuccessThreshold: 2, FailureThreshold: 7}, Readiness,
			v1.Probe{InitialDelaySeconds: 4, PeriodSeconds: 2, TimeoutSeconds: 5, SuccessThreshold: 2, FailureThreshold: 7}},
		{"liveness needs one success", v1.Probe{SuccessThreshold: 3}, Liveness,
			v1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}},
		{"startup needs one success", v1.Probe{SuccessThreshold: 3, FailureThreshold: 30}, Startup,
			v1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 30}},
		{"negative delay", v1.Probe{InitialDelaySeconds: -5}, Readiness,
			v1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := withDefaults(&tc.in, tc.kind); *got != tc.want {
				t.Errorf("withDefaults = %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestThreshold(t *testing.T) {
	p := &v1.Probe{SuccessThreshold: 2, FailureThreshold: 3}
	for _, tc := range []struct {
		name string
		runs []Result
		want []bool
	}{
		{"failures reach the threshold", []Result{Failure, Failure, Failure, Failure}, []bool{false, false, true, true}},
		{"a success resets the failures", []Result{Failure, Failure, Success, Failure, Failure}, []bool{false, false, false, false, false}},
		{"successes reach theirs", []Result{Success, Success, Success}, []bool{false, true, true}},
		{"a failure resets the successes", []Result{Success, Failure, Success, Success}, []bool{false, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var th threshold
			for i, r := range tc.runs {
				if got := th.observe(r, p); got != tc.want[i] {
					t.Fatalf("run %d (%v): observe = %v, want %v", i, r, got, tc.want[i])
				}
			}
		})
	}
}

// scripted is a Runner whose results the test sets per probe kind; a
// probe's kind is its exec command. It counts the runs.
type scripted struct {
	mu      sync.Mutex
	results map[string]Result
	runs    map[string]int
	output  string // the output of every run; "scripted <kind>" when empty
}

func newScripted() *scripted {
	return &scripted{results: map[string]Result{}, runs: map[string]int{}}
}

func (s *scripted) Probe(_ context.Context, _ Target, p *v1.Probe) (Result, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := p.Exec.Command[0]
	s.runs[k]++
	r := s.results[k]
	if r == Unknown {
		r = Success
	}
	if s.output != "" {
		return r, s.output, nil
	}
	return r, "scripted " + k, nil
}

func (s *scripted) set(kind string, r Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results[kind] = r
}

func (s *scripted) count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[kind]
}

func (s *scripted) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.runs {
		n += c
	}
	return n
}

func execProbe(kind string, p v1.Probe) *v1.Probe {
	p.Exec = &v1.ExecAction{Command: []string{kind}}
	return &p
}

// updates records the manager's OnChange calls.
type updates struct {
	mu   sync.Mutex
	list []Update
}

func (u *updates) add(up Update) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.list = append(u.list, up)
}

func (u *updates) get() []Update {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Update(nil), u.list...)
}

// eventList records the manager's events as "type reason: message".
type eventList struct {
	mu   sync.Mutex
	list []string
}

func (e *eventList) Eventf(_ *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, eventType+" "+reason+": "+fmt.Sprintf(messageFmt, args...))
}

func (e *eventList) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.list...)
}

type fixture struct {
	t       *testing.T
	clock   *testingclock.FakeClock
	runner  *scripted
	updates *updates
	events  *eventList
	m       *Manager
	metrics *prometheus.Registry
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, clock: testingclock.NewFakeClock(epoch), runner: newScripted(), updates: &updates{}, events: &eventList{}, metrics: prometheus.NewRegistry()}
	f.m = NewManager(Config{Runner: f.runner, Clock: f.clock, OnChange: f.updates.add, Events: f.events, Registerer: f.metrics})
	t.Cleanup(f.m.Stop)
	return f
}

// eventually polls cond with a generous deadline (the probe runs on a
// goroutine of its own).
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// step moves the fake clock by d and waits until the probes have run
// runs times in all and waiters timers are set again.
func (f *fixture) step(d time.Duration, runs, waiters int) {
	f.t.Helper()
	f.clock.Step(d)
	f.eventually("the probe runs", func() bool { return f.runner.total() == runs && f.clock.Waiters() == waiters })
}

func probePod(c v1.Container) *v1.Pod {
	c.Image = "img"
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: types.UID("uid-web")},
		Spec:       v1.PodSpec{Containers: []v1.Container{c}},
	}
}

// A probe's timeout is bounded by the node: by its period and by
// MaxTimeout (issue 30: a timeoutSeconds of 100,000 held an exec slot for
// a day).
func TestTimeoutIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name            string
		timeout, period int32
		want            time.Duration
	}{
		{"unset", 0, 0, time.Second},
		{"within the period", 3, 10, 3 * time.Second},
		{"equal to the period", 10, 10, 10 * time.Second},
		{"above the period", 30, 10, 10 * time.Second},
		{"above the default period", 30, 0, 10 * time.Second},
		{"above the cap", 100000, 100000, MaxTimeout},
		{"a day, every 5 s", 100000, 5, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Timeout(&v1.Probe{TimeoutSeconds: tc.timeout, PeriodSeconds: tc.period}); got != tc.want {
				t.Errorf("Timeout(timeoutSeconds %d, periodSeconds %d) = %v, want %v", tc.timeout, tc.period, got, tc.want)
			}
		})
	}
}
