package agent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/podtable"
)

// GET /pods is the kubelet's: a v1.PodList of the manifests' pods, each
// with its spec and its status as the kubelet reports it.
func TestPodsIsAPodList(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.Allocatable = agenttest.Resources("cpu=1,memory=1Gi") }))
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1), Containers: []string{"server", "sidecar"}}
	big := agenttest.PodSpec{Name: "big", UID: agenttest.UID(2), CPU: "2"}
	h.WritePod(web)
	h.WritePod(big)
	h.WaitRunning(web.UID)
	h.WaitPods("big rejected", func(pods map[types.UID]api.PodInfo) bool { return isRejected(pods[types.UID(big.UID)], "OutOfcpu") })
	if err := h.Agent.Embedded().ExitContainer(h.RunningContainers(web.UID)["server"], 3); err != nil {
		t.Fatal(err)
	}
	h.WaitPods("web's server restarted", func(pods map[types.UID]api.PodInfo) bool {
		p := pods[types.UID(web.UID)]
		return agenttest.IsRunning(p) && p.Restarts() == 1
	})

	code, contentType, body := h.Get("/pods")
	if code != http.StatusOK || contentType != "application/json" {
		t.Fatalf("GET /pods: %d %s", code, contentType)
	}
	var list v1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("/pods: %v\n%s", err, body)
	}
	if list.Kind != "PodList" || list.APIVersion != "v1" || len(list.Items) != 2 {
		t.Fatalf("/pods: kind %q apiVersion %q with %d pods, want a v1 PodList of 2:\n%s", list.Kind, list.APIVersion, len(list.Items), body)
	}
	rejected, running := list.Items[0], list.Items[1] // by name: big, web
	if rejected.UID != types.UID(big.UID) || rejected.Status.Phase != v1.PodFailed || rejected.Status.Reason != "OutOfcpu" {
		t.Errorf("/pods big: uid %s status %+v, want Failed OutOfcpu", rejected.UID, rejected.Status)
	}
	st := running.Status
	if running.UID != types.UID(web.UID) || running.Name != "web-"+agenttest.NodeName || len(running.Spec.Containers) != 2 {
		t.Fatalf("/pods web: %s %s with %d containers", running.UID, running.Name, len(running.Spec.Containers))
	}
	if st.Phase != v1.PodRunning || st.PodIP == "" || st.StartTime == nil {
		t.Errorf("/pods web: phase %s podIP %q startTime %v, want Running with both", st.Phase, st.PodIP, st.StartTime)
	}
	ready := false
	for _, c := range st.Conditions {
		ready = ready || c.Type == v1.PodReady && c.Status == v1.ConditionTrue
	}
	if !ready {
		t.Errorf("/pods web: conditions %+v, want Ready", st.Conditions)
	}
	var server *v1.ContainerStatus
	for i := range st.ContainerStatuses {
		if st.ContainerStatuses[i].Name == "server" {
			server = &st.ContainerStatuses[i]
		}
	}
	if server == nil || server.RestartCount != 1 || server.State.Running == nil ||
		server.LastTerminationState.Terminated == nil || server.LastTerminationState.Terminated.ExitCode != 3 {
		t.Errorf("/pods web's server: %+v, want running, 1 restart, last terminated with exit code 3", server)
	}
}

// A static pod held back because another UID still holds its full name
// says for whom, in /lifecycle, in /pods and in the status table.
func TestWaitingPodSaysForWhom(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	old := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
	h.WritePod(old)
	h.WaitRunning(old.UID)
	// The old pod cannot stop while the runtime fails its stops: it keeps
	// the full name, and the new one waits.
	for range 1000 {
		if err := h.Agent.Embedded().InjectError("StopContainer", errors.New("runtime busy")); err != nil {
			t.Fatal(err)
		}
	}
	next := agenttest.PodSpec{Name: "web", UID: agenttest.UID(2)}
	h.WritePod(next)
	h.Eventually("the new web waits for the old one", func() bool {
		for _, p := range h.Agent.Lifecycle().Pods {
			if p.UID == types.UID(next.UID) {
				return p.WaitingFor != nil && p.WaitingFor.UID == types.UID(old.UID)
			}
		}
		return false
	})
	var table bytes.Buffer
	if err := podtable.WriteStatus(&table, h.Agent.Lifecycle()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "waiting for its full name, held by …00000001 (its manifest is gone)") {
		t.Errorf("the status table does not say whom web waits for:\n%s", table.String())
	}
	var status v1.PodStatus
	for _, p := range h.Agent.PodList().Items {
		if p.UID == types.UID(next.UID) {
			status = p.Status
		}
	}
	if status.Phase != v1.PodPending || status.Reason != "WaitingForFullName" ||
		!strings.Contains(status.Message, "web-"+agenttest.NodeName+"_test, held by pod "+old.UID+" (its manifest is gone)") {
		t.Errorf("/pods: the waiting web's status is %+v", status)
	}
}

// A bad manifest is shown, with its file and why, until it is fixed or
// removed.
func TestManifestErrorsAreShown(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t)
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
	h.Write("web.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [web\n")
	h.Write("other.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: other\n")
	h.Eventually("both bad manifests are shown", func() bool { return len(h.Agent.Lifecycle().ManifestErrors) == 2 })
	errs := h.Agent.Lifecycle().ManifestErrors
	if errs[0].Path != h.Path("other.yaml") || errs[1].Path != h.Path("web.yaml") || !strings.Contains(errs[1].Error, "YAML") {
		t.Errorf("manifest errors %+v, want other.yaml's and web.yaml's YAML error, by path", errs)
	}
	var table bytes.Buffer
	if err := podtable.WriteStatus(&table, h.Agent.Lifecycle()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "MANIFEST") || !strings.Contains(table.String(), h.Path("web.yaml")) {
		t.Errorf("the status does not show web.yaml:\n%s", table.String())
	}

	h.WritePod(web)
	h.Remove("other.yaml")
	h.WaitRunning(web.UID)
	h.Eventually("the mended manifests are no longer shown", func() bool { return len(h.Agent.Lifecycle().ManifestErrors) == 0 })
}

// A manifest directory that does not exist is said to be so, once, and
// shown until it is created.
func TestMissingManifestDirectory(t *testing.T) {
	t.Parallel()
	var dir string
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) {
		dir = filepath.Join(c.RootDir, "absent")
		c.StaticPodPath = dir
	}))
	want := []api.ManifestError{{Path: dir, Error: "the manifest directory does not exist"}}
	h.Eventually("the missing directory is shown", func() bool {
		got := h.Agent.Lifecycle().ManifestErrors
		return len(got) == 1 && got[0] == want[0]
	})
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(1)}
	if err := os.WriteFile(filepath.Join(dir, web.File()), []byte(web.YAML()), 0o644); err != nil {
		t.Fatal(err)
	}
	h.WaitRunning(web.UID)
	if got := h.Agent.Lifecycle().ManifestErrors; len(got) != 0 {
		t.Errorf("manifest errors %+v once the directory exists", got)
	}
	if n := len(h.LogLines("the manifest directory does not exist")); n != 1 {
		t.Errorf("%d warnings that the directory does not exist, want 1", n)
	}
	if lines := h.LogLines("bad manifest"); len(lines) != 0 {
		t.Errorf("a missing directory reported as a bad manifest: %q", lines)
	}
}
