package explore

import (
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/worker"
)

// Input is one step of the environment or of a pod's worker: exactly the
// disjuncts of tla/PodLifecycle.tla's Next. It is plain data so that a
// counterexample can be saved and replayed.
type Input struct {
	Pod   int    `json:"pod"`   // index into Config.Pods; -1 for SyncKnownPods
	Event string `json:"event"` // an fsm.Event name
	// UpdatePod parameters (the model's UpdateParams and KillParams).
	Deleting        bool  `json:"deleting,omitempty"`
	TerminalPhase   bool  `json:"terminalPhase,omitempty"`
	RuntimeTerminal bool  `json:"runtimeTerminal,omitempty"`
	Evict           bool  `json:"evict,omitempty"`
	Grace           int64 `json:"grace"` // the requested grace; fsm.NoGrace for none
	// Desired lists, for SyncKnownPods, the indexes of the desired pods.
	Desired []int `json:"desired,omitempty"`
}

func (in Input) String() string {
	if in.Pod < 0 {
		return fmt.Sprintf("SyncKnownPods(desired=%v)", in.Desired)
	}
	var opts []string
	for _, o := range []struct {
		on   bool
		name string
	}{{in.Deleting, "deleting"}, {in.TerminalPhase, "terminalPhase"}, {in.RuntimeTerminal, "runtimeTerminal"}, {in.Evict, "evict"}} {
		if o.on {
			opts = append(opts, o.name)
		}
	}
	if in.Grace != fsm.NoGrace {
		opts = append(opts, fmt.Sprintf("grace=%d", in.Grace))
	}
	return fmt.Sprintf("p%d %s(%s)", in.Pod+1, in.Event, strings.Join(opts, ", "))
}

var workerEvents = []fsm.Event{fsm.Dequeue, fsm.SyncPodDone, fsm.SyncPodTerminal, fsm.SyncPodFailed,
	fsm.TerminatingDone, fsm.TerminatingFailed, fsm.TerminatedDone, fsm.TerminatedFailed}

// Inputs lists every input of the configuration, in a fixed order.
func (c Config) Inputs() []Input {
	var in []Input
	graces := append([]int64{fsm.NoGrace}, c.GraceOverrides...)
	for i := range c.Pods {
		for _, ev := range []fsm.Event{fsm.Create, fsm.Update, fsm.Sync} {
			for _, d := range []bool{false, true} {
				deletionGraces := []int64{fsm.NoGrace} // a deletion grace comes only with a deletion timestamp
				if d {
					deletionGraces = graces
				}
				for _, tp := range []bool{false, true} {
					for _, rt := range []bool{false, true} {
						for _, g := range deletionGraces {
							in = append(in, Input{Pod: i, Event: ev.String(), Deleting: d, TerminalPhase: tp, RuntimeTerminal: rt, Grace: g})
						}
					}
				}
			}
		}
		for _, evict := range []bool{false, true} {
			for _, g := range graces {
				in = append(in, Input{Pod: i, Event: fsm.Kill.String(), Evict: evict, Grace: g})
			}
		}
		in = append(in, Input{Pod: i, Event: fsm.RuntimeKill.String(), Grace: 1},
			Input{Pod: i, Event: fsm.RuntimeUpdate.String(), Grace: fsm.NoGrace})
		for _, ev := range workerEvents {
			in = append(in, Input{Pod: i, Event: ev.String(), Grace: fsm.NoGrace})
		}
		in = append(in, Input{Pod: i, Event: fsm.Requeue.String(), Grace: fsm.NoGrace})
	}
	for mask := 0; mask < 1<<len(c.Pods); mask++ {
		var desired []int
		for i := range c.Pods {
			if mask&(1<<i) != 0 {
				desired = append(desired, i)
			}
		}
		in = append(in, Input{Pod: -1, Event: fsm.SyncKnownPods.String(), Grace: fsm.NoGrace, Desired: desired})
	}
	return in
}

