package worker

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/spec"
	"github.com/podlife/podlife/trace"
)

// soak turns TestRapid into a long soak: 5000 rapid checks instead of
// rapid's default 100 (an explicit -rapid.checks still wins). For example:
//
//	go test -race -run TestRapid ./worker -soak -timeout 60m
var soak = flag.Bool("soak", false, "TestRapid: run 5000 rapid checks (a long soak) unless -rapid.checks is given")

// saveTraces keeps every run's trace: go test -run 'TestRapid$' ./worker
// -rapid.checks 2 -save-traces DIR
var saveTraces = flag.String("save-traces", "", "TestRapid: write every run's trace (NDJSON) into this directory")

const (
	// rapidSteps is the default -rapid.steps of the rapid tests (the
	// average number of inputs of a run; rapid's own default is 30).
	rapidSteps      = 150
	rapidSoakChecks = 5000

	rapidResync  = 2 * time.Second
	rapidBackoff = time.Second
)

// rapidPod is one pod of every run: two ordinary pods, two static pods
// that share one full name and a static pod of its own.
type rapidPod struct {
	uid    types.UID
	name   string
	static bool
}

var rapidPods = []rapidPod{
	{"n1", "web", false}, {"n2", "db", false},
	{"s1", "etcd", true}, {"s2", "etcd", true}, {"s3", "dns", true},
}

var rapidUIDs = func() []types.UID {
	var uids []types.UID
	for _, p := range rapidPods {
		uids = append(uids, p.uid)
	}
	return uids
}()

func rapidPodOf(uid types.UID) rapidPod {
	for _, p := range rapidPods {
		if p.uid == uid {
			return p
		}
	}
	panic("no rapid pod " + uid)
}

// fullName is the pod's static full name ("" for an ordinary pod).
func (p rapidPod) fullName() string {
	if p.static {
		return kubetypes.FullName(p.name, "default")
	}
	return ""
}

var errRapidSync = errors.New("rapid: injected sync failure")

// TestRapid is a model-based test of worker.Core, driven synchronously by
// a pgregory.net/rapid state machine: the test is the Core's shell. It
// picks one input at a time:
//
//   - UpdatePod of any type (create, update, sync, kill) for one of five
//     pods (two ordinary, two static with one full name, one static of its
//     own) that may be deleted (with a deletion grace or not), terminal,
//     and carry random spec grace periods; kill options with a fresh
//     completion channel (or none), an eviction and a grace override; a
//     runtime-only kill; invalid updates;
//   - Next for a pod whose worker loop runs and has no sync call in
//     flight, Done with an outcome (success, failure, terminal, the
//     context's error) for a pod that has one;
//   - Timer for a pod whose timer is armed (the fake clock moves to its
//     due time); SyncKnownPods of a random subset; CancelAll;
//   - what the status cache shows for a pod.
//
// The test carries out the effects itself (TakeEffects after every input):
// it keeps, per pod, whether a loop runs, the armed timer, the open
// completion channels (by channel identity), the sync call in flight (the
// Work that Next handed out). It does not re-implement the Core; after
// every input it checks the Core against the lifecycle table and the
// effect rules:
//
//   - every transition the fsm observer reports is the one row spec.Table
//     enables (spec.Index.Enabled) for the record before the input and the
//     input's parameters (computed from what the test sent, world facts
//     from the test's own replay of the records), and the record after is
//     Row.Apply's; the input fires exactly the events it should (UpdatePod
//     one, Next a Dequeue exactly when the record is queued and idle, Done
//     the outcome's event, Timer a Requeue when there is a record,
//     SyncKnownPods one per record in UID order with the call's batch);
//     Core.Record, Core.Waiting and Core.Synced agree with the replay;
//   - every completion channel handed over is closed exactly once (never
//     twice, never one that was not handed over, with the pod's UID), in
//     the step that handed it over (the kill cannot be kept) or in a step
//     after which the pod is terminated, finished or has no record; the
//     record's Waiters flag is "the pod has open channels";
//   - no lost wake-up: a queued record has a loop running; a live record
//     with nothing in flight and nothing queued has its timer armed; a
//     timer is armed only for a live record; RunLoop is never emitted for
//     a pod whose loop runs, and only for a live queued record; ArmTimer
//     exactly when a row with Resync or Backoff leaves the record
//     unqueued, due within [d, 1.5d) of the resync or back-off period;
//     StopTimer only when the record finished or was removed; CancelSync
//     only for a row with Cancel, a row that ends or removes the record,
//     or CancelAll, and such a row or CancelAll ends the context of the
//     call in flight;
//   - Next returns a Work exactly when the Dequeue row has Start, with the
//     record's InFlight as Func, a live context, the pod the last taken
//     update carried, the record's grace period for SyncTerminatingPod; a
//     record has a sync in flight exactly when the test holds its Work: at
//     most one per UID, none without a record;
//   - every invariant and step property of spec.Properties (the ones TLC
//     and the explorer check; not TypeOK, whose domains are the model's
//     bounds, while the test uses larger grace periods and channel counts).
//
// Every run ends by driving every pod to removal (kills, successful syncs,
// timers, SyncKnownPods(nil)): then every channel was closed and the Core
// keeps nothing for any pod; the run's trace must pass trace.Check. When
// a run fails, its trace is written to a temporary file and the TLC
// command that replays it is logged.
//
// Defaults: rapid's 100 checks and -rapid.steps=150 (about 10 s with -race
// on 2 cores); -soak runs 5000 checks. rapid saves a failing run under
// testdata/rapid/TestRapid/ and replays it first on later runs;
// -rapid.failfile or -rapid.seed reproduce one.
func TestRapid(t *testing.T) {
	defer rapidFlagDefaults(t)()
	var failed []byte // the trace of the last failing run
	t.Cleanup(func() { saveFailedTrace(t, failed) })
	rows := map[string]int{} // rows that fired, over every run
	defer func() {
		reach := spec.Reachable(spec.Table)
		var missed []string
		reachable := 0
		for _, r := range spec.Table {
			if !reach.Fired[r.ID] || unreachableRows[r.ID] != "" { // see TestEveryReachableRowFires
				continue
			}
			reachable++
			if rows[r.ID] == 0 {
				missed = append(missed, r.ID)
			}
		}
		t.Logf("%d of the %d table rows the engine can fire fired; never: %s", reachable-len(missed), reachable, strings.Join(missed, " "))
	}()
	rapid.Check(t, func(rt *rapid.T) {
		h := newCoreHarness(rt, rows)
		defer func() {
			if !h.done {
				failed = slices.Clone(h.buf.Bytes())
			}
		}()
		// Repeat picks an action name uniformly: updates and worker steps
		// get more than one name each.
		rt.Repeat(map[string]func(*rapid.T){
			"":              func(*rapid.T) { h.checkState() },
			"UpdatePod":     h.actUpdatePod,
			"UpdatePod2":    h.actUpdatePod,
			"Kill":          h.actKill,
			"RuntimeKill":   h.actRuntimeKill,
			"Invalid":       h.actInvalid,
			"Next":          func(t *rapid.T) { h.actWorker(t, true) },
			"Next2":         func(t *rapid.T) { h.actWorker(t, true) },
			"Done":          func(t *rapid.T) { h.actWorker(t, false) },
			"Done2":         func(t *rapid.T) { h.actWorker(t, false) },
			"Timer":         h.actTimer,
			"SyncKnownPods": h.actSyncKnownPods,
			"CancelAll":     h.actCancelAll,
			"RuntimeStatus": h.actRuntimeStatus,
		})
		h.windDown()
		h.finish()
	})
}

