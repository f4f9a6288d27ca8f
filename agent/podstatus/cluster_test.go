package podstatus

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

// TestClusterWritesStatus: a recorded status reaches the API through the
// node's identity: phase, conditions with transition times and the pod's
// generation, container statuses; fields the agent does not own stay.
func TestClusterWritesStatus(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{})
	pod := n.createPod(t, "web")
	engine.setRunning(pod.UID, true)

	m.SetPodStatus(pod, runningStatus(0))
	got := n.waitPod(t, pod.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })

	ready := condition(got, v1.PodReady)
	if ready == nil || ready.Status != v1.ConditionTrue || ready.LastTransitionTime.IsZero() || ready.ObservedGeneration != pod.Generation {
		t.Errorf("Ready condition %+v, want True with a transition time and observedGeneration %d", ready, pod.Generation)
	}
	if got.Status.ObservedGeneration != pod.Generation {
		t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, pod.Generation)
	}
	if len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Running == nil || got.Status.ContainerStatuses[0].ContainerID != "cri://c1" {
		t.Errorf("container statuses %+v, want c running", got.Status.ContainerStatuses)
	}
	if got.Status.PodIP != "10.88.0.7" || got.Status.StartTime == nil {
		t.Errorf("podIP %q startTime %v, want the recorded ones", got.Status.PodIP, got.Status.StartTime)
	}
	if got.Status.QOSClass != pod.Status.QOSClass || got.Status.QOSClass == "" {
		t.Errorf("qosClass %q, want the API server's %q kept", got.Status.QOSClass, pod.Status.QOSClass)
	}
}

// TestClusterTerminalHeldBack: a terminal phase is not written while the
// engine says containers could run; the rest of the status is. It is
// written once they cannot, with the pod no longer ready.
func TestClusterTerminalHeldBack(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{})
	pod := n.createPod(t, "job")
	engine.setRunning(pod.UID, true)
	m.SetPodStatus(pod, runningStatus(0))
	n.waitPod(t, pod.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })

	m.SetPodStatus(pod, terminalStatus(v1.PodSucceeded, 0))
	got := n.waitPod(t, pod.Name, "container c terminated", func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Terminated != nil
	})
	if got.Status.Phase != v1.PodRunning {
		t.Fatalf("phase %q while containers could run, want Running held", got.Status.Phase)
	}

	engine.setRunning(pod.UID, false)
	got = n.waitPod(t, pod.Name, "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	if c := condition(got, v1.PodReady); c == nil || c.Status != v1.ConditionFalse {
		t.Errorf("Ready %+v in a terminal pod, want False", c)
	}
}

// TestClusterKeepsTerminalPhase: a terminal phase in the API (here set by
// the admin) is not replaced by the agent's Running; the rest is written.
func TestClusterKeepsTerminalPhase(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{})
	pod := n.createPod(t, "evicted")
	engine.setRunning(pod.UID, true)
	m.SetPodStatus(pod, runningStatus(0))
	cur := n.waitPod(t, pod.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })

	cur.Status.Phase, cur.Status.Reason = v1.PodFailed, "Evicted"
	if _, err := n.c.Admin.CoreV1().Pods(n.ns).UpdateStatus(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("admin status update: %v", err)
	}
	m.SetPodStatus(pod, runningStatus(1))
	got := n.waitPod(t, pod.Name, "restart count 1 written", func(p *v1.Pod) bool { return restarts(p) == 1 })
	if got.Status.Phase != v1.PodFailed || got.Status.Reason != "Evicted" {
		t.Errorf("phase %q reason %q, want the API's Failed/Evicted kept", got.Status.Phase, got.Status.Reason)
	}
}