// FullName is the one full name of a configuration's static pods.
const (
	podName      = "static"
	podNamespace = "default"
)

// world holds the objects the inputs hand to the Core, built once per
// configuration so that exploring allocates no pods.
type world struct {
	cfg    Config
	events map[string]fsm.Event
	pods   map[podKey]*v1.Pod
	kills  map[killKey]*worker.KillPodOptions
	// runtimeKill, runtimePods: the housekeeping kill of a runtime pod.
	runtimeKill *worker.KillPodOptions
	runtimePods []*worker.RunningPod
	// cache answers the Core's status lookups; terminal is set per input.
	cache *statusCache
	// completed is the completion channel of every kill; the explorer's
	// driver never closes it (closing is an effect the driver carries out).
	completed chan struct{}
}

type podKey struct {
	pod                     int
	deleting, terminalPhase bool
	grace                   int64
}

type killKey struct {
	evict bool
	grace int64
}

func newWorld(c Config) *world {
	w := &world{cfg: c, events: map[string]fsm.Event{}, pods: map[podKey]*v1.Pod{}, kills: map[killKey]*worker.KillPodOptions{},
		cache: &statusCache{}, completed: make(chan struct{})}
	for _, ev := range append([]fsm.Event{fsm.Create, fsm.Update, fsm.Sync, fsm.Kill, fsm.RuntimeKill, fsm.RuntimeUpdate, fsm.Requeue, fsm.SyncKnownPods}, workerEvents...) {
		w.events[ev.String()] = ev
	}
	graces := append([]int64{fsm.NoGrace}, c.GraceOverrides...)
	for i, uid := range c.Pods {
		for _, d := range []bool{false, true} {
			for _, tp := range []bool{false, true} {
				for _, g := range graces {
					w.pods[podKey{i, d, tp, g}] = w.pod(i, uid, d, tp, g)
				}
			}
		}
		w.runtimePods = append(w.runtimePods, &worker.RunningPod{ID: uid, Name: podName, Namespace: podNamespace})
	}
	for _, evict := range []bool{false, true} {
		for _, g := range graces {
			k := &worker.KillPodOptions{CompletedCh: w.completed, Evict: evict}
			if g != fsm.NoGrace {
				k.PodTerminationGracePeriodSecondsOverride = &g
			}
			w.kills[killKey{evict, g}] = k
		}
	}
	one := int64(1)
	w.runtimeKill = &worker.KillPodOptions{PodTerminationGracePeriodSecondsOverride: &one}
	return w
}

func (w *world) pod(i int, uid types.UID, deleting, terminalPhase bool, grace int64) *v1.Pod {
	spec := w.cfg.SpecGrace
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: uid, Name: podName, Namespace: podNamespace,
			Annotations: map[string]string{worker.ConfigSourceAnnotation: "api"}},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &spec},
	}
	if w.cfg.isStatic(i) {
		p.Annotations[worker.ConfigSourceAnnotation] = "file"
	} else {
		p.Name = string(uid) // ordinary pods need no shared full name
	}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{}
		if grace != fsm.NoGrace {
			p.DeletionGracePeriodSeconds = &grace
		}
	}
	if terminalPhase {
		p.Status.Phase = v1.PodSucceeded
	}
	return p
}

