package integration_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/klog/v2"
)

// Every agent a test runs must leave no goroutine behind once Run
// returned: not the engine's, the HTTP server's, the CRI clients' nor the
// API clients'. The CRI client logs every failed call through klog (a
// call cancelled as an agent stops is one); the tests read the agent's own
// log, so klog's lines are dropped rather than flood the output.
//
// One goroutine may outlive a cluster-mode agent: the read loop of an
// HTTP/2 connection to the API server. The agent closes its idle
// connections when it stops, but client-go's event recorder may still be
// posting an event then (its sink does not wait); that connection then
// idles until the transport's idle timeout (90 s) ends it.
func TestMain(m *testing.M) {
	klog.SetSlogLogger(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"))
}
