package agenttest

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/klog/v2"
)

// VerifyTestMain is the TestMain of a package whose tests run agents: it
// runs the tests (m) and fails the binary if a goroutine outlived them
// (goleak, but for opts' goroutines). Every agent a test runs must leave
// no goroutine behind once Run returned: not the engine's, the HTTP
// server's, the CRI clients' nor the embedded runtime's. The CRI client
// logs every failed call through klog (a call cancelled as an agent stops
// is one); the tests read the agent's own log, so klog's lines are dropped
// rather than flood the output.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	klog.SetSlogLogger(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m, opts...)
}