// rapidFlagDefaults sets the rapid tests' defaults for the rapid flags the
// command line did not set, and returns a function that restores them.
func rapidFlagDefaults(t *testing.T) func() {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var undo []func()
	def := func(name, value string) {
		f := flag.Lookup(name)
		if f == nil || set[name] {
			return
		}
		old := f.Value.String()
		if err := f.Value.Set(value); err != nil {
			t.Fatalf("-%s=%s: %v", name, value, err)
		}
		undo = append(undo, func() { _ = f.Value.Set(old) })
	}
	def("rapid.steps", strconv.Itoa(rapidSteps))
	if *soak {
		def("rapid.checks", strconv.Itoa(rapidSoakChecks))
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// saveFailedTrace writes the trace of a failed run to a temporary file and
// logs the TLC command that validates it.
func saveFailedTrace(t *testing.T, failed []byte) {
	if failed == nil || !t.Failed() {
		return
	}
	f, err := os.CreateTemp("", "podlife-rapid-*.ndjson")
	if err == nil {
		_, err = f.Write(failed)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Logf("writing the failing run's trace: %v", err)
		return
	}
	t.Logf("the failing run's trace is %s; validate it in TLC with\n\tTLA2TOOLS_JAR=/path/to/tla2tools.jar tools/tlc.sh --trace %s", f.Name(), f.Name())
}

// The table replay: what the lifecycle table says each record is, from
// the transitions the Core reported and checked one by one.

var rapidTable = spec.NewIndex(spec.Table)

var rapidRows = func() map[string]*spec.Row {
	m := map[string]*spec.Row{}
	for i := range spec.Table {
		m[spec.Table[i].ID] = &spec.Table[i]
	}
	return m
}()

// tableRec is a record as the table replay knows it.
type tableRec struct {
	state    fsm.State
	vars     fsm.Vars
	fullName string
}

// Conversions between the generated types and the table's values, by name.
var (
	specStates = map[fsm.State]spec.State{}
	specEvents = map[fsm.Event]spec.Event{}
)

func init() {
	for _, s := range spec.States() {
		for i := range 256 {
			if fsm.State(i).String() == s.String() {
				specStates[fsm.State(i)] = s
				break
			}
		}
	}
	for _, e := range spec.Events() {
		for _, f := range fsm.Events() {
			if f.String() == e.String() {
				specEvents[f] = e
			}
		}
	}
}

// rapidValues returns the fields of x (fsm.Vars or fsm.Params) named by
// names, as the table's ints; a missing field is an error.
func rapidValues(x any, names []string) ([]int, error) {
	v := reflect.ValueOf(x)
	out := make([]int, len(names))
	for i, n := range names {
		f := v.FieldByName(n)
		switch {
		case !f.IsValid():
			return nil, fmt.Errorf("%s has no field %s", v.Type(), n)
		case f.Kind() == reflect.Bool:
			if f.Bool() {
				out[i] = 1
			}
		case f.CanInt():
			out[i] = int(f.Int())
		case f.CanUint():
			out[i] = int(f.Uint())
		default:
			return nil, fmt.Errorf("%s.%s has kind %s", v.Type(), n, f.Kind())
		}
	}
	return out, nil
}

var varNames, paramNames = func() (vs, ps []string) {
	for _, v := range spec.Vars {
		vs = append(vs, v.Name)
	}
	for _, p := range spec.Params {
		ps = append(ps, p.Name)
	}
	return vs, ps
}()

// The harness.

// rapidCtx is a pod's sync context in the shell the test plays.
type rapidCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// rapidChan is a completion channel the test handed to the Core.
type rapidChan struct {
	id       int
	uid      types.UID // the UID of the update that carried it
	ch       chan struct{}
	handed   int // the step that handed it over
	closedAt int // the step that closed it; 0 while open
}

// wantStep is a transition an input must fire: its pod, event and
// parameters (the world facts are the replay's), plus what the replay
// needs: the full name an update carries and the pod it carries.
type wantStep struct {
	uid      types.UID
	ev       fsm.Event
	p        fsm.Params
	fullName string
	pod      *v1.Pod
}

// coreInput is one input: what the test calls on the Core, and the
// transitions it must fire.
type coreInput struct {
	desc string
	want []wantStep
	call func()
	// cancelAll: the input is CancelAll, which may cancel any call.
	cancelAll bool
}

// stepEffects is what one input's effects asked for, per pod.
type stepEffects struct {
	runLoop   map[types.UID]bool
	armed     map[types.UID]time.Duration // due - now
	stopped   map[types.UID]bool
	cancelled map[types.UID]bool
	closed    []*rapidChan
}

type coreHarness struct {
	t     *rapid.T
	core  *Core
	clock *clocktesting.FakeClock
	cache *fakeCache
	buf   bytes.Buffer // the trace
	rows  map[string]int
	done  bool

	// What the observer reported during the current input.
	seen     []fsm.Transition
	rejected []string

	// The table replay.
	recs    map[types.UID]tableRec
	waiting map[string][]types.UID // static full name -> UIDs in Waiting, in order
	synced  bool
	batches uint64
	// lastPod is the pod of the latest update whose row took it
	// (TakeUpdate) in the record's incarnation; nil once the record
	// finished or was removed. The sync calls get it; SyncKnownPods and a
	// runtime-only kill read its grace facts.
	lastPod map[types.UID]*v1.Pod
	exited  map[types.UID]bool // the status cache shows nothing running
	// panics counts each live record's consecutive sync calls that
	// panicked (the Core's back-off grows with it).
	panics map[types.UID]int

	// The shell the test plays.
	loop  map[types.UID]bool
	timer map[types.UID]time.Time
	work  map[types.UID]Work
	// ctx holds each pod's sync context, as PodWorkers does: made for the
	// pod's first Work, cancelled and dropped on CancelSync; workCtx is
	// the one the Work in flight got.
	ctx     map[types.UID]rapidCtx
	workCtx map[types.UID]context.Context
	chans   map[WaiterID]*rapidChan // by waiter ID (the channel's id)
	open    map[types.UID]int
	nchan   int
	step    int
	// handing are the channels the current input hands over: they count
	// as open from the input on.
	handing []*rapidChan
	// ending is the pod whose loop the current input (Next) ends.
	ending types.UID
}

// coreObserver collects the Core's transitions for the harness and writes
// the trace.
type coreObserver struct {
	h  *coreHarness
	tw *trace.Writer
}

func (o *coreObserver) Transition(t fsm.Transition) {
	o.tw.Transition(t)
	o.h.seen = append(o.h.seen, t)
}

func (o *coreObserver) Rejected(uid types.UID, s fsm.State, ev fsm.Event, err error) {
	o.tw.Rejected(uid, s, ev, err)
	o.h.rejected = append(o.h.rejected, fmt.Sprintf("%s: %s in %s: %v", uid, ev, s, err))
}

func newCoreHarness(t *rapid.T, rows map[string]int) *coreHarness {
	if _, err := rapidValues(fsm.Vars{}, varNames); err != nil {
		t.Fatalf("the generated types do not match the table: %v", err)
	}
	if _, err := rapidValues(fsm.Params{}, paramNames); err != nil {
		t.Fatalf("the generated types do not match the table: %v", err)
	}
	h := &coreHarness{
		t: t, rows: rows,
		clock:   clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)),
		cache:   newFakeCache(),
		recs:    map[types.UID]tableRec{},
		waiting: map[string][]types.UID{},
		lastPod: map[types.UID]*v1.Pod{},
		exited:  map[types.UID]bool{},
		panics:  map[types.UID]int{},
		loop:    map[types.UID]bool{},
		timer:   map[types.UID]time.Time{},
		work:    map[types.UID]Work{},
		chans:   map[WaiterID]*rapidChan{},
		ctx:     map[types.UID]rapidCtx{},
		workCtx: map[types.UID]context.Context{},
		open:    map[types.UID]int{},
	}
	h.core = NewCore(Options{
		CheckedFSM: true,
		Clock:      h.clock, ResyncInterval: rapidResync, BackOffPeriod: rapidBackoff, StatusCache: h.cache,
		Observer: &coreObserver{h: h, tw: trace.NewWriter(&h.buf)},
	})
	return h
}

