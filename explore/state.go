package explore

import (
	"fmt"
	"strings"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/worker"
)

// podState is one pod's part of a spec state: rec[p].
type podState struct {
	State fsm.State
	Vars  fsm.Vars
}

// snapshot is a core's state mapped to the spec's variables: rec, waiting
// (as pod indexes) and synced.
type snapshot struct {
	pods    []podState
	waiting []int
	synced  bool
}

// project maps a core to the spec's variables. A pod without a record is
// Removed when it had one before (prev), as in the spec; the engine deletes
// removed records and so cannot tell.
func (w *world) project(core *worker.Core, prev *snapshot) snapshot {
	s := snapshot{pods: make([]podState, len(w.cfg.Pods)), synced: core.Synced()}
	for i, uid := range w.cfg.Pods {
		if r, ok := core.Record(uid); ok {
			s.pods[i] = podState{State: r.State, Vars: r.Vars}
			continue
		}
		if prev != nil && (prev.pods[i].State.HasRecord() || prev.pods[i].State == fsm.Removed) {
			s.pods[i].State = fsm.Removed
		}
	}
	for _, uid := range core.Waiting(worker.FullName(podName, podNamespace)) {
		for i, p := range w.cfg.Pods {
			if p == uid {
				s.waiting = append(s.waiting, i)
			}
		}
	}
	return s
}

// key packs a snapshot: 20 bits per pod, the waiting order in base
// MaxPods+1, and synced.
type key struct {
	pods    [MaxPods]uint32
	waiting uint32
	synced  bool
}

func (s *snapshot) key() key {
	var k key
	for i, p := range s.pods {
		v := p.Vars
		bits := uint32(p.State) | uint32(p.Vars.Pending)<<3 | uint32(p.Vars.InFlight)<<5 | uint32(min(max(v.Grace, 0), 15))<<8
		for j, b := range []bool{v.Static, v.HasConfig, v.Started, v.Deleted, v.Evicted, v.RestartRequested, v.ObservedRuntime, v.Waiters} {
			if b {
				bits |= 1 << (12 + j)
			}
		}
		k.pods[i] = bits
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
	return State{"rec": rec, "waiting": waiting, "synced": Value{Kind: BoolValue, Bool: s.synced}}
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
		for j, b := range []*bool{&p.Vars.Static, &p.Vars.HasConfig, &p.Vars.Started, &p.Vars.Deleted, &p.Vars.Evicted, &p.Vars.RestartRequested, &p.Vars.ObservedRuntime, &p.Vars.Waiters} {
			*b = bits&(1<<(12+j)) != 0
		}
	}
	for w := k.waiting; w > 0; w /= MaxPods + 1 {
		s.waiting = append([]int{int(w%(MaxPods+1)) - 1}, s.waiting...)
	}
	return s
}
