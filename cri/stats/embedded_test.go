package stats_test

import (
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"

	"github.com/podlife/podlife/cri/embedded"
	"github.com/podlife/podlife/cri/stats"
)

// The embedded runtime's containers run no process and it keeps no stats:
// with a pod running on it, the summary is the node's alone (no pod
// invented), and the resource metrics carry the node and the scrape error.
func TestEmbeddedRuntimeGivesTheNodeAlone(t *testing.T) {
	emb, err := embedded.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Stop() })
	ctx := t.Context()
	rt, err := remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(emb.Endpoint()).WithConnectionTimeout(5 * time.Second).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(t.Context()) })
	images, err := remote.NewRemoteImageServiceBuilder().WithEndpoint(emb.Endpoint()).WithConnectionTimeout(5 * time.Second).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = images.Close(t.Context()) })
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u"}}
	sb, err := rt.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, Image: &runtimeapi.ImageSpec{Image: "img"}}, cfg)
	if err == nil {
		err = rt.StartContainer(ctx, id)
	}
	if err != nil {
		t.Fatal(err)
	}

	p, err := stats.New(stats.Config{Runtime: rt, Images: images, NodeName: "emb-node", RootDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Summary(ctx, false)
	if err != nil {
		t.Fatalf("Summary: %v", err)
	}
	if _, err := p.Summary(ctx, false); err != nil {
		t.Fatalf("second Summary: %v", err)
	}
	if s.Node.NodeName != "emb-node" || s.Node.CPU == nil || s.Node.Memory == nil || len(s.Pods) != 0 || s.Node.Runtime != nil {
		t.Errorf("summary: node %+v, %d pods, runtime fs %+v; want the node's CPU and memory, no pod, no runtime filesystem", s.Node, len(s.Pods), s.Node.Runtime)
	}
	body := []byte(scrape(t, p.ResourceMetrics()))
	for _, want := range []string{"\nnode_cpu_usage_seconds_total ", "\nnode_memory_working_set_bytes ", "\nresource_scrape_error 1\n", "\nscrape_error 1\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("resource metrics lack %q:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "container_") || strings.Contains(string(body), "pod_") {
		t.Errorf("resource metrics of a runtime without stats have container or pod series:\n%s", body)
	}
}
