package kuberuntime

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// Containers with a restart policy and rules of their own (the
// ContainerRestartRules feature): the syncer restarts, and ends the pod,
// as the kubelet's computePodActions and getPhase do.
func TestSyncPodContainerRestartRules(t *testing.T) {
	cNever, cAlways, cOnFailure := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure
	running, failed, succeeded := v1.PodRunning, v1.PodFailed, v1.PodSucceeded
	for _, sc := range []struct {
		name       string
		policy     v1.RestartPolicy
		containers []crifake.Ctr
		steps      []step
	}{
		{
			name: "Never in an Always pod: not restarted, the pod fails", policy: always,
			containers: []crifake.Ctr{{Name: "app", Restart: cNever}},
			steps: []step{
				{want: map[string]string{"app": "running"}, phase: running},
				{exit: map[string]int32{"app": 1}, terminal: true, want: map[string]string{"app": "exited"}, phase: failed},
				{advance: time.Minute, terminal: true, want: map[string]string{"app": "exited"}, phase: failed},
			},
		},
		{
			name: "Never in an Always pod, exit 0: the pod succeeds", policy: always,
			containers: []crifake.Ctr{{Name: "app", Restart: cNever}},
			steps: []step{
				{want: map[string]string{"app": "running"}, phase: running},
				{exit: map[string]int32{"app": 0}, terminal: true, want: map[string]string{"app": "exited"}, phase: succeeded},
			},
		},
		{
			name: "a rule on exit code 42 restarts a Never container", policy: never,
			containers: []crifake.Ctr{{Name: "app", Restart: cNever, Rules: crifake.RestartOn(42)}},
			steps: []step{
				{want: map[string]string{"app": "running"}, phase: running},
				{exit: map[string]int32{"app": 42}, want: map[string]string{"app": "exited running"}, phase: running},
				// Restarts by a rule get the crash-loop back-off.
				{exit: map[string]int32{"app": 42}, err: ErrCrashLoopBackOff, want: map[string]string{"app": "exited exited"}, phase: running},
				{advance: 10 * time.Second, want: map[string]string{"app": "exited exited running"}, phase: running},
				// Another code: the container's Never decides.
				{exit: map[string]int32{"app": 1}, terminal: true, want: map[string]string{"app": "exited exited exited"}, phase: failed},
			},
		},
		{
			name: "a rule that does not match leaves the Never policy", policy: always,
			containers: []crifake.Ctr{{Name: "app", Restart: cNever, Rules: crifake.RestartOn(42)}},
			steps: []step{
				{want: map[string]string{"app": "running"}, phase: running},
				{exit: map[string]int32{"app": 1}, terminal: true, want: map[string]string{"app": "exited"}, phase: failed},
			},
		},
		{
			name: "Always in a Never pod restarts after success too", policy: never,
			containers: []crifake.Ctr{{Name: "app", Restart: cAlways}},
			steps: []step{
				{want: map[string]string{"app": "running"}, phase: running},
				{exit: map[string]int32{"app": 0}, want: map[string]string{"app": "exited running"}, phase: running},
			},
		},
		{
			name: "OnFailure in a Never pod: a failure restarts, success ends", policy: never,
			containers: []crifake.Ctr{{Name: "app", Restart: cOnFailure}},
			steps: []step{
				{want: map[string]string{"app": "running"}, phase: running},
				{exit: map[string]int32{"app": 1}, want: map[string]string{"app": "exited running"}, phase: running},
				{exit: map[string]int32{"app": 0}, terminal: true, want: map[string]string{"app": "exited exited"}, phase: succeeded},
			},
		},
		{
			name: "one Never container done, the other follows the pod's Always", policy: always,
			containers: []crifake.Ctr{{Name: "once", Restart: cNever}, {Name: "app"}},
			steps: []step{
				{want: map[string]string{"once": "running", "app": "running"}, phase: running},
				{exit: map[string]int32{"once": 1}, want: map[string]string{"once": "exited", "app": "running"}, phase: running},
				{exit: map[string]int32{"app": 0}, want: map[string]string{"once": "exited", "app": "exited running"}, phase: running},
			},
		},
	} {
		t.Run(sc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", sc.policy, sc.containers...)
			runSteps(t, h, pod, sc.steps)
		})
	}
}

