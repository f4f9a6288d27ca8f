package agent_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/klog/v2"
)

// Every agent a test runs must leave no goroutine behind once Run
// returned: not the engine's, the HTTP server's, the CRI clients' nor the
// embedded runtime's. The CRI client logs every failed call through klog
// (a call cancelled as an agent stops is one); the tests read the agent's
// own log, so klog's lines are dropped rather than flood the output. (The
// cluster-mode agents, and the HTTP/2 read loop one of them may leave for
// a while, are agent/integration's.)
func TestMain(m *testing.M) {
	klog.SetSlogLogger(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}
