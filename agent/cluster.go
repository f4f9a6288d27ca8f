package agent

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/agent/apisource"
	"github.com/podlife/podlife/agent/certificate"
	"github.com/podlife/podlife/agent/mirror"
	"github.com/podlife/podlife/agent/node"
	"github.com/podlife/podlife/agent/objectcache"
	"github.com/podlife/podlife/agent/podstatus"
	"github.com/podlife/podlife/agent/runtimeclass"
	"github.com/podlife/podlife/agent/services"
	"github.com/podlife/podlife/agent/token"
	"github.com/podlife/podlife/cri/envvars"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/kubetypes"
)

// cluster is what the agent holds in cluster mode (Config.Kubeconfig set).
type cluster struct {
	client kubernetes.Interface
	// reviews is the kubelet API's client (apiClients).
	reviews kubernetes.Interface
	// http carries client's requests; its connections are closed with the
	// agent.
	http *http.Client
	// source is the pods the API server binds to this node.
	source *apisource.Source
	// events sends the agent's events to the API server.
	events record.EventBroadcaster
	// node keeps the Node object, its status and its Lease.
	node *node.Manager
	// mirrors keeps a mirror pod in the API for each static pod.
	mirrors *mirror.Manager
	// tokens and objects are what volumes and env show: the pods'
	// service account tokens and the Secrets and ConfigMaps they
	// reference.
	tokens  *token.Manager
	objects *objectcache.Objects
	// runtimeClasses resolves the pods' runtimeClassName to the
	// sandboxes' runtime handlers.
	runtimeClasses *runtimeclass.Cache
	// services are the cluster's Services, whose variables the
	// containers' env gets.
	services *services.Cache
	// certs rotates the client certificate (BootstrapKubeconfig set), and
	// serving requests the serving certificate (RotateServerCertificates);
	// nil when not.
	certs   *certificate.Client
	serving *certificate.Serving
}

// apiQPS and apiBurst bound the agent's requests to the API server, as the
// kubelet's kubeAPIQPS and kubeAPIBurst defaults do.
const (
	apiQPS   = 50
	apiBurst = 100
)

// heartbeatTimeout bounds each request of the heartbeat client: the
// kubelet's, the smaller of nodeStatusUpdateFrequency and the lease
// duration (10 s and 40 s by default), so that a request stuck on a dead
// connection does not hold up the next renewal.
const heartbeatTimeout = 10 * time.Second

// apiClients are the agent's clients of the API server. They share one
// transport (its connections are closed with the agent), not a rate
// limiter: the heartbeat is the Lease and the Node status, which nothing
// else may delay (the node lifecycle controller marks a node Unknown 50 s
// after its last renewal, then evicts its pods). TokenReviews,
// SubjectAccessReviews, pod statuses, mirror pods and events go through
// shared, QPS apiQPS and burst apiBurst.
type apiClients struct {
	shared, heartbeat kubernetes.Interface
	// reviews asks the kubelet API's TokenReviews and
	// SubjectAccessReviews, with a rate limiter of its own (QPS apiQPS,
	// burst apiBurst): the reviews a flood of unknown tokens costs
	// (kubeletserver bounds those in flight) delay no pod status.
	reviews kubernetes.Interface
	http    *http.Client
}

// newAPIClients makes the clients of restCfg. The heartbeat client has no
// client-side rate limit and a request timeout, as the kubelet's
// (cmd/kubelet/app: QPS -1): its loops make two requests every 10 s.
func newAPIClients(restCfg *rest.Config) (apiClients, error) {
	httpClient, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		return apiClients{}, err
	}
	shared, err := kubernetes.NewForConfigAndClient(restCfg, httpClient)
	if err != nil {
		return apiClients{}, err
	}
	hbCfg := rest.CopyConfig(restCfg)
	hbCfg.QPS, hbCfg.Burst, hbCfg.RateLimiter = -1, 0, nil
	hbCfg.Timeout = heartbeatTimeout
	heartbeat, err := kubernetes.NewForConfigAndClient(hbCfg, &http.Client{Transport: httpClient.Transport, Timeout: heartbeatTimeout})
	if err != nil {
		return apiClients{}, err
	}
	reviewsCfg := rest.CopyConfig(restCfg)
	reviewsCfg.RateLimiter = nil
	reviews, err := kubernetes.NewForConfigAndClient(reviewsCfg, httpClient)
	if err != nil {
		return apiClients{}, err
	}
	return apiClients{shared: shared, heartbeat: heartbeat, reviews: reviews, http: httpClient}, nil
}

