package agent_test

import (
	"testing"

	"github.com/podlife/podlife/agent/internal/agenttest"
)

// No test may leave a goroutine behind (agenttest.VerifyTestMain). The
// cluster-mode agents, and the HTTP/2 read loop one of them may leave for
// a while, are agent/integration's.
func TestMain(m *testing.M) { agenttest.VerifyTestMain(m) }
