package explore

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/podlife/podlife/internal/repotest"
	"k8s.io/apimachinery/pkg/types"
)

// raceDetector is set by race_test.go: exploring under the race detector
// takes too long.
var raceDetector bool

// tlcCounts reads TLC's distinct-state counts from tla/tlc-counts.txt, which
// tools/tlc-counts.sh writes from TLC's own summary (never by hand).
func tlcCounts(t *testing.T) map[string]int {
	t.Helper()
	src, err := os.ReadFile("../tla/tlc-counts.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^tlc: (MC[A-Za-z]+): ([0-9]+) distinct states`).FindAllStringSubmatch(string(src), -1) {
		n, _ := strconv.Atoi(m[2])
		out[m[1]] = n
	}
	if len(out) == 0 {
		t.Fatal("tla/tlc-counts.txt lists no config: run tools/tlc-counts.sh")
	}
	return out
}

// TestExploreShippedConfigs drives the engine's core through every shipped
// configuration whose TLC count tla/tlc-counts.txt records (`podlife-dev
// check` in CI explores them all, and CI compares its counts with the
// TLC run beside it): none of their properties is violated, the core
// refines the model on every step, and the explorer finds as many distinct
// states as TLC did.
func TestExploreShippedConfigs(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("explores the shipped models (seconds each); run without -short and -race")
	}
	counts := tlcCounts(t)
	for _, cfg := range Shipped {
		want, ok := counts[cfg.Name]
		if !ok {
			t.Logf("%s: no TLC count recorded in tla/tlc-counts.txt; not explored here", cfg.Name)
			continue
		}
		t.Run(cfg.Name, func(t *testing.T) {
			res, err := Explore(cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation != nil {
				t.Fatalf("%s\n%s", res.Violation, strings.Join(res.Violation.States, "\n"))
			}
			t.Logf("%d states, %d transitions, depth %d, %.0f states/s", res.States, res.Transitions, res.Depth, res.StatesPerSecond())
			if res.States != want {
				t.Errorf("%d distinct states, TLC found %d (tla/tlc-counts.txt)", res.States, want)
			}
		})
	}
}

// TestStrictAgrees: reusing a core after an input that left the spec state
// unchanged finds the same states as re-cloning after every such input (one
// pod, static or not, with every grace request).
func TestStrictAgrees(t *testing.T) {
	for _, static := range [][]types.UID{nil, {"p1"}} {
		cfg := Config{Name: "one-pod", Pods: []types.UID{"p1"}, StaticPods: static, GraceOverrides: []int64{0, 1, 3}, SpecGrace: 2, KillChannels: 1, RuntimePods: true, TerminalPhases: true}
		fast, err := Explore(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		strict, err := Explore(cfg, Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		if fast.Violation != nil || strict.Violation != nil {
			t.Fatalf("violations: %v, %v", fast.Violation, strict.Violation)
		}
		if fast.States != strict.States || fast.Transitions != strict.Transitions {
			t.Fatalf("static %v: fast: %d states, %d transitions; strict: %d, %d", static, fast.States, fast.Transitions, strict.States, strict.Transitions)
		}
		t.Logf("static %v: %d states, %d transitions", static, fast.States, fast.Transitions)
	}
}

// TestBrokenGuardIsCaught copies the repository, breaks one guard of the
// table so that a static pod may start while another holds its full name's
// slot (the table stays deterministic and total, so Validate accepts it),
// regenerates the code, and runs `podlife-dev check`: it must report a violation
// of Inv38 with a behaviour, and write a counterexample that replays to it.
func TestBrokenGuardIsCaught(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("copies the repository, regenerates and explores")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := repotest.CopyRepo(t, root)
	table := filepath.Join(dir, "spec", "table.go")
	src, _ := os.ReadFile(table)
	broken := strings.Replace(string(src), `And(P(PSlotFree), P(PFirstInLine))`, `P(PFirstInLine)`, 1)
	if broken == string(src) {
		t.Fatal("the guard to break is not in spec/table.go any more; update this test")
	}
	os.WriteFile(table, []byte(broken), 0o644)
	run := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("generate", "./fsm"); err != nil {
		t.Fatalf("go generate: %v\n%s", err, out)
	}
	out, err := run("run", "./cmd/podlife-dev", "check", "--config", "MCPodLifecycle", "--no-liveness", "--counterexample", "ce.json")
	if err == nil || !strings.Contains(out, "VIOLATION Inv38") {
		t.Fatalf("the explorer did not report the broken guard:\n%s", out)
	}
	if !strings.Contains(out, "p2 Dequeue()") && !strings.Contains(out, "p1 Dequeue()") {
		t.Errorf("the report shows no behaviour:\n%s", out)
	}
	replay, err := run("run", "./cmd/podlife-dev", "check", "--config", "MCPodLifecycle", "--replay", "ce.json")
	if err == nil || !strings.Contains(replay, "Inv38") {
		t.Errorf("the counterexample does not replay to the violation:\n%s", replay)
	}
	t.Logf("the explorer's report:\n%s", out)
}

// TestExploreLanesAgree: the lanes change nothing but the speed: one lane
// and several number the same states the same way, with the same parents
// (so the same shortest behaviours), transitions and graph, and find the
// same first violation; so do lanes that keep few cores and rebuild the
// rest by replay.
func TestExploreLanesAgree(t *testing.T) {
	onePod, err := ShippedConfig("MCOnePod")
	if err != nil {
		t.Fatal(err)
	}
	onePod.Properties = []string{"TerminationCompletes"}
	for _, tc := range []struct {
		name string
		cfg  Config
		opts Options
	}{
		{"one-pod", Config{Name: "one-pod", Pods: []types.UID{"p1"}, StaticPods: []types.UID{"p1"}, GraceOverrides: []int64{0, 1, 3}, SpecGrace: 2, KillChannels: 1, RuntimePods: true, TerminalPhases: true}, Options{}},
		{"unfair", onePod, Options{dropFairness: "Success"}},
		{"replayed", onePod, Options{SkipLiveness: true, MaxSims: 16}}, // most states rebuilt by replay
	} {
		t.Run(tc.name, func(t *testing.T) {
			var results []*Result
			for _, lanes := range []int{1, 3} {
				opts := tc.opts
				opts.Lanes = lanes
				res, err := Explore(tc.cfg, opts)
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, res)
			}
			one, many := results[0], results[1]
			if one.States != many.States || one.Transitions != many.Transitions || one.Depth != many.Depth {
				t.Fatalf("1 lane: %d states, %d transitions, depth %d; 3 lanes: %d, %d, %d",
					one.States, one.Transitions, one.Depth, many.States, many.Transitions, many.Depth)
			}
			if !slices.Equal(one.nodes, many.nodes) {
				t.Fatal("1 lane and 3 lanes number the states differently")
			}
			if (one.Violation == nil) != (many.Violation == nil) {
				t.Fatalf("violations: 1 lane %v, 3 lanes %v", one.Violation, many.Violation)
			}
			if one.Violation != nil {
				if !slices.EqualFunc(one.Violation.Trace, many.Violation.Trace, inputsEqual) ||
					!slices.EqualFunc(one.Violation.Cycle, many.Violation.Cycle, inputsEqual) {
					t.Fatalf("the behaviours differ:\n1 lane:  %v %v\n3 lanes: %v %v", one.Violation.Trace, one.Violation.Cycle, many.Violation.Trace, many.Violation.Cycle)
				}
			}
			t.Logf("%d states, %d transitions, depth %d, violation %v", one.States, one.Transitions, one.Depth, one.Violation)
		})
	}
}

func inputsEqual(a, b Input) bool { return a.String() == b.String() }
