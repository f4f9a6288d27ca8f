package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/podlife/podlife/spec"
	"github.com/podlife/podlife/spec/container"
)

var write = flag.Bool("write", false, "write the generated files instead of comparing them")

func readRepo(path string) ([]byte, error) { return os.ReadFile(filepath.Join("..", path)) }

// TestGenerate fails when a generated file differs from what the table
// produces: after a hand edit of a generated file, or a table change without
// `go generate ./...`. With -write it updates the files.
func TestGenerate(t *testing.T) {
	files, err := Generate(spec.Table, readRepo)
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join("..", p)
		if *write {
			if err := os.WriteFile(full, files[p], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(full)
		if err != nil {
			t.Errorf("%s: %v (run: go generate ./...)", p, err)
			continue
		}
		if !bytes.Equal(got, files[p]) {
			t.Errorf("%s is stale or was edited by hand; run: go generate ./... (or go test ./gen -write)\nfirst difference: %s", p, firstDiff(got, files[p]))
		}
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  have: " + gl + "\n  want: " + wl
		}
	}
	return "(none)"
}

// TestGenerateFollowsTheTable shows that the golden comparison can fail: a
// one-row change to the table changes the Go and TLA+ outputs.
func TestGenerateFollowsTheTable(t *testing.T) {
	before, err := Generate(spec.Table, readRepo)
	if err != nil {
		t.Fatal(err)
	}
	rows := append([]spec.Row(nil), spec.Table...)
	for i := range rows {
		if rows[i].ID == "RunningSyncPodDone" {
			rows[i].Effects |= spec.Cancel
		}
	}
	after, err := Generate(rows, readRepo)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{transitionsPath, tlaPath} {
		if bytes.Equal(before[p], after[p]) {
			t.Errorf("%s did not change with the table", p)
		}
	}
}

func TestGenerateRejectsAnInvalidTable(t *testing.T) {
	rows := append([]spec.Row(nil), spec.Table...)
	rows[1].ID = rows[0].ID
	if _, err := Generate(rows, readRepo); err == nil || !strings.Contains(err.Error(), "duplicate ID") {
		t.Fatalf("Generate accepted an invalid table: %v", err)
	}
}

func TestExpressionRendering(t *testing.T) {
	tests := []struct {
		e       spec.Expr
		goWant  string
		tlaWant string
	}{
		{spec.And(spec.V(spec.Started), spec.Not(spec.P(spec.POrphan))), "(v.Started && !p.Orphan)", `(r.started /\ ~e.orphan)`},
		{spec.Or(spec.Is(spec.Pending, "Queued"), spec.B(false)), "((v.Pending == PendingQueued) || false)", `((r.pending = "Queued") \/ FALSE)`},
		{spec.Max(spec.If(spec.Le(spec.N(0), spec.P(spec.PGraceOverride)), spec.P(spec.PGraceOverride), spec.P(spec.PSpecGrace)), spec.N(1)),
			"max(choose((0 <= p.GraceOverride), p.GraceOverride, p.SpecGrace), 1)",
			"Max((IF (0 <= e.graceOverride) THEN e.graceOverride ELSE e.specGrace), 1)"},
		{spec.Lt(spec.Min(spec.V(spec.Grace), spec.N(-1)), spec.N(2)), "(min(v.Grace, -1) < 2)", "(Min(r.grace, -1) < 2)"},
	}
	for _, tt := range tests {
		if got := goExpr(tt.e); got != tt.goWant {
			t.Errorf("goExpr(%s) = %s, want %s", tt.e, got, tt.goWant)
		}
		if got := tlaExpr(tt.e); got != tt.tlaWant {
			t.Errorf("tlaExpr(%s) = %s, want %s", tt.e, got, tt.tlaWant)
		}
	}
}

// TestContainerGenerateFollowsTheTable: a one-row change to the container
// table changes its Go and TLA+ outputs (the golden comparison of
// TestGenerate can fail for them too).
func TestContainerGenerateFollowsTheTable(t *testing.T) {
	before := map[string][]byte{}
	if err := containerFiles(container.Table, container.Operators, before); err != nil {
		t.Fatal(err)
	}
	rows := append([]spec.Row(nil), container.Table...)
	for i := range rows {
		if rows[i].ID == "CreatedBegin" {
			rows[i].Guard = spec.And(rows[i].Guard, spec.P(container.PFirst))
		}
	}
	after := map[string][]byte{}
	if err := containerFiles(rows, container.Operators, after); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{containerGoPath, containerTLAPath, containerPropertiesPath} {
		if bytes.Equal(before[p], after[p]) {
			t.Errorf("%s did not change with the container table", p)
		}
	}
}
