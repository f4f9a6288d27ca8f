package trace

import (
	"io"
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/jsonline"
)

// Writer is an fsm.Observer that writes every transition as one NDJSON line
// (see the package documentation for the format). Rejected events are not
// steps of the lifecycle and are not written.
//
// A Writer has no lock of its own: the machine calls its observer while the
// machine's owner holds the owner's lock (worker.PodWorkers holds its mutex
// around every Fire), and that lock serialises the calls. Err and Lines must
// be called under the same lock or after the engine stopped.
//
// Each line is built in a reused buffer with strconv, without reflection or
// encoding/json, and handed to the underlying io.Writer with one Write call.
// The Writer does not buffer across lines; wrap the destination in a
// bufio.Writer (and flush it yourself) to batch system calls.
type Writer struct {
	w   io.Writer
	buf []byte
	seq uint64
	err error
}

var _ fsm.Observer = (*Writer)(nil)

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, 640)}
}

// Err returns the first error of the underlying writer. After an error the
// Writer writes nothing more: a trace with a hole could not be replayed.
func (w *Writer) Err() error { return w.err }

// Lines returns the number of lines written.
func (w *Writer) Lines() uint64 { return w.seq }

// Rejected implements fsm.Observer; a rejected event changes nothing and is
// not written.
func (w *Writer) Rejected(types.UID, fsm.State, fsm.Event, error) {}

// Transition implements fsm.Observer: it writes t as the next line.
func (w *Writer) Transition(t fsm.Transition) {
	if w.err != nil {
		return
	}
	w.seq++
	b := w.buf[:0]
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, w.seq, 10)
	b = append(b, `,"pod":`...)
	b = jsonline.AppendString(b, string(t.Pod))
	b = append(b, `,"fullName":`...)
	b = jsonline.AppendString(b, t.FullName)
	b = append(b, `,"event":"`...)
	b = append(b, t.Event.String()...)
	b = append(b, `","row":`...)
	b = jsonline.AppendString(b, t.Row)
	b = append(b, `,"from":"`...)
	b = append(b, t.From.String()...)
	b = append(b, `","to":"`...)
	b = append(b, t.To.String()...)
	b = append(b, `","batch":`...)
	b = strconv.AppendUint(b, t.Batch, 10)
	b = appendParams(b, &t.Params)
	b = appendVars(b, &t.Vars)
	b = append(b, "}\n"...)
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		w.err = err
	}
}

// appendParams writes `,"params":{...}`: every field of fsm.Params in
// struct order, named like the TLA+ record fields. TestWriterEmitsEveryField
// fails when fsm.Params gains a field that is not written here.
func appendParams(b []byte, p *fsm.Params) []byte {
	b = append(b, `,"params":{"static":`...)
	b = strconv.AppendBool(b, p.Static)
	b = append(b, `,"deleting":`...)
	b = strconv.AppendBool(b, p.Deleting)
	b = append(b, `,"terminalPhase":`...)
	b = strconv.AppendBool(b, p.TerminalPhase)
	b = append(b, `,"runtimeTerminal":`...)
	b = strconv.AppendBool(b, p.RuntimeTerminal)
	b = append(b, `,"graceOverride":`...)
	b = strconv.AppendInt(b, p.GraceOverride, 10)
	b = append(b, `,"specGrace":`...)
	b = strconv.AppendInt(b, p.SpecGrace, 10)
	b = append(b, `,"notify":`...)
	b = strconv.AppendBool(b, p.Notify)
	b = append(b, `,"evict":`...)
	b = strconv.AppendBool(b, p.Evict)
	b = append(b, `,"orphan":`...)
	b = strconv.AppendBool(b, p.Orphan)
	b = append(b, `,"slotFree":`...)
	b = strconv.AppendBool(b, p.SlotFree)
	b = append(b, `,"firstInLine":`...)
	b = strconv.AppendBool(b, p.FirstInLine)
	return append(b, '}')
}

// appendVars writes `,"vars":{...}`: every field of fsm.Vars in struct
// order, enums by name.
func appendVars(b []byte, v *fsm.Vars) []byte {
	b = append(b, `,"vars":{"static":`...)
	b = strconv.AppendBool(b, v.Static)
	b = append(b, `,"hasConfig":`...)
	b = strconv.AppendBool(b, v.HasConfig)
	b = append(b, `,"started":`...)
	b = strconv.AppendBool(b, v.Started)
	b = append(b, `,"deleted":`...)
	b = strconv.AppendBool(b, v.Deleted)
	b = append(b, `,"evicted":`...)
	b = strconv.AppendBool(b, v.Evicted)
	b = append(b, `,"restartRequested":`...)
	b = strconv.AppendBool(b, v.RestartRequested)
	b = append(b, `,"observedRuntime":`...)
	b = strconv.AppendBool(b, v.ObservedRuntime)
	b = append(b, `,"grace":`...)
	b = strconv.AppendInt(b, v.Grace, 10)
	b = append(b, `,"pending":"`...)
	b = append(b, v.Pending.String()...)
	b = append(b, `","inFlight":"`...)
	b = append(b, v.InFlight.String()...)
	b = append(b, `","waiters":`...)
	b = strconv.AppendBool(b, v.Waiters)
	return append(b, '}')
}
