package container

import (
	"io"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	cfsm "github.com/podlife/podlife/fsm/container"
	"github.com/podlife/podlife/internal/jsonline"
)

// Recorder writes container transitions as trace lines (see the package
// documentation). It is safe for concurrent use: the pod workers of
// different pods decide at the same time, and the lines of one trace must
// be numbered in the order they are written. A nil *Recorder records
// nothing, so a plan can call it unconditionally.
//
// Each line is built in a reused buffer with strconv and handed to the
// underlying io.Writer with one Write call, under the Recorder's lock.
type Recorder struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	seq   uint64
	syncs uint64
	err   error
}

// NewRecorder returns a Recorder that writes to w.
func NewRecorder(w io.Writer) *Recorder {
	return &Recorder{w: w, buf: make([]byte, 0, 768)}
}

// Err returns the first error of the underlying writer. After an error the
// Recorder writes nothing more: a trace with a hole could not be replayed.
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Lines returns the number of lines written.
func (r *Recorder) Lines() uint64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Fire fires the event through cfsm.Fire and records the transition of
// the container name of pod in sync 0 (see Record). A refused event is not
// a transition and is not recorded; its error is returned as Fire returns
// it.
func (r *Recorder) Fire(pod types.UID, name string, s cfsm.State, v cfsm.Vars, ev cfsm.Event, p cfsm.Params) (cfsm.Transition, error) {
	t, err := cfsm.Fire(s, v, ev, p)
	if err == nil {
		r.Record(pod, name, ev, p, t)
	}
	return t, err
}

// Record writes t, the transition of the container name of pod that
// cfsm.Fire returned for the event ev and the params p, as the next line,
// in sync 0: for a caller that sees every transition of its containers,
// so that each container's lines form one history from its first line to
// its last. A plan that observes its containers' records afresh in each
// sync records through Begin instead.
func (r *Recorder) Record(pod types.UID, name string, ev cfsm.Event, p cfsm.Params, t cfsm.Transition) {
	r.write(pod, 0, name, ev, p, t)
}

// Sync records the transitions of one sync of one pod: the plan observed
// its containers' records from the runtime and fires rows from there. A
// container's lines chain within a sync; its first line in a sync may
// start from any record (the runtime changed it since: an instance exited,
// a probe passed). A nil *Sync records nothing.
type Sync struct {
	r   *Recorder
	pod types.UID
	n   uint64
}

// Begin starts the next sync of pod; its lines carry the sync's number,
// 1 for the first Begin of the Recorder. A nil Recorder returns a nil
// *Sync.
func (r *Recorder) Begin(pod types.UID) *Sync {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs++
	return &Sync{r: r, pod: pod, n: r.syncs}
}

// Record writes t, the transition of the container name that cfsm.Fire
// returned for the event ev and the params p, as the next line of the
// sync.
func (s *Sync) Record(name string, ev cfsm.Event, p cfsm.Params, t cfsm.Transition) {
	if s == nil {
		return
	}
	s.r.write(s.pod, s.n, name, ev, p, t)
}

// Fire fires the event through cfsm.Fire and records the transition in the
// sync; a refused event is not recorded.
func (s *Sync) Fire(name string, st cfsm.State, v cfsm.Vars, ev cfsm.Event, p cfsm.Params) (cfsm.Transition, error) {
	t, err := cfsm.Fire(st, v, ev, p)
	if err == nil {
		s.Record(name, ev, p, t)
	}
	return t, err
}

func (r *Recorder) write(pod types.UID, syncN uint64, name string, ev cfsm.Event, p cfsm.Params, t cfsm.Transition) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	r.seq++
	b := Line{Seq: r.seq, Pod: string(pod), Sync: syncN, Container: name, Event: ev, Row: t.Row, From: t.From, To: t.To,
		Params: p, Before: t.Before, After: t.After, Effects: t.Effects}.Append(r.buf[:0])
	r.buf = b
	if _, err := r.w.Write(b); err != nil {
		r.err = err
	}
}

