package explore

import (
	"fmt"
	"strings"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// podState is one pod's part of a spec state: rec[p] and the pod's shell
// variables (loop[p], timer[p], channels[p]).
type podState struct {
	State fsm.State
	Vars  fsm.Vars
	shell
}

// shell is what the Core's effects set up for a pod, as the explorer
// carries them out: a worker loop running, a timer armed, kill completion
// channels handed over and not yet closed.
type shell struct {
	Loop, Timer bool
	Channels    int
}

// snapshot is a simulation's state mapped to the spec's variables: rec and
// the shell variables, waiting (as pod indexes) and synced.
type snapshot struct {
	pods    []podState
	waiting []int
	synced  bool
}

// project maps a simulation to the spec's variables.
func (w *world) project(s *sim) snapshot {
	out := snapshot{pods: make([]podState, len(w.cfg.Pods)), synced: s.core.Synced()}
	for i, uid := range w.cfg.Pods {
		if r, ok := s.core.Record(uid); ok {
			out.pods[i] = podState{State: r.State, Vars: r.Vars}
		}
		out.pods[i].shell = s.shell[i]
		out.pods[i].Channels = len(s.open[i])
	}
	for _, uid := range s.core.Waiting(kubetypes.FullName(podName, podNamespace)) {
		for i, p := range w.cfg.Pods {
			if p == uid {
				out.waiting = append(out.waiting, i)
			}
		}
	}
	return out
}

// key packs a snapshot: 24 bits per pod, the waiting order in base
// MaxPods+1, and synced.
type key struct {
	pods    [MaxPods]uint32
	waiting uint32
	synced  bool
}

// boolVars lists the Boolean record variables in key order.
func boolVars(v *fsm.Vars) []*bool {
	return []*bool{&v.Static, &v.HasConfig, &v.Started, &v.Deleted, &v.Evicted, &v.RestartRequested, &v.ObservedRuntime, &v.Waiters}
}

func (s *snapshot) key() key {
	var k key
	for i := range s.pods {
		p := &s.pods[i]
		bits := uint32(p.State) | uint32(p.Vars.Pending)<<3 | uint32(p.Vars.InFlight)<<5 | uint32(min(max(p.Vars.Grace, 0), 15))<<8
		for j, b := range boolVars(&p.Vars) {
			if *b {
				bits |= 1 << (12 + j)
			}
		}
		if p.Loop {
			bits |= 1 << 20
		}
		if p.Timer {
			bits |= 1 << 21
		}
		k.pods[i] = bits | uint32(p.Channels)<<22
	}
	for _, i := range s.waiting {
		k.waiting = k.waiting*(MaxPods+1) + uint32(i+1)
	}
	k.synced = s.synced
	return k
}

// spec renders the snapshot as a TLC state of tla/PodLifecycle.tla.
func (w *world) spec(s *snapshot) State {
	rec := Value{Kind: FuncValue}
	for i, p := range s.pods {
		v := p.Vars
		str := func(x string) Value { return Value{Kind: StringValue, Str: x} }
		boolean := func(b bool) Value { return Value{Kind: BoolValue, Bool: b} }
		r := Value{Kind: RecordValue, Fields: []Field{
			{str("state"), str(p.State.String())},
			{str("static"), boolean(v.Static)},
			{str("hasConfig"), boolean(v.HasConfig)},
			{str("started"), boolean(v.Started)},
			{str("deleted"), boolean(v.Deleted)},
			{str("evicted"), boolean(v.Evicted)},
			{str("restartRequested"), boolean(v.RestartRequested)},
			{str("observedRuntime"), boolean(v.ObservedRuntime)},
			{str("grace"), Value{Kind: IntValue, Int: v.Grace}},
			{str("pending"), str(v.Pending.String())},
			{str("inFlight"), str(v.InFlight.String())},
			{str("waiters"), boolean(v.Waiters)},
		}}
		rec.Fields = append(rec.Fields, Field{Key: str(string(w.cfg.Pods[i])), Value: r})
	}
	waiting := Value{Kind: SeqValue, Elems: []Value{}}
	for _, i := range s.waiting {
		waiting.Elems = append(waiting.Elems, Value{Kind: StringValue, Str: string(w.cfg.Pods[i])})
	}
	perPod := func(f func(p *podState) Value) Value {
		v := Value{Kind: FuncValue}
		for i := range s.pods {
			v.Fields = append(v.Fields, Field{Key: Value{Kind: StringValue, Str: string(w.cfg.Pods[i])}, Value: f(&s.pods[i])})
		}
		return v
	}
	return State{"rec": rec, "waiting": waiting, "synced": Value{Kind: BoolValue, Bool: s.synced},
		"loop":     perPod(func(p *podState) Value { return Value{Kind: BoolValue, Bool: p.Loop} }),
		"timer":    perPod(func(p *podState) Value { return Value{Kind: BoolValue, Bool: p.Timer} }),
		"channels": perPod(func(p *podState) Value { return Value{Kind: IntValue, Int: int64(p.Channels)} }),
	}
}

func (s *snapshot) String() string {
	var b strings.Builder
	for i, p := range s.pods {
		v := p.Vars
		fmt.Fprintf(&b, "p%d=%s{", i+1, p.State)
		var parts []string
		for _, f := range []struct {
			on   bool
			name string
		}{{v.Static, "static"}, {v.HasConfig, "hasConfig"}, {v.Started, "started"}, {v.Deleted, "deleted"}, {v.Evicted, "evicted"},
			{v.RestartRequested, "restartRequested"}, {v.ObservedRuntime, "observedRuntime"}, {v.Waiters, "waiters"}} {
			if f.on {
				parts = append(parts, f.name)
			}
		}
		if v.Grace != 0 {
			parts = append(parts, fmt.Sprintf("grace=%d", v.Grace))
		}
		if v.Pending != fsm.PendingNone {
			parts = append(parts, "pending="+v.Pending.String())
		}
		if v.InFlight != fsm.InFlightNone {
			parts = append(parts, "inFlight="+v.InFlight.String())
		}
		if p.Loop {
			parts = append(parts, "loop")
		}
		if p.Timer {
			parts = append(parts, "timer")
		}
		if p.Channels > 0 {
			parts = append(parts, fmt.Sprintf("channels=%d", p.Channels))
		}
		b.WriteString(strings.Join(parts, " ") + "} ")
	}
	var waiting []string
	for _, i := range s.waiting {
		waiting = append(waiting, fmt.Sprintf("p%d", i+1))
	}
	fmt.Fprintf(&b, "waiting=[%s] synced=%v", strings.Join(waiting, " "), s.synced)
	return b.String()
}

// decode inverts key for a configuration with n pods.
func (k key) decode(n int) snapshot {
	s := snapshot{pods: make([]podState, n), synced: k.synced}
	for i := range s.pods {
		bits := k.pods[i]
		p := &s.pods[i]
		p.State = fsm.State(bits & 7)
		p.Vars.Pending = fsm.Pending(bits >> 3 & 3)
		p.Vars.InFlight = fsm.InFlight(bits >> 5 & 7)
		p.Vars.Grace = int64(bits >> 8 & 15)
		for j, b := range boolVars(&p.Vars) {
			*b = bits&(1<<(12+j)) != 0
		}
		p.Loop, p.Timer, p.Channels = bits&(1<<20) != 0, bits&(1<<21) != 0, int(bits>>22&3)
	}
	for w := k.waiting; w > 0; w /= MaxPods + 1 {
		s.waiting = append([]int{int(w%(MaxPods+1)) - 1}, s.waiting...)
	}
	return s
}