func (h *coreHarness) rec(uid types.UID) (tableRec, bool) {
	r, ok := h.recs[uid]
	if !ok {
		return tableRec{state: fsm.Absent}, false
	}
	return r, true
}

// live: the record exists and has not finished.
func (h *coreHarness) live(uid types.UID) bool {
	r, ok := h.rec(uid)
	return ok && !r.state.IsFinished()
}

// worldFacts are SlotFree and FirstInLine of uid's record, from the replay
// (the machine computes them before every event).
func (h *coreHarness) worldFacts(uid types.UID) (slotFree, firstInLine bool) {
	r, _ := h.rec(uid)
	if r.fullName == "" {
		return true, false
	}
	slotFree = true
	for other, o := range h.recs {
		if other != uid && o.fullName == r.fullName && holdsSlot(o) {
			slotFree = false
		}
	}
	w := h.waiting[r.fullName]
	return slotFree, len(w) > 0 && w[0] == uid
}

func holdsSlot(r tableRec) bool { return r.vars.Static && r.vars.Started && r.state.MayHoldSlot() }

// run gives the Core one input and checks everything that follows from it.
func (h *coreHarness) run(in coreInput) {
	h.t.Helper()
	h.step++
	h.t.Logf("step %d: %s", h.step, in.desc)
	before := h.envs()
	workBefore := maps.Clone(h.work)
	for _, c := range h.handing {
		h.open[c.uid]++
	}
	h.handing, h.ending = nil, ""
	h.seen, h.rejected = nil, nil
	in.call()
	if len(h.rejected) > 0 {
		h.t.Fatalf("%s: the machine rejected %s", in.desc, strings.Join(h.rejected, "; "))
	}
	if len(h.seen) != len(in.want) {
		h.t.Fatalf("%s: %d transitions (%s), want %d (%s)", in.desc, len(h.seen), describeSeen(h.seen), len(in.want), describeWant(in.want))
	}
	fired := map[types.UID]fsm.Transition{}
	for i, tr := range h.seen {
		if _, twice := fired[tr.Pod]; twice {
			h.t.Fatalf("%s: two transitions of %s in one input", in.desc, tr.Pod)
		}
		fired[tr.Pod] = tr
		h.replay(in.desc, tr, in.want[i])
	}
	eff := h.carryOut(in.desc)
	h.checkEffects(in, fired, workBefore, eff)
	h.checkState()
	h.checkProperties(in.desc, before, h.envs())
}

func describeSeen(ts []fsm.Transition) string {
	var s []string
	for _, t := range ts {
		s = append(s, fmt.Sprintf("%s %s %s", t.Pod, t.Event, t.Row))
	}
	return strings.Join(s, ", ")
}

func describeWant(ws []wantStep) string {
	var s []string
	for _, w := range ws {
		s = append(s, fmt.Sprintf("%s %s", w.uid, w.ev))
	}
	return strings.Join(s, ", ")
}

// replay checks one reported transition against the table and advances
// the replay.
func (h *coreHarness) replay(desc string, tr fsm.Transition, w wantStep) {
	h.t.Helper()
	if tr.Pod != w.uid || tr.Event != w.ev {
		h.t.Fatalf("%s: fired %s for %s, want %s for %s", desc, tr.Event, tr.Pod, w.ev, w.uid)
	}
	r, known := h.rec(w.uid)
	p := w.p
	p.SlotFree, p.FirstInLine = h.worldFacts(w.uid)
	if tr.Params != p {
		h.t.Fatalf("%s: %s of %s had params %+v, want %+v", desc, tr.Event, w.uid, tr.Params, p)
	}
	if tr.From != r.state {
		h.t.Fatalf("%s: %s of %s fired from %s, but the record is %s", desc, tr.Event, w.uid, tr.From, r.state)
	}
	vars, _ := rapidValues(r.vars, varNames)
	params, _ := rapidValues(p, paramNames)
	env := &spec.Env{Vars: vars, Params: params}
	row := rapidTable.Enabled(specStates[r.state], specEvents[tr.Event], env)
	if row == nil {
		h.t.Fatalf("%s: the table enables no row for %s in %s with %+v, but %s fired", desc, tr.Event, r.state, p, tr.Row)
	}
	after, _ := rapidValues(tr.Vars, varNames)
	switch {
	case row.ID != tr.Row:
		h.t.Fatalf("%s: row %s fired, the table enables %s", desc, tr.Row, row.ID)
	case row.To.String() != tr.To.String():
		h.t.Fatalf("%s: row %s went to %s, the table says %s", desc, tr.Row, tr.To, row.To)
	case row.Effects.String() != tr.Effects.String():
		h.t.Fatalf("%s: row %s has effects [%s], the table says [%s]", desc, tr.Row, tr.Effects, row.Effects)
	case !slices.Equal(row.Apply(env), after):
		h.t.Fatalf("%s: row %s left %+v, the table's update gives %v (vars %v)", desc, tr.Row, tr.Vars, row.Apply(env), varNames)
	}
	fullName := r.fullName
	if !known && tr.Vars.Static {
		fullName = w.fullName
	}
	if tr.FullName != fullName {
		h.t.Fatalf("%s: %s of %s reported full name %q, want %q", desc, tr.Row, w.uid, tr.FullName, fullName)
	}
	batch := uint64(0)
	if tr.Event == fsm.SyncKnownPods {
		batch = h.batches
	}
	if tr.Batch != batch {
		h.t.Fatalf("%s: %s of %s has batch %d, want %d", desc, tr.Row, w.uid, tr.Batch, batch)
	}
	h.rows[tr.Row]++

	// Advance the replay.
	if f := r.fullName; f != "" && r.state == fsm.Waiting && tr.To != fsm.Waiting {
		h.waiting[f] = slices.DeleteFunc(h.waiting[f], func(u types.UID) bool { return u == w.uid })
	}
	if fullName != "" && tr.To == fsm.Waiting && r.state != fsm.Waiting {
		h.waiting[fullName] = append(h.waiting[fullName], w.uid)
	}
	if tr.Effects.Has(fsm.TakeUpdate) && w.pod != nil {
		h.lastPod[w.uid] = w.pod
	}
	switch {
	case tr.To == fsm.Absent:
		delete(h.recs, w.uid)
		delete(h.lastPod, w.uid)
	default:
		h.recs[w.uid] = tableRec{state: tr.To, vars: tr.Vars, fullName: fullName}
		if tr.To.IsFinished() {
			delete(h.lastPod, w.uid)
		}
	}
}

