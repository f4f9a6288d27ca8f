package agent_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podlife/podlife/agent/internal/agenttest"
)

// /healthz fails while housekeeping's runtime reads fail, saying what
// fails and since when, and recovers once they succeed again.
func TestHealthzFailsWhileRuntimeReadsFail(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	h.Eventually("the agent is healthy", func() bool {
		code, _, _ := h.Get("/healthz")
		return code == http.StatusOK
	})
	// More failures than the reads of the test's whole time: the runtime
	// stays down until the test takes them itself.
	for range 1000 {
		if err := h.Agent.Embedded().InjectError("ListPodSandbox", status.Error(codes.Unavailable, "runtime down")); err != nil {
			t.Fatal(err)
		}
	}
	var body string
	h.Eventually("/healthz fails", func() bool {
		var code int
		code, _, body = h.Get("/healthz")
		return code == http.StatusInternalServerError
	})
	for _, want := range []string{"runtime reads failing since", "housekeeping intervals in a row", "runtime down"} {
		if !strings.Contains(body, want) {
			t.Errorf("/healthz says %q, want it to contain %q", body, want)
		}
	}
	for {
		if _, err := h.RT.ListPodSandbox(context.Background(), nil); err == nil {
			break
		}
	}
	h.Eventually("/healthz recovers", func() bool {
		code, _, body := h.Get("/healthz")
		return code == http.StatusOK && body == "ok\n"
	})
}
