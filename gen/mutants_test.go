package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/podlife/podlife/internal/mutants"
	"github.com/podlife/podlife/spec"
	"github.com/podlife/podlife/spec/container"
)

// TestMutantsInTLC gives TLC each mutant of internal/mutants that the model
// can express (a broken table, rendered by this generator; an edit of the
// hand-written model; a fairness condition dropped), on the mutant's
// configuration with only its property: TLC must report that property.
// The explorer's twin tests are in package explore (TestTableMutants,
// TestSourceMutants, TestFairnessMutants).
func TestMutantsInTLC(t *testing.T) {
	jar := os.Getenv("TLA2TOOLS_JAR")
	if jar == "" {
		t.Skip("TLA2TOOLS_JAR is not set: skipping the mutants TLC must catch (export TLA2TOOLS_JAR=/path/to/tla2tools.jar)")
	}
	if testing.Short() {
		t.Skip("runs TLC once per mutant")
	}
	for _, m := range mutants.All {
		t.Run(m.Property, func(t *testing.T) {
			dir := t.TempDir()
			files, _ := filepath.Glob(filepath.Join("..", "tla", "*"))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644)
			}
			model := filepath.Join(dir, "PodLifecycle.tla")
			if m.Table != nil {
				table, err := tlaTable(m.Table(spec.Table))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, "PodLifecycleTable.tla"), table, 0o644)
			}
			edits := m.TLA
			if m.Fairness != "" {
				edits = append(edits, mutants.Edit{Path: "tla/PodLifecycle.tla", Old: mutants.Fairness[m.Fairness], New: `/\ TRUE`})
			}
			if m.Table == nil && len(edits) == 0 {
				t.Skip("the model has no twin of this mutant")
			}
			for _, e := range edits {
				src, _ := os.ReadFile(model)
				broken, err := e.Apply(string(src))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(model, []byte(broken), 0o644)
			}
			p, _ := spec.PropertyNamed(m.Property)
			section := "PROPERTY"
			if p.Kind == spec.Invariant {
				section = "INVARIANT"
			}
			cfg, err := os.ReadFile(filepath.Join(dir, m.Config+".cfg"))
			if err != nil {
				t.Fatal(err)
			}
			only := regexp.MustCompile(`(?s)\n(INVARIANTS|PROPERTIES)\n.*`).ReplaceAllString(string(cfg), "\n"+section+" "+m.Property+"\n")
			os.WriteFile(filepath.Join(dir, "Mutant.cfg"), []byte(only), 0o644)
			cmd := exec.Command("java", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", "auto", "-lncheck", "final",
				"-config", "Mutant.cfg", m.Config+".tla")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			want := map[spec.PropertyKind]string{
				spec.Invariant:    "Invariant " + m.Property + " is violated",
				spec.StepProperty: "Action property " + m.Property,
				spec.LeadsTo:      "Temporal property " + m.Property + " was violated",
			}[p.Kind]
			if err == nil || !strings.Contains(string(out), want) {
				t.Fatalf("%s: TLC did not report %q:\n%s", m.What, want, tail(string(out), 25))
			}
		})
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestContainerMutantsInTLC gives TLC each mutant of mutants.Container (a
// broken row or rule of the container table, rendered by this generator,
// or an edit of tla/ContainerLifecycle.tla) on the mutant's configuration
// with only its property: TLC must report that property.
func TestContainerMutantsInTLC(t *testing.T) {
	jar := os.Getenv("TLA2TOOLS_JAR")
	if jar == "" {
		t.Skip("TLA2TOOLS_JAR is not set: skipping the container mutants TLC must catch")
	}
	if testing.Short() {
		t.Skip("runs TLC once per mutant")
	}
	for _, m := range mutants.Container {
		name := m.Property
		if m.Bug != "" {
			name += "/" + regexp.MustCompile(`[^0-9]+`).ReplaceAllString(m.Bug, "_")
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			files, _ := filepath.Glob(filepath.Join("..", "tla", "*"))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644)
			}
			rows, ops := container.Table, container.Operators
			if m.Table != nil {
				rows = m.Table(rows)
			}
			if m.Operators != nil {
				ops = m.Operators(ops)
			}
			if m.Table == nil && m.Operators == nil && len(m.TLA) == 0 {
				t.Fatal("the mutant breaks nothing")
			}
			table, err := containerTLA(rows, ops)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, filepath.Base(containerTLAPath)), table, 0o644)
			model := filepath.Join(dir, "ContainerLifecycle.tla")
			for _, e := range m.TLA {
				src, _ := os.ReadFile(model)
				broken, err := e.Apply(string(src))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(model, []byte(broken), 0o644)
			}
			p, ok := container.PropertyNamed(m.Property)
			if !ok {
				t.Fatalf("no container property %s", m.Property)
			}
			section := "PROPERTY"
			if p.Kind == spec.Invariant {
				section = "INVARIANT"
			}
			cfg, err := os.ReadFile(filepath.Join(dir, m.Config+".cfg"))
			if err != nil {
				t.Fatal(err)
			}
			only := regexp.MustCompile(`(?s)\n(INVARIANTS|PROPERTIES)\n.*`).ReplaceAllString(string(cfg), "\n"+section+" "+m.Property+"\n")
			os.WriteFile(filepath.Join(dir, "Mutant.cfg"), []byte(only), 0o644)
			cmd := exec.Command("java", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", "auto", "-lncheck", "final",
				"-config", "Mutant.cfg", m.Config+".tla")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			want := map[spec.PropertyKind]string{
				spec.Invariant:    "Invariant " + m.Property + " is violated",
				spec.StepProperty: "Action property " + m.Property,
				spec.LeadsTo:      "Temporal property " + m.Property + " was violated",
			}[p.Kind]
			failed := err != nil
			if p.Kind == spec.LeadsTo && strings.Contains(string(out), "Temporal properties were violated") {
				// TLC may report a property quantified over containers
				// without its name (the config checks only this one).
				want = "Temporal properties were violated"
			}
			if !failed || !strings.Contains(string(out), want) {
				t.Fatalf("%s: TLC did not report %q:\n%s", m.What, want, tail(string(out), 25))
			}
			t.Logf("%s: TLC: %s", m.What, firstLine(string(out), want))
		})
	}
}

func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestContainerMutantsAreValidTables: every broken container table of
// mutants.Container still passes spec's Validate (deterministic, total,
// every state reachable) and renders: what TLC reports is a wrong decision,
// not a malformed table; and each breaks something (the table, an
// operator or the model).
func TestContainerMutantsAreValidTables(t *testing.T) {
	for _, m := range mutants.Container {
		if m.Table == nil && m.Operators == nil && len(m.TLA) == 0 {
			t.Errorf("%s: the mutant breaks nothing", m.What)
		}
		if m.Table == nil {
			continue
		}
		rows := m.Table(container.Table)
		if err := container.Schema.Validate(rows); err != nil {
			t.Errorf("%s: the broken table is invalid:\n%v", m.What, err)
		}
		if container.Hash(rows) == container.Hash(container.Table) {
			t.Errorf("%s: the table did not change", m.What)
		}
	}
}
