package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
)

var (
	web      = podManifest{name: "web", uid: webUID, restartPolicy: "Always", grace: 10, cpu: "500m", containers: []string{"server", "sidecar"}}
	job      = podManifest{name: "job", uid: jobUID, restartPolicy: "Never", grace: 10, containers: []string{"task"}}
	cache    = podManifest{name: "cache", uid: cacheUID, restartPolicy: "Always", grace: 20, containers: []string{"cache"}}
	scratch  = podManifest{name: "scratch", uid: scratchUID, restartPolicy: "Always", grace: 30, containers: []string{"scratch"}}
	db       = podManifest{name: "db", uid: dbUID, restartPolicy: "Always", grace: 5, containers: []string{"db"}}
	big      = podManifest{name: "big", uid: bigUID, restartPolicy: "Always", grace: 5, cpu: "4", containers: []string{"hog"}}
	critical = podManifest{name: "critical", uid: criticalUID, restartPolicy: "Always", grace: 30, priority: 2000000000, containers: []string{"agent"}}
	batch    = podManifest{name: "batch", uid: batchUID, restartPolicy: "Always", grace: 30, containers: []string{"worker"}}
)

// is reports whether pod uid is in the given lifecycle state and phase
// ("" matches any phase).
func is(pods map[types.UID]api.PodInfo, uid, lifecycle string, phase v1.PodPhase) bool {
	p, ok := pods[types.UID(uid)]
	return ok && p.Lifecycle == lifecycle && (phase == "" || p.Phase == phase)
}

// gone reports whether the agent no longer knows pod uid.
func gone(pods map[types.UID]api.PodInfo, uid string) bool {
	_, ok := pods[types.UID(uid)]
	return !ok
}

func (d *demo) orphan(context.Context) error {
	d.say("a sandbox of pod %s, unknown to this agent, was running before it started", orphanUID)
	return d.waitFor("the leftover sandbox was stopped and forgotten", func(pods map[types.UID]api.PodInfo) bool {
		return gone(pods, orphanUID) && d.counter("kubelet_orphaned_runtime_pods_total") == 1
	})
}

func (d *demo) create(context.Context) error {
	for _, m := range []podManifest{web, job, cache, scratch, db, big} {
		if err := write(d.manifest, m.name+".yaml", m.yaml()); err != nil {
			return err
		}
	}
	if err := write(d.manifest, "broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [broken\n"); err != nil {
		return err
	}
	d.say("wrote web, job, cache, scratch, db; big asks for 4 CPUs of 2; broken.yaml is not YAML (its error is logged with the file name)")
	return d.waitFor("five pods run and big was rejected OutOfcpu", func(pods map[types.UID]api.PodInfo) bool {
		for _, uid := range []string{webUID, jobUID, cacheUID, scratchUID, dbUID} {
			if !is(pods, uid, "Running", v1.PodRunning) {
				return false
			}
		}
		p := pods[bigUID]
		return p.Config == "rejected" && p.Reason == "OutOfcpu" && p.Phase == v1.PodFailed
	})
}

func (d *demo) update(context.Context) error {
	updated := web
	updated.labels = "    tier: frontend\n"
	if err := write(d.manifest, "web.yaml", updated.yaml()); err != nil {
		return err
	}
	d.say("web.yaml changed, same UID: an update, not a new pod")
	return d.waitFor("web still runs, with no restart", func(pods map[types.UID]api.PodInfo) bool {
		return is(pods, webUID, "Running", v1.PodRunning) && d.counter("podlife_transitions_total") > 0 && pods[webUID].Restarts() == 0
	})
}

func (d *demo) complete(ctx context.Context) error {
	ids, err := d.containerIDs(ctx, jobUID)
	if err != nil || len(ids) != 1 {
		return fmt.Errorf("job's container: %v (found %d)", err, len(ids))
	}
	if err := d.agent.Embedded().ExitContainer(ids[0], 0); err != nil {
		return err
	}
	d.say("job's container exited 0; restartPolicy Never: the pod is done")
	return d.waitFor("job Succeeded and its worker finished", func(pods map[types.UID]api.PodInfo) bool {
		return is(pods, jobUID, "Finished", v1.PodSucceeded)
	})
}

func (d *demo) killWithGrace(ctx context.Context) error {
	grace := int64(3)
	d.say("kill cache (own grace 20 s) with a grace override of %d s", grace)
	if err := d.agent.KillPod(ctx, cacheUID, &grace); err != nil {
		return err
	}
	// Its phase stays Running, as the kubelet gives a static pod whose
	// containers would restart no terminal phase (kubernetes#116484).
	return d.waitFor("cache stopped and stays stopped while its manifest is there (phase Running, as the kubelet leaves a static pod)", func(pods map[types.UID]api.PodInfo) bool {
		return is(pods, cacheUID, "Finished", v1.PodRunning)
	})
}

func (d *demo) forceDelete(ctx context.Context) error {
	zero := int64(0)
	killed := make(chan error, 1)
	go func() { killed <- d.agent.KillPod(ctx, scratchUID, &zero) }()
	if err := os.Remove(filepath.Join(d.manifest, "scratch.yaml")); err != nil {
		return err
	}
	d.say("kill scratch (own grace 30 s) with grace 0 and remove scratch.yaml")
	if err := <-killed; err != nil {
		return err
	}
	return d.waitFor("scratch stopped and its record was removed", func(pods map[types.UID]api.PodInfo) bool {
		return gone(pods, scratchUID)
	})
}

func (d *demo) replace(context.Context) error {
	next := db
	next.uid = dbNextUID
	if err := write(d.manifest, "db.yaml", next.yaml()); err != nil {
		return err
	}
	d.say("db.yaml now has a new UID: the old db is killed, the new one waits for the full name db-demo_demo")
	return d.waitFor("the old db is gone and the new one runs", func(pods map[types.UID]api.PodInfo) bool {
		return gone(pods, dbUID) && is(pods, dbNextUID, "Running", v1.PodRunning)
	})
}

func (d *demo) runtimeError(context.Context) error {
	if err := d.agent.Embedded().InjectError("StopContainer", errors.New("runtime restarted")); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(d.manifest, "web.yaml")); err != nil {
		return err
	}
	d.say("web.yaml removed; the runtime fails the first StopContainer: the engine retries after its back-off")
	return d.waitFor("web finished all the same and was removed", func(pods map[types.UID]api.PodInfo) bool {
		return gone(pods, webUID)
	})
}

func (d *demo) shutdown(context.Context) error {
	for _, m := range []podManifest{critical, batch} {
		if err := write(d.manifest, m.name+".yaml", m.yaml()); err != nil {
			return err
		}
	}
	if err := d.waitFor("critical (priority 2000000000) and batch run", func(pods map[types.UID]api.PodInfo) bool {
		return is(pods, criticalUID, "Running", v1.PodRunning) && is(pods, batchUID, "Running", v1.PodRunning)
	}); err != nil {
		return err
	}
	d.say("node shutdown: bands of 2 s (priority 0) and 2 s (critical); each pod's grace is min(band, its own)")
	d.agent.RequestShutdown()
	return nil
}
