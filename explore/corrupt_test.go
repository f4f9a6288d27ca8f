package explore

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/podlife/podlife/trace"
)

var corruptUpdate = flag.Bool("corrupt.update", false, "rewrite ../trace/testdata/corrupt/*.ndjson from ../trace/testdata/static.ndjson")

// corruption is one committed corrupted trace: a copy of
// trace/testdata/static.ndjson with one kind of error. TLC must reject
// every one (tools/tlc.sh --trace-reject, CI step tlc-traces-reject);
// step and want say where and why trace.Check rejects it (step 0: it
// accepts it).
type corruption struct {
	name   string
	step   int
	want   string
	mutate func([]trace.Line) []trace.Line
}

// at changes line n (1-based).
func at(n int, f func(*trace.Line)) func([]trace.Line) []trace.Line {
	return func(ls []trace.Line) []trace.Line { f(&ls[n-1]); return ls }
}

var corruptions = []corruption{
	// RunningKillTerminate fires; the line names a row of another event.
	{"wrong-row", 6, "the table fires row RunningKillTerminate, the line says RunningCreateTerminate",
		at(6, func(l *trace.Line) { l.Row = "RunningCreateTerminate" })},
	// The same state and event, the other row: only the name is wrong.
	{"wrong-row-batch", 19, "the table fires row FinishedSyncKnownPodsRemove, the line says FinishedSyncKnownPodsIgnored",
		at(19, func(l *trace.Line) { l.Row = "FinishedSyncKnownPodsIgnored" })},
	{"wrong-to", 7, "goes to Terminating, the line says Terminated",
		at(7, func(l *trace.Line) { l.To = "Terminated" })},
	{"wrong-var", 6, "vars differ",
		at(6, func(l *trace.Line) { l.Vars.Grace = 20 })},
	// A kill asking for 10 s shortens the grace to 10; the line says 30.
	{"wrong-param", 6, "vars differ",
		at(6, func(l *trace.Line) { l.Params.GraceOverride = 10 })},
	// s1 holds the slot: it is not free for s2.
	{"wrong-worldfact", 5, "world facts",
		at(5, func(l *trace.Line) { l.Params.SlotFree = true })},
	// After the call's first line removed s1, the slot is free for s2.
	{"wrong-worldfact-batch", 20, "world facts",
		at(20, func(l *trace.Line) { l.Params.SlotFree = false })},
	{"wrong-fullname", 7, `fullName "", but the record's is`,
		at(7, func(l *trace.Line) { l.FullName = "" })},
	{"wrong-batch", 6, "batch",
		at(6, func(l *trace.Line) { l.Batch = 1 })},
	// Line 8 (s1 TerminatingDone) is lost: a gap in seq.
	{"dropped-line", 8, "seq is 9, want 8",
		func(ls []trace.Line) []trace.Line { return slices.Delete(ls, 7, 8) }},
	// The same with the lines renumbered: s1 is still Terminating.
	{"dropped-line-renumbered", 8, "from Terminated, but the pod is Terminating",
		func(ls []trace.Line) []trace.Line {
			ls = slices.Delete(ls, 7, 8)
			for i := range ls {
				ls[i].Seq = uint64(i + 1)
			}
			return ls
		}},
	// No line at all: trace.Check has nothing to reject; TLC's ASSUME
	// Len(Trace) > 0 fails and tools/tlc.sh --trace refuses the file.
	{"empty", 0, "", func([]trace.Line) []trace.Line { return nil }},
}

func encodeTrace(t *testing.T, lines []trace.Line) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, l := range lines {
		data, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestCorruptTraces keeps trace/testdata/corrupt in step with its source
// (go test ./explore -run TestCorruptTraces -corrupt.update rewrites it)
// and checks what trace.Check says about each file.
func TestCorruptTraces(t *testing.T) {
	dir := filepath.Join("..", "trace", "testdata")
	src, err := os.ReadFile(filepath.Join(dir, "static.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(data []byte) []trace.Line {
		ls, err := trace.Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return ls
	}
	if got := encodeTrace(t, read(src)); !bytes.Equal(got, src) {
		t.Fatalf("static.ndjson does not encode back to itself:\n%s", got)
	}
	if err := trace.Check(read(src)); err != nil {
		t.Fatalf("the source static.ndjson fails: %v", err)
	}
	names := map[string]bool{}
	for _, c := range corruptions {
		names[c.name+".ndjson"] = true
		path := filepath.Join(dir, "corrupt", c.name+".ndjson")
		data := encodeTrace(t, c.mutate(read(src)))
		if *corruptUpdate {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		} else if have, err := os.ReadFile(path); err != nil || !bytes.Equal(have, data) {
			t.Errorf("%s is not static.ndjson with its corruption (go test ./explore -run TestCorruptTraces -corrupt.update): %v", path, err)
			continue
		}
		err := trace.Check(read(data))
		if c.step == 0 {
			if err != nil {
				t.Errorf("%s: trace.Check now rejects it (%v): update the table", c.name, err)
			}
			continue
		}
		var se *trace.StepError
		if !errors.As(err, &se) || se.Step != c.step || !strings.Contains(se.Msg, c.want) {
			t.Errorf("%s: trace.Check says %v; want a rejection at step %d saying %q", c.name, err, c.step, c.want)
			continue
		}
		t.Logf("%s: trace.Check: %v", c.name, err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "corrupt", "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !names[filepath.Base(f)] {
			t.Errorf("%s is not in the table of corruptions", f)
		}
	}
}
