package container_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cfsm "github.com/podlife/podlife/fsm/container"
	ctrace "github.com/podlife/podlife/trace/container"
)

// The corrupted traces in testdata/corrupt are the first corruptBase lines
// of testdata/terminate.ndjson (or, for the sync rules, of plan.ndjson),
// each with one error. Check must reject each
// at its line with its reason, and so must TLC (TestTLCRejectsCorruptTraces
// and the CI step tlc-container-traces-reject); -update rewrites them and
// testdata/corrupt/README.md from this table.
const corruptBase = 20

type corruption struct {
	name string
	base string // the trace whose first lines are corrupted; "" for terminate
	what string // for the README
	line int    // the line Check and TLC reject (0: the whole trace)
	// edit changes the lines (a copy of the base); text, if set, then
	// changes the file's text.
	edit func(t *testing.T, ls []ctrace.Line) []ctrace.Line
	text func(string) string
	// what Check's error and TLC's rejection must say
	goSays, tlcSays string
}

// nth returns the index of the first line with the row id.
func nth(t *testing.T, ls []ctrace.Line, row string) int {
	t.Helper()
	for i, l := range ls {
		if l.Row == row {
			return i
		}
	}
	t.Fatalf("the base trace has no line with the row %s: choose another line for this corruption", row)
	return -1
}

var corruptions = []corruption{
	{name: "wrong-after", line: 14, what: "line 14 (`ExitedFailureRestart`) says the back-off level is 2; the row sets 1",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[nth(t, ls, "ExitedFailureRestart")].After.Backoff = 2
			return ls
		},
		goSays: "row ExitedFailureRestart leaves", tlcSays: "line 14 (proxy Restart): row ExitedFailureRestart leaves"},
	{name: "cannot-fire", line: 1, what: "line 1 (`NotCreatedStart`) has `sandboxReady` false: no row of Start fires",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[nth(t, ls, "NotCreatedStart")].Params.SandboxReady = false
			return ls
		},
		goSays: "no row of Start fires in NotCreated", tlcSays: "line 1 (proxy Start): no row of Start fires in NotCreated"},
	{name: "wrong-row", line: 11, what: "line 11 names `RunningExitSuccess`; `RunningExitFailure` fires",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[nth(t, ls, "RunningExitFailure")].Row = "RunningExitSuccess"
			return ls
		},
		goSays: "the row that fires is RunningExitFailure, not RunningExitSuccess", tlcSays: "line 11 (proxy Exit): the row that fires is RunningExitFailure, not RunningExitSuccess"},
	{name: "wrong-to", line: 2, what: "line 2 (`CreatedBegin`) goes to `Created`; the row goes to `Running`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[nth(t, ls, "CreatedBegin")].To = cfsm.Created
			return ls
		},
		goSays: "row CreatedBegin leaves Running", tlcSays: "line 2 (proxy Begin): row CreatedBegin leaves"},
	{name: "wrong-effects", line: 2, what: "line 2 (`CreatedBegin`) has the effect `CreateInstance`; the row's is `StartInstance`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[nth(t, ls, "CreatedBegin")].Effects = cfsm.CreateInstance
			return ls
		},
		goSays: "row CreatedBegin has the effects [StartInstance], not [CreateInstance]", tlcSays: "line 2 (proxy Begin): row CreatedBegin has the effects"},
	{name: "dropped-line", line: 3, what: "line 3 (`RunningSpecChange`) is missing (seq jumps from 2 to 4)",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			return slices.Delete(ls, nth(t, ls, "RunningSpecChange"), nth(t, ls, "RunningSpecChange")+1)
		},
		goSays: "seq is 4, not 3", tlcSays: "line 3 (debug StartupOK): seq is 4, not 3"},
	{name: "dropped-line-renumbered", line: 5, what: "line 3 (`RunningSpecChange`) is missing, the rest renumbered: proxy's next line starts from `ExitedFailure`, its record is `Running`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			i := nth(t, ls, "RunningSpecChange")
			ls = slices.Delete(ls, i, i+1)
			for j := range ls {
				ls[j].Seq = uint64(j + 1)
			}
			return ls
		},
		goSays: "is not the one the container's previous line left", tlcSays: "line 5 (proxy Replace): the record before"},
	{name: "spec-changed", line: 2, what: "line 2 says proxy's policy is `OnFailure`; its first line says `Always`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[nth(t, ls, "CreatedBegin")].Params.Policy = cfsm.RestartPolicyOnFailure
			return ls
		},
		goSays: "the container's spec changed", tlcSays: "line 2 (proxy Begin): the container's spec changed since line 1"},
	{name: "pod-spec-changed", line: 12, what: "line 12 says the pod's restartPolicy is Never (`podNever`); its earlier lines say not",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[11].Params.PodNever = true
			return ls
		},
		goSays: "the pod's spec changed", tlcSays: "line 12 (logger Start): the pod's podNever changed since line 11"},
	{name: "sync-broken-chain", base: "plan", line: 6, what: "`plan.ndjson`: line 6 (`BackOffBackoffDone`) of sync 3 is missing, the rest renumbered: the sync's next line of proxy starts from `Created`, line 5 left `BackOff`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			i := nth(t, ls, "BackOffBackoffDone")
			ls = slices.Delete(ls, i, i+1)
			for j := range ls {
				ls[j].Seq = uint64(j + 1)
			}
			return ls
		},
		goSays: "is not the one the container's previous line left", tlcSays: "line 6 (proxy Begin): the record before"},
	{name: "sync-back", base: "plan", line: 10, what: "`plan.ndjson`: line 10 says sync 2; the pod's line 9 was in sync 5",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[9].Sync = 2
			return ls
		},
		goSays: "the pod's sync went back from 5 to 2", tlcSays: "line 10 (proxy Restart): the pod's sync went back from 5"},
	{name: "missing-field", line: 0, what: "line 1 has no `params.anyRan`",
		text:   func(s string) string { return strings.Replace(s, `,"anyRan":false`, "", 1) },
		goSays: "container trace line 1: missing field(s) params.anyRan", tlcSays: "DOMAIN Trace[i].params = DOMAIN EmptyFacts"},
	{name: "empty", line: 0, what: "no line",
		edit:   func(*testing.T, []ctrace.Line) []ctrace.Line { return nil },
		goSays: "container trace: no line", tlcSays: "ASSUME Len(Trace) > 0"},
}

