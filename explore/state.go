package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/podlife/podlife/explore/tlavalue"
	"github.com/podlife/podlife/explore/tlcstate"
	"github.com/podlife/podlife/fsm"
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
	var out snapshot
	w.projectInto(s, &out)
	return out
}

// projectInto is project into out, reusing its arrays.
func (w *world) projectInto(s *sim, out *snapshot) {
	*out = snapshot{pods: slices.Grow(out.pods[:0], len(w.cfg.Pods))[:len(w.cfg.Pods)], waiting: out.waiting[:0], synced: s.core.Synced()}
	for i, uid := range w.cfg.Pods {
		out.pods[i] = podState{}
		if r, ok := s.core.Record(uid); ok {
			out.pods[i] = podState{State: r.State, Vars: r.Vars}
		}
		out.pods[i].shell = s.shell[i]
		out.pods[i].Channels = len(s.open[i])
	}
	for _, uid := range s.core.Waiting(w.fullName) {
		for i, p := range w.cfg.Pods {
			if p == uid {
				out.waiting = append(out.waiting, i)
			}
		}
	}
}

// key packs a snapshot into 128 bits, so that the visited set and the node
// table hold a state in 16 bytes: 24 bits per pod (podBits), the waiting
// order in base MaxPods+1 (10 bits for four pods) and synced.
//
//	k[0]: pod 0 (bits 0-23), pod 1 (24-47), pod 2's low 16 bits (48-63)
//	k[1]: pod 2's high 8 bits (0-7), pod 3 (8-31), waiting (32-41), synced (62)
type key [2]uint64

// boolVars lists the Boolean record variables in key order.
func boolVars(v *fsm.Vars) []*bool {
	return []*bool{&v.Static, &v.HasConfig, &v.Started, &v.Deleted, &v.Evicted, &v.RestartRequested, &v.ObservedRuntime, &v.Waiters}
}

// podBits packs one pod's part of a state: state (3 bits), pending (2),
// in flight (3), grace (4), the Boolean variables in boolVars order (8),
// loop, timer and channels (2).
func podBits(state fsm.State, v *fsm.Vars, sh shell) uint32 {
	bits := uint32(state) | uint32(v.Pending)<<3 | uint32(v.InFlight)<<5 | uint32(min(max(v.Grace, 0), 15))<<8
	for j, b := range [...]bool{v.Static, v.HasConfig, v.Started, v.Deleted, v.Evicted, v.RestartRequested, v.ObservedRuntime, v.Waiters} {
		if b {
			bits |= 1 << (12 + j)
		}
	}
	if sh.Loop {
		bits |= 1 << 20
	}
	if sh.Timer {
		bits |= 1 << 21
	}
	return bits | uint32(sh.Channels)<<22
}

// packKey assembles a key from the pods' bits, the waiting order (already
// in base MaxPods+1) and synced.
func packKey(pods *[MaxPods]uint32, waiting uint32, synced bool) key {
	k := key{uint64(pods[0]) | uint64(pods[1])<<24 | uint64(pods[2]&0xffff)<<48,
		uint64(pods[2]>>16) | uint64(pods[3])<<8 | uint64(waiting)<<32}
	if synced {
		k[1] |= 1 << 62
	}
	return k
}

// podAt returns pod i's 24 bits.
func (k key) podAt(i int) uint32 {
	switch i {
	case 0:
		return uint32(k[0] & 0xffffff)
	case 1:
		return uint32(k[0] >> 24 & 0xffffff)
	case 2:
		return uint32(k[0]>>48) | uint32(k[1]&0xff)<<16
	default:
		return uint32(k[1] >> 8 & 0xffffff)
	}
}

func (k key) waiting() uint32 { return uint32(k[1] >> 32 & 0x3ff) }
func (k key) synced() bool    { return k[1]&(1<<62) != 0 }

func (s *snapshot) key() key {
	var pods [MaxPods]uint32
	for i := range s.pods {
		p := &s.pods[i]
		pods[i] = podBits(p.State, &p.Vars, p.shell)
	}
	var waiting uint32
	for _, i := range s.waiting {
		waiting = waiting*(MaxPods+1) + uint32(i+1)
	}
	return packKey(&pods, waiting, s.synced)
}

