package integration_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/podlife/podlife/agent/internal/agenttest"
)

// No test may leave a goroutine behind (agenttest.VerifyTestMain), but
// for one that may outlive a cluster-mode agent: the read loop of an
// HTTP/2 connection to the API server. The agent closes its idle
// connections when it stops, but client-go's event recorder may still be
// posting an event then (its sink does not wait); that connection then
// idles until the transport's idle timeout (90 s) ends it.
func TestMain(m *testing.M) {
	agenttest.VerifyTestMain(m, goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"))
}