// Regular init containers with a restart policy and rules of their own.
func TestSyncPodInitContainerRestartRules(t *testing.T) {
	pending, failed := v1.PodPending, v1.PodFailed
	for _, sc := range []struct {
		name   string
		policy v1.RestartPolicy
		init   crifake.Init
		steps  []step
	}{
		{
			name: "Never in an Always pod: a failure ends the pod", policy: always,
			init: crifake.Init{Name: "i1", Restart: v1.ContainerRestartPolicyNever},
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 1}, terminal: true, want: map[string]string{"i1": "exited"}, phase: failed},
			},
		},
		{
			name: "OnFailure in a Never pod: a failure restarts it", policy: never,
			init: crifake.Init{Name: "i1", Restart: v1.ContainerRestartPolicyOnFailure},
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 1}, want: map[string]string{"i1": "exited running"}, phase: pending},
				{exit: map[string]int32{"i1": 0}, want: map[string]string{"i1": "exited exited", "app": "running"}, phase: v1.PodRunning},
			},
		},
		{
			name: "a rule on 42 restarts it in a Never pod; another code ends the pod", policy: never,
			init: crifake.Init{Name: "i1", Restart: v1.ContainerRestartPolicyNever, Rules: crifake.RestartOn(42)},
			steps: []step{
				{want: map[string]string{"i1": "running"}, phase: pending},
				{exit: map[string]int32{"i1": 42}, want: map[string]string{"i1": "exited running"}, phase: pending},
				{exit: map[string]int32{"i1": 3}, terminal: true, want: map[string]string{"i1": "exited exited"}, phase: failed},
			},
		},
	} {
		t.Run(sc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.WithInits(crifake.MakePod("p", sc.policy, crifake.Ctr{Name: "app"}), sc.init)
			runSteps(t, h, pod, sc.steps)
		})
	}
}

// After the sandbox died, a container that completed for good by its own
// policy does not run in the new sandbox; one that may restart does, even
// in a Never pod.
func TestSyncPodSandboxDiedContainerRestartPolicy(t *testing.T) {
	for _, tc := range []struct {
		name         string
		policy       v1.RestartPolicy
		containers   []crifake.Ctr
		exits        map[string]int32
		wantTerminal bool
		wantNew      []string // containers created in the new sandbox
	}{
		{"Never pod, an Always container", never, []crifake.Ctr{{Name: "a", Restart: v1.ContainerRestartPolicyAlways}, {Name: "b"}},
			map[string]int32{"a": 0, "b": 0}, false, []string{"a"}},
		{"Always pod, a Never container failed", always, []crifake.Ctr{{Name: "a", Restart: v1.ContainerRestartPolicyNever}, {Name: "b"}},
			map[string]int32{"a": 1}, false, []string{"b"}},
		{"Always pod, all Never containers done", always, []crifake.Ctr{{Name: "a", Restart: v1.ContainerRestartPolicyNever}, {Name: "b", Restart: v1.ContainerRestartPolicyOnFailure}},
			map[string]int32{"a": 1, "b": 0}, true, nil},
		{"Never pod, Never containers only", never, []crifake.Ctr{{Name: "a", Restart: v1.ContainerRestartPolicyNever}, {Name: "b"}},
			map[string]int32{"a": 0}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			pod := crifake.MakePod("p", tc.policy, tc.containers...)
			h.mustSync(pod)
			for name, code := range tc.exits {
				h.exit(crifake.ContainerID(pod, 0, name, 0), code)
			}
			h.killSandbox(crifake.SandboxID(pod, 0))
			terminal, err := h.syncPod(pod)
			if err != nil || terminal != tc.wantTerminal {
				t.Fatalf("SyncPod = %v, %v; want %v, nil", terminal, err, tc.wantTerminal)
			}
			_, ids := h.podObjects(pod.UID)
			var created []string
			for _, c := range tc.containers {
				if slices.Contains(ids, crifake.ContainerID(pod, 1, c.Name, 1)) {
					created = append(created, c.Name)
				}
			}
			if !slices.Equal(created, tc.wantNew) {
				t.Errorf("created in the new sandbox: %v, want %v", created, tc.wantNew)
			}
		})
	}
}
