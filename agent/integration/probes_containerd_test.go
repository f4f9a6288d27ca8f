package integration_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// A liveness exec probe that starts failing (the container removes the
// file it tests) gets the container killed and restarted through the
// engine, with its restart count, the Unhealthy and Killing events.
func TestContainerdLivenessRestarts(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	uid := e.NewUID()
	writeManifest(t, manifests, "live.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: live
  namespace: %s
  uid: %s
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 5
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, 'touch /tmp/healthy; trap "exit 0" TERM; sleep 2; rm /tmp/healthy; while true; do sleep 0.2; done']
    livenessProbe:
      exec:
        command: [test, -f, /tmp/healthy]
      periodSeconds: 1
      failureThreshold: 2
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage))

	var first string
	agenttest.CtrdEventually(t, "the container runs", func() (bool, string) {
		st, _ := a.PodStatus(types.UID(uid))
		if len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].State.Running != nil {
			first = st.ContainerStatuses[0].ContainerID
		}
		return first != "", fmt.Sprintf("%+v", st.ContainerStatuses)
	})
	agenttest.CtrdEventually(t, "the container restarted once", func() (bool, string) {
		st, _ := a.PodStatus(types.UID(uid))
		if len(st.ContainerStatuses) != 1 {
			return false, fmt.Sprintf("%+v", st)
		}
		cs := st.ContainerStatuses[0]
		return cs.RestartCount >= 1 && cs.ContainerID != first && cs.State.Running != nil &&
			cs.LastTerminationState.Terminated != nil, fmt.Sprintf("%+v", cs)
	})
	logs := a.Logs.String()
	for _, want := range []string{"event: Liveness probe failed: ", "event: Container app failed liveness probe, will be restarted"} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %q in the agent's log", want)
		}
	}
	if err := os.Remove(filepath.Join(manifests, "live.yaml")); err != nil {
		t.Fatal(err)
	}
	e.WaitRuntimeGone(uid)
}

// Readiness keeps being probed while the pod terminates: during a long
// grace period (a container that ignores SIGTERM) the pod's Ready condition
// follows the file the test removes and creates again (the kubelet's
// v1.35 bug #140881 stopped it), until a kill with grace 0 ends the pod.
func TestContainerdReadinessDuringGrace(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	uid := e.NewUID()
	writeManifest(t, manifests, "ready.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: ready
  namespace: %s
  uid: %s
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 60
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, 'touch /tmp/ready; trap "" TERM; while true; do sleep 0.2; done']
    readinessProbe:
      exec:
        command: [test, -f, /tmp/ready]
      periodSeconds: 1
      failureThreshold: 1
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage))

	podReady := func(want v1.ConditionStatus, terminating bool) {
		t.Helper()
		agenttest.CtrdEventually(t, fmt.Sprintf("Ready is %s (terminating: %v)", want, terminating), func() (bool, string) {
			st, _ := a.PodStatus(types.UID(uid))
			p, _ := a.Pod(uid)
			for _, c := range st.Conditions {
				if c.Type == v1.PodReady {
					return c.Status == want && (p.Worker == "terminating") == terminating, fmt.Sprintf("Ready %s, worker %s", c.Status, p.Worker)
				}
			}
			return false, fmt.Sprintf("no Ready condition in %+v", st)
		})
	}
	podReady(v1.ConditionTrue, false)
	var id string
	for _, c := range e.Containers(uid) {
		id = c.Id
	}

	killed := make(chan error, 1)
	go func() { killed <- a.KillPod(context.Background(), types.UID(uid), nil) }()
	exec := func(cmd ...string) {
		t.Helper()
		if _, _, err := e.RT.ExecSync(t.Context(), id, cmd, 0); err != nil {
			t.Fatalf("exec %v: %v", cmd, err)
		}
	}
	podReady(v1.ConditionTrue, true)
	exec("rm", "/tmp/ready")
	podReady(v1.ConditionFalse, true)
	exec("touch", "/tmp/ready")
	podReady(v1.ConditionTrue, true)
	if p, _ := a.Pod(uid); p.Containers[0].State != "running" {
		t.Fatalf("the container stopped within its grace period: %+v", p)
	}

	if err := a.KillPod(t.Context(), types.UID(uid), new(int64(0))); err != nil {
		t.Fatalf("kill with grace 0: %v", err)
	}
	if err := <-killed; err != nil {
		t.Errorf("the first kill: %v", err)
	}
	podReady(v1.ConditionFalse, false)
	if err := os.Remove(filepath.Join(manifests, "ready.yaml")); err != nil {
		t.Fatal(err)
	}
	e.WaitRuntimeGone(uid)
}
