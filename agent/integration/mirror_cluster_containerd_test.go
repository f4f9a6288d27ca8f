package integration_test

// Mirror pods of static pods on a real containerd and control plane, as
// the node e2e suite's MirrorPod and MirrorPodWithGracePeriod specs
// (test/e2e_node/mirror_pod*_test.go) check them on a kubelet.

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// staticNode is an agent on containerd, a node of the control plane, whose
// static pods' namespace exists in the API (a mirror pod needs it).
type staticNode struct {
	*clusterNode
	e *agenttest.CtrdEnv
	a *agenttest.CtrdAgent
}

func joinStatic(t *testing.T) *staticNode {
	t.Helper()
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	n.ensureNamespace(agenttest.CtrdNamespace)
	return &staticNode{clusterNode: n, e: e, a: joinContainerd(e, n)}
}

// mirrorName is the name of p's mirror pod (the static pod's name is the
// manifest's name suffixed with the node's).
func (s *staticNode) mirrorName(p agenttest.CtrdPod) string { return p.Name + "-" + s.a.Node }

// mirror is p's mirror pod as the API has it now; nil when there is none.
func (s *staticNode) mirror(p agenttest.CtrdPod) *v1.Pod {
	s.tb.Helper()
	m, err := s.c.Admin.CoreV1().Pods(agenttest.CtrdNamespace).Get(context.Background(), s.mirrorName(p), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		s.tb.Fatal(err)
	}
	return m
}

// waitMirror waits until p's mirror pod is the mirror of the manifest
// version version (its kubernetes.io/config.mirror is that version's
// hash, the static pod's UID) with every container running, as the e2e
// suite's checkMirrorPodRunning wants it.
func (s *staticNode) waitMirror(p agenttest.CtrdPod, version string) *v1.Pod {
	s.tb.Helper()
	var m *v1.Pod
	s.waitAPIWithin(2*agenttest.CtrdTimeout, fmt.Sprintf("the mirror of %s (UID %s) runs", p.Name, version), func(ctx context.Context) (bool, error) {
		m = s.mirror(p)
		return runningMirrorOf(m, version), nil
	})
	if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "Node" || m.OwnerReferences[0].Name != s.a.Node {
		s.tb.Errorf("mirror %s owners %+v, want the Node %s", m.UID, m.OwnerReferences, s.a.Node)
	}
	if m.Annotations["kubernetes.io/config.hash"] != version {
		s.tb.Errorf("mirror %s config.hash %q, want %q (its config.mirror)", m.UID, m.Annotations["kubernetes.io/config.hash"], version)
	}
	return m
}

