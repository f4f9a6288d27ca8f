package integration_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// A Secret as large as the API allows (1 MiB of data) reaches its volume
// whole: the container reads every byte, and an update of it too.
func TestContainerdClusterSecretOfOneMiB(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	ctx := context.Background()
	core := n.c.Admin.CoreV1()
	const size = 1 << 20 // the apiserver's limit on a Secret's data
	blob := func(b byte) []byte { return bytes.Repeat([]byte{b}, size) }
	secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string][]byte{"blob": blob('a')}}
	if _, err := core.Secrets(n.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a Secret of %d bytes: %v", size, err)
	}
	var root string
	joinContainerd(e, n, func(cfg *config.Config) {
		root = cfg.RootDir
		cfg.SyncFrequency.Duration = 2 * time.Second
	})
	pod := n.busyboxPod("bigsecret", 1, agenttest.CtrdContainer{Name: "main", Command: []string{"sh", "-c",
		`while true; do sha256sum /etc/big/blob | cut -d' ' -f1 > /out/sum.tmp; mv /out/sum.tmp /out/sum; sleep 0.5; done`}})
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "big", MountPath: "/etc/big"}, {Name: "out", MountPath: "/out"}}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "big", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "big"}}},
		{Name: "out", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}
	start := time.Now()
	pod = n.create(pod)
	e.RemoveAtEnd(string(pod.UID))
	out := filepath.Join(root, "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir", "out", "sum")
	sum := func() string {
		b, _ := os.ReadFile(out)
		return strings.TrimSpace(string(b))
	}
	for _, step := range []struct {
		what string
		data []byte
	}{{"the Secret", blob('a')}, {"the Secret's update", blob('b')}} {
		if step.data[0] != 'a' {
			secret.Data["blob"] = step.data
			start = time.Now()
			if _, err := core.Secrets(n.ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("update the Secret: %v", err)
			}
		}
		want := fmt.Sprintf("%x", sha256.Sum256(step.data))
		n.waitAPIWithin(2*time.Minute, "the container reads "+step.what+" whole", func(context.Context) (bool, error) {
			return sum() == want, nil
		})
		t.Logf("%s (%d bytes) reached the container whole after %v", step.what, size, time.Since(start).Round(100*time.Millisecond))
	}
}
