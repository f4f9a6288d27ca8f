package admission

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// list builds a ResourceList from "cpu" and "memory" quantities; an empty
// string leaves the resource out.
func list(cpu, mem string) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu != "" {
		l[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[v1.ResourceMemory] = resource.MustParse(mem)
	}
	if len(l) == 0 {
		return nil
	}
	return l
}

func ctr(reqCPU, reqMem string) v1.Container {
	return v1.Container{Resources: v1.ResourceRequirements{Requests: list(reqCPU, reqMem)}}
}

func limitsOnly(cpu, mem string) v1.Container {
	return v1.Container{Resources: v1.ResourceRequirements{Limits: list(cpu, mem)}}
}

func sidecar(cpu, mem string) v1.Container {
	c := ctr(cpu, mem)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

func podOf(uid string, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "default", UID: types.UID(uid)},
		Spec:       v1.PodSpec{Containers: containers},
	}
}
