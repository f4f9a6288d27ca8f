package container_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	cfsm "github.com/podlife/podlife/fsm/container"
	ctrace "github.com/podlife/podlife/trace/container"
)

// jsonKeys lists the top-level keys of the first line of text, in order.
func jsonKeys(t *testing.T, text string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(strings.SplitN(text, "\n", 2)[0]))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// exitLine is a runtime exit of a started sidecar, fired for real.
func exitLine(t *testing.T) (cfsm.Params, cfsm.Transition) {
	t.Helper()
	p := cfsm.Params{Kind: cfsm.ContainerKindSidecar, Policy: cfsm.RestartPolicyAlways, Code: cfsm.ExitCodeOther, Sandbox: 1,
		SandboxReady: true, BeforeKind: cfsm.ContainerKindInit, BeforeState: cfsm.ContainerStateExitedSuccess, BeforeGen: 1,
		Phase: cfsm.PodPhaseRunning, AnyRan: true, RegularsStopped: true}
	tr, err := cfsm.Fire(cfsm.Running, cfsm.Vars{Gen: 1, Started: true, Backoff: 2}, cfsm.Exit, p)
	if err != nil {
		t.Fatal(err)
	}
	return p, tr
}

func TestRecorderLineFormat(t *testing.T) {
	var buf bytes.Buffer
	rec := ctrace.NewRecorder(&buf)
	p, tr := exitLine(t)
	rec.Record("uid-1", "proxy", cfsm.Exit, p, tr)
	kill := cfsm.Params{Kind: cfsm.ContainerKindRegular, Policy: cfsm.RestartPolicyAlways, Sandbox: 1, Terminating: true, First: true}
	if _, err := rec.Fire("uid-1", "web", cfsm.Running, cfsm.Vars{Gen: 1}, cfsm.Stop, kill); err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"pod":"uid-1","sync":0,"container":"proxy","event":"Exit","row":"RunningExitFailure","from":"Running","to":"ExitedFailure",` +
		`"params":{"kind":"Sidecar","policy":"Always","rule":false,"code":"Other","sandbox":1,"sandboxReady":true,"terminating":false,"first":false,"beforeKind":"Init","beforeState":"ExitedSuccess","beforeGen":1,"beforeStarted":false,"mainSeen":false,"regularsStopped":true,"laterSidecarsStopped":false,"phase":"Running","podNever":false,"anyRan":true},` +
		`"before":{"gen":1,"started":true,"code":"None","backoff":2,"replacing":false},"after":{"gen":1,"started":true,"code":"Other","backoff":2,"replacing":false},"effects":[]}` + "\n" +
		`{"seq":2,"pod":"uid-1","sync":0,"container":"web","event":"Stop","row":"RunningStop","from":"Running","to":"ExitedFailure",` +
		`"params":{"kind":"Regular","policy":"Always","rule":false,"code":"None","sandbox":1,"sandboxReady":false,"terminating":true,"first":true,"beforeKind":"Init","beforeState":"NotCreated","beforeGen":0,"beforeStarted":false,"mainSeen":false,"regularsStopped":false,"laterSidecarsStopped":false,"phase":"Pending","podNever":false,"anyRan":false},` +
		`"before":{"gen":1,"started":false,"code":"None","backoff":0,"replacing":false},"after":{"gen":1,"started":false,"code":"Killed","backoff":0,"replacing":false},"effects":["KillInstance"]}` + "\n"
	if got := buf.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if rec.Lines() != 2 {
		t.Errorf("Lines() = %d, want 2", rec.Lines())
	}
	lines, err := ctrace.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	wantLine := ctrace.Line{Seq: 1, Pod: "uid-1", Container: "proxy", Event: cfsm.Exit, Row: tr.Row, From: tr.From, To: tr.To,
		Params: p, Before: tr.Before, After: tr.After, Effects: tr.Effects}
	if len(lines) != 2 || lines[0] != wantLine || lines[1].Effects != cfsm.KillInstance {
		t.Fatalf("Read gave %+v", lines)
	}
	if err := ctrace.Check(lines); err != nil {
		t.Fatal(err)
	}
}

// TestRecorderEmitsEveryField sets each field of cfsm.Params and
// cfsm.Vars in turn to a value other than its zero and checks that the line
// reads back with exactly that value: a field the table gains and the
// Recorder does not write fails here (Read requires every field).
func TestRecorderEmitsEveryField(t *testing.T) {
	p0, tr0 := exitLine(t)
	for _, section := range []string{"params", "before", "after"} {
		var typ reflect.Type
		switch section {
		case "params":
			typ = reflect.TypeFor[cfsm.Params]()
		default:
			typ = reflect.TypeFor[cfsm.Vars]()
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			t.Run(section+"."+ctrace.FieldName(f.Name), func(t *testing.T) {
				p, tr := p0, tr0
				var v reflect.Value
				switch section {
				case "params":
					v = reflect.ValueOf(&p).Elem()
				case "before":
					v = reflect.ValueOf(&tr.Before).Elem()
				default:
					v = reflect.ValueOf(&tr.After).Elem()
				}
				fv := v.Field(i)
				switch fv.Kind() {
				case reflect.Bool:
					fv.SetBool(!fv.Bool())
				case reflect.Int:
					fv.SetInt(fv.Int() + 7)
				case reflect.Uint8:
					fv.SetUint(fv.Uint() ^ 1)
				default:
					t.Fatalf("no test value for a %s", fv.Type())
				}
				var buf bytes.Buffer
				ctrace.NewRecorder(&buf).Record("u", "c", cfsm.Exit, p, tr)
				lines, err := ctrace.Read(&buf)
				if err != nil {
					t.Fatal(err)
				}
				if lines[0].Params != p || lines[0].Before != tr.Before || lines[0].After != tr.After {
					t.Fatalf("the line reads back as %+v", lines[0])
				}
			})
		}
	}
}

func TestReadRefusesBadLines(t *testing.T) {
	var buf bytes.Buffer
	p, tr := exitLine(t)
	ctrace.NewRecorder(&buf).Record("u", "c", cfsm.Exit, p, tr)
	good := strings.TrimSpace(buf.String())
	for _, c := range []struct{ name, line, err string }{
		{"not json", "{", "unexpected end of JSON input"},
		{"unknown field", strings.Replace(good, `"seq":1`, `"seq":1,"extra":0`, 1), "unknown field(s) extra"},
		{"missing var", strings.Replace(good, `,"replacing":false}`, `}`, 1), "missing field(s) before.replacing"},
		{"unknown event", strings.Replace(good, `"event":"Exit"`, `"event":"Explode"`, 1), `event: "Explode" is not a value of Event`},
		{"unknown enum", strings.Replace(good, `"kind":"Sidecar"`, `"kind":"Helper"`, 1), `params.kind: "Helper" is not a value of ContainerKind`},
		{"wrong type", strings.Replace(good, `"sandbox":1`, `"sandbox":true`, 1), "params.sandbox"},
		{"unknown effect", strings.Replace(good, `"effects":[]`, `"effects":["Reboot"]`, 1), `effects: "Reboot" is not an effect`},
		{"effect twice", strings.Replace(good, `"effects":[]`, `"effects":["KillInstance","KillInstance"]`, 1), "effects: KillInstance twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ctrace.Read(strings.NewReader(good + "\n\n" + c.line + "\n"))
			if err == nil || !strings.Contains(err.Error(), "line 3: ") || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Read: %v; want an error naming line 3 and %q", err, c.err)
			}
		})
	}
}

// A nil Recorder records nothing: a plan without tracing calls it all the
// same.
func TestNilRecorder(t *testing.T) {
	var rec *ctrace.Recorder
	p, tr := exitLine(t)
	rec.Record("u", "c", cfsm.Exit, p, tr)
	if _, err := rec.Fire("u", "c", cfsm.Running, tr.Before, cfsm.Exit, p); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Fire("u", "c", cfsm.NotCreated, cfsm.Vars{}, cfsm.Begin, p); err == nil {
		t.Fatal("Fire accepted Begin in NotCreated")
	}
	if rec.Lines() != 0 || rec.Err() != nil {
		t.Fatal("a nil Recorder has lines or an error")
	}
}

// A plan records each sync through Begin: its lines carry the sync's
// number, and a container's first line in a sync may start from the record
// the plan observed, not the one its previous sync left.
func TestSyncs(t *testing.T) {
	var buf bytes.Buffer
	rec := ctrace.NewRecorder(&buf)
	p := cfsm.Params{Kind: cfsm.ContainerKindRegular, Policy: cfsm.RestartPolicyAlways, SandboxReady: true, First: true}
	s1 := rec.Begin("uid-1")
	if _, err := s1.Fire("web", cfsm.NotCreated, cfsm.Vars{}, cfsm.Start, p); err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Fire("web", cfsm.Created, cfsm.Vars{}, cfsm.Begin, p); err != nil {
		t.Fatal(err)
	}
	other := rec.Begin("uid-2")
	// The instance exited between the syncs: the next one observes it.
	s2 := rec.Begin("uid-1")
	if _, err := s2.Fire("web", cfsm.ExitedFailure, cfsm.Vars{Code: cfsm.ExitCodeOther}, cfsm.Restart, p); err != nil {
		t.Fatal(err)
	}
	other.Record("web", cfsm.Start, p, mustFire(t, cfsm.NotCreated, cfsm.Vars{}, cfsm.Start, p))
	lines, err := ctrace.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var syncs []uint64
	for _, l := range lines {
		syncs = append(syncs, l.Sync)
	}
	if !slices.Equal(syncs, []uint64{1, 1, 3, 2}) {
		t.Fatalf("the lines' syncs are %v, want [1 1 3 2]", syncs)
	}
	if err := ctrace.Check(lines); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// In one sync the same jump is a missing line.
	lines[2].Sync = 1
	if err := ctrace.Check(lines); err == nil || !strings.Contains(err.Error(), "line 3 ") {
		t.Fatalf("Check of a sync whose lines do not chain: %v", err)
	}
	var nilRec *ctrace.Recorder
	if s := nilRec.Begin("uid-1"); s != nil {
		t.Fatal("a nil Recorder began a sync")
	} else if _, err := s.Fire("web", cfsm.NotCreated, cfsm.Vars{}, cfsm.Start, p); err != nil {
		t.Fatal(err)
	}
}

func mustFire(t *testing.T, s cfsm.State, v cfsm.Vars, ev cfsm.Event, p cfsm.Params) cfsm.Transition {
	t.Helper()
	tr, err := cfsm.Fire(s, v, ev, p)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Fire records what it fires and nothing when the event is refused.
func TestFireRecordsOnlyTransitions(t *testing.T) {
	var buf bytes.Buffer
	rec := ctrace.NewRecorder(&buf)
	p, _ := exitLine(t)
	if _, err := rec.Fire("u", "c", cfsm.NotCreated, cfsm.Vars{}, cfsm.Begin, p); err == nil {
		t.Fatal("Fire accepted Begin in NotCreated")
	}
	if rec.Lines() != 0 || buf.Len() != 0 {
		t.Fatalf("a refused event was recorded: %q", buf.String())
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(b), nil
}

func TestRecorderStopsAtTheFirstWriteError(t *testing.T) {
	w := &failingWriter{n: 1}
	rec := ctrace.NewRecorder(w)
	p, tr := exitLine(t)
	for range 3 {
		rec.Record("u", "c", cfsm.Exit, p, tr)
	}
	if rec.Err() == nil || rec.Lines() != 2 {
		t.Fatalf("Err() = %v, Lines() = %d; want the write error after 2 lines", rec.Err(), rec.Lines())
	}
}

// Pods decide concurrently: the lines of one Recorder are whole and
// numbered in the order they are written.
func TestRecorderIsSafeForConcurrentUse(t *testing.T) {
	var buf bytes.Buffer
	rec := ctrace.NewRecorder(&buf)
	p, tr := exitLine(t)
	const pods, each = 8, 50
	var wg sync.WaitGroup
	for i := range pods {
		wg.Go(func() {
			for range each {
				rec.Record(types.UID(fmt.Sprint("uid-", i)), "proxy", cfsm.Exit, p, tr)
			}
		})
	}
	wg.Wait()
	lines, err := ctrace.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != pods*each {
		t.Fatalf("%d lines, want %d", len(lines), pods*each)
	}
	seqs := make([]uint64, len(lines))
	for i, l := range lines {
		seqs[i] = l.Seq
	}
	if !slices.IsSorted(seqs) || seqs[0] != 1 || seqs[len(seqs)-1] != pods*each {
		t.Fatalf("the lines are not numbered in order: %v", seqs)
	}
}

// BenchmarkRecorder: one line per container decision; the Recorder
// reuses its buffer (0 allocations per line).
func BenchmarkRecorder(b *testing.B) {
	p := cfsm.Params{Kind: cfsm.ContainerKindSidecar, Policy: cfsm.RestartPolicyAlways, Code: cfsm.ExitCodeOther, Sandbox: 1, SandboxReady: true}
	tr, err := cfsm.Fire(cfsm.Running, cfsm.Vars{Gen: 1, Started: true}, cfsm.Exit, p)
	if err != nil {
		b.Fatal(err)
	}
	rec := ctrace.NewRecorder(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		rec.Record("0b5a2c47-8f61-4c1e-9d3a-2f7e6b1c9a04", "proxy", cfsm.Exit, p, tr)
	}
}
