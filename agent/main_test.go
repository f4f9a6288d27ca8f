package agent_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every agent a test runs must leave no goroutine behind once Run
// returned: not the engine's, the HTTP server's, the CRI clients' nor the
// embedded runtime's.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
