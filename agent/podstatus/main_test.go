package podstatus

import (
	"testing"

	"go.uber.org/goleak"
)

// Run must leave nothing behind once its context ended: not its worker,
// not its work queue's goroutines. Idle HTTP connections of the tests'
// clients may outlive a test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
