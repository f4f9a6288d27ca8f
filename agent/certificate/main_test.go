package certificate

import (
	"testing"

	"go.uber.org/goleak"
)

// The certificate managers stop with their Run, and the transport's
// connections close with the client: nothing outlives a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
