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

// TestContainerdClusterDeletedWhileVolumesFail: a pod whose volume cannot
// be set up (its ConfigMap is missing, as the kube-api-access volume's
// ConfigMap or token request fails under load) waits in Pending; deleted,
// it is terminated without waiting for its volumes, as the kubelet cancels
// the sync that waits for them: it turns Failed (a finalizer keeps it) and
// no sandbox or container of it was ever made (the node e2e "Deleted pods
// handling ... a pod which is deleted while pending").
func TestContainerdClusterDeletedWhileVolumesFail(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	joinContainerd(e, n)
	const finalizer = "podlife.test/keep"
	pod := n.apiPod("deleted-pending", 30)
	pod.Finalizers = []string{finalizer}
	pod.Spec.Containers = []v1.Container{{Name: "main", Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever,
		Command: []string{"sleep", "1000"}, VolumeMounts: []v1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}}}
	pod.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "missing"}}}}}
	pod = n.create(pod)
	uid := string(pod.UID)
	e.RemoveAtEnd(uid)
	pods := n.c.Admin.CoreV1().Pods(n.ns)
	t.Cleanup(func() {
		p, err := pods.Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err == nil {
			p.Finalizers = nil
			_, _ = pods.Update(context.Background(), p, metav1.UpdateOptions{})
		}
	})
	n.waitAPI("the pod waits for its volume: FailedMount", func(ctx context.Context) (bool, error) {
		evs, err := n.c.Admin.CoreV1().Events(n.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + uid})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == "FailedMount" {
				return true, nil
			}
		}
		return false, nil
	})
	deleted := time.Now()
	if err := pods.Delete(context.Background(), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p := n.waitPhase(pod.Name, v1.PodFailed)
	t.Logf("the pod was Failed %v after its deletion", time.Since(deleted).Round(time.Millisecond))
	if p.Status.Reason != "" {
		t.Errorf("the pod's reason is %q, want none", p.Status.Reason)
	}
	if sbs, cs := e.Sandboxes(uid), e.Containers(uid); len(sbs)+len(cs) != 0 {
		t.Errorf("the pod, which never had its volumes, has sandboxes %v and containers %v", sbs, cs)
	}
}
