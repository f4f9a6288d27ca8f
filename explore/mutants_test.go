package explore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podlife/podlife/internal/mutants"
	"github.com/podlife/podlife/internal/repotest"
)

// mutantConfig is the mutant's shipped configuration, checking only the
// property the mutant must break.
func mutantConfig(t *testing.T, m mutants.Mutant) Config {
	t.Helper()
	cfg, err := ShippedConfig(m.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Properties = []string{m.Property}
	return cfg
}

// TestFairnessMutants: without the fairness a liveness property relies on,
// the explorer finds the fair cycle that violates it.
func TestFairnessMutants(t *testing.T) {
	for _, m := range mutants.All {
		if m.Fairness == "" {
			continue
		}
		t.Run(m.Property, func(t *testing.T) {
			res, err := Explore(mutantConfig(t, m), Options{dropFairness: m.Fairness})
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation == nil || res.Violation.Property != m.Property {
				t.Fatalf("%s: want a violation of %s, got %v", m.What, m.Property, res.Violation)
			}
			checkLasso(t, res, mutantConfig(t, m))
		})
	}
}

// checkLasso replays a liveness violation's behaviour: along it the
// property starts to wait (From holds, Holds does not) for some pod, and
// Holds never holds again, through the repeated cycle too.
func checkLasso(t *testing.T, res *Result, cfg Config) {
	t.Helper()
	v := res.Violation
	w := newWorld(cfg)
	var views [][]podView
	if err := replay(cfg, append(v.Trace, v.Cycle...), func(s *snapshot) { views = append(views, w.views(s)) }); err != nil {
		t.Fatalf("the behaviour does not replay: %v", err)
	}
	p := w.properties[0]
	for pod := range cfg.Pods {
		started := -1
		for i := range views {
			a := &views[i][pod]
			switch {
			case started < 0 && p.from(a, nil) && !p.holds(a, nil):
				started = i
			case started >= 0 && p.holds(a, nil):
				started = -2 // it stopped waiting
			}
			if started == -2 {
				break
			}
		}
		if started >= 0 {
			return
		}
	}
	t.Fatalf("along the behaviour (%d steps, cycle %d) no pod waits for %s to the end", len(v.Trace), len(v.Cycle), p.name)
}

// TestSourceMutants breaks the engine's source code in a copy of the
// repository, as each source mutant says, and runs `podlife-dev check` there on
// the mutant's configuration and property: it must report a violation of
// that property with a shortest behaviour. (Among them: a Close of a kill
// completion channel dropped from the core, and a worker loop that is never
// started.)
func TestSourceMutants(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("copies the repository and builds podlife once per mutant")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mutants.All {
		if len(m.Source) == 0 {
			continue
		}
		t.Run(m.Property, func(t *testing.T) {
			dir := repotest.CopyRepo(t, root)
			for _, e := range m.Source {
				path := filepath.Join(dir, e.Path)
				src, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				broken, err := e.Apply(string(src))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("go", "run", "./cmd/podlife-dev", "check", "--config", m.Config, "--property", m.Property, "--counterexample", "ce.json")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "VIOLATION "+m.Property) {
				t.Fatalf("%s: podlife-dev check did not report %s:\n%s", m.What, m.Property, out)
			}
			if !strings.Contains(string(out), "behaviour (") {
				t.Errorf("the report shows no behaviour:\n%s", out)
			}
		})
	}
}
