package explore

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/spec"
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

// outcomes are the results a sync call in flight may return with.
var outcomes = []fsm.Event{fsm.SyncPodDone, fsm.SyncPodTerminal, fsm.SyncPodFailed,
	fsm.TerminatingDone, fsm.TerminatingFailed, fsm.TerminatedDone, fsm.TerminatedFailed}

// Inputs lists every input of the configuration, in a fixed order: per pod
// the UpdatePod variants of the model's UpdateParams and KillParams, the
// worker loop asking for work (Dequeue), each outcome of a sync call, the
// timer firing (Requeue); then SyncKnownPods with every desired subset.
func (c Config) Inputs() []Input {
	var in []Input
	graces := append([]int64{fsm.NoGrace}, c.GraceOverrides...)
	terminal := [][2]bool{{false, false}}
	if c.TerminalPhases {
		terminal = append(terminal, [2]bool{true, false}, [2]bool{true, true}) // the runtime is asked only about a terminal pod
	}
	for i := range c.Pods {
		for _, ev := range []fsm.Event{fsm.Create, fsm.Update} {
			for _, d := range []bool{false, true} {
				deletionGraces := []int64{fsm.NoGrace} // a deletion grace comes only with a deletion timestamp
				if d {
					deletionGraces = graces
				}
				for _, t := range terminal {
					for _, g := range deletionGraces {
						in = append(in, Input{Pod: i, Event: ev.String(), Deleting: d, TerminalPhase: t[0], RuntimeTerminal: t[1], Grace: g})
					}
				}
			}
		}
		for _, evict := range []bool{false, true} {
			for _, g := range graces {
				in = append(in, Input{Pod: i, Event: fsm.Kill.String(), Evict: evict, Grace: g})
			}
		}
		if c.RuntimePods {
			in = append(in, Input{Pod: i, Event: fsm.RuntimeKill.String(), Grace: 1},
				Input{Pod: i, Event: fsm.RuntimeUpdate.String(), Grace: fsm.NoGrace})
		}
		in = append(in, Input{Pod: i, Event: fsm.Dequeue.String(), Grace: fsm.NoGrace})
		for _, ev := range outcomes {
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
	// runtimeKill, runtimePods: the housekeeping kill of a runtime pod.
	runtimeKill *worker.KillPodOptions
	runtimePods []*worker.RunningPod
	// kills are the kill options of the Kill inputs; killPods the pods a
	// Kill with an override carries: each has the largest deletion grace
	// period (without a deletion timestamp: not deleting), so that the
	// engine must take the smaller of the two as the model's one
	// graceOverride, and choosing the larger is a step the model does not
	// take (Refinement).
	kills    map[killKey]*worker.KillPodOptions
	killPods []*v1.Pod
	// properties are the generated properties the configuration checks;
	// invariants and steps: whether any is of that kind.
	properties        []*property
	invariants, steps bool
	// effectProps are the properties of the explorer's own shell
	// variables (checked on every input: world.checkEffects); refine: the
	// configuration checks Refinement.
	effectProps []*property
	refine      bool
	// fullName is the one full name the static pods share.
	fullName string
}

type killKey struct {
	evict bool
	grace int64
}

type podKey struct {
	pod                     int
	deleting, terminalPhase bool
	grace                   int64
}

func newWorld(c Config) *world {
	w := &world{cfg: c, events: map[string]fsm.Event{}, pods: map[podKey]*v1.Pod{}}
	for _, ev := range fsm.Events() {
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
		kp := w.pod(i, uid, false, false, fsm.NoGrace)
		most := int64(spec.GraceDomain.Max)
		kp.DeletionGracePeriodSeconds = &most
		w.killPods = append(w.killPods, kp)
	}
	one := int64(1)
	w.runtimeKill = &worker.KillPodOptions{PodTerminationGracePeriodSecondsOverride: &one}
	w.kills = map[killKey]*worker.KillPodOptions{}
	for _, evict := range []bool{false, true} {
		for _, g := range graces {
			kill := &worker.KillPodOptions{Evict: evict}
			if g != fsm.NoGrace {
				kill.PodTerminationGracePeriodSecondsOverride = &g
			}
			w.kills[killKey{evict, g}] = kill
		}
	}
	w.refine = c.checks(errRefinement)
	for i := range properties {
		if properties[i].explorer {
			if c.checks(properties[i].name) {
				w.effectProps = append(w.effectProps, &properties[i])
			}
			continue
		}
		if c.checks(properties[i].name) {
			w.properties = append(w.properties, &properties[i])
			w.invariants = w.invariants || properties[i].kind == invariant
			w.steps = w.steps || properties[i].kind == stepProperty
		}
	}
	w.fullName = kubetypes.FullName(podName, podNamespace)
	return w
}

func (w *world) pod(i int, uid types.UID, deleting, terminalPhase bool, grace int64) *v1.Pod {
	spec := w.cfg.SpecGrace
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: uid, Name: podName, Namespace: podNamespace,
			Annotations: map[string]string{kubetypes.ConfigSourceAnnotation: "api"}},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: &spec},
	}
	if w.cfg.isStatic(i) {
		p.Annotations[kubetypes.ConfigSourceAnnotation] = "file"
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
	errSync     = errors.New("explorer: injected sync error")
	updateTypes = map[fsm.Event]worker.UpdateType{fsm.Create: worker.SyncPodCreate, fsm.Update: worker.SyncPodUpdate}
	// outcome is what a sync call returns for each outcome event, and the
	// sync functions that can return it.
	outcome = map[fsm.Event]struct {
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