// TestClusterKeepsDisruptionTarget: a condition the agent does not own,
// set by another writer, survives the agent's later writes, and an owned
// condition whose status did not change keeps its transition time.
func TestClusterKeepsDisruptionTarget(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{})
	pod := n.createPod(t, "disrupted")
	engine.setRunning(pod.UID, true)
	m.SetPodStatus(pod, runningStatus(0))
	cur := n.waitPod(t, pod.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	readySince := condition(cur, v1.PodReady).LastTransitionTime

	cur.Status.Conditions = append(cur.Status.Conditions, v1.PodCondition{
		Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI",
		Message: "Eviction API: evicting", LastTransitionTime: metav1.Now(),
	})
	if _, err := n.c.Admin.CoreV1().Pods(n.ns).UpdateStatus(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("admin status update: %v", err)
	}
	m.SetPodStatus(pod, runningStatus(2))
	got := n.waitPod(t, pod.Name, "restart count 2 written", func(p *v1.Pod) bool { return restarts(p) == 2 })
	if c := condition(got, v1.DisruptionTarget); c == nil || c.Reason != "EvictionByEvictionAPI" {
		t.Errorf("DisruptionTarget %+v, want the eviction's kept", c)
	}
	if c := condition(got, v1.PodReady); c == nil || !c.LastTransitionTime.Equal(&readySince) {
		t.Errorf("Ready %+v, want its transition time kept at %v", c, readySince)
	}
}

