package kuberuntime

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A pod killed while a regular init container runs, before its sidecars
// started (the node e2e suite's "should not hang in termination if
// terminated during initialization"): only the init container is
// stopped, by its TERM handler; no sidecar is started, or waited for, or
// has its preStop hook run, so the kill does not take the sidecars' slow
// TERM handlers or the grace period.
func TestContainerdKilledDuringInitStartsNoSidecar(t *testing.T) {
	e := newCtrdSyncer(t)
	always := v1.ContainerRestartPolicyAlways
	pod := e.pod("killed-in-init", 3, busybox("main", ctrdTrap("exit 0")))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{busybox("start", ctrdTrap("exit 0"))}
	for _, name := range []string{"sidecar-1", "sidecar-2", "sidecar-3"} {
		s := busybox(name, ctrdTrap("sleep 5; exit 0"))
		s.RestartPolicy = &always
		s.Lifecycle = preStopExec("sleep", "1")
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, s)
	}
	deadline := time.Now().Add(ctrdTimeout)
	for {
		if _, err := e.s.SyncPod(t.Context(), 0, pod, nil, nil); err != nil {
			t.Fatalf("SyncPod: %v", err)
		}
		p, err := readPod(t.Context(), e.rt, pod.UID)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.RunningIDs()) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the init container does not run after %v", ctrdTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.trapped(pod)

	start := time.Now()
	e.terminate(pod, nil)
	t.Logf("terminated in %v", time.Since(start).Round(time.Millisecond))
	cs := e.exited(pod)
	for name, c := range cs {
		if name != "start" {
			t.Errorf("container %s exists (%v, exit %d): the kill started a container", name, c.State, c.ExitCode)
		}
	}
	if c := cs["start"]; c == nil || c.ExitCode != 0 || c.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("start: %+v, want exited 0 by its TERM handler", c)
	}
}
