package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podlife/podlife/internal/mutants"
	"github.com/podlife/podlife/internal/repotest"
)

// raceDetector is set by race_test.go.
var raceDetector bool

// TestModelMutants makes each edit of the hand-written model that
// mutants.Container gives TLC (tla/ContainerLifecycle.tla) in its Go twin
// (this package's model, mutant.Model) in a copy of the repository, and
// runs TestMutatedModel there on the mutant's configuration and property:
// the explorer must report that property, as TLC does.
func TestModelMutants(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("copies the repository and builds this package's test once per mutant (CI's explore-tests step runs it)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range mutants.Container {
		if len(m.TLA) == 0 {
			continue
		}
		n++
		if len(m.Model) == 0 {
			t.Errorf("%s (%s) edits the TLA+ model but not its Go twin (mutants.ContainerMutant.Model)", m.Property, m.What)
			continue
		}
		t.Run(m.Property, func(t *testing.T) {
			dir := repotest.CopyRepo(t, root)
			for _, e := range m.Model {
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
			cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "^TestMutatedModel$", "./explore/container")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PODLIFE_MUTANT_CONFIG="+m.Config, "PODLIFE_MUTANT_PROPERTY="+m.Property)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "VIOLATION "+m.Property) {
				t.Fatalf("%s: the explorer did not report %s (%v):\n%s", m.What, m.Property, err, out)
			}
			t.Logf("%s: %s", m.What, strings.TrimSpace(firstLine(string(out), "VIOLATION")))
		})
	}
	if n == 0 {
		t.Fatal("mutants.Container edits no model")
	}
}

// TestMutatedModel is TestModelMutants' probe, run in the copy with the
// broken model: it explores PODLIFE_MUTANT_CONFIG for
// PODLIFE_MUTANT_PROPERTY alone and fails unless that property is
// violated. Without them it is skipped.
func TestMutatedModel(t *testing.T) {
	name, property := os.Getenv("PODLIFE_MUTANT_CONFIG"), os.Getenv("PODLIFE_MUTANT_PROPERTY")
	if name == "" || property == "" {
		t.Skip("run by TestModelMutants in a copy of the repository with a broken model")
	}
	cfg, err := ShippedConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Properties = []string{property}
	res, err := Explore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Violation; v == nil || v.Property != property {
		t.Fatalf("want a violation of %s, got %v", property, v)
	}
	t.Logf("VIOLATION %s: %s after %d steps", property, res.Violation.Message, len(res.Violation.Trace))
}

func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
