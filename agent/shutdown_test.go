package agent_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/fsm"
)

// withShutdown gives node shutdown 4 s, the last 2 s for critical pods.
func withShutdown() agenttest.Option {
	return agenttest.WithConfig(func(c *config.Config) {
		c.ShutdownGracePeriod.Duration = 4 * time.Second
		c.ShutdownGracePeriodCriticalPods.Duration = 2 * time.Second
	})
}

// A node shutdown stops the pods band by band, the critical ones last,
// rejects pods that come meanwhile, gives every stopped pod the kubelet's
// shutdown status, and ends Run with nil.
func TestNodeShutdown(t *testing.T) {
	t.Parallel()
	// The shutdown's first container stop fails: its pod is stopped again
	// after a back-off of 1 s (less than the band's 2 s), which keeps the
	// low band busy while a manifest is scanned (50 ms). Nothing retries
	// it sooner: the pods are desired (housekeeping drives only orphans)
	// and their state does not change meanwhile (no poll resyncs them).
	h := agenttest.Start(t, withShutdown(), agenttest.WithSyncBackOff(time.Second))
	lowA := agenttest.PodSpec{Name: "low-a", UID: agenttest.UID(1), Grace: 30}
	lowB := agenttest.PodSpec{Name: "low-b", UID: agenttest.UID(2), Grace: 30}
	crit := agenttest.PodSpec{Name: "crit", UID: agenttest.UID(3), Grace: 30, Priority: 2000000000}
	late := agenttest.PodSpec{Name: "late", UID: agenttest.UID(4)}
	for _, p := range []agenttest.PodSpec{lowA, lowB, crit} {
		h.WritePod(p)
	}
	h.WaitRunning(lowA.UID, lowB.UID, crit.UID)
	settle(h, lowA.UID, lowB.UID, crit.UID) // no poll retries the failed stop before its back-off

	if err := h.Agent.Embedded().InjectError("StopContainer", status.Error(codes.Unavailable, "runtime restarting")); err != nil {
		t.Fatal(err)
	}
	h.Agent.RequestShutdown()
	h.Eventually("the shutdown began", func() bool {
		return h.Rec.Saw(lowA.UID, agenttest.To(fsm.TerminationRequested)) || h.Rec.Saw(lowB.UID, agenttest.To(fsm.TerminationRequested))
	})
	h.WritePod(late)
	h.WaitPods("late rejected NodeShutdown", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(late.UID)], "NodeShutdown")
	})
	if err := h.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	all := h.Rec.All()
	critAt := h.Rec.First(crit.UID, agenttest.To(fsm.Terminating))
	for _, low := range []agenttest.PodSpec{lowA, lowB} {
		if at := h.Rec.First(low.UID, agenttest.To(fsm.Terminating)); at < 0 || critAt < 0 || at > critAt {
			t.Errorf("%s reached Terminating at %d, crit at %d: the low band must go first\n%s", low.Name, at, critAt, agenttest.Describe(all))
		}
	}
	if !h.Rec.Saw(lowA.UID, agenttest.Event(fsm.TerminatingFailed)) && !h.Rec.Saw(lowB.UID, agenttest.Event(fsm.TerminatingFailed)) {
		t.Errorf("the injected stop error was not met by the low band:\n%s", agenttest.Describe(all))
	}
	if ts := h.Rec.Of(late.UID); len(ts) > 0 {
		t.Errorf("late reached the engine:\n%s", agenttest.Describe(ts))
	}
	for _, p := range []agenttest.PodSpec{lowA, lowB, crit} {
		checkShutdownStatus(t, h, p)
	}
	if n := h.Metric("kubelet_admission_rejections_total", map[string]string{"reason": "NodeShutdown"}); n != 1 {
		t.Errorf(`kubelet_admission_rejections_total{reason="NodeShutdown"} = %v, want 1`, n)
	}
	started := h.Metric("kubelet_graceful_shutdown_start_time_seconds", nil)
	ended := h.Metric("kubelet_graceful_shutdown_end_time_seconds", nil)
	if started <= 0 || ended < started {
		t.Errorf("graceful shutdown start %v, end %v", started, ended)
	}
}

// POST /shutdown on the control socket ('podlife shutdown') starts a node
// shutdown, as RequestShutdown does; the TCP endpoint has no such verb.
func TestNodeShutdownOverControlSocket(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t, withShutdown())
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Grace: 30}
	h.WritePod(web)
	h.WaitRunning(web.UID)

	if code, _, _ := h.Get("/shutdown"); code != http.StatusNotFound {
		t.Errorf("GET /shutdown on TCP: %d, want 404", code)
	}
	resp, err := agenttest.HTTPClient.Post(h.URL("/shutdown"), "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), h.Agent.ControlSocket()) {
		t.Errorf("POST /shutdown on TCP: %d %q, want 405 and the control socket's path", resp.StatusCode, body)
	}

	answer, err := client.ShutdownNode(t.Context(), h.Agent.ControlSocket())
	if err != nil || answer != "node shutdown started\n" {
		t.Errorf("ShutdownNode: %q, %v", answer, err)
	}
	if err := h.Wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkShutdownStatus(t, h, web)
}

// checkShutdownStatus checks that p was stopped by the node shutdown: its
// containers stopped, phase terminal, reason Terminated and the
// DisruptionTarget condition.
func checkShutdownStatus(t *testing.T, h *agenttest.Harness, p agenttest.PodSpec) {
	t.Helper()
	if !h.Rec.Saw(p.UID, agenttest.To(fsm.Terminated)) {
		t.Errorf("%s did not terminate:\n%s", p.Name, agenttest.Describe(h.Rec.Of(p.UID)))
	}
	info := h.Pod(p.UID)
	if info.Reason != "Terminated" || (info.Phase != v1.PodFailed && info.Phase != v1.PodSucceeded) {
		t.Errorf("%s: %+v, want a terminal phase with reason Terminated", p.Name, info)
	}
	st, ok := h.Agent.StatusOf(types.UID(p.UID))
	if !ok {
		t.Fatalf("%s has no status", p.Name)
	}
	if !strings.Contains(st.Message, "node shutdown") {
		t.Errorf("%s: message %q", p.Name, st.Message)
	}
	var found bool
	for _, c := range st.Conditions {
		if c.Type == v1.DisruptionTarget {
			found = true
			if c.Status != v1.ConditionTrue || c.Reason != v1.PodReasonTerminationByKubelet {
				t.Errorf("%s: condition %+v", p.Name, c)
			}
		}
	}
	if !found {
		t.Errorf("%s: no DisruptionTarget condition in %+v", p.Name, st.Conditions)
	}
	for _, c := range info.Containers {
		if c.State != "terminated" {
			t.Errorf("%s: container %s is %s", p.Name, c.Name, c.State)
		}
	}
}
