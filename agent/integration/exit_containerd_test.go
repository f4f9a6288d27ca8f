package integration_test

import (
	"path/filepath"
	"testing"

	"github.com/podlife/podlife/agent/internal/agenttest"
)

// Stopped by its context on a real runtime, the agent says its pods keep
// running there (with the embedded runtime they end with it:
// TestStopSaysWhatBecomesOfPods).
func TestContainerdStopSaysPodsKeepRunning(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	a := e.StartAgent(filepath.Join(e.Dir, "manifests"), nil)
	if err := a.Stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(a.Logs.Lines("agent stopping; pods keep running in the runtime")) != 1 || len(a.Logs.Lines("end with it")) != 0 {
		t.Errorf("the stop message does not say the pods keep running:\n%s", a.Logs.Tail(5))
	}
}
