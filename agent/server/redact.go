package server

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// The read-only endpoint is open to every local user, while the manifests
// it shows may be root's own (0600) and hold secrets. What it serves of
// a pod is therefore what a user of the node may see anyway (names,
// images, ports, resources, volumes' sources, statuses), without what
// carries secrets by habit:
//
//   - env values: DB_PASSWORD=... (valueFrom names a Secret's key, not its
//     value, and stays);
//   - command and args: --password=..., "mysql -p..." (these also show in
//     ps to users of the node, but only while the container runs; a
//     manifest's stay readable for ever);
//   - the exec commands of probes and lifecycle hooks, and the header
//     values and query of their httpGet (Authorization: Bearer ...,
//     ?token=...), for the same reasons;
//   - the annotation kubectl.kubernetes.io/last-applied-configuration, a
//     copy of the whole manifest.
//
// Other annotations and labels are served as they are. The full specs are
// on the kubelet API (authenticated) and in the manifests.

// lastAppliedAnnotation is kubectl's copy of the applied manifest.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// redactedPodList is a copy of list without what may carry secrets.
func redactedPodList(list *v1.PodList) *v1.PodList {
	out := list.DeepCopy()
	for i := range out.Items {
		redactPod(&out.Items[i])
	}
	return out
}

// redactPod removes from pod, in place, what may carry secrets.
func redactPod(pod *v1.Pod) {
	delete(pod.Annotations, lastAppliedAnnotation)
	for i := range pod.Spec.InitContainers {
		redactContainer(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		redactContainer(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		c := v1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		redactContainer(&c)
		pod.Spec.EphemeralContainers[i].EphemeralContainerCommon = v1.EphemeralContainerCommon(c)
	}
}

// redactContainer drops c's command, args, env values and the commands
// and headers of its probes and hooks.
func redactContainer(c *v1.Container) {
	c.Command, c.Args = nil, nil
	for i := range c.Env {
		c.Env[i].Value = ""
	}
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			redactHandler(&p.ProbeHandler.Exec, &p.ProbeHandler.HTTPGet)
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*v1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil {
				redactHandler(&h.Exec, &h.HTTPGet)
			}
		}
	}
}

// redactHandler drops an exec action's command and an httpGet's header
// values and query.
func redactHandler(exec **v1.ExecAction, get **v1.HTTPGetAction) {
	if *exec != nil {
		(*exec).Command = nil
	}
	if *get != nil {
		for i := range (*get).HTTPHeaders {
			(*get).HTTPHeaders[i].Value = ""
		}
		(*get).Path, _, _ = strings.Cut((*get).Path, "?")
	}
}
