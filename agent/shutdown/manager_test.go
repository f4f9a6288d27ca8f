package shutdown

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/internal/testevents"
	"github.com/podlife/podlife/internal/testlog"
	"github.com/podlife/podlife/worker"
)

// The engine must be usable as the Killer without an adapter.
var _ Killer = (*worker.PodWorkers)(nil)

// The Manager must plug into an admission chain.
var _ admission.Handler = (*Manager)(nil)

type harness struct {
	m     *Manager
	k     *fakeKiller
	clock *timerClock
	rec   *testevents.Recorder
	logs  *testlog.Buffer
	reg   *prometheus.Registry
}

func newHarness(t *testing.T, bands ...Band) *harness {
	t.Helper()
	log, logs := testlog.New()
	h := &harness{k: newFakeKiller(), clock: &timerClock{FakeClock: clocktesting.NewFakeClock(t0)}, rec: &testevents.Recorder{}, logs: logs, reg: prometheus.NewPedanticRegistry()}
	m, err := NewManager(Config{Bands: bands, Killer: h.k, Clock: h.clock, Recorder: h.rec, Logger: log, Registerer: h.reg})
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	return h
}

// shutdown runs Shutdown in a goroutine and returns its result channel.
func (h *harness) shutdown(ctx context.Context, pods ...*v1.Pod) <-chan error {
	done := make(chan error, 1)
	go func() { done <- h.m.Shutdown(ctx, pods) }()
	return done
}

func (h *harness) gauges(t *testing.T, start, end time.Time) {
	t.Helper()
	want := fmt.Sprintf(`
# HELP kubelet_graceful_shutdown_end_time_seconds Last graceful node shutdown end time, in seconds since the Unix epoch.
# TYPE kubelet_graceful_shutdown_end_time_seconds gauge
kubelet_graceful_shutdown_end_time_seconds %d
# HELP kubelet_graceful_shutdown_start_time_seconds Last graceful node shutdown start time, in seconds since the Unix epoch.
# TYPE kubelet_graceful_shutdown_start_time_seconds gauge
kubelet_graceful_shutdown_start_time_seconds %d
`, end.Unix(), start.Unix())
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

var rejected = admission.Result{Reason: "NodeShutdown", Message: "Pod was rejected as the node is shutting down."}

func TestNewManager(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantErr     string
		wantEnabled bool
	}{
		{name: "disabled needs no killer", cfg: Config{}},
		{name: "enabled", cfg: Config{Bands: []Band{{0, time.Second}}, Killer: newFakeKiller()}, wantEnabled: true},
		{name: "enabled without killer", cfg: Config{Bands: []Band{{0, time.Second}}}, wantErr: "a Killer is required"},
		{name: "invalid bands", cfg: Config{Bands: []Band{{0, time.Second}, {0, 2 * time.Second}}, Killer: newFakeKiller()},
			wantErr: "priority 0 appears more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewManager(tt.cfg)
			if (err != nil) != (tt.wantErr != "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewManager error = %v, want %q", err, tt.wantErr)
			}
			if err == nil && m.Enabled() != tt.wantEnabled {
				t.Errorf("Enabled() = %v, want %v", m.Enabled(), tt.wantEnabled)
			}
		})
	}
}

func TestNewManagerSortsBands(t *testing.T) {
	h := newHarness(t, Band{CriticalPriority, time.Second}, Band{0, 2 * time.Second})
	if want := []Band{{0, 2 * time.Second}, {CriticalPriority, time.Second}}; !slices.Equal(h.m.bands, want) {
		t.Errorf("bands = %v, want %v", h.m.bands, want)
	}
}

func TestDisabledManager(t *testing.T) {
	h := newHarness(t)
	if err := h.m.Shutdown(context.Background(), []*v1.Pod{pod("a", nil, nil)}); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	h.k.noMoreCalls(t)
	if h.m.ShuttingDown() {
		t.Error("a disabled manager reports shutting down")
	}
	if got := h.m.Admit(pod("b", nil, nil), nil); !got.Admit {
		t.Errorf("Admit = %+v, want admitted", got)
	}
	if n, err := testutil.GatherAndCount(h.reg); err != nil || n != 0 {
		t.Errorf("disabled manager registered %d metrics (%v)", n, err)
	}
}

