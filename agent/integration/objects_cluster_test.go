package integration_test

// Secrets and ConfigMaps in cluster mode on containerd: mounted as
// volumes and taken into env, an update of a ConfigMap reaching the
// running container's files, optional objects and keys, and a missing
// required key refusing the container as the kubelet does.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// objectsScript writes, into the emptyDir at /out, the environment the
// container got and the Secret's file once, then the ConfigMap's file
// every 200 ms, so the node sees what the container sees.
const objectsScript = `echo "USER=$USER MODE=$MODE CM_level=$CM_level S_user=$S_user OPT=${OPT-unset}" > /out/env
id -u > /out/uid
cat /etc/secret/pw > /out/pw
ls /etc/absent > /out/absent
while true; do cat /etc/config/mode > /out/mode.tmp; mv /out/mode.tmp /out/mode; sleep 0.2; done`

// TestContainerdClusterSecretsAndConfigMaps: a pod with a Secret and a
// ConfigMap mounted and in env (secretKeyRef, configMapKeyRef, envFrom
// with a prefix) reads them in its container; an optional missing
// ConfigMap is an empty volume (only the atomic writer's hidden ..data)
// and an optional missing key an unset
// variable. The container runs as user 1000 with fsGroup 1234: the
// Secret's volume is a tmpfs whose file has defaultMode 0400 plus the
// group's read bit, group 1234, so the container reads it through the
// group. An update of the ConfigMap reaches the running container's file
// within about the sync period plus the cache's TTL (both 2 s here). A
// second pod naming a key the Secret does not have waits in
// CreateContainerConfigError with the kubelet's message.
func TestContainerdClusterSecretsAndConfigMaps(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	ctx := context.Background()
	core := n.c.Admin.CoreV1()
	secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, Data: map[string][]byte{"user": []byte("admin"), "pass": []byte("s3cr3t")}}
	if _, err := core.Secrets(n.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"mode": "fast", "level": "3"}}
	if _, err := core.ConfigMaps(n.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var root string
	joinContainerd(e, n, func(cfg *config.Config) {
		root = cfg.RootDir
		cfg.SyncFrequency.Duration = 2 * time.Second
	})

	yes := true
	mode := int32(0o400)
	keyRef := func(name, key string, optional *bool) *v1.EnvVarSource {
		return &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: optional}}
	}
	pod := n.busyboxPod("objects", 1, agenttest.CtrdContainer{Name: "main", Command: []string{"sh", "-c", objectsScript}})
	c := &pod.Spec.Containers[0]
	c.Env = []v1.EnvVar{
		{Name: "USER", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "user"}}},
		{Name: "MODE", ValueFrom: keyRef("app", "mode", nil)},
		{Name: "OPT", ValueFrom: keyRef("app", "nope", &yes)},
	}
	c.EnvFrom = []v1.EnvFromSource{
		{Prefix: "CM_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}},
		{Prefix: "S_", SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}}},
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: &yes}},
	}
	c.VolumeMounts = []v1.VolumeMount{{Name: "secret", MountPath: "/etc/secret"}, {Name: "config", MountPath: "/etc/config"}, {Name: "absent", MountPath: "/etc/absent"}, {Name: "out", MountPath: "/out"}}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", DefaultMode: &mode, Items: []v1.KeyToPath{{Key: "pass", Path: "pw"}}}}},
		{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
		{Name: "absent", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: &yes}}},
		{Name: "out", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}
	user, group := int64(1000), int64(1234)
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: &user, FSGroup: &group}
	pod = n.create(pod)
	e.RemoveAtEnd(string(pod.UID))
	n.waitPhase("objects", v1.PodRunning)

	podDir := filepath.Join(root, "pods", string(pod.UID))
	out := filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "out")
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(out, name))
		return strings.TrimSpace(string(b))
	}
	n.waitAPI("the container wrote what it read", func(context.Context) (bool, error) {
		return read("mode") != "", nil
	})
	if got, want := read("env"), "USER=admin MODE=fast CM_level=3 S_user=admin OPT=unset"; got != want {
		t.Errorf("the container's env: %q; want %q", got, want)
	}
	if got := read("pw"); got != "s3cr3t" || read("uid") != "1000" {
		t.Errorf("the container, as user %q, read /etc/secret/pw: %q; want user 1000 reading s3cr3t", read("uid"), got)
	}
	if got := read("absent"); got != "" {
		t.Errorf("the optional missing ConfigMap's volume holds %q; want it empty", got)
	}
	secretDir := filepath.Join(podDir, "volumes", "kubernetes.io~secret", "secret")
	var st syscall.Statfs_t
	if err := syscall.Statfs(secretDir, &st); err != nil || st.Type != 0x01021994 { // TMPFS_MAGIC
		t.Errorf("the secret volume on the node: statfs type %#x (%v); want a tmpfs", st.Type, err)
	}
	if fi, err := os.Stat(filepath.Join(secretDir, "pw")); err != nil || fi.Mode().Perm() != 0o440 || fi.Sys().(*syscall.Stat_t).Gid != 1234 {
		t.Errorf("the secret file on the node: %v, %v; want mode 0440 (defaultMode 0400, the fsGroup's read bit), group 1234", fi, err)
	}
	t.Logf("the container read env %q, the Secret's file, the ConfigMap's mode %q", read("env"), read("mode"))

	cm.Data["mode"] = "slow"
	start := time.Now()
	if _, err := core.ConfigMaps(n.ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.waitAPIWithin(30*time.Second, "the ConfigMap's update reaches the container's file", func(context.Context) (bool, error) {
		return read("mode") == "slow", nil
	})
	t.Logf("the ConfigMap's update reached the container's file after %v (sync period and cache TTL 2 s)", time.Since(start).Round(100*time.Millisecond))

	bad := n.busyboxPod("missingkey", 1, agenttest.CtrdContainer{Name: "main", Command: []string{"true"}})
	bad.Spec.Containers[0].Env = []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "nope"}}}}
	bad = n.create(bad)
	e.RemoveAtEnd(string(bad.UID))
	want := "couldn't find key nope in Secret " + n.ns + "/creds"
	var message string
	n.waitAPI("the pod naming a missing key waits in CreateContainerConfigError", func(ctx context.Context) (bool, error) {
		p, err := n.apiGet(ctx, "missingkey")
		if err != nil || p == nil || len(p.Status.ContainerStatuses) != 1 {
			return false, err
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		if w == nil || w.Reason != "CreateContainerConfigError" {
			return false, nil
		}
		message = w.Message
		return strings.Contains(w.Message, want), nil
	})
	t.Logf("CreateContainerConfigError: %s", message)
}
