package integration_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/devicemanager"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
	"github.com/podlife/podlife/internal/deviceplugintest"
)

// A device plugin on a cluster node on containerd, as the node e2e
// suite's "Device Plugin Failures" use one: the Node's capacity and
// allocatable follow its devices' health, the scheduler places a pod
// asking for its device, which runs with the env var the plugin's
// Allocate answered; once the plugin stops, allocatable is 0 and capacity
// stays.
func TestContainerdClusterDevicePlugin(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	var root string
	joinContainerd(e, n, func(c *config.Config) { root = c.RootDir })
	resourceName := "podlife.test/" + n.node
	dir := filepath.Join(root, devicemanager.DirName)
	p := deviceplugintest.Start(t, dir, "widget.sock", deviceplugintest.Devices(pluginapi.Healthy, "w0")...)
	p.Answer = func(ids []string) *pluginapi.ContainerAllocateResponse {
		return &pluginapi.ContainerAllocateResponse{Envs: map[string]string{"WIDGET": fmt.Sprint(ids)}}
	}
	if err := p.Register(filepath.Join(dir, devicemanager.SocketName), resourceName); err != nil {
		t.Fatalf("Register: %v", err)
	}
	nodeSays := func(allocatable, capacity int64) {
		t.Helper()
		n.waitAPI(fmt.Sprintf("node %s has %s allocatable %d, capacity %d", n.node, resourceName, allocatable, capacity), func(ctx context.Context) (bool, error) {
			node, err := n.c.Admin.CoreV1().Nodes().Get(ctx, n.node, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			a, aok := node.Status.Allocatable[v1.ResourceName(resourceName)]
			c, cok := node.Status.Capacity[v1.ResourceName(resourceName)]
			return aok && cok && a.Value() == allocatable && c.Value() == capacity, nil
		})
	}
	nodeSays(1, 1)

	pod := n.apiPod("widget", 1)
	rl := v1.ResourceList{v1.ResourceName(resourceName): *resource.NewQuantity(1, resource.DecimalSI)}
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers = []v1.Container{{
		Name: "c", Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever,
		Command:   []string{"sh", "-c", `echo "$WIDGET" > /dev/termination-log`},
		Resources: v1.ResourceRequirements{Limits: rl, Requests: rl},
	}}
	n.create(pod)
	done := n.waitPhase("widget", v1.PodSucceeded)
	if got := done.Status.ContainerStatuses[0].State.Terminated.Message; got != "[w0]\n" {
		t.Errorf("the container's WIDGET was %q, want the plugin's [w0]", got)
	}

	p.SetHealth(pluginapi.Unhealthy, "w0")
	nodeSays(0, 1)
	p.SetHealth(pluginapi.Healthy, "w0")
	nodeSays(1, 1)
	p.Stop()
	nodeSays(0, 1)
}
