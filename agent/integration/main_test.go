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
// idles until the transport's idle timeout (90 s) ends it. And client-go's
// certificate manager (a node joined with a bootstrap token): once
// stopped, its rotation loop still sleeps until the next rotation
// deadline, on a timer that does not watch its context
// (certificate_manager.go, run), and only then ends; it holds nothing.
func TestMain(m *testing.M) {
	agenttest.VerifyTestMain(m, goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/certificate.(*manager).run"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/certificate.(*manager).run.func2"))
}
