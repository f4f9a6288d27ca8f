package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/cri/securitycontext"
)

// What two upstream node e2e specs read from the API server of a podlife
// node on containerd: the Node's status.runtimeHandlers with their
// features as the runtime reports them (mount_rro_linux_test.go's
// supportsRRO), and, for a pod whose FQDN is over 64 bytes with
// setHostnameAsFQDN, a FailedCreatePodSandBox event in the kubelet's words
// while the pod stays Pending (pod_hostnamefqdn_test.go).
func TestContainerdClusterNodeE2EEvents(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	joinContainerd(e, n)
	status, err := e.RT.Status(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	want := describeHandlers(securitycontext.FeaturesOf(status).NodeRuntimeHandlers())
	var got string
	n.waitAPI("the node's runtime handlers", func(ctx context.Context) (bool, error) {
		node, err := n.c.Admin.CoreV1().Nodes().Get(ctx, n.node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = describeHandlers(node.Status.RuntimeHandlers)
		ready := false
		for _, c := range node.Status.Conditions {
			ready = ready || c.Type == v1.NodeReady && c.Status == v1.ConditionTrue
		}
		// containerd 1.6 lists no handlers (2.x does): none then, as the
		// kubelet's node shows.
		return ready && got == want, nil
	})
	t.Logf("runtime handlers: %q (want %q)", got, want)

	pod := n.busyboxPod("hostfqdnveryveryveryverylongforfqdntobemorethan64bytes", 1, agenttest.CtrdContainer{Name: "main", Command: []string{"sh", "-c", "echo $(hostname)"}})
	pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = "t", new(true)
	pod = n.create(pod)
	e.RemoveAtEnd(string(pod.UID))
	const prefix = "Failed to create pod sandbox: failed to construct FQDN from pod hostname and cluster domain, FQDN "
	var message string
	n.waitAPI("the FailedCreatePodSandBox event", func(ctx context.Context) (bool, error) {
		evs, err := n.c.Admin.CoreV1().Events(n.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name + ",reason=FailedCreatePodSandBox"})
		if err != nil || len(evs.Items) == 0 {
			return false, err
		}
		message = evs.Items[0].Message
		return strings.HasPrefix(message, prefix), nil
	})
	t.Logf("FailedCreatePodSandBox: %s", message)
	p, err := n.apiGet(t.Context(), pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != v1.PodPending || len(e.Sandboxes(string(pod.UID))) != 0 {
		t.Errorf("pod %s with %d sandboxes; want Pending with none", p.Status.Phase, len(e.Sandboxes(string(pod.UID))))
	}
}

// describeHandlers names each handler with its features.
func describeHandlers(hs []v1.NodeRuntimeHandler) string {
	var b strings.Builder
	for _, h := range hs {
		f := h.Features
		if f == nil {
			f = &v1.NodeRuntimeHandlerFeatures{}
		}
		fmt.Fprintf(&b, "[%q rro=%v userns=%v]", h.Name, f.RecursiveReadOnlyMounts != nil && *f.RecursiveReadOnlyMounts, f.UserNamespaces != nil && *f.UserNamespaces)
	}
	return b.String()
}