// carryOut takes the Core's effects and carries them out as a shell does,
// checking the rules each effect itself must follow.
func (h *coreHarness) carryOut(desc string) stepEffects {
	h.t.Helper()
	eff := stepEffects{runLoop: map[types.UID]bool{}, armed: map[types.UID]time.Duration{}, stopped: map[types.UID]bool{}, cancelled: map[types.UID]bool{}}
	for _, e := range h.core.TakeEffects(nil) {
		switch e.Kind {
		case RunLoop:
			if h.loop[e.UID] || h.ending == e.UID {
				h.t.Fatalf("%s: RunLoop for %s, whose loop runs", desc, e.UID)
			}
			h.loop[e.UID] = true
			eff.runLoop[e.UID] = true
		case ArmTimer:
			h.timer[e.UID] = h.clock.Now().Add(e.Delay)
			eff.armed[e.UID] = e.Delay
		case StopTimer:
			delete(h.timer, e.UID)
			delete(eff.armed, e.UID)
			eff.stopped[e.UID] = true
		case CloseChannel:
			c := h.chans[e.Waiter]
			switch {
			case c == nil:
				h.t.Fatalf("%s: CloseChannel for %s of a channel never handed over", desc, e.UID)
			case c.closedAt != 0:
				h.t.Fatalf("%s: channel %d of %s closed again (first in step %d)", desc, c.id, c.uid, c.closedAt)
			case c.uid != e.UID:
				h.t.Fatalf("%s: channel %d of %s closed with UID %q", desc, c.id, c.uid, e.UID)
			}
			c.closedAt = h.step
			close(c.ch)
			h.open[c.uid]--
			eff.closed = append(eff.closed, c)
		case CancelSync:
			c, ok := h.ctx[e.UID]
			if !ok {
				h.t.Fatalf("%s: CancelSync for %s, which got no Work since its last CancelSync", desc, e.UID)
			}
			c.cancel()
			delete(h.ctx, e.UID)
			eff.cancelled[e.UID] = true
		default:
			h.t.Fatalf("%s: effect of unknown kind %v", desc, e.Kind)
		}
	}
	return eff
}

// checkEffects checks the effects of one input against the rows that
// fired.
func (h *coreHarness) checkEffects(in coreInput, fired map[types.UID]fsm.Transition, workBefore map[types.UID]Work, eff stepEffects) {
	h.t.Helper()
	desc := in.desc
	for _, c := range eff.closed {
		r, known := h.rec(c.uid)
		if c.handed != h.step && known && !r.state.IsTerminated() {
			h.t.Fatalf("%s: channel %d of %s (handed over in step %d) closed while the pod is %s", desc, c.id, c.uid, c.handed, r.state)
		}
	}
	for uid := range eff.runLoop {
		if r, _ := h.rec(uid); !h.live(uid) || r.vars.Pending != fsm.PendingQueued || r.vars.InFlight != fsm.InFlightNone {
			h.t.Fatalf("%s: RunLoop for %s, whose record is %s %+v: nothing to run", desc, uid, r.state, r.vars)
		}
	}
	for _, uid := range rapidUIDs {
		tr, ok := fired[uid]
		ends := ok && (tr.Effects.Has(fsm.Exit) || tr.To == fsm.Absent)
		var d time.Duration
		if ok && !ends && tr.Vars.Pending != fsm.PendingQueued {
			switch {
			case tr.Effects.Has(fsm.Resync):
				d = rapidResync
			case tr.Effects.Has(fsm.Backoff):
				d = h.backOff(uid)
			}
		}
		if ends {
			delete(h.panics, uid) // the Core forgets the record's data
		}
		got, armed := eff.armed[uid]
		switch {
		case d == 0 && armed:
			h.t.Fatalf("%s: ArmTimer for %s, but no row with Resync or Backoff left it unqueued", desc, uid)
		case d != 0 && !armed:
			h.t.Fatalf("%s: row %s left %s unqueued but armed no timer", desc, tr.Row, uid)
		case armed && (got < d || got > d+d/2):
			h.t.Fatalf("%s: %s's timer is due in %v, want [%v, %v]", desc, uid, got, d, d+d/2)
		}
		if eff.stopped[uid] && h.live(uid) {
			h.t.Fatalf("%s: StopTimer for %s, whose record is live", desc, uid)
		}
		cancels := ok && (tr.Effects.Has(fsm.Cancel) || ends)
		if eff.cancelled[uid] && !cancels && !in.cancelAll {
			h.t.Fatalf("%s: CancelSync for %s, but no row with Cancel ended or removed it", desc, uid)
		}
		if w, busy := h.work[uid]; busy && (cancels || in.cancelAll) {
			if _, was := workBefore[uid]; was && h.workCtx[uid].Err() == nil {
				h.t.Fatalf("%s: the context of %s's %s is live after the row %s cancelled it", desc, uid, w.Func, tr.Row)
			}
		}
	}
}

// backOff is the delay a Backoff row must arm for uid: BackOffPeriod,
// doubled for each consecutive panic after the first, up to 5 minutes.
func (h *coreHarness) backOff(uid types.UID) time.Duration {
	d := rapidBackoff
	for range h.panics[uid] - 1 {
		d = min(2*d, 5*time.Minute)
	}
	return d
}

