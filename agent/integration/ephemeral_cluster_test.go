package integration_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// Ephemeral containers on containerd in the control plane: `kubectl
// debug --target` adds one to a running pod (the ephemeralcontainers
// subresource), the agent starts it in the pod's sandbox, in the target's
// PID namespace (its ps shows the target's process), and reports it
// Running; `kubectl exec`, `kubectl logs` and `kubectl attach` reach it; a second one added
// with client-go's UpdateEphemeralContainers runs too; the pod's own
// container is never restarted; the pod's deletion stops them all.
func TestContainerdClusterEphemeralContainers(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	joinContainerd(e, n, func(cfg *config.Config) {
		cfg.Port = freePort(t)
		cfg.ClientCAFile = filepath.Join(n.c.Dir, "pki", "ca.crt")
	})
	ctx := t.Context()
	n.kubectlApply(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: target, namespace: %s}
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: ["sleep", "10007"]
`, n.ns, n.node, critest.BusyboxImage))
	pod := n.waitPhase("target", v1.PodRunning)
	e.RemoveAtEnd(string(pod.UID))
	appID := pod.Status.ContainerStatuses[0].ContainerID

	// kubectl's default profile, general: it adds the SYS_PTRACE
	// capability to the debugger's security context.
	n.kubectl("debug", "target", "-n", n.ns, "--image", critest.BusyboxImage, "--image-pull-policy", "Never",
		"--target", "app", "-c", "debugger", "--", "sh", "-c", "while true; do echo polo; sleep 1; done")
	ephemeralRunning := func(name string) *v1.Pod {
		t.Helper()
		var out *v1.Pod
		n.waitAPI("ephemeral container "+name+" Running in the pod's status", func(ctx context.Context) (bool, error) {
			p, err := n.apiGet(ctx, "target")
			if p == nil || err != nil {
				return false, err
			}
			out = p
			for _, cs := range p.Status.EphemeralContainerStatuses {
				if cs.Name == name {
					return cs.State.Running != nil, nil
				}
			}
			return false, nil
		})
		return out
	}
	ephemeralRunning("debugger")

	out := n.kubectl("exec", "target", "-n", n.ns, "-c", "debugger", "--", "ps", "-o", "args")
	if !strings.Contains(out, "sleep 10007") {
		t.Errorf("ps in the debugger shows %q, want the target's sleep 10007: it shares the target's PID namespace", out)
	}
	agenttest.CtrdEventually(t, "kubectl logs -c debugger shows polo", func() (bool, string) {
		out, err := n.c.Kubectl(t, "logs", "target", "-n", n.ns, "-c", "debugger")
		return err == nil && strings.Contains(out, "polo"), fmt.Sprint(out, err)
	})

	attached, detach := context.WithCancel(ctx)
	defer detach()
	seen := &watchWriter{want: "polo", found: detach}
	attach := exec.CommandContext(attached, filepath.Join(n.c.Bin(t), "kubectl"), "--kubeconfig", n.c.AdminKubeconfig,
		"-n", n.ns, "attach", "target", "-c", "debugger")
	attach.Stdout, attach.Stderr = seen, seen
	if err := attach.Run(); !seen.ok() {
		t.Errorf("kubectl attach -c debugger: %v; printed %q, want its polo", err, seen.String())
	}

	// A second one, with client-go, as the conformance spec adds it.
	cur, err := n.c.Admin.CoreV1().Pods(n.ns).Get(ctx, "target", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, v1.EphemeralContainer{
		EphemeralContainerCommon: v1.EphemeralContainerCommon{
			Name: "debugger2", Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever,
			Command: []string{"sleep", "10008"}, TerminationMessagePolicy: v1.TerminationMessageReadFile,
		},
	})
	if _, err := n.c.Admin.CoreV1().Pods(n.ns).UpdateEphemeralContainers(ctx, "target", cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	final := ephemeralRunning("debugger2")
	if out := n.kubectl("exec", "target", "-n", n.ns, "-c", "debugger2", "--", "echo", "marco"); !strings.Contains(out, "marco") {
		t.Errorf("exec in debugger2 printed %q", out)
	}
	app := final.Status.ContainerStatuses[0]
	if app.ContainerID != appID || app.RestartCount != 0 || app.State.Running == nil {
		t.Errorf("the app after two ephemeral containers: %s restarts %d state %+v; want %s still running", app.ContainerID, app.RestartCount, app.State, appID)
	}

	n.kubectl("delete", "pod", "target", "-n", n.ns, "--wait=false")
	n.waitDeleted("target")
}
