package integration_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// TestContainerdClusterKilledDuringInit: a pod deleted while its regular
// init container runs, before any of its sidecars (restartable init
// containers with preStop hooks and slow TERM handlers) started, is gone
// once that init container stopped: no sidecar is started, waited for or
// hooked, and the init container ends by its TERM handler, not by SIGKILL
// at the end of the grace period (the node e2e suite's "should not hang in
// termination if terminated during initialization").
func TestContainerdClusterKilledDuringInit(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	joinContainerd(e, n)
	always := v1.ContainerRestartPolicyAlways
	busybox := func(name, onTerm string) v1.Container {
		return v1.Container{Name: name, Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever,
			Command: []string{"sh", "-c", `trap '` + onTerm + `' TERM; touch /tmp/trapped; while true; do sleep 0.2; done`}}
	}
	pod := n.apiPod("killed-in-init", 30)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers = []v1.Container{busybox("main", "exit 0")}
	pod.Spec.InitContainers = []v1.Container{busybox("start", "exit 0")}
	for _, name := range []string{"sidecar-1", "sidecar-2", "sidecar-3"} {
		s := busybox(name, "sleep 5; exit 0")
		s.RestartPolicy = &always
		s.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sleep", "1"}}}}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, s)
	}
	pod = n.create(pod)
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	n.waitAPI("the init container runs", func(ctx context.Context) (bool, error) {
		p, err := n.apiGet(ctx, pod.Name)
		if p == nil || err != nil || len(p.Status.InitContainerStatuses) == 0 {
			return false, err
		}
		st := p.Status.InitContainerStatuses[0]
		return p.Status.Phase == v1.PodPending && st.Started != nil && *st.Started && st.State.Running != nil, nil
	})
	agenttest.CtrdEventually(t, "the init container set its trap", func() (bool, string) {
		id, ok := e.RunningContainers(uid)["start"]
		if !ok {
			return false, "start does not run"
		}
		_, _, err := e.RT.ExecSync(t.Context(), id, []string{"test", "-f", "/tmp/trapped"}, 10*time.Second)
		return err == nil, "exec: " + errString(err)
	})

	grace := int64(3)
	deleted := time.Now()
	if err := n.c.Admin.CoreV1().Pods(n.ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	n.waitDeleted(pod.Name)
	t.Logf("the pod was gone %v after its deletion with grace %d s", time.Since(deleted).Round(time.Millisecond), grace)
	for _, c := range e.Containers(uid) {
		name := c.GetMetadata().GetName()
		st, err := e.RT.ContainerStatus(t.Context(), c.Id, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("container %s: %v, exit %d, %v after the deletion", name, st.GetStatus().GetState(), st.GetStatus().GetExitCode(),
			agenttest.CtrdSince(deleted, st.GetStatus().GetFinishedAt()).Round(time.Millisecond))
		switch {
		case name != "start":
			t.Errorf("container %s was created: the deletion started a sidecar", name)
		case st.GetStatus().GetExitCode() != 0:
			t.Errorf("start exited %d, want 0 (its TERM handler, not SIGKILL at the end of the grace period)", st.GetStatus().GetExitCode())
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestContainerdClusterSidecarImageUpdatedDuringTermination: a Never pod
// whose sidecar's image is updated after its deletion (grace 180 s) still
// stops in order, each container by its TERM handler, and is gone long
// before its grace period: the update starts, restarts or holds back
// nothing (the node e2e "a restartable init container has its image
// updated during pod termination, restartPolicy=Never").
func TestContainerdClusterSidecarImageUpdatedDuringTermination(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	joinContainerd(e, n)
	always := v1.ContainerRestartPolicyAlways
	busybox := func(name, onTerm string) v1.Container {
		return v1.Container{Name: name, Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever,
			Command: []string{"sh", "-c", `trap '` + onTerm + `' TERM; touch /tmp/trapped; while true; do sleep 0.2; done`}}
	}
	grace := int64(180)
	pod := n.apiPod("sidecar-image-update", grace)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers = []v1.Container{busybox("regular-1", "sleep 2; exit 0")}
	init1 := busybox("init-1", "exit 0")
	init1.Command = []string{"sh", "-c", "exit 0"}
	pod.Spec.InitContainers = []v1.Container{init1}
	for _, name := range []string{"restartable-init-2", "restartable-init-3"} {
		s := busybox(name, "sleep 2; exit 0")
		s.RestartPolicy = &always
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, s)
	}
	pod = n.create(pod)
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	n.waitPhase(pod.Name, v1.PodRunning)
	agenttest.CtrdEventually(t, "every container set its trap", func() (bool, string) {
		running := e.RunningContainers(uid)
		for _, name := range []string{"restartable-init-2", "restartable-init-3", "regular-1"} {
			id, ok := running[name]
			if !ok {
				return false, name + " does not run"
			}
			if _, _, err := e.RT.ExecSync(t.Context(), id, []string{"test", "-f", "/tmp/trapped"}, 10*time.Second); err != nil {
				return false, name + ": " + err.Error()
			}
		}
		return true, ""
	})

	deleted := time.Now()
	pods := n.c.Admin.CoreV1().Pods(n.ns)
	if err := pods.Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	n.waitAPI("the sidecar's image is updated", func(ctx context.Context) (bool, error) {
		p, err := n.apiGet(ctx, pod.Name)
		if p == nil || err != nil {
			return false, err
		}
		p.Spec.InitContainers[1].Image = critest.PauseImage
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		return err == nil, nil
	})
	n.waitDeleted(pod.Name)
	t.Logf("the pod was gone %v after its deletion with grace %d s", time.Since(deleted).Round(time.Millisecond), grace)
	names := map[string]int{}
	for _, c := range e.Containers(uid) {
		name := c.GetMetadata().GetName()
		names[name]++
		st, err := e.RT.ContainerStatus(t.Context(), c.Id, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("container %s: %v, exit %d, %v after the deletion", name, st.GetStatus().GetState(), st.GetStatus().GetExitCode(),
			agenttest.CtrdSince(deleted, st.GetStatus().GetFinishedAt()).Round(time.Millisecond))
		if code := st.GetStatus().GetExitCode(); code != 0 {
			t.Errorf("%s exited %d, want 0 (its TERM handler, not SIGKILL at the end of the grace period)", name, code)
		}
	}
	for name, n := range names {
		if n != 1 {
			t.Errorf("container %s ran %d times, want once: the update restarted it", name, n)
		}
	}
}
