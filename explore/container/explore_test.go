package container

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	fc "github.com/podlife/podlife/fsm/container"
	sc "github.com/podlife/podlife/spec/container"
)

// tlcCounts reads TLC's distinct-state counts from tla/tlc-counts.txt,
// which tools/tlc-counts.sh writes from TLC's own summary.
func tlcCounts(t *testing.T) map[string]int {
	t.Helper()
	src, err := os.ReadFile("../../tla/tlc-counts.txt")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^tlc: (MC\w+): (\d+) distinct states`).FindAllStringSubmatch(string(src), -1) {
		counts[m[1]], _ = strconv.Atoi(m[2])
	}
	return counts
}

// TestShippedCounts explores every shipped configuration: each must find
// exactly the distinct states TLC found on it (tla/tlc-counts.txt must
// list every one), with every property holding. (Not the depth: TLC's
// workers do not search level by level, so its depth may exceed the
// shortest paths', 35 levels against the explorer's 33 + 1 on
// MCContainerNever.)
func TestShippedCounts(t *testing.T) {
	counts := tlcCounts(t)
	for _, cfg := range Shipped {
		t.Run(cfg.Name, func(t *testing.T) {
			want, ok := counts[cfg.Name]
			if !ok {
				t.Fatalf("tla/tlc-counts.txt has no TLC count for %s: run TLA2TOOLS_JAR=... tools/tlc-counts.sh %s", cfg.Name, cfg.Name)
			}
			res, err := Explore(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation != nil {
				t.Fatalf("%v\n%s", res.Violation, strings.Join(res.Violation.States, "\n"))
			}
			if res.States != want {
				t.Errorf("%d distinct states, TLC found %d (tla/tlc-counts.txt)", res.States, want)
			}

			if len(res.Checked) != len(cfg.checked()) || len(res.Checked) == 0 {
				t.Errorf("checked %v, the configuration names %v", res.Checked, cfg.checked())
			}
			t.Logf("%d states, %d transitions, depth %d, %v", res.States, res.Transitions, res.Depth, res.Elapsed)
		})
	}
}

// unfired are the rows no shipped configuration fires (nor TLC's: the
// model is the same), each with why.
var unfired = map[string]string{
	"ExitedSuccessRestart":           "no Always container exits with 0 (an OnFailure init container that does is not restarted)",
	"RunningExitIgnored":             "the model's runtime reports only Zero, Rule and Other",
	"RunningSpecChangeIgnored":       "only MCContainerProbes changes specs, and it has no init container",
	"ExitedSuccessSpecChangeIgnored": "only MCContainerProbes changes specs, and its containers never exit with 0",
}

// TestEveryRowFires: on the shipped bounds the explorer fires every row
// of the container table (through fsm/container.Fire) but those of
// unfired, so no other row is left unchecked by the properties.
func TestEveryRowFires(t *testing.T) {
	fired := map[string]bool{}
	for _, cfg := range Shipped {
		m := newModel(cfg)
		m.fire = func(s fc.State, v fc.Vars, e fc.Event, p fc.Params) (fc.Transition, error) {
			tr, err := fc.Fire(s, v, e, p)
			if err == nil {
				fired[tr.Row] = true
			}
			return tr, err
		}
		if _, err := explore(cfg, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range tableRows() {
		switch why, known := unfired[r]; {
		case !fired[r] && !known:
			t.Errorf("row %s never fires on the shipped configurations", r)
		case fired[r] && known:
			t.Errorf("row %s fires now (unfired says %q): drop it from unfired", r, why)
		}
	}
}

// TestViolationShowsItsBehaviour: a property that fails is reported with
// a shortest behaviour that replays to the violating state. (A model that
// never re-creates the sandbox leaves an instance created in it forever:
// NoInstanceStuckInCreated, a
// leads-to property, with a lasso.)
func TestViolationShowsItsBehaviour(t *testing.T) {
	cfg, err := ShippedConfig("MCContainerSandbox")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Properties = []string{"NoInstanceStuckInCreated"}
	m := newModel(cfg)
	m.recreateSandbox = func(fc.State, fc.Vars, fc.Params) bool { return false }
	res, err := explore(cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Violation
	if v == nil || v.Property != "NoInstanceStuckInCreated" {
		t.Fatalf("want NoInstanceStuckInCreated violated, got %v", v)
	}
	if len(v.States) != len(v.Trace)+len(v.Cycle)+1 || strings.Contains(strings.Join(v.States, "\n"), "not enabled") {
		t.Fatalf("the behaviour does not replay:\n%s", strings.Join(v.States, "\n"))
	}
	if !strings.Contains(v.States[len(v.States)-1], "ready=false") {
		t.Errorf("the behaviour does not end with the sandbox gone:\n%s", strings.Join(v.States, "\n"))
	}
}

func tableRows() []string {
	var out []string
	for _, r := range sc.Table {
		out = append(out, r.ID)
	}
	return out
}
