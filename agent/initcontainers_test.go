package agent_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/podtable"
)

// An init container runs to completion before the pod's container starts:
// the poll that sees it exit resyncs the pod, which starts the container.
func TestInitContainer(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Inits: []string{"setup"}}
	h.WritePod(web)
	h.Eventually("setup runs", func() bool { return h.RunningContainers(web.UID)["setup"] != "" })
	settle(h, web.UID)

	// However often the pod syncs, app waits for setup.
	if cs := h.Containers(web.UID); len(cs) != 1 {
		t.Fatalf("the runtime has %d containers of web, want setup alone: %v", len(cs), cs)
	}
	st, ok := h.Agent.StatusOf(types.UID(web.UID))
	if !ok || st.Phase != v1.PodPending || len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].State.Running == nil ||
		len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Waiting == nil || st.ContainerStatuses[0].State.Waiting.Reason != "PodInitializing" {
		t.Fatalf("status while initializing: %+v", st)
	}
	if c := initializedCondition(st); c != v1.ConditionFalse {
		t.Errorf("Initialized is %s while setup runs", c)
	}

	if err := h.Agent.Embedded().ExitContainer(h.RunningContainers(web.UID)["setup"], 0); err != nil {
		t.Fatal(err)
	}
	h.WaitRunning(web.UID)
	st, _ = h.Agent.StatusOf(types.UID(web.UID))
	if ics := st.InitContainerStatuses; len(ics) != 1 || ics[0].State.Terminated == nil || ics[0].State.Terminated.ExitCode != 0 {
		t.Errorf("init container status once web runs: %+v", ics)
	}
	if c := initializedCondition(st); c != v1.ConditionTrue {
		t.Errorf("Initialized is %s once web runs", c)
	}
	if n := len(h.Containers(web.UID)); n != 2 {
		t.Errorf("the runtime has %d containers of web, want setup (exited) and app", n)
	}
	for _, p := range h.Agent.Pods() {
		if p.UID != types.UID(web.UID) {
			continue
		}
		if ics := p.InitContainers; len(ics) != 1 || ics[0].Name != "setup" || ics[0].ExitCode == nil || *ics[0].ExitCode != 0 {
			t.Errorf("/pods init containers of web: %+v", ics)
		}
		var table strings.Builder
		if err := podtable.WriteTable(&table, []api.PodInfo{p}); err != nil || !strings.Contains(table.String(), "init:setup=terminated(0)") {
			t.Errorf("status table lacks the init container (%v):\n%s", err, table.String())
		}
	}
}

func initializedCondition(st v1.PodStatus) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == v1.PodInitialized {
			return c.Status
		}
	}
	return ""
}