// connectCluster reads the node's kubeconfig (bootstrapping its client
// certificate first when asked: see clientConfig) and prepares the API pod
// source, the event recorder, the Node and the mirror pods; nothing talks
// to the API server until Run. machine is the machine's CPUs and memory,
// allocatable what pods may request.
func (a *Agent) connectCluster(ctx context.Context, machine v1.ResourceList, allocatable admission.Resources) (*cluster, error) {
	cfg := a.cfg
	restCfg, certs, err := a.clientConfig(ctx)
	if err != nil {
		return nil, err
	}
	restCfg.QPS, restCfg.Burst = apiQPS, apiBurst
	restCfg.UserAgent = "podlife/" + cfg.NodeName
	restCfg.ContentType = "application/vnd.kubernetes.protobuf"
	clients, err := newAPIClients(restCfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	client := clients.shared
	capacity := machine.DeepCopy()
	capacity[v1.ResourcePods] = *resource.NewQuantity(int64(cfg.MaxPods), resource.DecimalSI)
	nm, err := node.New(node.Config{
		Client: clients.heartbeat, NodeName: cfg.NodeName, Clock: a.clock, Logger: a.log,
		Capacity: capacity,
		Allocatable: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(allocatable.MilliCPU, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(allocatable.Memory, resource.BinarySI),
			v1.ResourcePods:   *resource.NewQuantity(int64(cfg.MaxPods), resource.DecimalSI),
		},
		DeviceResources: a.devices.Resources,
		Addresses:       nodeAddresses(cfg.NodeName, cfg.NodeIPs),
		Labels:          cfg.NodeLabels,
		Taints:          cfg.RegisterWithTaints,
		RuntimeVersion:  a.conn.name + "://" + a.conn.version,
		AgentVersion:    agentVersion(),
		Ready:           a.nodeReady,
		KubeletPort:     int32(cfg.Port),
		RuntimeHandlers: a.conn.features.NodeRuntimeHandlers(),
	})
	if err != nil {
		return nil, err
	}
	serving, err := a.servingCertificate(client, nm)
	if err != nil {
		return nil, err
	}
	return &cluster{
		certs: certs, serving: serving,
		client:  client,
		reviews: clients.reviews,
		http:    clients.http,
		source:  apisource.New(client, cfg.NodeName),
		events:  record.NewBroadcaster(),
		node:    nm,
		mirrors: mirror.New(mirror.Config{Client: client, NodeName: cfg.NodeName, Node: nm.Node, Logger: a.log}),
		tokens:  token.New(client.CoreV1(), a.clock, a.log),
		// A pod is synced about once a sync period: a Secret or a
		// ConfigMap read is kept that long.
		objects: objectcache.New(client.CoreV1(), a.clock, cfg.SyncFrequency.Duration),
		// Read when a sandbox is made; a changed class reaches the
		// next sandboxes within a sync period.
		runtimeClasses: runtimeclass.New(client.NodeV1(), a.clock, cfg.SyncFrequency.Duration),
		services:       services.New(client),
	}, nil
}

// volumeAPI is what the pods' volumes and env read from the API server:
// nothing without one.
func (a *Agent) volumeAPI() volume.API {
	if a.cluster == nil {
		return volume.API{}
	}
	return volume.API{Tokens: a.cluster.tokens, ConfigMaps: a.cluster.objects, Secrets: a.cluster.objects}
}

// serviceLister is the Services the containers' env links: none
// without an API server, as a kubelet without one.
func (a *Agent) serviceLister() envvars.ServiceLister {
	if a.cluster == nil {
		return nil
	}
	return a.cluster.services
}

// agentVersion is the Node's kubeletVersion: the Kubernetes version whose
// API the agent is built with (k8s.io/api v0.X.Y is Kubernetes v1.X.Y),
// marked podlife.
func agentVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/api" && strings.HasPrefix(dep.Version, "v0.") {
				return "v1." + strings.TrimPrefix(dep.Version, "v0.") + "-podlife"
			}
		}
	}
	return "v0.0.0-podlife"
}