// TestClusterDeletesTerminatedPod: a pod deleted with a grace period stays
// in the API until its terminal status is written and the engine removed
// its runtime; then the manager deletes it for good.
func TestClusterDeletesTerminatedPod(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{})
	pod := n.createPod(t, "deleted")
	engine.setRunning(pod.UID, true)
	m.SetPodStatus(pod, runningStatus(0))
	n.waitPod(t, pod.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })

	if err := n.c.Admin.CoreV1().Pods(n.ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
		t.Fatal(err)
	}
	n.waitPod(t, pod.Name, "deletion requested", func(p *v1.Pod) bool { return p.DeletionTimestamp != nil })
	engine.setRunning(pod.UID, false)
	m.SetPodStatus(pod, terminalStatus(v1.PodFailed, 137))
	n.waitPod(t, pod.Name, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })

	// Asked twice: the first answer (not removed) was acted upon.
	waitFor(t, "the engine asked about the runtime twice", func(context.Context) (bool, error) {
		return engine.timesRemovedAsked(pod.UID) >= 2, nil
	})
	if _, err := n.c.Admin.CoreV1().Pods(n.ns).Get(context.Background(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("pod deleted while its runtime was not removed: %v", err)
	}

	engine.setRemoved(pod.UID, true)
	waitFor(t, "the pod deleted", func(ctx context.Context) (bool, error) {
		_, err := n.c.Admin.CoreV1().Pods(n.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestClusterDeletedWhilePending: a pod deleted while Pending, whose
// Pending status (a sync the deletion cancelled, its volumes not set up)
// is recorded after the deletion and after the engine removed its runtime,
// is not deleted on that status: its termination's Failed phase reaches
// the API first, and a finalizer that keeps the pod keeps it Failed (the
// node e2e "Deleted pods handling ... a pod which is deleted while
// pending"; podlife deleted it Pending and wrote no more).
func TestClusterDeletedWhilePending(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{})
	const finalizer = "podlife.test/keep"
	pod := n.createPod(t, "deleted-pending", func(p *v1.Pod) { p.Finalizers = []string{finalizer} })
	pods := n.c.Admin.CoreV1().Pods(n.ns)
	t.Cleanup(func() {
		_, _ = pods.Patch(context.Background(), pod.Name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
	})
	if err := pods.Delete(context.Background(), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pod = n.waitPod(t, pod.Name, "deletion requested", func(p *v1.Pod) bool { return p.DeletionTimestamp != nil })
	waitFor(t, "the informer sees the deletion", func(context.Context) (bool, error) {
		p, err := n.lister.Pods(n.ns).Get(pod.Name)
		return err == nil && p.DeletionTimestamp != nil, nil
	})
	engine.setRunning(pod.UID, false)
	engine.setRemoved(pod.UID, true)
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "c", Image: "registry.k8s.io/pause:3.10",
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}})
	n.waitPod(t, pod.Name, "Pending written", func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil
	})
	failed := v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{{Name: "c", Image: "registry.k8s.io/pause:3.10",
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}
	m.SetPodStatus(pod, failed)
	n.waitPod(t, pod.Name, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
}

// TestClusterUIDPrecondition: with an informer lagging behind (it still
// shows the deleted pod, deletion requested, status written), neither the
// status patch nor the final delete reaches the new pod of the same name.
func TestClusterUIDPrecondition(t *testing.T) {
	n := newNode(t)
	first, engine1 := n.startManager(t, managerOptions{})
	old := n.createPod(t, "reused")
	never := v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{
		Name: "c", Image: "registry.k8s.io/pause:3.10",
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}}}
	engine1.setRunning(old.UID, true)
	first.SetPodStatus(old, never)
	n.waitPod(t, old.Name, "container statuses written", func(p *v1.Pod) bool { return len(p.Status.ContainerStatuses) == 1 })
	recorded, _ := first.Get(old.UID)

	if err := n.c.Admin.CoreV1().Pods(n.ns).Delete(context.Background(), old.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
		t.Fatal(err)
	}
	stale := n.waitPod(t, old.Name, "deletion requested", func(p *v1.Pod) bool { return p.DeletionTimestamp != nil })
	if err := n.c.Admin.CoreV1().Pods(n.ns).Delete(context.Background(), old.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the old pod gone", func(ctx context.Context) (bool, error) {
		_, err := n.c.Admin.CoreV1().Pods(n.ns).Get(ctx, old.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	replacement := n.createPod(t, old.Name)

	// A manager that sees only the stale copy, as it is once the pod's
	// termination wrote it Failed: its status is the one written, so it
	// goes straight to the final delete.
	stale.Status.Phase, recorded.Phase = v1.PodFailed, v1.PodFailed
	second, engine2 := n.startManager(t, managerOptions{pods: fixedPods{n.ns + "/" + old.Name: stale}, noPodChanged: true})
	engine2.setRemoved(old.UID, true)
	second.SetPodStatus(old, recorded)
	waitSyncs(t, second, resultPodGone, 1)
	if w := syncs(second, resultWritten); w != 0 {
		t.Errorf("%v status writes, want none: the stale copy was up to date", w)
	}

	// A status that differs from the stale copy: a patch, refused.
	third, _ := n.startManager(t, managerOptions{pods: fixedPods{n.ns + "/" + old.Name: stale}, noPodChanged: true})
	third.SetPodStatus(old, runningStatus(3))
	waitSyncs(t, third, resultPodGone, 1)

	got, err := n.c.Admin.CoreV1().Pods(n.ns).Get(context.Background(), old.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the new pod of the same name: %v", err)
	}
	if got.UID != replacement.UID || got.DeletionTimestamp != nil || len(got.Status.ContainerStatuses) != 0 || got.Status.Phase != v1.PodPending {
		t.Errorf("new pod %s touched: deletion %v, status %+v", got.UID, got.DeletionTimestamp, got.Status)
	}
}

// TestClusterRejectedPod: a pod the engine never saw, failed by admission,
// is written Failed with the reason at once.
func TestClusterRejectedPod(t *testing.T) {
	n := newNode(t)
	m, _ := n.startManager(t, managerOptions{})
	pod := n.createPod(t, "too-big")
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodFailed, Reason: "OutOfmemory",
		Message: "Pod was rejected: Node didn't have enough resource: memory"})
	got := n.waitPod(t, pod.Name, "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if got.Status.Reason != "OutOfmemory" || got.Status.Message == "" {
		t.Errorf("reason %q message %q, want the admission's", got.Status.Reason, got.Status.Message)
	}
}

// TestClusterRetriesFailedWrite: a write the API refuses (the node may not
// touch a pod not bound to it yet) is retried with back-off, without any
// resync or informer event, until it succeeds.
func TestClusterRetriesFailedWrite(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{syncPeriod: time.Hour, noPodChanged: true})
	pod := n.createPod(t, "unbound", func(p *v1.Pod) {
		p.Spec.NodeName = ""
		p.Spec.SchedulerName = "no-such-scheduler"
	})
	engine.setRunning(pod.UID, true)
	m.SetPodStatus(pod, runningStatus(0))
	waitSyncs(t, m, resultFailed, 1)

	binding := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID}, Target: v1.ObjectReference{Kind: "Node", Name: n.name}}
	if err := n.c.Admin.CoreV1().Pods(n.ns).Bind(context.Background(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	n.waitPod(t, pod.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
}

// TestClusterStaticPodMirror: a static pod's status waits for the mirror
// pod of its version and lands on it at the next resync, without an
// observedGeneration (a manifest has no generation: the kubelet leaves it
// unset). The mirror of another version of the manifest, under the same
// name, takes none of it.
func TestClusterStaticPodMirror(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{syncPeriod: time.Second, noPodChanged: true})
	static := func(uid string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: n.ns, Name: "static-web", UID: types.UID(uid),
			Annotations: map[string]string{"kubernetes.io/config.source": "file", "kubernetes.io/config.hash": uid},
		}}
	}
	old, newer := static("old-"+rand.String(8)), static("new-"+rand.String(8))
	engine.setRunning(newer.UID, true)
	m.SetPodStatus(newer, runningStatus(0))
	waitSyncs(t, m, resultNoMirror, 1)

	mirror := n.createPod(t, old.Name, func(p *v1.Pod) {
		p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: string(old.UID), "kubernetes.io/config.source": "file"}
	})
	waitFor(t, "the lister has the old version's mirror", func(context.Context) (bool, error) {
		p, err := n.lister.Pods(n.ns).Get(mirror.Name)
		return err == nil && p.UID == mirror.UID, nil
	})
	waitSyncs(t, m, resultNoMirror, syncs(m, resultNoMirror)+2)
	if got := n.waitPod(t, mirror.Name, "read", func(*v1.Pod) bool { return true }); got.Status.Phase != "" && got.Status.Phase != v1.PodPending {
		t.Errorf("the old version's mirror took the new version's status: phase %s", got.Status.Phase)
	}

	zero := int64(0)
	if err := n.c.Admin.CoreV1().Pods(n.ns).Delete(context.Background(), mirror.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the old version's mirror is gone", func(ctx context.Context) (bool, error) {
		_, err := n.c.Admin.CoreV1().Pods(n.ns).Get(ctx, mirror.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	mirror = n.createPod(t, newer.Name, func(p *v1.Pod) {
		p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: string(newer.UID), "kubernetes.io/config.source": "file"}
	})
	got := n.waitPod(t, mirror.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	if got.UID != mirror.UID || got.Status.ObservedGeneration != 0 {
		t.Errorf("mirror %s observedGeneration %d, want none", got.UID, got.Status.ObservedGeneration)
	}
	for _, c := range got.Status.Conditions {
		if c.ObservedGeneration != 0 {
			t.Errorf("mirror condition %s observedGeneration %d, want none", c.Type, c.ObservedGeneration)
		}
	}
}

// TestClusterResync: an unchanged status is not written again at each
// resync; a status the API lost (overwritten here by the admin) is.
func TestClusterResync(t *testing.T) {
	n := newNode(t)
	m, engine := n.startManager(t, managerOptions{syncPeriod: time.Second, noPodChanged: true})
	pod := n.createPod(t, "steady")
	engine.setRunning(pod.UID, true)
	m.SetPodStatus(pod, runningStatus(0))
	cur := n.waitPod(t, pod.Name, "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })

	waitSyncs(t, m, resultUnchanged, 3)
	if w := syncs(m, resultWritten); w != 1 {
		t.Errorf("%v writes of one status, want 1", w)
	}

	cur.Status = v1.PodStatus{Phase: v1.PodPending, QOSClass: cur.Status.QOSClass}
	if _, err := n.c.Admin.CoreV1().Pods(n.ns).UpdateStatus(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("admin status update: %v", err)
	}
	n.waitPod(t, pod.Name, "Running again", func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodRunning && restarts(p) == 0
	})
}

// TestClusterFlush: with the Manager's loop stopped (an agent exiting
// after a node shutdown), Flush writes the recorded statuses at once.
func TestClusterFlush(t *testing.T) {
	n := newNode(t)
	m, _ := n.startManager(t, managerOptions{noRun: true, noPodChanged: true})
	pod := n.createPod(t, "stopped")
	waitFor(t, "the lister has the pod", func(context.Context) (bool, error) {
		_, err := n.lister.Pods(n.ns).Get(pod.Name)
		return err == nil, nil
	})
	m.SetPodStatus(pod, terminalStatus(v1.PodFailed, 137))
	if err := m.Flush(context.Background()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	got, err := n.client.CoreV1().Pods(n.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1.PodFailed {
		t.Errorf("after Flush the API shows phase %q, want Failed", got.Status.Phase)
	}
}
