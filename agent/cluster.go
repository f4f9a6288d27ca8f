package agent

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	"github.com/podlife/podlife/agent/apisource"
)

// cluster is what the agent holds in cluster mode (Config.Kubeconfig set).
type cluster struct {
	client kubernetes.Interface
	// source is the pods the API server binds to this node.
	source *apisource.Source
	// events sends the agent's events to the API server.
	events record.EventBroadcaster
}

// apiQPS and apiBurst bound the agent's requests to the API server, as the
// kubelet's kubeAPIQPS and kubeAPIBurst defaults do.
const (
	apiQPS   = 50
	apiBurst = 100
)

// connectCluster reads the node's kubeconfig and prepares the API pod
// source and the event recorder; nothing talks to the API server until Run.
func connectCluster(cfg Config) (*cluster, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	restCfg.QPS, restCfg.Burst = apiQPS, apiBurst
	restCfg.UserAgent = "podlife/" + cfg.NodeName
	restCfg.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	return &cluster{
		client: client,
		source: apisource.New(client, cfg.NodeName),
		events: record.NewBroadcaster(),
	}, nil
}

// recorder is the API server's event recorder for this node's agent.
func (c *cluster) recorder(nodeName string) record.EventRecorder {
	return c.events.NewRecorder(scheme.Scheme, v1.EventSource{Component: "podlife", Host: nodeName})
}

// runCluster starts the cluster-mode loops on wg; they end with ctx.
func (a *Agent) runCluster(ctx context.Context, wg *sync.WaitGroup) {
	c := a.cluster
	c.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	wg.Go(func() {
		err := c.source.Run(ctx, apisource.Handler{Change: a.handleChangeLocking, Seen: a.apiPodSeen})
		if err != nil {
			a.log.Error("API pod source failed", "err", err)
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		c.events.Shutdown()
	})
}

// sourcesReady reports whether every pod source delivered its pods once:
// until then housekeeping neither drops engine records nor kills runtime
// pods it does not know (the kubelet's sources-ready gate), since they may
// be pods the API server still wants.
func (a *Agent) sourcesReady() bool {
	return a.cluster == nil || a.cluster.source.HasSynced()
}

// apiPodSeen is every API pod event.
func (a *Agent) apiPodSeen(*v1.Pod) {}
