package worker

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestOnlyFsmTouchesLooplab: the engine may change a lifecycle only through
// the generated transitions, so no package but fsm imports looplab/fsm, and
// worker reaches the machine only through fsm's API (which exports no
// setter; fsm's TestNoExportedWayToSetState checks that side).
func TestOnlyFsmTouchesLooplab(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "github.com/podlife/podlife/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var pkg struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&pkg); err != nil {
			t.Fatal(err)
		}
		checked++
		if pkg.ImportPath != "github.com/podlife/podlife/fsm" && slices.Contains(pkg.Imports, "github.com/looplab/fsm") {
			t.Errorf("%s imports github.com/looplab/fsm directly; only fsm may", pkg.ImportPath)
		}
		if pkg.ImportPath == "github.com/podlife/podlife/worker" && !slices.Contains(pkg.Imports, "github.com/podlife/podlife/fsm") {
			t.Errorf("worker no longer uses fsm: its lifecycle would not be the table's")
		}
	}
	if checked < 4 {
		t.Fatalf("go list returned %d packages", checked)
	}
}
