package shutdown

import (
	"testing"

	"go.uber.org/goleak"
)

// Kills abandoned by a band must end with it: no test may leave goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