func TestGracePeriod(t *testing.T) {
	tests := []struct {
		period time.Duration
		own    *int64
		want   int64
	}{
		{period: 30 * time.Second, own: nil, want: 30},
		{period: 30 * time.Second, own: secs(10), want: 10},
		{period: 30 * time.Second, own: secs(30), want: 30},
		{period: 30 * time.Second, own: secs(60), want: 30},
		{period: 30 * time.Second, own: secs(0), want: 0},
		{period: 0, own: secs(10), want: 0},
		{period: 0, own: nil, want: 0},
	}
	for _, tt := range tests {
		if got := gracePeriod(Band{Period: tt.period}, pod("p", nil, tt.own)); got != tt.want {
			t.Errorf("gracePeriod(%v, %v) = %d, want %d", tt.period, tt.own, got, tt.want)
		}
	}
}

// The status every kill carries must be the section-6 status.
func checkStatusFn(t *testing.T, c *killCall) {
	t.Helper()
	if c.statusFn == nil {
		t.Fatalf("kill of %s has no status function", c.pod.Name)
	}
	s := v1.PodStatus{Phase: v1.PodRunning}
	c.statusFn(&s)
	want := v1.PodStatus{Phase: v1.PodFailed, Reason: "Terminated", Message: "Pod was terminated in response to imminent node shutdown.",
		Conditions: []v1.PodCondition{disruption(v1.ConditionTrue, "TerminationByKubelet", "Pod was terminated in response to imminent node shutdown.", nowT)}}
	if !equality.Semantic.DeepEqual(s, want) {
		t.Errorf("status of %s = %+v, want %+v", c.pod.Name, s, want)
	}
	s = v1.PodStatus{Phase: v1.PodSucceeded}
	c.statusFn(&s)
	if s.Phase != v1.PodSucceeded {
		t.Errorf("status function turned a succeeded %s into %s", c.pod.Name, s.Phase)
	}
}