// runningMirrorOf reports whether m is the mirror of the static pod with
// UID (hash) version, Running with every container running.
func runningMirrorOf(m *v1.Pod, version string) bool {
	if m == nil || m.Annotations[v1.MirrorPodAnnotationKey] != version || m.Status.Phase != v1.PodRunning || len(m.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range m.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// holdsThrough checks, until the agent reports the static pod uid
// terminated or forgets it, that p's mirror is still want and Running,
// and returns how many times it looked. Each API read comes before the
// agent's state it is judged by, so a mirror replaced after the pod
// terminated is never taken for one replaced before.
func (s *staticNode) holdsThrough(p agenttest.CtrdPod, uid string, want *v1.Pod) int {
	s.tb.Helper()
	deadline := time.Now().Add(4 * agenttest.CtrdTimeout)
	for looks := 0; ; looks++ {
		m := s.mirror(p)
		info, known := s.a.Pod(uid)
		if !known || info.Worker == "terminated" {
			return looks
		}
		switch {
		case m == nil:
			s.tb.Fatalf("the mirror pod is gone while the static pod %s terminates (%s)", uid, agenttest.CtrdDescribe(info))
		case m.UID != want.UID:
			s.tb.Fatalf("the mirror pod was replaced (UID %s, config.mirror %s) while the static pod %s terminates (%s)",
				m.UID, m.Annotations[v1.MirrorPodAnnotationKey], uid, agenttest.CtrdDescribe(info))
		case m.Status.Phase != v1.PodRunning:
			s.tb.Fatalf("the mirror pod is %s while the static pod %s terminates (%s)", m.Status.Phase, uid, agenttest.CtrdDescribe(info))
		case time.Now().After(deadline):
			s.tb.Fatalf("the static pod %s did not terminate: %s", uid, agenttest.CtrdDescribe(info))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// webPod is a static pod "web" whose container ignores SIGTERM, so that it
// stops only at the end of its grace period (the e2e suite's
// createStaticPodWithGracePeriod: 20 s, its container trapping SIGTERM).
func webPod(uid string, grace int64) agenttest.CtrdPod {
	return agenttest.CtrdPod{Name: "web", UID: uid, Grace: grace, Containers: []agenttest.CtrdContainer{agenttest.CtrdIgnorer("main")}}
}

// pausePod is the version of web the e2e suite updates it to: the pause
// image instead of busybox.
func pausePod(uid string) agenttest.CtrdPod {
	return agenttest.CtrdPod{Name: "web", UID: uid, Grace: 1, Containers: []agenttest.CtrdContainer{{Name: "main", Image: critest.PauseImage}}}
}

// checkReplaced checks the mirror of the new version as the e2e suite's
// "mirror pod updates" specs do: another UID, the new image, generation 1
// and no observedGeneration (a static pod has no generation).
func checkReplaced(t *testing.T, old, m *v1.Pod, image string) {
	t.Helper()
	if m.UID == old.UID {
		t.Errorf("the mirror pod kept its UID %s", m.UID)
	}
	if len(m.Spec.Containers) != 1 || m.Spec.Containers[0].Image != image {
		t.Errorf("mirror containers %+v, want one of image %s", m.Spec.Containers, image)
	}
	if m.Generation != 1 || m.Status.ObservedGeneration != 0 {
		t.Errorf("mirror generation %d, observedGeneration %d; want 1 and 0", m.Generation, m.Status.ObservedGeneration)
	}
	for _, c := range m.Status.Conditions {
		if c.ObservedGeneration != 0 {
			t.Errorf("mirror condition %s has observedGeneration %d, want none", c.Type, c.ObservedGeneration)
		}
	}
}

// TestContainerdClusterMirrorKeptThroughUpdate: when a static pod's
// manifest changes, the old version's mirror pod stays, Running, until
// the old version's containers stopped at the end of its grace period;
// then the new version runs and its mirror replaces the old one (the e2e
// suite's "mirror pod termination should satisfy grace period when static
// pod is updated" and "should be updated when static pod updated").
func TestContainerdClusterMirrorKeptThroughUpdate(t *testing.T) {
	s := joinStatic(t)
	old := webPod(s.e.NewUID(), 6)
	s.a.WritePod(old)
	s.a.WaitRunning(old.UID, 1)
	first := s.waitMirror(old, old.UID)

	newer := pausePod(s.e.NewUID())
	s.a.WritePod(newer)
	s.a.WaitPod(old.UID, "the first version terminates", func(p api.PodInfo) bool { return p.Worker != "sync" })
	looks := s.holdsThrough(old, old.UID, first)
	t.Logf("the mirror pod %s stayed Running through %d looks while the first version terminated", first.UID, looks)

	second := s.waitMirror(newer, newer.UID)
	checkReplaced(t, first, second, critest.PauseImage)
	s.a.WaitGone(old.UID)
}

// TestContainerdClusterMirrorManyUpdatesDuringGrace: a manifest rewritten
// many times while its first version stops (versions of an image that
// does not exist, then the pause image) ends with the mirror of the last
// version, Running, and the first version's mirror kept until then (the
// e2e suite's "should update a static pod when the static pod is updated
// multiple times during the graceful termination period").
func TestContainerdClusterMirrorManyUpdatesDuringGrace(t *testing.T) {
	s := joinStatic(t)
	old := webPod(s.e.NewUID(), 6)
	s.a.WritePod(old)
	s.a.WaitRunning(old.UID, 1)
	first := s.waitMirror(old, old.UID)

	var between []string
	for i := range 10 {
		p := agenttest.CtrdPod{Name: "web", UID: s.e.NewUID(), Grace: 1, Containers: []agenttest.CtrdContainer{
			{Name: "main", Image: fmt.Sprintf("localhost/podlife/absent-%d:latest", i), Command: []string{"true"}},
		}}
		s.a.WritePod(p)
		between = append(between, p.UID)
	}
	last := pausePod(s.e.NewUID())
	s.a.WritePod(last)
	looks := s.holdsThrough(old, old.UID, first)
	t.Logf("the mirror pod %s stayed Running through %d looks while the first version terminated", first.UID, looks)

	checkReplaced(t, first, s.waitMirror(last, last.UID), critest.PauseImage)
	for _, uid := range between {
		s.a.WaitGone(uid)
	}
}

// TestContainerdClusterMirrorKeptThroughDeletion: a static pod whose
// manifest is removed keeps its mirror pod, Running, until its containers
// stopped at the end of its grace period; then the mirror goes (the e2e
// suite's "mirror pod termination should satisfy grace period when static
// pod is deleted").
func TestContainerdClusterMirrorKeptThroughDeletion(t *testing.T) {
	s := joinStatic(t)
	p := webPod(s.e.NewUID(), 6)
	s.a.WritePod(p)
	s.a.WaitRunning(p.UID, 1)
	m := s.waitMirror(p, p.UID)

	s.a.RemovePod(p)
	s.a.WaitPod(p.UID, "the static pod terminates", func(info api.PodInfo) bool { return info.Worker != "sync" })
	looks := s.holdsThrough(p, p.UID, m)
	t.Logf("the mirror pod %s stayed Running through %d looks while its static pod terminated", m.UID, looks)
	s.waitAPI("the mirror pod is deleted", func(ctx context.Context) (bool, error) {
		return s.mirror(p) == nil, nil
	})
}

// TestContainerdClusterMirrorRecreated: a mirror pod deleted by a client,
// gracefully or at once, or replaced by a mirror of another version, is
// replaced by the mirror of the static pod, Running, and the static pod's
// container runs on untouched (the e2e suite's "should be recreated when
// mirror pod gracefully deleted" and "forcibly deleted").
func TestContainerdClusterMirrorRecreated(t *testing.T) {
	s := joinStatic(t)
	p := agenttest.CtrdPod{Name: "web", UID: s.e.NewUID(), Grace: 1, Containers: []agenttest.CtrdContainer{agenttest.CtrdTrapper("main")}}
	s.a.WritePod(p)
	s.a.WaitRunning(p.UID, 1)
	containers := s.e.RunningContainers(p.UID)
	m := s.waitMirror(p, p.UID)
	pods := s.c.Admin.CoreV1().Pods(agenttest.CtrdNamespace)

	for _, grace := range []int64{30, 0} {
		if err := pods.Delete(context.Background(), m.Name, *metav1.NewDeleteOptions(grace)); err != nil {
			t.Fatal(err)
		}
		var again *v1.Pod
		s.waitAPIWithin(2*agenttest.CtrdTimeout, fmt.Sprintf("the mirror deleted with grace %d is recreated and Running", grace), func(ctx context.Context) (bool, error) {
			again = s.mirror(p)
			return again != nil && again.UID != m.UID && runningMirrorOf(again, p.UID), nil
		})
		m = again
	}

	// Someone puts a mirror of another version in its place.
	zero := int64(0)
	if err := pods.Delete(context.Background(), m.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	impostor := m.DeepCopy()
	impostor.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Annotations: map[string]string{
		v1.MirrorPodAnnotationKey: "another-version", "kubernetes.io/config.hash": "another-version", "kubernetes.io/config.source": "file",
	}}
	impostor.Status = v1.PodStatus{}
	created, err := pods.Create(context.Background(), impostor, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s.waitAPIWithin(2*agenttest.CtrdTimeout, "the mirror of another version is replaced", func(ctx context.Context) (bool, error) {
		again := s.mirror(p)
		return again != nil && (created == nil || again.UID != created.UID) && runningMirrorOf(again, p.UID), nil
	})

	if got := s.e.RunningContainers(p.UID); fmt.Sprint(got) != fmt.Sprint(containers) {
		t.Errorf("the static pod's containers changed: %v, were %v", got, containers)
	}
}

// TestContainerdClusterMirrorFileRecreated: a manifest removed and written
// again as it was (the same UID) while its pod stops runs the pod again,
// its container restarted once, under a Running mirror (the e2e suite's
// "should successfully recreate when file is removed and recreated").
func TestContainerdClusterMirrorFileRecreated(t *testing.T) {
	s := joinStatic(t)
	p := agenttest.CtrdPod{Name: "web", UID: s.e.NewUID(), Grace: 1, Containers: []agenttest.CtrdContainer{agenttest.CtrdTrapper("main")}}
	s.a.WritePod(p)
	s.a.WaitRunning(p.UID, 1)
	s.waitMirror(p, p.UID)

	s.a.RemovePod(p)
	s.a.WritePod(p)
	var m *v1.Pod
	s.waitAPIWithin(2*agenttest.CtrdTimeout, "the mirror runs the pod again, restarted once", func(ctx context.Context) (bool, error) {
		m = s.mirror(p)
		return runningMirrorOf(m, p.UID) && m.Status.ContainerStatuses[0].RestartCount == 1, nil
	})
	s.a.WaitRunning(p.UID, 1)
}
