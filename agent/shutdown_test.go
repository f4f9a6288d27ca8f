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

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/fsm"
)

// withShutdown gives node shutdown 4 s, the last 2 s for critical pods.
func withShutdown() option {
	return withConfig(func(c *agent.Config) {
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
	h := start(t, withShutdown(), withSyncBackOff(time.Second))
	lowA := podSpec{name: "low-a", uid: uid(1), grace: 30}
	lowB := podSpec{name: "low-b", uid: uid(2), grace: 30}
	crit := podSpec{name: "crit", uid: uid(3), grace: 30, priority: 2000000000}
	late := podSpec{name: "late", uid: uid(4)}
	for _, p := range []podSpec{lowA, lowB, crit} {
		h.writePod(p)
	}
	h.waitRunning(lowA.uid, lowB.uid, crit.uid)
	h.settle(lowA.uid, lowB.uid, crit.uid) // no poll retries the failed stop before its back-off

	if err := h.agent.Embedded().InjectError("StopContainer", status.Error(codes.Unavailable, "runtime restarting")); err != nil {
		t.Fatal(err)
	}
	h.agent.RequestShutdown()
	h.eventually("the shutdown began", func() bool {
		return h.rec.saw(lowA.uid, to(fsm.TerminationRequested)) || h.rec.saw(lowB.uid, to(fsm.TerminationRequested))
	})
	h.writePod(late)
	h.waitPods("late rejected NodeShutdown", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(late.uid)], "NodeShutdown")
	})
	if err := h.wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	all := h.rec.all()
	critAt := h.rec.first(crit.uid, to(fsm.Terminating))
	for _, low := range []podSpec{lowA, lowB} {
		if at := h.rec.first(low.uid, to(fsm.Terminating)); at < 0 || critAt < 0 || at > critAt {
			t.Errorf("%s reached Terminating at %d, crit at %d: the low band must go first\n%s", low.name, at, critAt, describe(all))
		}
	}
	if !h.rec.saw(lowA.uid, event(fsm.TerminatingFailed)) && !h.rec.saw(lowB.uid, event(fsm.TerminatingFailed)) {
		t.Errorf("the injected stop error was not met by the low band:\n%s", describe(all))
	}
	if ts := h.rec.of(late.uid); len(ts) > 0 {
		t.Errorf("late reached the engine:\n%s", describe(ts))
	}
	for _, p := range []podSpec{lowA, lowB, crit} {
		checkShutdownStatus(t, h, p)
	}
	if n := h.metric("kubelet_admission_rejections_total", map[string]string{"reason": "NodeShutdown"}); n != 1 {
		t.Errorf(`kubelet_admission_rejections_total{reason="NodeShutdown"} = %v, want 1`, n)
	}
	started := h.metric("kubelet_graceful_shutdown_start_time_seconds", nil)
	ended := h.metric("kubelet_graceful_shutdown_end_time_seconds", nil)
	if started <= 0 || ended < started {
		t.Errorf("graceful shutdown start %v, end %v", started, ended)
	}
}

// POST /shutdown on the control socket ('podlife shutdown') starts a node
// shutdown, as RequestShutdown does; the TCP endpoint has no such verb.
func TestNodeShutdownOverControlSocket(t *testing.T) {
	t.Parallel()
	h := start(t, withShutdown())
	web := podSpec{name: "web", uid: uid(1), grace: 30}
	h.writePod(web)
	h.waitRunning(web.uid)

	if code, _, _ := h.get("/shutdown"); code != http.StatusNotFound {
		t.Errorf("GET /shutdown on TCP: %d, want 404", code)
	}
	resp, err := httpClient.Post(h.url("/shutdown"), "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), h.agent.ControlSocket()) {
		t.Errorf("POST /shutdown on TCP: %d %q, want 405 and the control socket's path", resp.StatusCode, body)
	}

	answer, err := client.ShutdownNode(t.Context(), h.agent.ControlSocket())
	if err != nil || answer != "node shutdown started\n" {
		t.Errorf("ShutdownNode: %q, %v", answer, err)
	}
	if err := h.wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkShutdownStatus(t, h, web)
}

// checkShutdownStatus checks that p was stopped by the node shutdown: its
// containers stopped, phase terminal, reason Terminated and the
// DisruptionTarget condition.
func checkShutdownStatus(t *testing.T, h *harness, p podSpec) {
	t.Helper()
	if !h.rec.saw(p.uid, to(fsm.Terminated)) {
		t.Errorf("%s did not terminate:\n%s", p.name, describe(h.rec.of(p.uid)))
	}
	info := h.pod(p.uid)
	if info.Reason != "Terminated" || (info.Phase != v1.PodFailed && info.Phase != v1.PodSucceeded) {
		t.Errorf("%s: %+v, want a terminal phase with reason Terminated", p.name, info)
	}
	st, ok := h.agent.StatusOf(types.UID(p.uid))
	if !ok {
		t.Fatalf("%s has no status", p.name)
	}
	if !strings.Contains(st.Message, "node shutdown") {
		t.Errorf("%s: message %q", p.name, st.Message)
	}
	var found bool
	for _, c := range st.Conditions {
		if c.Type == v1.DisruptionTarget {
			found = true
			if c.Status != v1.ConditionTrue || c.Reason != v1.PodReasonTerminationByKubelet {
				t.Errorf("%s: condition %+v", p.name, c)
			}
		}
	}
	if !found {
		t.Errorf("%s: no DisruptionTarget condition in %+v", p.name, st.Conditions)
	}
	for _, c := range info.Containers {
		if c.State != "terminated" {
			t.Errorf("%s: container %s is %s", p.name, c.Name, c.State)
		}
	}
}
