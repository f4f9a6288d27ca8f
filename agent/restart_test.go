package agent_test

import (
	"os"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// A pod that completed stays completed across an agent restart: the next
// agent on the same runtime finds its exited containers, reports it
// finished with its exit code and runs nothing of it again, while an
// Always pod is adopted running. Once its manifest is removed, its
// containers and sandbox are removed.
func TestCompletedPodStaysCompletedAcrossRestart(t *testing.T) {
	t.Parallel()
	rt := agenttest.OutlivingRuntime(t)
	onRuntime := func(manifests string) agenttest.Option {
		return agenttest.WithConfig(func(c *config.Config) {
			c.RuntimeEndpoint = rt.Endpoint()
			if manifests != "" {
				c.StaticPodPath = manifests
			}
		})
	}
	done := agenttest.PodSpec{Name: "done", UID: agenttest.UID(1), RestartPolicy: "Never"}
	web := agenttest.PodSpec{Name: "web", UID: agenttest.UID(2)}

	first := agenttest.Start(t, onRuntime(""))
	first.WritePod(done)
	first.WritePod(web)
	first.WaitRunning(done.UID, web.UID)
	if err := rt.ExitContainer(first.RunningContainers(done.UID)["app"], 3); err != nil {
		t.Fatal(err)
	}
	first.WaitPods("done finished Failed with exit code 3", func(pods map[types.UID]api.PodInfo) bool {
		return finishedWith(pods[types.UID(done.UID)], v1.PodFailed, 3)
	})
	webContainer := first.RunningContainers(web.UID)["app"]
	first.Cancel()
	if err := first.Wait(); err != nil {
		t.Fatalf("first agent: %v", err)
	}
	before := agenttest.ContainerIDs(first.Containers(done.UID))
	if len(before) != 1 || len(first.Sandboxes(done.UID)) != 1 {
		t.Fatalf("the first agent left containers %v and sandboxes %v of done; want its one exited container in its sandbox", before, first.Sandboxes(done.UID))
	}

	next := agenttest.Start(t, onRuntime(first.Manifests))
	next.WaitPods("done finished Failed with exit code 3, web adopted", func(pods map[types.UID]api.PodInfo) bool {
		return finishedWith(pods[types.UID(done.UID)], v1.PodFailed, 3) && agenttest.IsRunning(pods[types.UID(web.UID)])
	})
	next.WaitHousekeepings(2) // a restart, if any, would show by now
	if now := agenttest.ContainerIDs(next.Containers(done.UID)); !slices.Equal(now, before) || !next.NothingRuns(done.UID) {
		t.Errorf("done's containers after the restart: %v (running %v), want only %v, exited", now, next.RunningContainers(done.UID), before)
	}
	if p := next.Pod(done.UID); !finishedWith(p, v1.PodFailed, 3) {
		t.Errorf("done after more housekeeping: %+v", p)
	}
	if now := next.RunningContainers(web.UID)["app"]; now != webContainer {
		t.Errorf("web's container %q, want the adopted %s", now, webContainer)
	}

	if err := os.Remove(first.Path(done.File())); err != nil {
		t.Fatal(err)
	}
	next.WaitGone(done.UID)
	next.Eventually("done's containers and sandbox are removed", func() bool {
		return len(next.Containers(done.UID)) == 0 && len(next.Sandboxes(done.UID)) == 0
	})
	if !agenttest.IsRunning(next.Pod(web.UID)) {
		t.Errorf("web: %+v", next.Pod(web.UID))
	}
}