// checkState checks the facts that hold after every input.
func (h *coreHarness) checkState() {
	h.t.Helper()
	if got := h.core.Synced(); got != h.synced {
		h.t.Fatalf("Core.Synced() = %v, the replay says %v", got, h.synced)
	}
	for _, f := range []string{kubetypes.FullName("etcd", "default"), kubetypes.FullName("dns", "default")} {
		if got := h.core.Waiting(f); !slices.Equal(got, h.waiting[f]) {
			h.t.Fatalf("Core.Waiting(%s) = %v, the replay says %v", f, got, h.waiting[f])
		}
	}
	for _, uid := range rapidUIDs {
		want, known := h.rec(uid)
		got, ok := h.core.Record(uid)
		if ok != known || got.State != want.state || got.Vars != want.vars || got.FullName != want.fullName {
			h.t.Fatalf("Core.Record(%s) = %+v (%v), the replay says %+v (%v)", uid, got, ok, want, known)
		}
		v := want.vars
		if v.Waiters != (h.open[uid] > 0) {
			h.t.Fatalf("pod %s: Waiters=%v but %d completion channels are open", uid, v.Waiters, h.open[uid])
		}
		if v.Pending == fsm.PendingQueued && !h.loop[uid] {
			h.t.Fatalf("pod %s: queued (%s), but no loop runs: a lost wake-up", uid, want.state)
		}
		_, armed := h.timer[uid]
		if h.live(uid) && v.InFlight == fsm.InFlightNone && v.Pending != fsm.PendingQueued && !armed {
			h.t.Fatalf("pod %s: live (%s), idle and not queued, but no timer is armed: a lost wake-up", uid, want.state)
		}
		if armed && !h.live(uid) {
			h.t.Fatalf("pod %s: a timer is armed, but the record is %s", uid, want.state)
		}
		w, busy := h.work[uid]
		switch {
		case busy && !known:
			h.t.Fatalf("pod %s: %s is in flight, but the UID has no record", uid, w.Func)
		case busy && w.Func != v.InFlight:
			h.t.Fatalf("pod %s: %s is in flight, but the record has %s", uid, w.Func, v.InFlight)
		case !busy && v.InFlight != fsm.InFlightNone:
			h.t.Fatalf("pod %s: the record has %s in flight, but Next handed out no Work", uid, v.InFlight)
		case busy && !h.loop[uid]:
			h.t.Fatalf("pod %s: %s is in flight outside a loop", uid, w.Func)
		}
	}
}

