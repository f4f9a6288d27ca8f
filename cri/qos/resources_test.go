package qos

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podlife/podlife/internal/crifake"
)

func reqs(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestContainerResources(t *testing.T) {
	for _, tc := range []struct {
		name                string
		res                 v1.ResourceRequirements
		shares, quota, peri int64
		mem                 int64
	}{
		{"none", v1.ResourceRequirements{}, 2, 0, 100000, 0},
		{"cpu request", v1.ResourceRequirements{Requests: reqs("cpu", "500m")}, 512, 0, 100000, 0},
		{"tiny cpu request", v1.ResourceRequirements{Requests: reqs("cpu", "1m")}, 2, 0, 100000, 0},
		{"huge cpu request", v1.ResourceRequirements{Requests: reqs("cpu", "1000")}, 262144, 0, 100000, 0},
		{"cpu limit: shares from it", v1.ResourceRequirements{Limits: reqs("cpu", "2")}, 2048, 200000, 100000, 0},
		{"cpu request and limit", v1.ResourceRequirements{Requests: reqs("cpu", "250m"), Limits: reqs("cpu", "2")}, 256, 200000, 100000, 0},
		{"zero cpu request and a limit", v1.ResourceRequirements{Requests: reqs("cpu", "0"), Limits: reqs("cpu", "2")}, 2, 200000, 100000, 0},
		{"tiny cpu limit", v1.ResourceRequirements{Limits: reqs("cpu", "1m")}, 2, 1000, 100000, 0},
		{"memory limit", v1.ResourceRequirements{Limits: reqs("memory", "64Mi")}, 2, 0, 100000, 64 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
			pod.Spec.Containers[0].Resources = tc.res
			r := ContainerResources(pod, &pod.Spec.Containers[0], 8<<30)
			if r.CpuShares != tc.shares || r.CpuQuota != tc.quota || r.CpuPeriod != tc.peri || r.MemoryLimitInBytes != tc.mem {
				t.Errorf("resources %v", r)
			}
		})
	}
}

func TestPodQOS(t *testing.T) {
	guaranteed := v1.ResourceRequirements{Requests: reqs("cpu", "1", "memory", "1Gi"), Limits: reqs("cpu", "1", "memory", "1Gi")}
	for _, tc := range []struct {
		name  string
		res   []v1.ResourceRequirements // one container each
		inits []v1.ResourceRequirements
		want  v1.PodQOSClass
	}{
		{"nothing", []v1.ResourceRequirements{{}}, nil, v1.PodQOSBestEffort},
		{"zero request", []v1.ResourceRequirements{{Requests: reqs("memory", "0")}}, nil, v1.PodQOSBestEffort},
		{"only other resources", []v1.ResourceRequirements{{Requests: reqs("ephemeral-storage", "1Gi")}}, nil, v1.PodQOSBestEffort},
		{"requests equal limits", []v1.ResourceRequirements{guaranteed, guaranteed}, nil, v1.PodQOSGuaranteed},
		{"limits only (requests not defaulted)", []v1.ResourceRequirements{{Limits: reqs("cpu", "1", "memory", "1Gi")}}, nil, v1.PodQOSBurstable},
		{"request below limit", []v1.ResourceRequirements{{Requests: reqs("cpu", "500m", "memory", "1Gi"), Limits: reqs("cpu", "1", "memory", "1Gi")}}, nil, v1.PodQOSBurstable},
		{"memory limit only", []v1.ResourceRequirements{{Requests: reqs("memory", "1Gi"), Limits: reqs("memory", "1Gi")}}, nil, v1.PodQOSBurstable},
		{"one container best effort", []v1.ResourceRequirements{guaranteed, {}}, nil, v1.PodQOSBurstable},
		{"zero limit", []v1.ResourceRequirements{{Requests: reqs("cpu", "1", "memory", "1Gi"), Limits: reqs("cpu", "1", "memory", "0")}}, nil, v1.PodQOSBurstable},
		{"init container counts", []v1.ResourceRequirements{guaranteed}, []v1.ResourceRequirements{{Requests: reqs("cpu", "100m")}}, v1.PodQOSBurstable},
		{"guaranteed init container", []v1.ResourceRequirements{guaranteed}, []v1.ResourceRequirements{guaranteed}, v1.PodQOSGuaranteed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{}
			for _, r := range tc.res {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Resources: r})
			}
			for _, r := range tc.inits {
				pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Resources: r})
			}
			if got := podQOS(pod); got != tc.want {
				t.Errorf("QoS %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOOMScoreAdj(t *testing.T) {
	const machine = 10 << 30
	always := v1.ContainerRestartPolicyAlways
	guaranteed := v1.ResourceRequirements{Requests: reqs("cpu", "1", "memory", "1Gi"), Limits: reqs("cpu", "1", "memory", "1Gi")}
	for _, tc := range []struct {
		name    string
		edit    func(*v1.Pod)
		machine int64
		want    int64
		wantInt int64 // the sidecar's, when the pod has one
	}{
		{"best effort", func(*v1.Pod) {}, machine, 1000, 0},
		{"guaranteed", func(p *v1.Pod) { p.Spec.Containers[0].Resources = guaranteed }, machine, -997, 0},
		{"node critical", func(p *v1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }, machine, -997, 0},
		{"burstable, 10% of memory", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = reqs("memory", "1Gi") }, machine, 900, 0},
		{"burstable, no memory request", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = reqs("cpu", "1") }, machine, 999, 0},
		{"burstable, all the memory", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = reqs("memory", "10Gi") }, machine, 3, 0},
		{"burstable, machine unknown", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = reqs("memory", "1Gi") }, 0, 999, 0},
		{"sidecar no more likely than the least regular container", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests = reqs("memory", "2Gi")
			p.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: reqs("memory", "1Gi")}}}
		}, machine, 800, 800},
		{"sidecar requesting more keeps its own", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests = reqs("memory", "1Gi")
			p.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: reqs("memory", "5Gi")}}}
		}, machine, 900, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"})
			tc.edit(pod)
			if got := ContainerResources(pod, &pod.Spec.Containers[0], tc.machine).OomScoreAdj; got != tc.want {
				t.Errorf("oom_score_adj %d, want %d", got, tc.want)
			}
			if len(pod.Spec.InitContainers) > 0 {
				if got := ContainerResources(pod, &pod.Spec.InitContainers[0], tc.machine).OomScoreAdj; got != tc.wantInt {
					t.Errorf("sidecar's oom_score_adj %d, want %d", got, tc.wantInt)
				}
			}
		})
	}
}
