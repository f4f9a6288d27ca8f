package kuberuntime

// Container-level restart policy and rules (ContainerRestartRules) on a
// real containerd, as the conformance suite's "Container Restart Rules"
// specs run them. They skip unless $PODLIFE_CRI_ENDPOINT names a runtime
// (internal/critest):
//
//	PODLIFE_CRI_ENDPOINT=unix:///…/containerd.sock go test -race -count=1 -run Containerd ./cri/

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/internal/crifake"
)

func TestContainerdContainerRestartRules(t *testing.T) {
	never, always := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyAlways
	for _, tc := range []struct {
		name    string
		pod     v1.RestartPolicy
		own     v1.ContainerRestartPolicy
		rules   []v1.ContainerRestartRule
		command string
		// restarted: the container runs again (and the pod with it);
		// else the pod ends with phase, the container not restarted.
		restarted bool
		phase     v1.PodPhase
	}{
		{name: "Never in an Always pod, exit 1: not restarted", pod: v1.RestartPolicyAlways, own: never, command: "exit 1", phase: v1.PodFailed},
		{name: "a rule on exit code 42 restarts a Never container", pod: v1.RestartPolicyNever, own: never, rules: crifake.RestartOn(42), command: "exit 42", restarted: true},
		{name: "a rule on 42, exit 1: not restarted", pod: v1.RestartPolicyNever, own: never, rules: crifake.RestartOn(42), command: "exit 1", phase: v1.PodFailed},
		{name: "Always in a Never pod, exit 1: restarted", pod: v1.RestartPolicyNever, own: always, command: "exit 1", restarted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, statuses := newCtrdSyncerWith(t, Options{})
			c := busybox("main", []string{"sh", "-c", tc.command})
			c.RestartPolicy, c.RestartPolicyRules = new(tc.own), tc.rules
			pod := e.pod("restart-rules", 0, c)
			pod.Spec.RestartPolicy = tc.pod

			deadline := time.Now().Add(ctrdTimeout)
			for {
				terminal, err := e.s.SyncPod(t.Context(), 0, pod, nil, nil)
				if err != nil && !errors.Is(err, ErrCrashLoopBackOff) {
					t.Fatalf("SyncPod: %v", err)
				}
				st := statuses.last(t, pod.UID)
				cs := st.ContainerStatuses[0]
				if tc.restarted && cs.RestartCount > 0 {
					if terminal || st.Phase != v1.PodRunning || cs.LastTerminationState.Terminated == nil {
						t.Errorf("restarted: terminal %v, phase %s, last termination %+v; want Running, with the exit before", terminal, st.Phase, cs.LastTerminationState)
					}
					return
				}
				if terminal {
					if tc.restarted {
						t.Fatalf("the pod ended (%s) instead of restarting its container", st.Phase)
					}
					if st.Phase != tc.phase || cs.RestartCount != 0 || cs.State.Terminated == nil {
						t.Errorf("phase %s, restart count %d, state %+v; want %s, 0, terminated", st.Phase, cs.RestartCount, cs.State, tc.phase)
					}
					p, err := readPod(t.Context(), e.rt, pod.UID)
					if err != nil {
						t.Fatal(err)
					}
					if n := len(p.Containers); n != 1 {
						t.Errorf("%d instances of the container, want 1", n)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("after %v: phase %s, container %+v", ctrdTimeout, st.Phase, cs)
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}
