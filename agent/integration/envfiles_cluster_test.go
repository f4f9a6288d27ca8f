package integration_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// The EnvFiles e2e ("FileKeyRef should be consumable via FileKeyRef") on
// a control plane and containerd: the API server (EnvFiles on, beta)
// takes the pod, the agent admits it (fileKeyRef is an honoured field),
// an init container writes the env file into an emptyDir, and the main
// container's environment has its keys, the optional missing one left
// out; the pod Succeeds.
func TestContainerdClusterEnvFiles(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	joinContainerd(e, n)

	fileKey := func(name, key string, optional bool) v1.EnvVar {
		return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{
			VolumeName: "config", Path: "config.env", Key: key, Optional: &optional}}}
	}
	pod := n.busyboxPod("envfiles", 1, agenttest.CtrdContainer{Name: "use-envfile",
		Command: []string{"sh", "-c", "env | grep -E '^(CONFIG_|MISSING)' | sort > /dev/termination-log"}})
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Volumes = []v1.Volume{{Name: "config", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	pod.Spec.InitContainers = []v1.Container{{
		Name: "setup-envfile", Image: critest.BusyboxImage, ImagePullPolicy: v1.PullNever,
		Command:      []string{"sh", "-c", `echo CONFIG_1=\'value1\' > /data/config.env && echo CONFIG_2=\'value2\' >> /data/config.env`},
		VolumeMounts: []v1.VolumeMount{{Name: "config", MountPath: "/data"}},
	}}
	pod.Spec.Containers[0].Env = []v1.EnvVar{fileKey("CONFIG_1", "CONFIG_1", false), fileKey("CONFIG_2", "CONFIG_2", false), fileKey("MISSING_KEY", "MISSING_KEY", true)}
	pod = n.create(pod)
	e.RemoveAtEnd(string(pod.UID))
	got := n.waitPhase("envfiles", v1.PodSucceeded)
	if len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("status %+v", got.Status)
	}
	if msg := got.Status.ContainerStatuses[0].State.Terminated.Message; msg != "CONFIG_1=value1\nCONFIG_2=value2\n" {
		t.Errorf("use-envfile's environment: %q; want CONFIG_1 and CONFIG_2 from the file, MISSING_KEY left out", msg)
	}
	t.Logf("use-envfile's environment: %q", strings.TrimSpace(got.Status.ContainerStatuses[0].State.Terminated.Message))
}
