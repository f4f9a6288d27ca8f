package kuberuntime

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/containergc"
	"github.com/podlife/podlife/cri/dns"
	"github.com/podlife/podlife/cri/envvars"
	"github.com/podlife/podlife/cri/imagepull"
	"github.com/podlife/podlife/cri/podplan"
	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/cri/securitycontext"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/worker"
)

// StatusWriter receives every pod status the syncer generates; the last
// one written for a UID is the pod's current status.
type StatusWriter interface {
	SetPodStatus(pod *v1.Pod, status v1.PodStatus)
}

// EventRecorder records an event about a pod, Eventf style.
type EventRecorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Options configure a Syncer. The zero value works.
type Options struct {
	Statuses StatusWriter       // nil: statuses are dropped
	Events   EventRecorder      // nil: events are dropped
	Clock    clock.PassiveClock // nil: the real clock
	Logger   *slog.Logger       // nil: no logs
	// RuntimeName prefixes container IDs in statuses; "" is "cri".
	RuntimeName string
	// LogRoot is where the runtime writes container logs; "" writes none.
	LogRoot string
	// PodsRoot holds a directory per pod (see poddir.go): the hosts file
	// mounted at /etc/hosts and the termination message files; "" makes
	// neither.
	PodsRoot string
	// Allocatable is the node's CPU, memory and ephemeral storage for pods:
	// the value of a limit a container does not set (resourceFieldRef in
	// env and downwardAPI volumes), and the size of a Memory emptyDir
	// without sizeLimit. nil: the machine's CPUs and memory.
	Allocatable v1.ResourceList
	// HostIPs are the node's IPs (status.hostIP in env, and a host-network
	// pod's IPs).
	HostIPs []string
	// MachineMemory is the node's memory in bytes, which weighs a
	// burstable container's memory request in its oom_score_adj; 0 is
	// unknown (999, the burstable maximum).
	MachineMemory int64
	// RestartBackoff is the first crash-loop delay, and the first delay
	// after a failed image pull; 0 is 10 s.
	RestartBackoff time.Duration
	// MaxRestartBackoff caps those delays; 0 is 5 min.
	MaxRestartBackoff time.Duration
	// RemovalTimeout bounds each background removal; 0 is 1 min.
	RemovalTimeout time.Duration
	// VolumeAPI reads what volumes and env show from the API server: a
	// service account's tokens, Secrets and ConfigMaps. The zero value
	// (standalone mode) refuses them.
	VolumeAPI volume.API
	// Services are the cluster's Services, whose variables every
	// container's env gets (the kubelet's service lister); nil
	// (standalone mode, no API server) is none.
	Services envvars.ServiceLister
	// Security are the node's seccomp settings: the directory of
	// Localhost profiles and whether RuntimeDefault is the default.
	Security securitycontext.Options
	// RuntimeFeatures are what the runtime's Status reported it supports
	// (user namespaces, supplementalGroupsPolicy Strict); the zero value
	// is none, and a pod asking for them is refused.
	RuntimeFeatures securitycontext.RuntimeFeatures
	// RuntimeClasses resolves a pod's runtimeClassName to the sandbox's
	// runtime handler (cluster mode); nil (standalone) refuses a pod that
	// names a runtime class.
	RuntimeClasses RuntimeClassGetter
	// Probes runs the containers' probes (its Runner is
	// lifecycle.NewProbeRunner's); nil runs none.
	Probes *prober.Manager
	// ResolvConf is the node's resolver configuration, the base of every
	// sandbox's DNS but dnsPolicy None's; "" is dns.NodeResolvConf.
	ResolvConf string
	// ClusterDNS is the cluster's DNS that ClusterFirst pods get (the
	// kubelet's clusterDNS and clusterDomain); none: the node's, with a
	// MissingClusterDNS warning.
	ClusterDNS dns.Cluster
	// Devices gives a container's CRI config what its allocated devices
	// need (env, mounts, device nodes: the node agent's device manager);
	// nil: no container has devices.
	Devices Devices
	// Decided, if set, is told the rows each sync's plan fired (tests and
	// developer tools record them as a trace of the container decisions,
	// trace/container); the node agent sets none.
	Decided func(pod *v1.Pod, steps []podplan.Step)
}

// Devices adds to the CRI config of a container instance what the device
// plugins answered for its devices (the kubelet's device manager
// GetDeviceRunContainerOptions). An error leaves the container waiting
// with CreateContainerConfigError.
type Devices interface {
	AddDevices(ctx context.Context, pod *v1.Pod, c *v1.Container, cfg *runtimeapi.ContainerConfig) error
}

// runtimeOnlyGracePeriod is the grace period of a pod known only to the
// runtime whose containers recorded none (recordedGracePeriod): the
// kubelet's for every such pod.
const runtimeOnlyGracePeriod = 1

