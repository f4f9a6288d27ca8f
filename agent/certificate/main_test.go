package certificate

import (
	"testing"

	"go.uber.org/goleak"
)

// Nothing outlives a test but client-go's certificate manager's rotation
// loop: once stopped, it still sleeps until the next rotation deadline on
// a timer that does not watch its context (certificate_manager.go, run),
// and only then ends; it holds nothing.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/certificate.(*manager).run"),
		goleak.IgnoreAnyFunction("k8s.io/client-go/util/certificate.(*manager).run.func2"))
}
