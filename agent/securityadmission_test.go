package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// sysctlManifest is a static pod setting one sysctl.
func sysctlManifest(name, uid, sysctl string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: test, uid: %s}
spec:
  securityContext:
    sysctls: [{name: %s, value: "1"}]
  containers: [{name: c, image: img}]
`, name, uid, sysctl)
}

// A pod setting an unsafe sysctl the node does not allow is rejected at
// admission with the kubelet's reason and never reaches the runtime; a
// safe one, or one --allowed-unsafe-sysctls allows, runs. So does a pod
// asking an AppArmor profile on a host without AppArmor (this one's) get
// the kubelet's AppArmor rejection.
func TestAdmissionOfSecurity(t *testing.T) {
	t.Parallel()
	h := agenttest.Start(t, agenttest.WithConfig(func(c *config.Config) { c.AllowedUnsafeSysctls = []string{"net.core.somaxconn"} }))
	unsafe, safe, allowed := agenttest.UID(1), agenttest.UID(2), agenttest.UID(3)
	h.Write("unsafe.yaml", sysctlManifest("unsafe", unsafe, "kernel.msgmax"))
	h.Write("safe.yaml", sysctlManifest("safe", safe, "net/ipv4/ip_unprivileged_port_start"))
	h.Write("allowed.yaml", sysctlManifest("allowed", allowed, "net.core.somaxconn"))
	h.WaitPods("unsafe rejected, the others running", func(pods map[types.UID]api.PodInfo) bool {
		return isRejected(pods[types.UID(unsafe)], "SysctlForbidden") &&
			agenttest.IsRunning(pods[types.UID(safe)]) && agenttest.IsRunning(pods[types.UID(allowed)])
	})
	if msg := h.Pod(unsafe).Message; msg != `forbidden sysctl: "kernel.msgmax" not allowlisted` {
		t.Errorf("message %q", msg)
	}
	if n := len(h.Sandboxes(unsafe)); n != 0 {
		t.Errorf("the rejected pod has %d sandboxes", n)
	}
	if !agent.AppArmorEnabledForTest() {
		armored := agenttest.UID(4)
		h.Write("armored.yaml", strings.Replace(sysctlManifest("armored", armored, "kernel.shm_rmid_forced"), "  securityContext:\n",
			"  securityContext:\n    appArmorProfile: {type: RuntimeDefault}\n", 1))
		h.WaitPods("armored rejected", func(pods map[types.UID]api.PodInfo) bool {
			return isRejected(pods[types.UID(armored)], "AppArmor")
		})
		if msg := h.Pod(armored).Message; msg != "Cannot enforce AppArmor: AppArmor is not enabled on the host" {
			t.Errorf("message %q", msg)
		}
	}
}
