package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFromTLC runs `podlife-dev check --from-tlc` on a real TLC error trace
// (explore/testdata/tlc-trace.txt, TLC's output on p1 static, p2 not,
// grace overrides {1}, spec grace 2; see explore/testdata/README.md): the
// command turns it into engine inputs, writes them and replays them.
func TestCheckFromTLC(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace.json")
	cmd := checkCommand()
	var stdout bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stdout)
	cmd.SetArgs([]string{"--pods", "2", "--static", "1", "--grace-overrides", "1", "--spec-grace", "2",
		"--from-tlc", filepath.Join("..", "..", "explore", "testdata", "tlc-trace.txt"), "--counterexample", out})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("podlife-dev check --from-tlc: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{"TLC's 4 states are 3 engine steps", "replayed 3 steps"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ce counterexampleFile
	if err := json.Unmarshal(data, &ce); err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, in := range ce.Inputs {
		events = append(events, in.String())
	}
	if got, want := strings.Join(events, "; "), "p1 Create(); p2 Create(terminalPhase); p2 Dequeue()"; got != want {
		t.Errorf("inputs %s, want %s", got, want)
	}
}

// TestCheckContainerConfig: `podlife-dev check --config MCContainer...`
// explores the container table's configuration and prints its count in
// the line CI's compare-counts reads; a property that is not the
// container table's is refused.
func TestCheckContainerConfig(t *testing.T) {
	run := func(args ...string) (string, error) {
		cmd := checkCommand()
		var stdout bytes.Buffer
		cmd.SetOut(&stdout)
		cmd.SetErr(&stdout)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return stdout.String(), err
	}
	out, err := run("--config", "MCContainerNeverEnds")
	if err != nil {
		t.Fatalf("podlife-dev check --config MCContainerNeverEnds: %v\n%s", err, out)
	}
	for _, want := range []string{"MCContainerNeverEnds: 318 distinct states", "MCContainerNeverEnds: all 17 properties hold"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if out, err := run("--config", "MCContainerNeverEnds", "--property", "TypeOK"); err == nil || !strings.Contains(err.Error(), "no property TypeOK") {
		t.Errorf("a pod property on a container config: err %v\n%s", err, out)
	}
}
