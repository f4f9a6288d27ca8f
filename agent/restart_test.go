package agent_test

import (
	"os"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
)

// A pod that completed stays completed across an agent restart: the next
// agent on the same runtime finds its exited containers, reports it
// finished with its exit code and runs nothing of it again, while an
// Always pod is adopted running. Once its manifest is removed, its
// containers and sandbox are removed.
func TestCompletedPodStaysCompletedAcrossRestart(t *testing.T) {
	t.Parallel()
	rt := outlivingRuntime(t)
	onRuntime := func(manifests string) option {
		return withConfig(func(c *agent.Config) {
			c.RuntimeEndpoint = rt.Endpoint()
			if manifests != "" {
				c.StaticPodPath = manifests
			}
		})
	}
	done := podSpec{name: "done", uid: uid(1), restartPolicy: "Never"}
	web := podSpec{name: "web", uid: uid(2)}

	first := start(t, onRuntime(""))
	first.writePod(done)
	first.writePod(web)
	first.waitRunning(done.uid, web.uid)
	if err := rt.ExitContainer(first.runningContainers(done.uid)["app"], 3); err != nil {
		t.Fatal(err)
	}
	first.waitPods("done finished Failed with exit code 3", func(pods map[types.UID]api.PodInfo) bool {
		return finishedWith(pods[types.UID(done.uid)], v1.PodFailed, 3)
	})
	webContainer := first.runningContainers(web.uid)["app"]
	first.cancel()
	if err := first.wait(); err != nil {
		t.Fatalf("first agent: %v", err)
	}
	before := containerIDs(first.containers(done.uid))
	if len(before) != 1 || len(first.sandboxes(done.uid)) != 1 {
		t.Fatalf("the first agent left containers %v and sandboxes %v of done; want its one exited container in its sandbox", before, first.sandboxes(done.uid))
	}

	next := start(t, onRuntime(first.manifests))
	next.waitPods("done finished Failed with exit code 3, web adopted", func(pods map[types.UID]api.PodInfo) bool {
		return finishedWith(pods[types.UID(done.uid)], v1.PodFailed, 3) && isRunning(pods[types.UID(web.uid)])
	})
	next.waitHousekeepings(2) // a restart, if any, would show by now
	if now := containerIDs(next.containers(done.uid)); !slices.Equal(now, before) || !next.nothingRuns(done.uid) {
		t.Errorf("done's containers after the restart: %v (running %v), want only %v, exited", now, next.runningContainers(done.uid), before)
	}
	if p := next.pod(done.uid); !finishedWith(p, v1.PodFailed, 3) {
		t.Errorf("done after more housekeeping: %+v", p)
	}
	if now := next.runningContainers(web.uid)["app"]; now != webContainer {
		t.Errorf("web's container %q, want the adopted %s", now, webContainer)
	}

	if err := os.Remove(first.path(done.file())); err != nil {
		t.Fatal(err)
	}
	next.waitGone(done.uid)
	next.eventually("done's containers and sandbox are removed", func() bool {
		return len(next.containers(done.uid)) == 0 && len(next.sandboxes(done.uid)) == 0
	})
	if !isRunning(next.pod(web.uid)) {
		t.Errorf("web: %+v", next.pod(web.uid))
	}
}

// containerIDs lists the IDs of cs, sorted.
func containerIDs(cs []*runtimeapi.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Id)
	}
	slices.Sort(out)
	return out
}