// Syncer is a worker.PodSyncer over a CRI runtime. Its methods may run
// concurrently for different pods; the engine never overlaps calls for one
// pod.
type Syncer struct {
	rt      cri.Runtime
	images  cri.Images
	opts    Options
	backoff *restartBackoff
	pulls   *imagepull.Backoff

	// removals tracks background removals of stopped sandboxes, so Close
	// can wait for them.
	removals sync.WaitGroup
	// removing holds the UIDs whose removal is in flight, so a pod is not
	// removed twice at once.
	removingMu sync.Mutex
	removing   map[types.UID]bool
	// dirFailed is the last failure to remove each pod's directory, said
	// once: housekeeping retries it every few seconds (dirRemoved).
	dirFailed map[types.UID]string
	// gc is the container garbage collector; collecting is set while a
	// collection runs (GarbageCollect).
	gc         *containergc.Collector
	collecting atomic.Bool

	// hooks are the preStop hooks in progress.
	hooks preStopHooks

	// sharedRoot is set once PodsRoot is on a shared mount (ensureShared).
	sharedMu   sync.Mutex
	sharedRoot bool
}

var _ worker.PodSyncer = (*Syncer)(nil)

// NewSyncer returns a syncer that runs pods on rt with images from images.
func NewSyncer(rt cri.Runtime, images cri.Images, opts Options) *Syncer {
	if opts.Statuses == nil {
		opts.Statuses = discard{}
	}
	if opts.Events == nil {
		opts.Events = discard{}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.RuntimeName == "" {
		opts.RuntimeName = "cri"
	}
	if opts.RestartBackoff == 0 {
		opts.RestartBackoff = 10 * time.Second
	}
	if opts.MaxRestartBackoff == 0 {
		opts.MaxRestartBackoff = 5 * time.Minute
	}
	if opts.RemovalTimeout == 0 {
		opts.RemovalTimeout = time.Minute
	}
	return &Syncer{
		rt: rt, images: images, opts: opts, removing: map[types.UID]bool{}, dirFailed: map[types.UID]string{},
		gc:      containergc.New(rt, opts.LogRoot, opts.PodsRoot, opts.Clock, opts.Logger),
		backoff: newRestartBackoff(opts.Clock, opts.RestartBackoff, opts.MaxRestartBackoff),
		pulls:   imagepull.NewBackoff(opts.Clock, opts.RestartBackoff, opts.MaxRestartBackoff),
	}
}

// Close waits for background removals to end, and cuts off the preStop
// hooks still running.
func (s *Syncer) Close() {
	s.removals.Wait()
	s.hooks.close()
}

type discard struct{}

func (discard) SetPodStatus(*v1.Pod, v1.PodStatus)             {}
func (discard) Eventf(*v1.Pod, string, string, string, ...any) {}

// stopSandboxes stops every ready sandbox of the pod.
func (s *Syncer) stopSandboxes(ctx context.Context, p *cri.PodRuntime) error {
	for _, sb := range p.Sandboxes {
		if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if err := s.rt.StopPodSandbox(ctx, sb.Id); err != nil {
			return fmt.Errorf("stop sandbox %s: %w", sb.Id, err)
		}
	}
	return nil
}

// maxStopTimeout is the longest grace period, in seconds, a StopContainer
// can carry: the CRI client adds its own timeout to it as a time.Duration,
// which overflows, and so expires at once, from about 9.2e9 s. A day of
// margin covers any client's timeout.
const maxStopTimeout = (math.MaxInt64 - int64(24*time.Hour)) / int64(time.Second)

// stopTimeout is grace as StopContainer can honour it: a pod from any
// source can always be stopped.
func stopTimeout(grace int64) int64 { return min(max(grace, 0), maxStopTimeout) }

// stopPod stops every container of p within grace seconds and its
// sandboxes, then re-reads the runtime to prove nothing runs. pod, when
// known, gives the hooks and the order of the stops, and gets the Killing
// events.
func (s *Syncer) stopPod(ctx context.Context, pod *v1.Pod, p *cri.PodRuntime, grace int64, what string) (*cri.PodRuntime, error) {
	if err := s.killContainers(ctx, pod, p, p.NotExited(), grace); err != nil {
		return nil, err
	}
	if err := s.stopSandboxes(ctx, p); err != nil {
		return nil, err
	}
	return s.verifyStopped(ctx, p, what)
}

// verifyStopped re-reads the runtime and fails if a container of the pod
// still runs: a runtime that said it stopped a container and did not is
// violating the CRI, and the pod must not be reported terminated.
func (s *Syncer) verifyStopped(ctx context.Context, p *cri.PodRuntime, what string) (*cri.PodRuntime, error) {
	uid := p.UID
	p, err := readPod(ctx, s.rt, uid)
	if err != nil {
		return nil, err
	}
	if ids := p.RunningIDs(); len(ids) > 0 {
		return nil, fmt.Errorf("%s %s: containers %v still run after they were stopped", what, uid, ids)
	}
	return p, nil
}
