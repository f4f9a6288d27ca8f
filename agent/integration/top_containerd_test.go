package integration_test

// `kubectl top pod` on a podlife node: metrics-server (built from the Go
// module proxy by tools/metrics-server-build.sh, run as a host process by
// tools/metrics-server-up.sh) scrapes the agent's kubelet API
// (/metrics/resource, authenticated with its client certificate and
// authorized by SubjectAccessReview), and the aggregated metrics.k8s.io API
// shows the pod. Needs the control plane (PODLIFE_CLUSTER_DIR, with the
// front proxy) and containerd (PODLIFE_CRI_ENDPOINT); skips without either.

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// podMetrics is the part of a metrics.k8s.io/v1beta1 PodMetrics the test
// reads.
type podMetrics struct {
	Window     string `json:"window"`
	Containers []struct {
		Name  string                       `json:"name"`
		Usage map[string]resource.Quantity `json:"usage"`
	} `json:"containers"`
}

func TestContainerdClusterKubectlTop(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	joinContainerd(e, n, func(cfg *config.Config) {
		cfg.Port = port
		cfg.ClientCAFile = filepath.Join(n.c.Dir, "pki", "ca.crt")
	})
	// A container that burns a CPU and holds 20 MB in a shell variable.
	burner := n.busyboxPod("burner", 1, agenttest.CtrdContainer{Name: "burn", Command: []string{
		"sh", "-c", `x=$(head -c 20000000 /dev/zero | tr '\0' a); while :; do :; done`,
	}})
	// It needs no service-account token (a projected volume).
	burner.Spec.AutomountServiceAccountToken = new(false)
	pod := n.create(burner)
	e.RemoveAtEnd(string(pod.UID))
	n.waitPhase("burner", v1.PodRunning)

	// The API server's node proxy reaches the kubelet API's stats with its
	// kubelet client certificate.
	proxy := "/api/v1/nodes/" + n.node + "/proxy"
	summary := n.kubectl("get", "--raw", proxy+"/stats/summary?only_cpu_and_memory=true")
	if !strings.Contains(summary, `"nodeName":"`+n.node+`"`) || !strings.Contains(summary, `"name":"burner"`) {
		t.Errorf("GET %s/stats/summary: want the node and the pod burner:\n%s", proxy, summary)
	}
	resources := n.kubectl("get", "--raw", proxy+"/metrics/resource")
	for _, want := range []string{"\nnode_cpu_usage_seconds_total ", `container_cpu_usage_seconds_total{container="burn",namespace="` + n.ns + `",pod="burner"}`, "\nresource_scrape_error 0"} {
		if !strings.Contains(resources, want) {
			t.Errorf("GET %s/metrics/resource lacks %q:\n%s", proxy, want, resources)
		}
	}
	for _, line := range strings.Split(resources, "\n") {
		if strings.Contains(line, `pod="burner"`) || strings.HasPrefix(line, "node_") {
			t.Logf("%s", line)
		}
	}

	metricsServerUp(t, n.c.Dir, n.c.Bin(t), n.c.AdminKubeconfig)

	// metrics-server needs two scrapes (15 s apart) to give a rate, for the
	// pod and for the node alike, and keeps each apart: the pod's metrics
	// can be served a scrape before the node's. The container may still be
	// filling its variable at the first.
	var m podMetrics
	var raw []byte
	path := "/apis/metrics.k8s.io/v1beta1/namespaces/" + n.ns + "/pods/burner"
	nodePath := "/apis/metrics.k8s.io/v1beta1/nodes/" + n.node
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		raw, err = n.c.Admin.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		podReady := false
		if err == nil && json.Unmarshal(raw, &m) == nil && len(m.Containers) == 1 {
			c := m.Containers[0]
			cpu, mem := c.Usage["cpu"], c.Usage["memory"]
			podReady = c.Name == "burn" && cpu.MilliValue() > 0 && mem.Value() >= 20_000_000
		}
		var nodeErr error
		if podReady {
			_, nodeErr = n.c.Admin.CoreV1().RESTClient().Get().AbsPath(nodePath).DoRaw(ctx)
		}
		cancel()
		if podReady && nodeErr == nil {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(filepath.Join(n.c.Dir, "metrics-server", "metrics-server.log"))
			t.Fatalf("after 3 minutes GET %s: %v %s (GET %s: %v); want container burn with CPU above 0 and at least 20 MB of memory, and the node's metrics\nmetrics-server's log:\n%s\nagent's log:\n%s",
				path, err, raw, nodePath, nodeErr, tail(string(logs), 40), n.agentLog())
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("GET %s: %s", path, raw)
	out := n.kubectl("top", "pod", "burner", "-n", n.ns)
	t.Logf("kubectl top pod burner -n %s:\n%s", n.ns, out)
	if !strings.Contains(out, "burner") || !strings.Contains(out, "Mi") {
		t.Errorf("kubectl top pod: %q, want a line of burner with its CPU and memory", out)
	}
	out = n.kubectl("top", "node", n.node)
	t.Logf("kubectl top node %s:\n%s", n.node, out)
	if !strings.Contains(out, n.node) {
		t.Errorf("kubectl top node: %q, want a line of %s", out, n.node)
	}
}

// metricsServerUp runs tools/metrics-server-up.sh against the cluster and,
// at the end of the test, tools/metrics-server-down.sh.
func metricsServerUp(t *testing.T, clusterDir, bin, kubeconfig string) {
	t.Helper()
	tools, err := filepath.Abs("../../tools")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PODLIFE_CLUSTER_DIR="+clusterDir, "PODLIFE_CLUSTER_BIN="+bin, "KUBECONFIG="+kubeconfig)
	t.Cleanup(func() {
		down := exec.Command(filepath.Join(tools, "metrics-server-down.sh"), clusterDir)
		down.Env = env
		if out, err := down.CombinedOutput(); err != nil {
			t.Errorf("metrics-server-down.sh: %v\n%s", err, out)
		}
	})
	up := exec.Command(filepath.Join(tools, "metrics-server-up.sh"))
	up.Env = env
	out, err := up.CombinedOutput()
	if err != nil {
		t.Fatalf("metrics-server-up.sh: %v\n%s", err, out)
	}
	t.Logf("metrics-server-up.sh:\n%s", tail(string(out), 6))
}
