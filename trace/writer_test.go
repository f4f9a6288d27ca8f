package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/spec"
	"github.com/podlife/podlife/trace"
)

func kill() fsm.Transition {
	return fsm.Transition{
		Pod: "p1", FullName: "web_default", Event: fsm.Kill, Row: "RunningKillTerminate", Ref: "T8",
		From: fsm.Running, To: fsm.TerminationRequested,
		Params: fsm.Params{Static: true, GraceOverride: 5, SpecGrace: 30, Notify: true, SlotFree: true},
		Vars: fsm.Vars{Static: true, HasConfig: true, Started: true, Grace: 5, Pending: fsm.PendingQueued,
			InFlight: fsm.InFlightSyncPod, Waiters: true},
		Effects: fsm.Cancel | fsm.KeepNotify | fsm.TakeUpdate,
	}
}

func TestWriterLineFormat(t *testing.T) {
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	w.Transition(kill())
	sync := fsm.Transition{Pod: "p2", Event: fsm.SyncKnownPods, Row: "FinishedSyncKnownPodsRemove", From: fsm.Finished, To: fsm.Absent,
		Params: fsm.Params{GraceOverride: fsm.NoGrace, Orphan: true, SlotFree: true}, Batch: 3}
	w.Transition(sync)
	want := `{"seq":1,"pod":"p1","fullName":"web_default","event":"Kill","row":"RunningKillTerminate","from":"Running","to":"TerminationRequested","batch":0,` +
		`"params":{"static":true,"deleting":false,"terminalPhase":false,"runtimeTerminal":false,"graceOverride":5,"specGrace":30,"notify":true,"evict":false,"orphan":false,"slotFree":true,"firstInLine":false},` +
		`"vars":{"static":true,"hasConfig":true,"started":true,"deleted":false,"evicted":false,"restartRequested":false,"observedRuntime":false,"grace":5,"pending":"Queued","inFlight":"SyncPod","waiters":true}}` + "\n" +
		`{"seq":2,"pod":"p2","fullName":"","event":"SyncKnownPods","row":"FinishedSyncKnownPodsRemove","from":"Finished","to":"Absent","batch":3,` +
		`"params":{"static":false,"deleting":false,"terminalPhase":false,"runtimeTerminal":false,"graceOverride":-1,"specGrace":0,"notify":false,"evict":false,"orphan":true,"slotFree":true,"firstInLine":false},` +
		`"vars":{"static":false,"hasConfig":false,"started":false,"deleted":false,"evicted":false,"restartRequested":false,"observedRuntime":false,"grace":0,"pending":"None","inFlight":"None","waiters":false}}` + "\n"
	if got := buf.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if w.Lines() != 2 {
		t.Errorf("Lines() = %d, want 2", w.Lines())
	}
	lines, err := trace.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	wantLine := trace.Line{Seq: 1, Pod: "p1", FullName: "web_default", Event: "Kill", Row: "RunningKillTerminate", From: "Running", To: "TerminationRequested",
		Params: trace.Params{Static: true, GraceOverride: 5, SpecGrace: 30, Notify: true, SlotFree: true},
		Vars:   trace.Vars{Static: true, HasConfig: true, Started: true, Grace: 5, Pending: "Queued", InFlight: "SyncPod", Waiters: true}}
	if len(lines) != 2 || lines[0] != wantLine || lines[1].Batch != 3 || lines[1].To != "Absent" {
		t.Fatalf("Read gave %+v", lines)
	}
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// TestWriterEmitsEveryField sets each field of fsm.Params and fsm.Vars in
// turn and checks that the line carries exactly that change under the
// field's TLA+ name: a field added to either struct and not written fails
// here.
func TestWriterEmitsEveryField(t *testing.T) {
	for _, section := range []string{"params", "vars"} {
		typ := reflect.TypeFor[fsm.Params]()
		if section == "vars" {
			typ = reflect.TypeFor[fsm.Vars]()
		}
		base := decodeSection(t, kill(), section, nil)
		if len(base) != typ.NumField() {
			t.Errorf("%s has %d fields, fsm.%s %d", section, len(base), typ.Name(), typ.NumField())
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := lowerFirst(f.Name)
			if _, ok := base[key]; !ok {
				t.Errorf("%s: fsm.%s.%s is not written as %q", section, typ.Name(), f.Name, key)
				continue
			}
			got := decodeSection(t, kill(), section, func(v reflect.Value) {
				fv := v.Field(i)
				switch fv.Kind() {
				case reflect.Bool:
					fv.SetBool(!fv.Bool())
				case reflect.Int64:
					fv.SetInt(fv.Int() + 100)
				case reflect.Uint8: // an enum: the next value
					fv.SetUint((fv.Uint() + 1) % 3)
				default:
					t.Fatalf("fsm.%s.%s: kind %s not handled by this test", typ.Name(), f.Name, fv.Kind())
				}
			})
			for k, v := range got {
				switch changed := !reflect.DeepEqual(v, base[k]); {
				case k == key && !changed:
					t.Errorf("%s: changing fsm.%s.%s left %q at %v", section, typ.Name(), f.Name, k, v)
				case k != key && changed:
					t.Errorf("%s: changing fsm.%s.%s changed %q (%v -> %v)", section, typ.Name(), f.Name, k, base[k], v)
				}
			}
		}
	}
}

// decodeSection writes tr (after edit changes its params or vars) and
// returns that section of the line.
func decodeSection(t *testing.T, tr fsm.Transition, section string, edit func(reflect.Value)) map[string]any {
	t.Helper()
	if edit != nil {
		if section == "params" {
			edit(reflect.ValueOf(&tr.Params).Elem())
		} else {
			edit(reflect.ValueOf(&tr.Vars).Elem())
		}
	}
	var buf bytes.Buffer
	trace.NewWriter(&buf).Transition(tr)
	var line map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	var m map[string]any
	if err := json.Unmarshal(line[section], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLineMatchesTheTable keeps the reader's structs, the machine's and the
// table's variables and parameters the same lists, in the same order.
func TestLineMatchesTheTable(t *testing.T) {
	names := func(typ reflect.Type) []string {
		var n []string
		for i := range typ.NumField() {
			n = append(n, typ.Field(i).Name)
		}
		return n
	}
	var specVars, specParams []string
	for _, v := range spec.Vars {
		specVars = append(specVars, v.Name)
	}
	for _, p := range spec.Params {
		specParams = append(specParams, p.Name)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"trace.Vars vs spec.Vars", names(reflect.TypeFor[trace.Vars]()), specVars},
		{"fsm.Vars vs spec.Vars", names(reflect.TypeFor[fsm.Vars]()), specVars},
		{"trace.Params vs spec.Params", names(reflect.TypeFor[trace.Params]()), specParams},
		{"fsm.Params vs spec.Params", names(reflect.TypeFor[fsm.Params]()), specParams},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	// Check itself refuses to run when Line cannot carry the table.
	if err := trace.Check(nil); err != nil {
		t.Errorf("Check(nil) = %v", err)
	}
}

func TestWriterIgnoresRejected(t *testing.T) {
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	w.Rejected("p1", fsm.Running, fsm.TerminatedDone, errors.New("no row"))
	if buf.Len() != 0 || w.Lines() != 0 {
		t.Fatalf("a rejected event was written: %q", buf.String())
	}
}

func TestWriterEscapesStrings(t *testing.T) {
	for _, s := range []string{"plain-uid", `quo"te`, `back\slash`, "tab\tnl\ncr\r", "ctl\x00\x1f\x7f", "ünïcødé ✓", "bad\xffutf8", "\u2028"} {
		var buf bytes.Buffer
		tr := kill()
		tr.Pod, tr.FullName = "p", s
		trace.NewWriter(&buf).Transition(tr)
		raw := bytes.Clone(buf.Bytes())
		lines, err := trace.Read(&buf)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if got := lines[0].FullName; got != want {
			t.Errorf("%q came back as %q", s, got)
		}
		if bytes.ContainsFunc(raw[:len(raw)-1], func(r rune) bool { return r < 0x20 }) {
			t.Errorf("%q: raw control character in the line", s)
		}
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.ErrShortWrite
	}
	f.n--
	return len(p), nil
}

func TestWriterStopsAtTheFirstError(t *testing.T) {
	fw := &failingWriter{n: 1}
	w := trace.NewWriter(fw)
	w.Transition(kill())
	w.Transition(kill())
	w.Transition(kill())
	if !errors.Is(w.Err(), io.ErrShortWrite) {
		t.Fatalf("Err() = %v", w.Err())
	}
	if w.Lines() != 2 {
		t.Errorf("Lines() = %d, want 2 (one written, one failed, then none tried)", w.Lines())
	}
}

// TestWriterDoesNotAllocate keeps the writer cheap enough to leave on.
func TestWriterDoesNotAllocate(t *testing.T) {
	w := trace.NewWriter(io.Discard)
	tr := kill()
	if n := testing.AllocsPerRun(1000, func() { w.Transition(tr) }); n != 0 {
		t.Fatalf("%v allocations per line, want 0", n)
	}
}

func BenchmarkWriter(b *testing.B) {
	w := trace.NewWriter(io.Discard)
	tr := kill()
	b.ReportAllocs()
	for b.Loop() {
		w.Transition(tr)
	}
}

func TestReadRejectsIncompleteLines(t *testing.T) {
	var buf bytes.Buffer
	trace.NewWriter(&buf).Transition(kill())
	good := strings.TrimSpace(buf.String())
	for _, c := range []struct{ name, line, want string }{
		{"missing top-level field", strings.Replace(good, `"batch":0,`, "", 1), "missing field(s) batch"},
		{"missing var", strings.Replace(good, `"grace":5,`, "", 1), "missing field(s) vars.grace"},
		{"missing param", strings.Replace(good, `"evict":false,`, "", 1), "missing field(s) params.evict"},
		{"unknown field", strings.Replace(good, `"batch":0,`, `"batch":0,"extra":1,`, 1), "unknown field(s) extra"},
		{"unknown var", strings.Replace(good, `"grace":5,`, `"grace":5,"color":"red",`, 1), "unknown field(s) vars.color"},
		{"not JSON", "{seq:1}", "invalid character"},
		{"wrong type", strings.Replace(good, `"grace":5`, `"grace":"5"`, 1), "cannot unmarshal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := trace.Read(strings.NewReader(good + "\n" + c.line + "\n"))
			if err == nil || !strings.Contains(err.Error(), "trace line 2: ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one about line 2 containing %q", err, c.want)
			}
		})
	}
}