// keyOf is project(s).key() without building the snapshot: the explorer
// computes it for every step.
func (w *world) keyOf(s *sim) key {
	var pods [MaxPods]uint32
	for i, uid := range w.cfg.Pods {
		sh := s.shell[i]
		sh.Channels = len(s.open[i])
		if r, ok := s.core.Record(uid); ok {
			pods[i] = podBits(r.State, &r.Vars, sh)
		} else {
			pods[i] = podBits(0, &fsm.Vars{}, sh) // as project: a pod without a record is all zero
		}
	}
	var waiting uint32
	for _, uid := range s.core.Waiting(w.fullName) {
		for i, p := range w.cfg.Pods {
			if p == uid {
				waiting = waiting*(MaxPods+1) + uint32(i+1)
			}
		}
	}
	return packKey(&pods, waiting, s.core.Synced())
}

// spec renders the snapshot as a TLC state of tla/PodLifecycle.tla.
func (w *world) spec(s *snapshot) tlcstate.State {
	rec := tlavalue.Value{Kind: tlavalue.FuncValue}
	for i, p := range s.pods {
		v := p.Vars
		str := func(x string) tlavalue.Value { return tlavalue.Value{Kind: tlavalue.StringValue, Str: x} }
		boolean := func(b bool) tlavalue.Value { return tlavalue.Value{Kind: tlavalue.BoolValue, Bool: b} }
		field := func(name string, v tlavalue.Value) tlavalue.Field { return tlavalue.Field{Key: str(name), Value: v} }
		r := tlavalue.Value{Kind: tlavalue.RecordValue, Fields: []tlavalue.Field{
			field("state", str(p.State.String())),
			field("static", boolean(v.Static)),
			field("hasConfig", boolean(v.HasConfig)),
			field("started", boolean(v.Started)),
			field("deleted", boolean(v.Deleted)),
			field("evicted", boolean(v.Evicted)),
			field("restartRequested", boolean(v.RestartRequested)),
			field("observedRuntime", boolean(v.ObservedRuntime)),
			field("grace", tlavalue.Value{Kind: tlavalue.IntValue, Int: v.Grace}),
			field("pending", str(v.Pending.String())),
			field("inFlight", str(v.InFlight.String())),
			field("waiters", boolean(v.Waiters)),
		}}
		rec.Fields = append(rec.Fields, tlavalue.Field{Key: str(string(w.cfg.Pods[i])), Value: r})
	}
	waiting := tlavalue.Value{Kind: tlavalue.SeqValue, Elems: []tlavalue.Value{}}
	for _, i := range s.waiting {
		waiting.Elems = append(waiting.Elems, tlavalue.Value{Kind: tlavalue.StringValue, Str: string(w.cfg.Pods[i])})
	}
	perPod := func(f func(p *podState) tlavalue.Value) tlavalue.Value {
		v := tlavalue.Value{Kind: tlavalue.FuncValue}
		for i := range s.pods {
			v.Fields = append(v.Fields, tlavalue.Field{Key: tlavalue.Value{Kind: tlavalue.StringValue, Str: string(w.cfg.Pods[i])}, Value: f(&s.pods[i])})
		}
		return v
	}
	return tlcstate.State{"rec": rec, "waiting": waiting, "synced": tlavalue.Value{Kind: tlavalue.BoolValue, Bool: s.synced},
		"loop":  perPod(func(p *podState) tlavalue.Value { return tlavalue.Value{Kind: tlavalue.BoolValue, Bool: p.Loop} }),
		"timer": perPod(func(p *podState) tlavalue.Value { return tlavalue.Value{Kind: tlavalue.BoolValue, Bool: p.Timer} }),
		"channels": perPod(func(p *podState) tlavalue.Value {
			return tlavalue.Value{Kind: tlavalue.IntValue, Int: int64(p.Channels)}
		}),
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
	var s snapshot
	k.decodeInto(&s, n)
	return s
}

// decodeInto is decode into s, reusing its arrays.
func (k key) decodeInto(s *snapshot, n int) {
	*s = snapshot{pods: slices.Grow(s.pods[:0], n)[:n], waiting: s.waiting[:0], synced: k.synced()}
	clear(s.pods)
	for i := range s.pods {
		bits := k.podAt(i)
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
	for w := k.waiting(); w > 0; w /= MaxPods + 1 {
		s.waiting = append(s.waiting, int(w%(MaxPods+1))-1)
	}
	slices.Reverse(s.waiting)
}