// envs returns, per pod, the table environment the properties read: the
// record, the shell variables and the world facts.
func (h *coreHarness) envs() map[types.UID]*spec.Env {
	holders := map[string]int{}
	for _, r := range h.recs {
		if r.fullName != "" && holdsSlot(r) {
			holders[r.fullName]++
		}
	}
	out := map[types.UID]*spec.Env{}
	for _, uid := range rapidUIDs {
		r, _ := h.rec(uid)
		vars, _ := rapidValues(r.vars, varNames)
		env := &spec.Env{Vars: vars, Params: make([]int, len(spec.Params)), State: int(specStates[r.state]), Shell: make([]int, len(spec.ShellVars))}
		_, armed := h.timer[uid]
		env.Shell[spec.ShellVarIndex(spec.Loop)] = b2i(h.loop[uid])
		env.Shell[spec.ShellVarIndex(spec.Timer)] = b2i(armed)
		env.Shell[spec.ShellVarIndex(spec.Channels)] = h.open[uid]
		p := rapidPodOf(uid)
		f := p.fullName()
		w := h.waiting[f]
		env.World[spec.FirstInWaiting] = b2i(f != "" && len(w) > 0 && w[0] == uid)
		if f != "" {
			for _, x := range w {
				env.World[spec.WaitingCount] += b2i(x == uid)
			}
			env.World[spec.SlotHolders] = holders[f]
		}
		env.World[spec.StaticPod] = b2i(p.static)
		env.World[spec.Synced] = b2i(h.synced)
		out[uid] = env
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readsDomains reports whether e asks whether a value lies in its domain
// (the model's bounds, which the test does not keep to).
func readsDomains(e spec.Expr) bool {
	if e.Op == spec.OpIn {
		return true
	}
	return slices.ContainsFunc(e.Args, readsDomains)
}

// checkProperties evaluates spec.Properties' invariants after the input
// and its step properties on the step, for every pod.
func (h *coreHarness) checkProperties(desc string, before, after map[types.UID]*spec.Env) {
	h.t.Helper()
	for _, p := range spec.Properties {
		if readsDomains(p.Holds) || p.ExplorerOnly() { // the explorer's own shell variables: explore checks them
			continue
		}
		for _, uid := range rapidUIDs {
			var holds bool
			switch p.Kind {
			case spec.Invariant:
				holds = p.Holds.Eval(after[uid]) == 1
			case spec.StepProperty:
				env := *before[uid]
				env.Next = after[uid]
				holds = p.Holds.Eval(&env) == 1
			default:
				continue
			}
			if !holds {
				h.t.Fatalf("%s: pod %s violates %s %s (%s): %s", desc, uid, p.Kind, p.Name, p.Ref, p.Doc)
			}
		}
	}
}

// The inputs.

var rapidNoParams = fsm.Params{GraceOverride: fsm.NoGrace}

var rapidUpdateTypes = []UpdateType{SyncPodSync, SyncPodUpdate, SyncPodCreate, SyncPodKill}

// rapidEvent is the table event of an update type, as spec documents it.
var rapidEvent = map[UpdateType]fsm.Event{SyncPodSync: fsm.Update, SyncPodUpdate: fsm.Update, SyncPodCreate: fsm.Create, SyncPodKill: fsm.Kill}

// rapidGrace are the grace facts of an update (semantics 1.6): the smaller
// of the pod's deletion grace and the kill's override (override < 0:
// none), and the pod's spec value (0 without a pod or a value).
func rapidGrace(pod *v1.Pod, override int64) (graceOverride, specGrace int64) {
	graceOverride = fsm.NoGrace
	if pod != nil && pod.DeletionGracePeriodSeconds != nil {
		graceOverride = *pod.DeletionGracePeriodSeconds
	}
	if override >= 0 && (graceOverride == fsm.NoGrace || override < graceOverride) {
		graceOverride = override
	}
	if pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil {
		specGrace = *pod.Spec.TerminationGracePeriodSeconds
	}
	return graceOverride, specGrace
}

var rapidGraces = []int64{0, 1, 2, 3, 30, 45}

// drawPod draws a variant of a pod: a spec grace period or none, maybe
// deleted (with or without a deletion grace period), maybe terminal.
func drawPod(t *rapid.T, uid types.UID) (*v1.Pod, string) {
	p := plainPod(uid)
	desc := []string{string(uid)}
	if rapid.IntRange(0, 4).Draw(t, "hasSpecGrace") > 0 {
		g := rapid.SampledFrom(rapidGraces).Draw(t, "specGrace")
		p.Spec.TerminationGracePeriodSeconds = &g
		desc = append(desc, fmt.Sprintf("spec grace %d", g))
	}
	if rapid.IntRange(0, 7).Draw(t, "deleting") == 7 {
		ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
		p.DeletionTimestamp = &ts
		desc = append(desc, "deleting")
		if rapid.Bool().Draw(t, "hasDeletionGrace") {
			g := rapid.SampledFrom(rapidGraces).Draw(t, "deletionGrace")
			p.DeletionGracePeriodSeconds = &g
			desc = append(desc, fmt.Sprintf("grace %d", g))
		}
	}
	if rapid.IntRange(0, 9).Draw(t, "terminalPhase") == 9 {
		p.Status.Phase = rapid.SampledFrom([]v1.PodPhase{v1.PodSucceeded, v1.PodFailed}).Draw(t, "phase")
		desc = append(desc, string(p.Status.Phase))
	}
	return p, strings.Join(desc, " ")
}

// input is what the shell adds to an update, as PodWorkers does: the
// waiter ID its channel was registered under, and, for a pod in a terminal
// phase, whether the status cache shows nothing running.
func (h *coreHarness) input(o *UpdatePodOptions) UpdateInput {
	var in UpdateInput
	if kpo := o.KillPodOptions; kpo != nil && kpo.CompletedCh != nil {
		for _, c := range h.chans {
			if (chan<- struct{})(c.ch) == kpo.CompletedCh {
				in.Waiter = WaiterID(c.id)
			}
		}
		if in.Waiter == 0 {
			h.t.Fatalf("a completion channel the harness did not register")
		}
	}
	if terminalPhase(o) {
		s, err := h.cache.Get(o.Pod.UID)
		in.RuntimeTerminal = err == nil && s != nil && runtimeTerminal(s)
	}
	return in
}

// newChan registers a fresh completion channel for uid.
func (h *coreHarness) newChan(uid types.UID) *rapidChan {
	h.nchan++
	c := &rapidChan{id: h.nchan, uid: uid, ch: make(chan struct{}), handed: h.step + 1}
	h.chans[WaiterID(c.id)] = c
	h.handing = append(h.handing, c)
	return c
}

// drawKillOptions draws optional kill options: a fresh completion channel
// or none, an eviction, a grace override (-1: none).
func (h *coreHarness) drawKillOptions(t *rapid.T, uid types.UID, always bool) (*KillPodOptions, int64, string) {
	if !always && !rapid.Bool().Draw(t, "killOptions") {
		return nil, -1, ""
	}
	kpo := &KillPodOptions{Evict: rapid.Bool().Draw(t, "evict")}
	desc := []string{"kill options"}
	if rapid.IntRange(0, 3).Draw(t, "withChannel") > 0 {
		c := h.newChan(uid)
		kpo.CompletedCh = c.ch
		desc = append(desc, fmt.Sprintf("ch %d", c.id))
	}
	override := int64(-1)
	if rapid.Bool().Draw(t, "hasOverride") {
		override = rapid.SampledFrom(rapidGraces).Draw(t, "override")
		kpo.PodTerminationGracePeriodSecondsOverride = &override
	}
	if rapid.IntRange(0, 3).Draw(t, "withStatusFunc") == 0 {
		kpo.PodStatusFunc = func(s *v1.PodStatus) { s.Reason = "Killed" }
	}
	desc = append(desc, fmt.Sprintf("evict %v override %d", kpo.Evict, override))
	return kpo, override, "(" + strings.Join(desc, " ") + ")"
}

// updateInput is a valid UpdatePod that carries a pod.
func (h *coreHarness) updateInput(o UpdatePodOptions, override int64, desc string) coreInput {
	pod := o.Pod
	uid := pod.UID
	rp := rapidPodOf(uid)
	p := fsm.Params{
		Static:        rp.static,
		Deleting:      pod.DeletionTimestamp != nil,
		TerminalPhase: pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed,
	}
	// The status cache is read only for a pod first seen in a terminal
	// phase (semantics T2).
	if _, known := h.rec(uid); !known && p.TerminalPhase {
		p.RuntimeTerminal = h.exited[uid]
	}
	p.GraceOverride, p.SpecGrace = rapidGrace(pod, override)
	if kpo := o.KillPodOptions; kpo != nil {
		p.Notify, p.Evict = kpo.CompletedCh != nil, kpo.Evict // the harness registers every channel
	}
	return coreInput{
		desc: fmt.Sprintf("UpdatePod(%s %s)", o.UpdateType, desc),
		want: []wantStep{{uid: uid, ev: rapidEvent[o.UpdateType], p: p, fullName: rp.fullName(), pod: pod}},
		call: func() {
			if err := h.core.UpdatePod(o, h.input(&o)); err != nil {
				h.t.Fatalf("UpdatePod(%s %s): %v", o.UpdateType, desc, err)
			}
		},
	}
}

func (h *coreHarness) actUpdatePod(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	typ := rapid.SampledFrom(rapidUpdateTypes).Draw(t, "type")
	pod, podDesc := drawPod(t, uid)
	kpo, override, kpoDesc := h.drawKillOptions(t, uid, false)
	h.run(h.updateInput(UpdatePodOptions{UpdateType: typ, Pod: pod, KillPodOptions: kpo}, override, podDesc+" "+kpoDesc))
}

// actKill is a kill with kill options, as PodWorkers.KillPod sends.
func (h *coreHarness) actKill(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	pod, podDesc := drawPod(t, uid)
	kpo, override, kpoDesc := h.drawKillOptions(t, uid, true)
	h.run(h.updateInput(UpdatePodOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: kpo}, override, podDesc+" "+kpoDesc))
}

func (h *coreHarness) actRuntimeKill(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	kpo, override, kpoDesc := h.drawKillOptions(t, uid, false)
	o := UpdatePodOptions{UpdateType: SyncPodKill, RunningPod: &RunningPod{ID: uid, Name: rapidPodOf(uid).name, Namespace: "default"}, KillPodOptions: kpo}
	// A runtime-only kill of a pod whose config the engine knows kills that
	// pod: its grace facts are those of the pod the last update carried.
	p := rapidNoParams
	p.GraceOverride, p.SpecGrace = rapidGrace(h.lastPod[uid], override)
	p.Notify = kpo != nil && kpo.CompletedCh != nil
	h.run(coreInput{
		desc: fmt.Sprintf("UpdatePod(runtime-only kill %s %s)", uid, kpoDesc),
		want: []wantStep{{uid: uid, ev: fsm.RuntimeKill, p: p}},
		call: func() {
			if err := h.core.UpdatePod(o, h.input(&o)); err != nil {
				h.t.Fatalf("runtime-only kill of %s: %v", uid, err)
			}
		},
	})
}

// actInvalid sends an invalid update: it must return an error wrapping
// ErrInvalidUpdate, close its channel at once and change nothing (a
// runtime-only update of another type than kill fires RuntimeUpdate,
// which every state ignores).
func (h *coreHarness) actInvalid(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	pod, _ := drawPod(t, uid)
	o := UpdatePodOptions{UpdateType: rapid.SampledFrom(rapidUpdateTypes).Draw(t, "type"), Pod: pod}
	withChannel := rapid.Bool().Draw(t, "withChannel")
	var want []wantStep
	var desc string
	chUID := uid // the UID the update names, "" when none
	switch kind := rapid.IntRange(0, 8).Draw(t, "invalid"); kind {
	case 0:
		o.UpdateType, desc = 7, "unknown update type 7"
	case 1:
		o.UpdateType, desc = -1, "unknown update type -1"
	case 2:
		o.Pod, desc, chUID = nil, "neither Pod nor RunningPod", ""
	case 3:
		pod.UID, desc, chUID = "", "empty UID", ""
	case 4:
		ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds, desc = &ts, int64p(-1), "negative deletion grace"
	case 5:
		o.KillPodOptions, desc = &KillPodOptions{PodTerminationGracePeriodSecondsOverride: int64p(-2)}, "negative grace override"
	case 6:
		pod.Spec.TerminationGracePeriodSeconds, desc = int64p(-3), "negative spec grace"
	case 7:
		if o.UpdateType == SyncPodKill {
			o.UpdateType = SyncPodSync
		}
		o.Pod, o.RunningPod, desc = nil, &RunningPod{ID: uid}, "runtime-only "+o.UpdateType.String()
		want = []wantStep{{uid: uid, ev: fsm.RuntimeUpdate, p: rapidNoParams}}
	case 8:
		o.Pod, o.UpdateType, o.RunningPod, desc, chUID = nil, SyncPodKill, &RunningPod{Name: "x"}, "runtime-only pod without UID", ""
	}
	var c *rapidChan
	if withChannel {
		if o.KillPodOptions == nil {
			o.KillPodOptions = &KillPodOptions{}
		}
		c = h.newChan(chUID)
		o.KillPodOptions.CompletedCh = c.ch
		desc += fmt.Sprintf(" (ch %d)", c.id)
	}
	h.run(coreInput{
		desc: fmt.Sprintf("invalid UpdatePod(%s: %s)", uid, desc),
		want: want,
		call: func() {
			if err := h.core.UpdatePod(o, h.input(&o)); !errors.Is(err, ErrInvalidUpdate) {
				h.t.Fatalf("invalid UpdatePod (%s) returned %v, want an error wrapping ErrInvalidUpdate", desc, err)
			}
		},
	})
	for _, tr := range h.seen {
		if r := rapidRows[tr.Row]; r == nil || !r.Ignores() {
			h.t.Fatalf("invalid UpdatePod (%s) fired %s, which the table does not ignore", desc, tr.Row)
		}
	}
	if c != nil && c.closedAt != h.step {
		h.t.Fatalf("invalid UpdatePod (%s): its channel was not closed at once", desc)
	}
}

// actWorker is a step of a pod's worker loop: Next for a pod whose loop
// runs with nothing in flight, Done for a pod with a call in flight (next
// says which to prefer when both kinds exist).
func (h *coreHarness) actWorker(t *rapid.T, next bool) {
	var nexts, dones []types.UID
	for _, uid := range rapidUIDs {
		if _, busy := h.work[uid]; busy {
			dones = append(dones, uid)
		} else if h.loop[uid] {
			nexts = append(nexts, uid)
		}
	}
	switch {
	case len(nexts) > 0 && (next || len(dones) == 0):
		h.next(rapid.SampledFrom(nexts).Draw(t, "next"))
	case len(dones) > 0:
		uid := rapid.SampledFrom(dones).Draw(t, "done")
		w := h.work[uid]
		terminal := rapid.Bool().Draw(t, "terminal")
		outcomes := []string{"success", "error", "panic"}
		if h.workCtx[uid].Err() != nil {
			outcomes = append(outcomes, "context")
		}
		var err error
		switch rapid.SampledFrom(outcomes).Draw(t, "outcome") {
		case "error":
			err = errRapidSync
		case "panic":
			err = &PanicError{Func: w.Func, Value: "rapid: injected panic"}
		case "context":
			err = h.workCtx[uid].Err()
		}
		h.doneWork(uid, terminal, err)
	default:
		t.Skip("no worker loop runs")
	}
}

// next runs Core.Next for a pod whose loop runs and has nothing in flight.
func (h *coreHarness) next(uid types.UID) {
	h.t.Helper()
	var want []wantStep
	if r, _ := h.rec(uid); h.live(uid) && r.vars.Pending == fsm.PendingQueued && r.vars.InFlight == fsm.InFlightNone {
		want = []wantStep{{uid: uid, ev: fsm.Dequeue, p: rapidNoParams}}
	}
	var w Work
	var ok bool
	h.run(coreInput{
		desc: "Next(" + string(uid) + ")",
		want: want,
		call: func() {
			w, ok = h.core.Next(uid)
			if !ok {
				h.loop[uid], h.ending = false, uid // the loop ends
				return
			}
			h.work[uid] = w
			c, held := h.ctx[uid]
			if !held {
				c.ctx, c.cancel = context.WithCancel(context.Background())
				h.ctx[uid] = c
			}
			h.workCtx[uid] = c.ctx
		},
	})
	started := len(h.seen) == 1 && h.seen[0].Effects.Has(fsm.Start)
	if ok != started {
		h.t.Fatalf("Next(%s) returned %v, but the row that fired (%s) has Start = %v", uid, ok, describeSeen(h.seen), started)
	}
	if !ok {
		return
	}
	r, _ := h.rec(uid)
	switch {
	case w.UID != uid:
		h.t.Fatalf("Next(%s) handed out Work for %s", uid, w.UID)
	case w.Func != r.vars.InFlight:
		h.t.Fatalf("Next(%s) handed out %s, the record has %s in flight", uid, w.Func, r.vars.InFlight)
	case h.workCtx[uid].Err() != nil:
		h.t.Fatalf("Next(%s) handed out %s while the pod's sync context is done", uid, w.Func)
	case w.Status != nil:
		h.t.Fatalf("Next(%s): status %v; with a status cache the shell fetches it", uid, w.Status)
	}
	if w.Func == fsm.InFlightSyncTerminatingRuntimePod {
		if w.RunningPod == nil || w.RunningPod.ID != uid {
			h.t.Fatalf("Next(%s) handed out %s for runtime pod %+v", uid, w.Func, w.RunningPod)
		}
		return
	}
	if w.Pod == nil || w.Pod != h.lastPod[uid] {
		h.t.Fatalf("Next(%s) handed out %s for pod %v, but the last update taken carried %v", uid, w.Func, w.Pod, h.lastPod[uid])
	}
	if w.Func == fsm.InFlightSyncTerminatingPod {
		g := r.vars.Grace
		if (g == 0) != (w.GracePeriod == nil) || (w.GracePeriod != nil && *w.GracePeriod != g) {
			got := "none"
			if w.GracePeriod != nil {
				got = strconv.FormatInt(*w.GracePeriod, 10)
			}
			h.t.Fatalf("Next(%s) handed out SyncTerminatingPod with grace %s, the record has %d", uid, got, g)
		}
	}
}

// doneWork reports the outcome of uid's call in flight.
func (h *coreHarness) doneWork(uid types.UID, terminal bool, err error) {
	h.t.Helper()
	w := h.work[uid]
	ev := map[fsm.InFlight][2]fsm.Event{ // (success, failure), as PodSyncer documents
		fsm.InFlightSyncPod:                   {fsm.SyncPodDone, fsm.SyncPodFailed},
		fsm.InFlightSyncTerminatingPod:        {fsm.TerminatingDone, fsm.TerminatingFailed},
		fsm.InFlightSyncTerminatingRuntimePod: {fsm.TerminatingDone, fsm.TerminatingFailed},
		fsm.InFlightSyncTerminatedPod:         {fsm.TerminatedDone, fsm.TerminatedFailed},
	}[w.Func]
	want := ev[0]
	switch {
	case err != nil:
		want = ev[1]
	case terminal && w.Func == fsm.InFlightSyncPod:
		want = fsm.SyncPodTerminal
	}
	if errors.As(err, new(*PanicError)) {
		h.panics[uid]++
	} else {
		delete(h.panics, uid)
	}
	h.run(coreInput{
		desc: fmt.Sprintf("Done(%s %s terminal %v err %v)", uid, w.Func, terminal, err),
		want: []wantStep{{uid: uid, ev: want, p: rapidNoParams}},
		call: func() {
			delete(h.work, uid) // the call returned
			h.core.Done(w, terminal, err)
		},
	})
}

func (h *coreHarness) actTimer(t *rapid.T) {
	var armed []types.UID
	for _, uid := range rapidUIDs {
		if _, ok := h.timer[uid]; ok {
			armed = append(armed, uid)
		}
	}
	if len(armed) == 0 {
		t.Skip("no timer is armed")
	}
	h.fireTimer(rapid.SampledFrom(armed).Draw(t, "timer"))
}

// fireTimer moves the clock to uid's timer and fires it.
func (h *coreHarness) fireTimer(uid types.UID) {
	h.t.Helper()
	var want []wantStep
	if _, known := h.rec(uid); known {
		want = []wantStep{{uid: uid, ev: fsm.Requeue, p: rapidNoParams}}
	}
	due := h.timer[uid]
	h.run(coreInput{
		desc: "Timer(" + string(uid) + ")",
		want: want,
		call: func() {
			delete(h.timer, uid)
			if due.After(h.clock.Now()) {
				h.clock.SetTime(due)
			}
			h.core.Timer(uid)
		},
	})
}

func (h *coreHarness) actSyncKnownPods(t *rapid.T) {
	var desired []types.UID
	for _, uid := range rapidUIDs {
		if rapid.Bool().Draw(t, "desired "+string(uid)) {
			desired = append(desired, uid)
		}
	}
	h.syncKnownPods(desired)
}

// syncKnownPods runs SyncKnownPods with the given pods desired and checks
// what it returned.
func (h *coreHarness) syncKnownPods(desired []types.UID) {
	h.t.Helper()
	var pods []*v1.Pod
	for _, uid := range desired {
		pods = append(pods, plainPod(uid))
	}
	pods = append(pods, nil) // nil entries are skipped
	var want []wantStep
	for _, uid := range slices.Sorted(maps.Keys(h.recs)) {
		p := fsm.Params{Orphan: !slices.Contains(desired, uid)}
		p.GraceOverride, p.SpecGrace = rapidGrace(h.lastPod[uid], -1)
		want = append(want, wantStep{uid: uid, ev: fsm.SyncKnownPods, p: p})
	}
	var got map[types.UID]PodWorkerSync
	h.run(coreInput{
		desc: fmt.Sprintf("SyncKnownPods(%v)", desired),
		want: want,
		call: func() {
			h.batches++
			h.synced = true
			got = h.core.SyncKnownPods(pods)
		},
	})
	wantMap := map[types.UID]PodWorkerSync{}
	for uid, r := range h.recs {
		s := SyncPod
		switch {
		case r.state.IsTerminated():
			s = TerminatedPod
		case r.state.TerminationRequested():
			s = TerminatingPod
		}
		wantMap[uid] = PodWorkerSync{State: s, Orphan: !slices.Contains(desired, uid), HasConfig: r.vars.HasConfig, Static: r.vars.Static}
	}
	if !maps.Equal(got, wantMap) {
		h.t.Fatalf("SyncKnownPods returned %v, the records are %v", got, wantMap)
	}
}

// plainPod is uid's pod without a deletion, terminal phase or grace period.
func plainPod(uid types.UID) *v1.Pod {
	rp := rapidPodOf(uid)
	source := "api"
	if rp.static {
		source = "file"
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, Name: rp.name, Namespace: "default", Annotations: map[string]string{kubetypes.ConfigSourceAnnotation: source}}}
}

