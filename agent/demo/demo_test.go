package demo

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestDemo plays the whole script: every step's outcome must come, and the
// engine's trace must follow the lifecycle table.
func TestDemo(t *testing.T) {
	dir, err := os.MkdirTemp("", "pldemo") // short: the runtime's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var out, logs bytes.Buffer
	if err := Run(context.Background(), &out, Options{Dir: dir, Logs: &logs}); err != nil {
		t.Fatalf("demo: %v\noutput:\n%s\nlogs:\n%s", err, out.String(), logs.String())
	}
	got := out.String()
	for _, want := range []string{
		"step 9: graceful node shutdown",
		"every one a row of the lifecycle table",
		`kubelet_admission_rejections_total{reason="OutOfcpu"} 1`,
		"kubelet_orphaned_runtime_pods_total 1",
		// The UIDs differ only at their end, which the table shows.
		"batch-demo     …00000009",
		"critical-demo  …00000008",
		// The metrics are of the final state, not of a housekeeping before
		// it: every pod finished, none active.
		`kubelet_desired_pods{static="true"} 5`,
		"kubelet_active_pods 0",
		`kubelet_working_pods{config="desired",lifecycle="terminated",static="true"} 5`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// The shutdown killed batch (priority 0) before critical: bands run
	// from the lowest priority.
	batch := strings.Index(got, "batch      Running              -> TerminationRequested")
	critical := strings.Index(got, "critical   Running              -> TerminationRequested")
	if batch < 0 || critical < 0 || batch > critical {
		t.Errorf("shutdown order: batch at %d, critical at %d:\n%s", batch, critical, got)
	}
	// Node shutdown let the engine finish every pod before the agent exited.
	table := got[strings.Index(got, "== final state"):strings.Index(got, "== metrics")]
	for _, line := range strings.Split(table, "\n")[2:] {
		if f := strings.Fields(line); len(f) > 4 && f[3] == "desired" && f[4] != "Finished" {
			t.Errorf("after the shutdown %s is %s, want Finished", f[1], f[4])
		}
	}
	// The bad manifest was reported with its file name, and is shown.
	if !strings.Contains(logs.String(), "broken.yaml") {
		t.Errorf("no log line names broken.yaml:\n%s", logs.String())
	}
	if !strings.Contains(table, "MANIFEST") || !strings.Contains(table, "broken.yaml") {
		t.Errorf("the final state does not show broken.yaml:\n%s", table)
	}
}
