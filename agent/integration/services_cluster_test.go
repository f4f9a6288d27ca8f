package integration_test

// The Service variables in cluster mode on containerd, as the upstream
// conformance spec "Pods should contain environment variables for
// services" checks them.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// TestContainerdClusterServiceEnv: a pod started after a Service
// fooservice exists in its namespace sees its variables and
// default/kubernetes's; a pod with enableServiceLinks false sees only
// default/kubernetes's.
func TestContainerdClusterServiceEnv(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	ctx := context.Background()
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "fooservice"},
		Spec: v1.ServiceSpec{
			Selector: map[string]string{"name": "none"},
			Ports:    []v1.ServicePort{{Port: 8765, Protocol: v1.ProtocolTCP}},
		},
	}
	svc, err := n.c.Admin.CoreV1().Services(n.ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	if ip == "" || ip == v1.ClusterIPNone {
		t.Fatalf("the Service got cluster IP %q", ip)
	}
	var root string
	joinContainerd(e, n, func(cfg *config.Config) { root = cfg.RootDir })

	off := false
	for _, tc := range []struct {
		pod    string
		links  *bool
		want   []string
		absent []string
	}{
		{pod: "links", want: []string{
			"FOOSERVICE_SERVICE_HOST=" + ip, "FOOSERVICE_SERVICE_PORT=8765",
			"FOOSERVICE_PORT=tcp://" + ip + ":8765", "FOOSERVICE_PORT_8765_TCP_PROTO=tcp",
			"FOOSERVICE_PORT_8765_TCP=tcp://" + ip + ":8765", "FOOSERVICE_PORT_8765_TCP_PORT=8765",
			"FOOSERVICE_PORT_8765_TCP_ADDR=" + ip, "KUBERNETES_SERVICE_HOST=",
		}},
		{pod: "nolinks", links: &off, want: []string{"KUBERNETES_SERVICE_HOST="}, absent: []string{"FOOSERVICE_"}},
	} {
		t.Run(tc.pod, func(t *testing.T) {
			pod := n.busyboxPod(tc.pod, 1, agenttest.CtrdContainer{Name: "main",
				Command: []string{"sh", "-c", "env > /out/env.tmp && mv /out/env.tmp /out/env; sleep 3600"}})
			pod.Spec.EnableServiceLinks = tc.links
			pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "out", MountPath: "/out"}}
			pod.Spec.Volumes = []v1.Volume{{Name: "out", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
			pod = n.create(pod)
			e.RemoveAtEnd(string(pod.UID))
			file := filepath.Join(root, "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir", "out", "env")
			var env string
			n.waitAPI("the container wrote its env", func(context.Context) (bool, error) {
				b, err := os.ReadFile(file)
				env = string(b)
				return err == nil, nil
			})
			lines := strings.Split(env, "\n")
			// has matches a whole line, or a line's start when want ends
			// with "=" or "_".
			has := func(want string) bool {
				open := strings.HasSuffix(want, "=") || strings.HasSuffix(want, "_")
				for _, l := range lines {
					if l == want || open && strings.HasPrefix(l, want) {
						return true
					}
				}
				return false
			}
			for _, w := range tc.want {
				if !has(w) {
					t.Errorf("the container's env has no %q:\n%s", w, env)
				}
			}
			for _, a := range tc.absent {
				if has(a) {
					t.Errorf("the container's env has %q, want none:\n%s", a, env)
				}
			}
		})
	}
}