func corruptText(t *testing.T, c corruption) []byte {
	t.Helper()
	name := c.base
	if name == "" {
		name = "terminate"
	}
	ls := readTrace(t, filepath.Join("testdata", name+".ndjson"))[:corruptBase]
	if c.edit != nil {
		ls = c.edit(t, ls)
	}
	var b []byte
	for _, l := range ls {
		b = l.Append(b)
	}
	if c.text != nil {
		b = []byte(c.text(string(b)))
	}
	return b
}

func TestCorruptTraces(t *testing.T) {
	for _, name := range []string{"terminate", "plan"} {
		if err := ctrace.Check(readTrace(t, filepath.Join("testdata", name+".ndjson"))[:corruptBase]); err != nil {
			t.Fatalf("the base of the corrupted traces, %s, is not valid: %v", name, err)
		}
	}
	readme := "# Corrupted container traces: TLC must reject every one\n\n" +
		"Each file is the first " + fmt.Sprint(corruptBase) + " lines of `../terminate.ndjson` (or of `../plan.ndjson`, where\n" +
		"the table says so) with one error (the table `corruptions`\n" +
		"in `trace/container/corrupt_test.go`; `go test ./trace/container -run TestCorruptTraces -update`\n" +
		"rewrites them and this file). `TLA2TOOLS_JAR=... tools/tlc.sh --trace-config TraceContainerLifecycle\n" +
		"--trace-reject trace/container/testdata/corrupt/*.ndjson` (CI step `tlc-container-traces-reject`)\n" +
		"requires TLC to reject each: a deadlock of `tla/TraceContainerLifecycle.tla` at the bad line,\n" +
		"which it names, or a failed ASSUME. `Check` (Go) rejects each too; `TestCorruptTraces` and\n" +
		"`TestTLCRejectsCorruptTraces` check where and why.\n\n| file | the error |\n|---|---|\n"
	for _, c := range corruptions {
		readme += "| `" + c.name + ".ndjson` | " + c.what + " |\n"
		t.Run(c.name, func(t *testing.T) {
			got := corruptText(t, c)
			path := filepath.Join("testdata", "corrupt", c.name+".ndjson")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(path); err != nil {
				t.Fatal(err)
			} else if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from the corruption of the base trace; rerun with -update", path)
			}
			lines, err := ctrace.Read(bytes.NewReader(got))
			if err == nil {
				err = ctrace.Check(lines)
			}
			switch {
			case err == nil:
				t.Fatal("Check accepts the corrupted trace")
			case !strings.Contains(err.Error(), c.goSays):
				t.Fatalf("Check says %q, want it to say %q", err, c.goSays)
			case c.line > 0 && !strings.Contains(err.Error(), fmt.Sprintf("line %d ", c.line)):
				t.Fatalf("Check says %q, want it to name line %d", err, c.line)
			}
		})
	}
	path := filepath.Join("testdata", "corrupt", "README.md")
	if *update {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, err := os.ReadFile(path); err != nil || string(want) != readme {
		t.Errorf("%s is not the table of corruptions (err %v); rerun with -update", path, err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "corrupt", "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(corruptions) {
		t.Errorf("testdata/corrupt has %d traces, the table %d corruptions: remove the stale files", len(files), len(corruptions))
	}
}
