package kuberuntime

import (
	"context"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// debugger is an ephemeral container, as kubectl debug adds one.
func debugger(name, target string) v1.EphemeralContainer {
	return v1.EphemeralContainer{
		EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: name, Image: "img", ImagePullPolicy: v1.PullIfNotPresent, Stdin: true, TTY: true},
		TargetContainerName:      target,
	}
}

// configs records the configs of the containers created, by name.
type configs struct {
	mu sync.Mutex
	m  map[string]*runtimeapi.ContainerConfig
}

func (c *configs) get(name string) *runtimeapi.ContainerConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name]
}

func recordConfigs(h *harness) *configs {
	c := &configs{m: map[string]*runtimeapi.ContainerConfig{}}
	h.rt.OnCreate = func(_ context.Context, _ string, cfg *runtimeapi.ContainerConfig) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.m[cfg.GetMetadata().GetName()] = cfg
		return nil
	}
	return c
}

// An ephemeral container added to a running pod's spec is started in its
// sandbox by the next sync, with its stdin and terminal, in its target's
// PID namespace when it names one; the pod's other containers are left
// running; its status is reported, never ready.
func TestEphemeralContainerStarts(t *testing.T) {
	for _, tc := range []struct {
		name, target string
		sharedPID    bool
		wantPid      runtimeapi.NamespaceMode
	}{
		{name: "no target", wantPid: runtimeapi.NamespaceMode_CONTAINER},
		{name: "targets app", target: "app", wantPid: runtimeapi.NamespaceMode_TARGET},
		{name: "targets app in a pod that shares its PID namespace", target: "app", sharedPID: true, wantPid: runtimeapi.NamespaceMode_POD},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, "img")
			cfgs := recordConfigs(h)
			pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
			pod.Spec.ShareProcessNamespace = &tc.sharedPID
			h.mustSync(pod)
			app := crifake.ContainerID(pod, 0, "app", 0)

			pod = pod.DeepCopy() // the update of the ephemeralcontainers subresource
			pod.Spec.EphemeralContainers = []v1.EphemeralContainer{debugger("debugger", tc.target)}
			h.mustSync(pod)
			dbg := crifake.ContainerID(pod, 0, "debugger", 0)
			if st := h.containerState(dbg); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
				t.Fatalf("debugger %v, want running", st)
			}
			if st := h.containerState(app); st != runtimeapi.ContainerState_CONTAINER_RUNNING || h.calls("StopContainer") != 0 {
				t.Fatalf("the app %v after %d stops: an ephemeral container must not restart the pod's others", st, h.calls("StopContainer"))
			}
			cfg := cfgs.get("debugger")
			if !cfg.Stdin || !cfg.Tty {
				t.Errorf("debugger config stdin %v, tty %v; want both", cfg.Stdin, cfg.Tty)
			}
			ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
			wantTarget := ""
			if tc.wantPid == runtimeapi.NamespaceMode_TARGET {
				wantTarget = app
			}
			if ns.GetPid() != tc.wantPid || ns.GetTargetId() != wantTarget {
				t.Errorf("debugger PID namespace %v target %q; want %v target %q", ns.GetPid(), ns.GetTargetId(), tc.wantPid, wantTarget)
			}
			st := h.statuses.last(t, pod.UID)
			if len(st.EphemeralContainerStatuses) != 1 {
				t.Fatalf("ephemeral statuses %+v, want the debugger's", st.EphemeralContainerStatuses)
			}
			if es := st.EphemeralContainerStatuses[0]; es.Name != "debugger" || es.State.Running == nil || es.Ready || es.ContainerID != "cri://"+dbg {
				t.Errorf("debugger status %+v", es)
			}
			if st.Phase != v1.PodRunning || len(st.ContainerStatuses) != 1 || !st.ContainerStatuses[0].Ready {
				t.Errorf("pod status %s, containers %+v", st.Phase, st.ContainerStatuses)
			}
		})
	}
}

// An ephemeral container runs once: after its exit no sync starts it
// again, whatever the restart policy; the pod's termination stops it.
func TestEphemeralContainerNotRestarted(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	pod.Spec.EphemeralContainers = []v1.EphemeralContainer{debugger("once", ""), debugger("stays", "")}
	h.mustSync(pod) // a new sandbox: none starts in it
	if got := h.instances(pod); got["once"] != "" || got["stays"] != "" {
		t.Fatalf("ephemeral containers started in a new sandbox: %v", got)
	}
	h.mustSync(pod)
	h.exit(crifake.ContainerID(pod, 0, "once", 0), 0)
	h.mustSync(pod)
	h.mustSync(pod)
	if n := h.calls("CreateContainer"); n != 3 {
		t.Fatalf("%d creations, want 3 (app, once, stays): an exited ephemeral container is not restarted", n)
	}
	st := h.statuses.last(t, pod.UID)
	if es := st.EphemeralContainerStatuses[0]; es.State.Terminated == nil || es.RestartCount != 0 {
		t.Errorf("exited ephemeral status %+v", es)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if st := h.containerState(crifake.ContainerID(pod, 0, "stays", 0)); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("the running ephemeral container %v after the pod's termination, want exited", st)
	}
}

// An ephemeral container whose target does not run fails its creation:
// it waits in CreateContainerConfigError with the kubelet's "unable to
// find target container", and the sync fails, to be retried.
func TestEphemeralContainerTargetNotRunning(t *testing.T) {
	h := newHarness(t, Options{}, "img")
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	h.mustSync(pod)
	pod = pod.DeepCopy()
	pod.Spec.EphemeralContainers = []v1.EphemeralContainer{debugger("debugger", "gone")}
	if _, err := h.syncPod(pod); err == nil {
		t.Fatal("SyncPod succeeded")
	}
	if got := h.instances(pod)["debugger"]; got != "" {
		t.Fatalf("the debugger was created: %s", got)
	}
	es := h.statuses.last(t, pod.UID).EphemeralContainerStatuses[0]
	if w := es.State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, "unable to find target container gone") {
		t.Errorf("debugger status %+v, want CreateContainerConfigError", es.State)
	}
}
