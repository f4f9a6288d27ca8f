package agent_test

import (
	"path/filepath"
	"testing"
)

// Stopped by its context on a real runtime, the agent says its pods keep
// running there (with the embedded runtime they end with it:
// TestStopSaysWhatBecomesOfPods).
func TestContainerdStopSaysPodsKeepRunning(t *testing.T) {
	e := newCtrdEnv(t)
	a := e.startAgent(filepath.Join(e.dir, "manifests"), nil)
	if err := a.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(a.logs.Lines("agent stopping; pods keep running in the runtime")) != 1 || len(a.logs.Lines("end with it")) != 0 {
		t.Errorf("the stop message does not say the pods keep running:\n%s", a.logs.Tail(5))
	}
}