func TestShutdownRunsBandsInOrder(t *testing.T) {
	h := newHarness(t, Band{0, 10 * time.Second}, Band{1000, 20 * time.Second}, Band{CriticalPriority, 5 * time.Second})
	a1 := pod("a1", nil, secs(30))                   // band 0, grace 10
	a2 := pod("a2", prio(5), secs(3))                // band 0, grace 3 (its own)
	c1 := pod("c1", prio(1<<31-1), nil)              // above the highest band, grace 5
	c2 := pod("c2", prio(CriticalPriority), secs(0)) // grace 0 (its own)
	if got := h.m.Admit(a1, nil); !got.Admit {
		t.Fatalf("Admit before the shutdown = %+v", got)
	}
	done := h.shutdown(context.Background(), c1, a1, c2, a2)

	// Band 0's pods are both asked before either returns: concurrently.
	first := h.k.nextN(t, 2)
	for name, grace := range map[string]int64{"a1": 10, "a2": 3} {
		c := first[name]
		if c == nil {
			t.Fatalf("first band killed %v, want a1 and a2", slices.Sorted(maps.Keys(first)))
		}
		if c.evict || c.grace == nil || *c.grace != grace {
			t.Errorf("kill of %s: evict %v grace %v, want false %d", name, c.evict, c.grace, grace)
		}
		checkStatusFn(t, c)
	}
	if !h.m.ShuttingDown() {
		t.Error("ShuttingDown = false during the shutdown")
	}
	if got := h.m.Admit(pod("new", nil, nil), nil); got != rejected {
		t.Errorf("Admit during the shutdown = %+v, want %+v", got, rejected)
	}
	first["a1"].release <- nil
	wait(t, first["a1"].returned, "a1's kill")
	h.k.noMoreCalls(t)
	first["a2"].release <- errors.New("boom") // a failed kill also ends the wait

	second := h.k.nextN(t, 2)
	for name, grace := range map[string]int64{"c1": 5, "c2": 0} {
		c := second[name]
		if c == nil || c.evict || *c.grace != grace {
			t.Fatalf("second band's kill of %s = %+v, want evict false grace %d", name, c, grace)
		}
		checkStatusFn(t, c)
	}
	second["c1"].release <- nil
	second["c2"].release <- nil
	if err := wait(t, done, "Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	// The critical band started only after band 0's kills returned; the
	// fake clock never moved, so no period elapsed.
	log := h.k.events()
	lastA := max(slices.Index(log, "return a1"), slices.Index(log, "return a2"))
	firstC := min(slices.Index(log, "start c1"), slices.Index(log, "start c2"))
	if lastA < 0 || firstC < lastA {
		t.Errorf("kill order %v: the critical band started before band 0 returned", log)
	}
	if n := h.clock.Waiters(); n != 0 {
		t.Errorf("%d timers left running", n)
	}
	if got, want := h.clock.durations(), []time.Duration{10 * time.Second, 5 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("bands waited %v, want %v (the empty band not at all)", got, want)
	}
	if strings.Contains(h.logs.String(), "priority=1000") {
		t.Errorf("the empty band was run:\n%s", h.logs)
	}
	if !strings.Contains(h.logs.String(), `msg="Failed to stop pod for node shutdown" pod=ns/a2 err=boom`) {
		t.Errorf("a2's failure not logged:\n%s", h.logs)
	}
	var events []string
	for _, e := range h.rec.Events() {
		events = append(events, fmt.Sprintf("%s %s %s %s", e.Type, e.Reason, e.Message, e.Pod))
	}
	slices.Sort(events)
	wantEvents := []string{
		"Normal NodeShutdown Stopping pod with a grace period of 0 s as the node is shutting down c2",
		"Normal NodeShutdown Stopping pod with a grace period of 10 s as the node is shutting down a1",
		"Normal NodeShutdown Stopping pod with a grace period of 3 s as the node is shutting down a2",
		"Normal NodeShutdown Stopping pod with a grace period of 5 s as the node is shutting down c1",
	}
	if !slices.Equal(events, wantEvents) {
		t.Errorf("events = %q\nwant %q", events, wantEvents)
	}
	h.gauges(t, t0, t0)
}

func TestShutdownAbandonsStuckKill(t *testing.T) {
	h := newHarness(t, Band{0, 10 * time.Second}, Band{CriticalPriority, 5 * time.Second})
	done := h.shutdown(context.Background(), pod("stuck", nil, nil), pod("quick", nil, nil), pod("crit", prio(CriticalPriority), nil))
	first := h.k.nextN(t, 2)
	first["quick"].release <- nil
	// The fake's returned channel is signalled before the Manager reads the
	// result: only the Manager's log says it has, and a period ending
	// before that would rightly count quick as late.
	waitForLog(t, h.logs, `msg="Pod stopped for node shutdown" pod=ns/quick`)

	// The band's timer exists before its kills are asked for.
	h.clock.Step(10*time.Second - time.Nanosecond)
	h.k.noMoreCalls(t)
	select {
	case err := <-first["stuck"].returned:
		t.Fatalf("stuck kill ended before its band's period elapsed: %v", err)
	default:
	}
	h.clock.Step(time.Nanosecond)

	crit := h.k.next(t)
	if crit.pod.Name != "crit" || *crit.grace != 5 {
		t.Fatalf("after the period: kill of %s grace %d, want crit 5", crit.pod.Name, *crit.grace)
	}
	if err := wait(t, first["stuck"].returned, "the abandoned kill"); !errors.Is(err, context.Canceled) {
		t.Errorf("abandoned kill returned %v, want its context cancelled", err)
	}
	crit.release <- nil
	if err := wait(t, done, "Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	logs := h.logs.String()
	i := strings.Index(logs, "Shutdown band's period elapsed")
	if i < 0 {
		t.Fatalf("no log of the abandoned band:\n%s", logs)
	}
	line, _, _ := strings.Cut(logs[i:], "\n")
	if !strings.Contains(line, "pods=[ns/stuck]") || !strings.Contains(line, "priority=0") {
		t.Errorf("abandon log %q, want priority 0 and only ns/stuck", line)
	}
	if got, want := h.clock.durations(), []time.Duration{10 * time.Second, 5 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("bands waited %v, want %v", got, want)
	}
	h.gauges(t, t0, t0.Add(10*time.Second))
}

func TestShutdownDoesNotWaitForZeroPeriodBand(t *testing.T) {
	bands, err := Bands(30*time.Second, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, bands...)
	done := h.shutdown(context.Background(), pod("crit", prio(CriticalPriority), secs(20)))
	c := h.k.next(t)
	if *c.grace != 0 {
		t.Errorf("grace = %d, want the band's 0", *c.grace)
	}
	if err := wait(t, done, "Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := wait(t, c.returned, "the kill"); !errors.Is(err, context.Canceled) {
		t.Errorf("kill returned %v, want its context cancelled", err)
	}
	if got := h.clock.durations(); len(got) != 0 {
		t.Errorf("bands waited %v, want no wait", got)
	}
}

func TestShutdownRunsOnce(t *testing.T) {
	h := newHarness(t, Band{0, 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	first := h.shutdown(ctx, pod("a", nil, nil))
	a := h.k.next(t)

	// A caller that stops waiting gets its own error; the run goes on.
	gone, stop := context.WithCancel(context.Background())
	stop()
	if err := wait(t, h.shutdown(gone, pod("b", nil, nil)), "an impatient Shutdown"); !errors.Is(err, context.Canceled) {
		t.Errorf("impatient Shutdown = %v, want its own context's error", err)
	}
	// A second caller joins the run: it gets the run's result, which only
	// the first caller's context can decide here.
	second := h.shutdown(context.Background(), pod("c", nil, nil))
	cancel()
	err1 := wait(t, first, "the first Shutdown")
	if !errors.Is(err1, context.Canceled) || !strings.Contains(err1.Error(), "band of priority 0") {
		t.Errorf("cancelled Shutdown = %v, want it to say where it stopped", err1)
	}
	if err2 := wait(t, second, "the joined Shutdown"); err2 != err1 {
		t.Errorf("joined Shutdown = %v, want the run's %v", err2, err1)
	}
	if err := wait(t, a.returned, "a's kill"); !errors.Is(err, context.Canceled) {
		t.Errorf("a's kill returned %v, want cancelled", err)
	}
	// After the run, Shutdown returns its result at once, killing nothing.
	if err3 := h.m.Shutdown(context.Background(), []*v1.Pod{pod("d", nil, nil)}); err3 != err1 {
		t.Errorf("Shutdown after the run = %v, want %v", err3, err1)
	}
	h.k.noMoreCalls(t)
	if !h.m.ShuttingDown() || h.m.Admit(pod("e", nil, nil), nil) != rejected {
		t.Error("the node must stay shutting down after a cancelled shutdown")
	}
	h.gauges(t, t0, t0)
}

func TestShutdownWithoutPodsStillRejectsAdmission(t *testing.T) {
	h := newHarness(t, Band{0, 10 * time.Second})
	chain := admission.NewChain(h.reg, h.m)
	if got := chain.Admit(pod("before", nil, nil), nil); !got.Admit {
		t.Fatalf("Admit before the shutdown = %+v", got)
	}
	if err := h.m.Shutdown(context.Background(), nil); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := chain.Admit(pod("after", nil, nil), nil); got != rejected {
		t.Errorf("Admit after the shutdown = %+v, want %+v", got, rejected)
	}
	want := `
# HELP kubelet_admission_rejections_total Cumulative number of pods rejected by local admission, by reason.
# TYPE kubelet_admission_rejections_total counter
kubelet_admission_rejections_total{reason="NodeShutdown"} 1
`
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want), "kubelet_admission_rejections_total"); err != nil {
		t.Error(err)
	}
}

// Cancel (logind's PrepareForShutdown(false)) ends a finished shutdown:
// pods are admitted again and the next Shutdown runs anew; a shutdown
// still running is not cancelled.
func TestCancel(t *testing.T) {
	h := newHarness(t, Band{0, 10 * time.Second})
	if !h.m.Cancel() {
		t.Error("Cancel before any shutdown = false, want true (nothing to cancel)")
	}
	first := h.shutdown(context.Background(), pod("a", nil, nil))
	a := h.k.next(t)
	if h.m.Cancel() || !h.m.ShuttingDown() || h.m.Admit(pod("during", nil, nil), nil) != rejected {
		t.Error("Cancel during the run must leave the node shutting down")
	}
	a.release <- nil
	if err := wait(t, first, "the first Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !h.m.Cancel() {
		t.Fatal("Cancel after the run = false")
	}
	if h.m.ShuttingDown() || !h.m.Admit(pod("after", nil, nil), nil).Admit {
		t.Error("after Cancel the node must admit pods again")
	}
	second := h.shutdown(context.Background(), pod("b", nil, nil))
	b := h.k.next(t)
	if b.pod.Name != "b" {
		t.Errorf("the second shutdown killed %s, want b", b.pod.Name)
	}
	b.release <- nil
	if err := wait(t, second, "the second Shutdown"); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	h.k.noMoreCalls(t)
}