// nodeReady is the Node's Ready condition as far as the runtime goes: not
// ready while housekeeping's runtime reads keep failing (as /healthz).
func (a *Agent) nodeReady() (bool, string, string) {
	if problem := a.runtimeReads.problem(); problem != "" {
		return false, "ContainerRuntimeUnavailable", problem
	}
	return true, "", ""
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
	wg.Go(func() { c.node.Run(ctx) })
	wg.Go(func() { c.services.Run(ctx) })
	if c.certs != nil {
		wg.Go(func() { c.certs.Run(ctx) })
	}
	if c.serving != nil {
		wg.Go(func() { c.serving.Run(ctx) })
	}
	wg.Go(func() { a.statuses.Run(ctx) })
}

// newStatusManager is the pods' status store, and in cluster mode their
// writer to the API server.
func (a *Agent) newStatusManager() (*podstatus.Manager, error) {
	cfg := podstatus.Config{Clock: a.clock, Logger: a.log, Registerer: a.registry, Probes: a.probes}
	if a.cluster != nil {
		cfg.Client, cfg.Pods, cfg.Engine = a.cluster.client, a.cluster.source, engineQueries{a}
		cfg.HostIPs = node.HostIPs(a.cluster.node.Addresses())
	}
	return podstatus.New(cfg)
}

// engineQueries lets the status manager, which the syncer needs before
// the engine exists, ask the engine.
type engineQueries struct{ a *Agent }

func (q engineQueries) CouldHaveRunningContainers(uid types.UID) bool {
	return q.a.workers.CouldHaveRunningContainers(uid)
}

func (q engineQueries) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	return q.a.workers.ShouldPodRuntimeBeRemoved(uid)
}

// syncMirrors keeps the API's mirror pods as the kubelet does, and returns
// how many static pods have theirs reconciled. As the kubelet reconciles a
// mirror pod in the static pod's own sync, only a static pod the engine
// started (it holds its full name) and that is not terminating gets its
// mirror created or replaced: a new version of a manifest waits while the
// old one stops, and so does the old version's mirror, Running through its
// grace period. A mirror is deleted only once no admitted static pod has
// its full name and the engine is not stopping the one that had it.
func (a *Agent) syncMirrors(ctx context.Context) int {
	a.mu.Lock()
	var started []*v1.Pod
	named := map[string]bool{}
	for _, pod := range a.desiredLocked() {
		if !kubetypes.IsStatic(pod) {
			continue
		}
		named[kubetypes.FullName(pod.Name, pod.Namespace)] = true
		if state, ok := a.workers.State(pod.UID); ok && state != fsm.Waiting && !a.workers.IsPodTerminationRequested(pod.UID) {
			started = append(started, pod)
		}
	}
	a.mu.Unlock()
	keep := func(fullName string) bool {
		return named[fullName] || a.workers.IsPodForMirrorPodTerminatingByFullName(fullName)
	}
	err := a.cluster.mirrors.Sync(ctx, started, a.cluster.source.Mirrors(), keep)
	if err != nil {
		a.log.Warn("mirror pods: not all in place; retried at the next housekeeping", "err", err)
	}
	return len(started)
}

// sourcesReady reports whether every pod source delivered its pods once:
// until then housekeeping neither drops engine records nor kills runtime
// pods it does not know (the kubelet's sources-ready gate), since they may
// be pods the API server still wants.
func (a *Agent) sourcesReady() bool {
	return a.cluster == nil || a.cluster.source.HasSynced()
}

// apiPodSeen is every API pod added or updated: the status manager looks
// at it again (its deletion, a status someone else wrote).
func (a *Agent) apiPodSeen(pod *v1.Pod) { a.statuses.PodChanged(pod) }

// nodeAddresses are the node's InternalIPs and its Hostname when ips are
// given (the kubelet's --node-ip), else nil: the host's own address.
func nodeAddresses(name string, ips []string) []v1.NodeAddress {
	if len(ips) == 0 {
		return nil
	}
	var out []v1.NodeAddress
	for _, ip := range ips {
		out = append(out, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
	return append(out, v1.NodeAddress{Type: v1.NodeHostName, Address: name})
}