var (
	errSync       = errors.New("explorer: injected sync error")
	updateTypes   = map[fsm.Event]worker.UpdateType{fsm.Create: worker.SyncPodCreate, fsm.Update: worker.SyncPodUpdate, fsm.Sync: worker.SyncPodSync, fsm.Kill: worker.SyncPodKill}
	resultOutcome = map[fsm.Event]struct {
		inFlight []fsm.InFlight
		terminal bool
		err      error
	}{
		fsm.SyncPodDone:       {[]fsm.InFlight{fsm.InFlightSyncPod}, false, nil},
		fsm.SyncPodTerminal:   {[]fsm.InFlight{fsm.InFlightSyncPod}, true, nil},
		fsm.SyncPodFailed:     {[]fsm.InFlight{fsm.InFlightSyncPod}, false, errSync},
		fsm.TerminatingDone:   {[]fsm.InFlight{fsm.InFlightSyncTerminatingPod, fsm.InFlightSyncTerminatingRuntimePod}, false, nil},
		fsm.TerminatingFailed: {[]fsm.InFlight{fsm.InFlightSyncTerminatingPod, fsm.InFlightSyncTerminatingRuntimePod}, false, errSync},
		fsm.TerminatedDone:    {[]fsm.InFlight{fsm.InFlightSyncTerminatedPod}, false, nil},
		fsm.TerminatedFailed:  {[]fsm.InFlight{fsm.InFlightSyncTerminatedPod}, false, errSync},
	}
)

// apply feeds one input to the core, as the engine's shell would: an
// UpdatePod call, a worker taking its pending update (Next), a sync
// function returning (Done), a timer firing, or SyncKnownPods. An input the
// model does not allow in this state is not passed on.
func (w *world) apply(core *worker.Core, in Input) {
	ev := w.events[in.Event]
	if in.Pod < 0 {
		desired := make([]*v1.Pod, len(in.Desired))
		for k, i := range in.Desired {
			desired[k] = w.pods[podKey{pod: i, grace: fsm.NoGrace}]
		}
		core.SyncKnownPods(desired)
		return
	}
	uid := w.cfg.Pods[in.Pod]
	switch ev {
	case fsm.Create, fsm.Update, fsm.Sync:
		w.cache.terminal = in.RuntimeTerminal
		_ = core.UpdatePod(worker.UpdatePodOptions{UpdateType: updateTypes[ev], Pod: w.pods[podKey{in.Pod, in.Deleting, in.TerminalPhase, in.Grace}]})
	case fsm.Kill:
		_ = core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, Pod: w.pods[podKey{pod: in.Pod, grace: fsm.NoGrace}],
			KillPodOptions: w.kills[killKey{in.Evict, in.Grace}]})
	case fsm.RuntimeKill:
		_ = core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodKill, RunningPod: w.runtimePods[in.Pod], KillPodOptions: w.runtimeKill})
	case fsm.RuntimeUpdate:
		_ = core.UpdatePod(worker.UpdatePodOptions{UpdateType: worker.SyncPodSync, RunningPod: w.runtimePods[in.Pod]}) // rejected, and ignored by every state
	case fsm.Dequeue:
		core.Next(uid)
	case fsm.Requeue:
		core.Timer(uid)
	default:
		out := resultOutcome[ev]
		rec, ok := core.Record(uid)
		if !ok || !containsInFlight(out.inFlight, rec.Vars.InFlight) {
			return // nothing of that kind in flight: the model has no such step
		}
		core.Done(worker.Work{UID: uid, Func: rec.Vars.InFlight}, out.terminal, out.err)
	}
}

func containsInFlight(xs []fsm.InFlight, x fsm.InFlight) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// statusCache answers every lookup with a status that shows a terminal
// runtime or a running one, as the current input asks.
type statusCache struct{ terminal bool }

var (
	terminalStatus = &worker.PodStatus{}
	runningStatus  = &worker.PodStatus{ContainerStatuses: []*runtimeapi.ContainerStatus{{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}}
)

func (s *statusCache) Get(types.UID) (*worker.PodStatus, error) {
	if s.terminal {
		return terminalStatus, nil
	}
	return runningStatus, nil
}

// driver records nothing: the explorer offers every worker step and timer
// as an input of its own, in every state where the model allows it.
type driver struct{}

func (driver) Run(types.UID)                  {}
func (driver) After(types.UID, time.Duration) {}
func (driver) Cancel(types.UID)               {}
func (driver) Close(chan<- struct{})          {}