// Append appends the line as a Recorder writes it, with its newline.
func (l Line) Append(b []byte) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, l.Seq, 10)
	b = append(b, `,"pod":`...)
	b = jsonline.AppendString(b, l.Pod)
	b = append(b, `,"sync":`...)
	b = strconv.AppendUint(b, l.Sync, 10)
	b = append(b, `,"container":`...)
	b = jsonline.AppendString(b, l.Container)
	b = append(b, `,"event":"`...)
	b = append(b, l.Event.String()...)
	b = append(b, `","row":`...)
	b = jsonline.AppendString(b, l.Row)
	b = append(b, `,"from":"`...)
	b = append(b, l.From.String()...)
	b = append(b, `","to":"`...)
	b = append(b, l.To.String()...)
	b = append(b, `","params":`...)
	b = appendParams(b, &l.Params)
	b = append(b, `,"before":`...)
	b = appendVars(b, &l.Before)
	b = append(b, `,"after":`...)
	b = appendVars(b, &l.After)
	b = append(b, `,"effects":[`...)
	first := true
	for f := cfsm.Effect(1); f != 0; f <<= 1 {
		if l.Effects.Has(f) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '"')
			b = append(b, f.String()...)
			b = append(b, '"')
		}
	}
	return append(b, "]}\n"...)
}

// appendParams writes every field of cfsm.Params in struct order, named
// like the TLA+ record fields. TestRecorderEmitsEveryField fails when the
// table gains a parameter that is not written here.
func appendParams(b []byte, p *cfsm.Params) []byte {
	b = append(b, `{"kind":"`...)
	b = append(b, p.Kind.String()...)
	b = append(b, `","policy":"`...)
	b = append(b, p.Policy.String()...)
	b = append(b, `","rule":`...)
	b = strconv.AppendBool(b, p.Rule)
	b = append(b, `,"code":"`...)
	b = append(b, p.Code.String()...)
	b = append(b, `","sandbox":`...)
	b = strconv.AppendInt(b, int64(p.Sandbox), 10)
	b = append(b, `,"sandboxReady":`...)
	b = strconv.AppendBool(b, p.SandboxReady)
	b = append(b, `,"terminating":`...)
	b = strconv.AppendBool(b, p.Terminating)
	b = append(b, `,"first":`...)
	b = strconv.AppendBool(b, p.First)
	b = append(b, `,"beforeKind":"`...)
	b = append(b, p.BeforeKind.String()...)
	b = append(b, `","beforeState":"`...)
	b = append(b, p.BeforeState.String()...)
	b = append(b, `","beforeGen":`...)
	b = strconv.AppendInt(b, int64(p.BeforeGen), 10)
	b = append(b, `,"beforeStarted":`...)
	b = strconv.AppendBool(b, p.BeforeStarted)
	b = append(b, `,"mainSeen":`...)
	b = strconv.AppendBool(b, p.MainSeen)
	b = append(b, `,"regularsStopped":`...)
	b = strconv.AppendBool(b, p.RegularsStopped)
	b = append(b, `,"laterSidecarsStopped":`...)
	b = strconv.AppendBool(b, p.LaterSidecarsStopped)
	b = append(b, `,"phase":"`...)
	b = append(b, p.Phase.String()...)
	b = append(b, `","podNever":`...)
	b = strconv.AppendBool(b, p.PodNever)
	b = append(b, `,"anyRan":`...)
	b = strconv.AppendBool(b, p.AnyRan)
	return append(b, '}')
}

// appendVars writes every field of cfsm.Vars in struct order.
func appendVars(b []byte, v *cfsm.Vars) []byte {
	b = append(b, `{"gen":`...)
	b = strconv.AppendInt(b, int64(v.Gen), 10)
	b = append(b, `,"started":`...)
	b = strconv.AppendBool(b, v.Started)
	b = append(b, `,"code":"`...)
	b = append(b, v.Code.String()...)
	b = append(b, `","backoff":`...)
	b = strconv.AppendInt(b, int64(v.Backoff), 10)
	b = append(b, `,"replacing":`...)
	b = strconv.AppendBool(b, v.Replacing)
	return append(b, '}')
}