func (h *coreHarness) actCancelAll(*rapid.T) {
	h.run(coreInput{desc: "CancelAll", call: h.core.CancelAll, cancelAll: true})
	for uid, w := range h.work {
		if h.workCtx[uid].Err() == nil {
			h.t.Fatalf("CancelAll: the context of %s's %s is live", uid, w.Func)
		}
	}
}

// actRuntimeStatus sets what the status cache shows for a pod: running
// containers, or nothing running (which decides RuntimeTerminal for a pod
// first seen terminal).
func (h *coreHarness) actRuntimeStatus(t *rapid.T) {
	uid := rapid.SampledFrom(rapidUIDs).Draw(t, "pod")
	exited := rapid.Bool().Draw(t, "exited")
	t.Logf("status cache: %s exited %v", uid, exited)
	if exited {
		h.cache.set(uid, exitedStatus(uid))
	} else {
		h.cache.set(uid, runningStatus(uid))
	}
	h.exited[uid] = exited
}

// windDown drives every pod to removal: kills, successful syncs, timers
// and SyncKnownPods(nil), every input checked as in the run. Every pod
// must get there within a few rounds.
func (h *coreHarness) windDown() {
	h.t.Helper()
	h.t.Logf("wind down")
	for round := 0; ; round++ {
		if len(h.recs) == 0 && len(h.work) == 0 && !slices.Contains(slices.Collect(maps.Values(h.loop)), true) && len(h.timer) == 0 {
			break
		}
		if round == 6 {
			h.t.Fatalf("wind down: records %v, loops %v, timers %v, calls %v left after %d rounds", h.recs, h.loop, h.timer, slices.Collect(maps.Keys(h.work)), round)
		}
		for _, uid := range rapidUIDs {
			if h.live(uid) {
				h.run(h.updateInput(UpdatePodOptions{UpdateType: SyncPodKill, Pod: plainPod(uid)}, -1, string(uid)))
			}
		}
		h.drainLoops()
		for _, uid := range rapidUIDs {
			if _, armed := h.timer[uid]; armed {
				h.fireTimer(uid)
			}
		}
		h.drainLoops()
		h.syncKnownPods(nil)
		h.drainLoops()
	}
	for _, c := range h.chans {
		if c.closedAt == 0 {
			h.t.Fatalf("channel %d of %s (handed over in step %d) was never closed", c.id, c.uid, c.handed)
		}
	}
	if len(h.core.pods) != 0 || len(h.core.unendedLoops) != 0 {
		h.t.Fatalf("every record is gone, but the Core keeps data for %v and loops for %v", slices.Collect(maps.Keys(h.core.pods)), h.core.unendedLoops)
	}
}

// drainLoops runs every loop, every call succeeding, until none runs.
func (h *coreHarness) drainLoops() {
	h.t.Helper()
	for range 100 {
		progressed := false
		for _, uid := range rapidUIDs {
			switch _, busy := h.work[uid]; {
			case busy:
				h.doneWork(uid, false, nil)
			case h.loop[uid]:
				h.next(uid)
			default:
				continue
			}
			progressed = true
		}
		if !progressed {
			return
		}
	}
	h.t.Fatalf("the worker loops still run after 100 rounds: %v", h.loop)
}

// finish checks the run's trace and keeps it if asked to.
func (h *coreHarness) finish() {
	lines, err := trace.Read(bytes.NewReader(h.buf.Bytes()))
	if err != nil {
		h.t.Fatalf("reading the trace: %v", err)
	}
	if err := trace.Check(lines); err != nil {
		h.t.Fatalf("the trace does not pass trace.Check: %v", err)
	}
	if *saveTraces != "" {
		f, err := os.CreateTemp(*saveTraces, "rapid-*.ndjson")
		if err != nil {
			h.t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(h.buf.Bytes()); err != nil {
			h.t.Fatal(err)
		}
	}
	h.done = true
}
