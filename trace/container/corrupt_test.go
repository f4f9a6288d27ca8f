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

// The corrupted traces in testdata/corrupt are testdata/script.ndjson (a
// fixed history, script_test.go), each with one error. Check must reject
// each at its line with its reason, and so must TLC
// (TestTLCRejectsCorruptTraces and the CI step tlc-container-traces-reject);
// -update rewrites them and testdata/corrupt/README.md from this table.

type corruption struct {
	name string
	what string // for the README
	line int    // the line Check and TLC reject (0: the whole trace)
	// edit changes the lines (a copy of the base); text, if set, then
	// changes the file's text.
	edit func(t *testing.T, ls []ctrace.Line) []ctrace.Line
	text func(string) string
	// what Check's error and TLC's rejection must say
	goSays, tlcSays string
}

// at returns the index of line n, which must have the row id (the script
// changed if not).
func at(t *testing.T, ls []ctrace.Line, n int, row string) int {
	t.Helper()
	if n > len(ls) || ls[n-1].Row != row {
		t.Fatalf("line %d of the script is not %s: update the table of corruptions", n, row)
	}
	return n - 1
}

func drop(ls []ctrace.Line, i int, renumber bool) []ctrace.Line {
	ls = slices.Delete(ls, i, i+1)
	for j := range ls {
		if renumber {
			ls[j].Seq = uint64(j + 1)
		}
	}
	return ls
}

var corruptions = []corruption{
	{name: "wrong-after", line: 11, what: "line 11 (`ExitedFailureRestart`) says the back-off level is 2; the row sets 1",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 11, "ExitedFailureRestart")].After.Backoff = 2
			return ls
		},
		goSays: "row ExitedFailureRestart leaves", tlcSays: "line 11 (web Restart): row ExitedFailureRestart leaves"},
	{name: "cannot-fire", line: 1, what: "line 1 (`NotCreatedStart`) has `sandboxReady` false: no row of Start fires",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 1, "NotCreatedStart")].Params.SandboxReady = false
			return ls
		},
		goSays: "no row of Start fires in NotCreated", tlcSays: "line 1 (proxy Start): no row of Start fires in NotCreated"},
	{name: "wrong-row", line: 10, what: "line 10 names `RunningExitSuccess`; `RunningExitFailure` fires",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 10, "RunningExitFailure")].Row = "RunningExitSuccess"
			return ls
		},
		goSays: "the row that fires is RunningExitFailure, not RunningExitSuccess", tlcSays: "line 10 (web Exit): the row that fires is RunningExitFailure, not RunningExitSuccess"},
	{name: "wrong-to", line: 2, what: "line 2 (`CreatedBegin`) goes to `Created`; the row goes to `Running`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 2, "CreatedBegin")].To = cfsm.Created
			return ls
		},
		goSays: "row CreatedBegin leaves Running", tlcSays: "line 2 (proxy Begin): row CreatedBegin leaves"},
	{name: "wrong-effects", line: 2, what: "line 2 (`CreatedBegin`) has the effect `CreateInstance`; the row's is `StartInstance`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 2, "CreatedBegin")].Effects = cfsm.CreateInstance
			return ls
		},
		goSays: "row CreatedBegin has the effects [StartInstance], not [CreateInstance]", tlcSays: "line 2 (proxy Begin): row CreatedBegin has the effects"},
	{name: "dropped-line", line: 3, what: "line 3 (`RunningSpecChange`) is missing (seq jumps from 2 to 4)",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			return drop(ls, at(t, ls, 3, "RunningSpecChange"), false)
		},
		goSays: "seq is 4, not 3", tlcSays: "line 3 (web LivenessFail): seq is 4, not 3"},
	{name: "dropped-line-renumbered", line: 4, what: "line 3 (`RunningSpecChange`) is missing, the rest renumbered: proxy's next line starts from `ExitedFailure`, its record is `Running`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			return drop(ls, at(t, ls, 3, "RunningSpecChange"), true)
		},
		goSays: "is not the one the container's previous line left", tlcSays: "line 4 (proxy Replace): the record before"},
	{name: "spec-changed", line: 2, what: "line 2 says proxy's policy is `OnFailure`; its first line says `Always`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 2, "CreatedBegin")].Params.Policy = cfsm.RestartPolicyOnFailure
			return ls
		},
		goSays: "the container's spec changed", tlcSays: "line 2 (proxy Begin): the container's spec changed since line 1"},
	{name: "pod-spec-changed", line: 8, what: "line 8 says the pod's restartPolicy is Never (`podNever`); its earlier lines say not",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 8, "NotCreatedStart")].Params.PodNever = true
			return ls
		},
		goSays: "the pod's spec changed", tlcSays: "line 8 (web Start): the pod's podNever changed since line 7"},
	{name: "sync-broken-chain", line: 20, what: "line 20 (`BackOffBackoffDone`) of pod uid-plan's sync 3 is missing, the rest renumbered: the sync's next line of web starts from `Created`, line 19 left `BackOff`",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			return drop(ls, at(t, ls, 20, "BackOffBackoffDone"), true)
		},
		goSays: "is not the one the container's previous line left", tlcSays: "line 20 (web Begin): the record before"},
	{name: "sync-back", line: 22, what: "line 22 says sync 1; pod uid-plan's line 21 was in sync 3",
		edit: func(t *testing.T, ls []ctrace.Line) []ctrace.Line {
			ls[at(t, ls, 22, "RunningSpecChange")].Sync = 1
			return ls
		},
		goSays: "the pod's sync went back from 3 to 1", tlcSays: "line 22 (web SpecChange): the pod's sync went back from 3"},
	{name: "missing-field", line: 0, what: "line 1 has no `params.anyRan`",
		text:   func(s string) string { return strings.Replace(s, `,"anyRan":false`, "", 1) },
		goSays: "container trace line 1: missing field(s) params.anyRan", tlcSays: "DOMAIN Trace[i].params = DOMAIN EmptyFacts"},
	{name: "empty", line: 0, what: "no line",
		edit:   func(*testing.T, []ctrace.Line) []ctrace.Line { return nil },
		goSays: "container trace: no line", tlcSays: "ASSUME Len(Trace) > 0"},
}

func corruptText(t *testing.T, c corruption) []byte {
	t.Helper()
	ls := readTrace(t, filepath.Join("testdata", "script.ndjson"))
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
	readme := "# Corrupted container traces: TLC must reject every one\n\n" +
		"Each file is `../script.ndjson` (a fixed history: `trace/container/script_test.go`) with one\n" +
		"error (the table `corruptions` in `trace/container/corrupt_test.go`; `go test ./trace/container\n" +
		"-run TestCorruptTraces -update`\n" +
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
