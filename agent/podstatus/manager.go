package podstatus

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/kubetypes"
)

// DefaultSyncPeriod is how often every pod's API status is re-checked.
const DefaultSyncPeriod = 10 * time.Second

// Engine is what the status manager asks the pod lifecycle engine;
// *worker.PodWorkers is one.
type Engine interface {
	CouldHaveRunningContainers(uid types.UID) bool
	ShouldPodRuntimeBeRemoved(uid types.UID) bool
}

// APIPods gives the API's current copy of a pod by namespace and name: the
// caller's informer lister.
type APIPods interface {
	Get(namespace, name string) (*v1.Pod, bool)
}

// Config configures a Manager.
type Config struct {
	// Client writes statuses to the API server; nil keeps them local only
	// (the agent without an API server), and then Engine and Pods may be
	// nil too.
	Client     kubernetes.Interface
	Engine     Engine                // required with Client
	Pods       APIPods               // required with Client
	Clock      clock.WithTicker      // nil: the real clock
	Logger     *slog.Logger          // nil: no logs
	Registerer prometheus.Registerer // nil: metrics are not registered
	// SyncPeriod is how often every pod's API status is compared with the
	// recorded one and rewritten if it differs; 0 is DefaultSyncPeriod.
	SyncPeriod time.Duration
	// Probes, when set, apply the probes' results (containers' started and
	// ready, the pod's Ready) to every status recorded, and again at each
	// change of a result (ProbesChanged).
	Probes ProbeResults
	// HostIPs are the node's IPs (node.HostIPs), every status's hostIP
	// and hostIPs, as the kubelet with an API server writes them; none
	// leaves them unset.
	HostIPs []string
}

// ProbeResults applies the current probe results to a pod's status;
// *prober.Manager is one.
type ProbeResults interface {
	Apply(pod *v1.Pod, st *v1.PodStatus)
}

// Manager records pod statuses and writes them to the API server. All its
// methods are safe for concurrent use.
type Manager struct {
	client     kubernetes.Interface
	engine     Engine
	pods       APIPods
	clock      clock.WithTicker
	log        *slog.Logger
	metrics    *metrics
	syncPeriod time.Duration
	probes     ProbeResults
	hostIPs    []v1.HostIP

	mu      sync.RWMutex
	entries map[types.UID]*entry
	// queue is the API writer's work queue while Run runs, else nil.
	queue workqueue.TypedRateLimitingInterface[types.UID]
}

// entry is what the Manager knows of one pod.
type entry struct {
	// pod is the one the status was last set for: its spec says which
	// containers have probes.
	pod             *v1.Pod
	namespace, name string
	static          bool
	// generation is the metadata.generation the status was generated for.
	generation int64
	status     v1.PodStatus
	// gone: the API pod was deleted or replaced by another of the same
	// name; nothing more is written for this UID.
	gone bool
}

// New returns a Manager; with a Client, Run must run for statuses to reach
// the API server.
func New(cfg Config) (*Manager, error) {
	if cfg.Client != nil && (cfg.Engine == nil || cfg.Pods == nil) {
		return nil, errors.New("podstatus: a Manager with an API client needs an Engine and APIPods")
	}
	m := &Manager{
		client: cfg.Client, engine: cfg.Engine, pods: cfg.Pods,
		clock: cfg.Clock, log: cfg.Logger, metrics: newMetrics(cfg.Registerer),
		syncPeriod: cfg.SyncPeriod, probes: cfg.Probes,
		entries: map[types.UID]*entry{},
	}
	for _, ip := range cfg.HostIPs {
		m.hostIPs = append(m.hostIPs, v1.HostIP{IP: ip})
	}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.syncPeriod <= 0 {
		m.syncPeriod = DefaultSyncPeriod
	}
	return m, nil
}

// SetPodStatus records pod's status and queues its write to the API server
// (it is the syncer's kuberuntime.StatusWriter). Condition transition times and the
// start time the status leaves unset are filled in here, when the change is
// seen.
func (m *Manager) SetPodStatus(pod *v1.Pod, status v1.PodStatus) {
	now := metav1.NewTime(m.clock.Now())
	static := kubetypes.IsStatic(pod)
	apiStatus := &pod.Status
	if static && m.pods != nil {
		if mp, ok := m.pods.Get(pod.Namespace, pod.Name); ok && isMirrorOf(mp, pod) {
			apiStatus = &mp.Status
		}
	}
	st := *status.DeepCopy()
	if len(m.hostIPs) > 0 {
		st.HostIP, st.HostIPs = m.hostIPs[0].IP, slices.Clone(m.hostIPs)
	}
	if m.probes != nil {
		m.probes.Apply(pod, &st)
	}
	gateReady(pod.Spec.ReadinessGates, m.apiConditions(pod), st.Conditions, nil, now)

	m.mu.Lock()
	defer m.mu.Unlock()
	e, known := m.entries[pod.UID]
	prev := apiStatus
	if known {
		prev = &e.status
	}
	stampTimes(prev, &st, now)
	if known && e.generation == pod.Generation && apiequality.Semantic.DeepEqual(e.status, st) {
		e.pod = pod
		return
	}
	if !known {
		e = &entry{namespace: pod.Namespace, name: pod.Name, static: static}
		m.entries[pod.UID] = e
	}
	e.pod, e.generation, e.status = pod, pod.Generation, st
	m.enqueueLocked(pod.UID, e)
}

// ProbesChanged applies the probe results anew to the pod's recorded
// status, and queues its write if that changed it (the kubelet's
// SetContainerReadiness): a readiness change reaches the status at once,
// without a sync, also while the pod terminates and its sync is blocked in
// a long stop.
func (m *Manager) ProbesChanged(uid types.UID) {
	if m.probes == nil {
		return
	}
	now := metav1.NewTime(m.clock.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[uid]
	if !ok || e.pod == nil {
		return
	}
	st := *e.status.DeepCopy()
	m.probes.Apply(e.pod, &st)
	gateReady(e.pod.Spec.ReadinessGates, m.apiConditions(e.pod), st.Conditions, nil, now)
	for i := range st.Conditions {
		// A condition the results flipped transitions now.
		if old, ok := findCondition(e.status.Conditions, st.Conditions[i].Type); ok && old.Status != st.Conditions[i].Status {
			st.Conditions[i].LastTransitionTime = metav1.Time{}
		}
	}
	stampTimes(&e.status, &st, now)
	if apiequality.Semantic.DeepEqual(e.status, st) {
		return
	}
	e.status = st
	m.enqueueLocked(uid, e)
}

// Get returns the pod's recorded status and whether there is one.
func (m *Manager) Get(uid types.UID) (v1.PodStatus, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e, ok := m.entries[uid]; ok {
		return *e.status.DeepCopy(), true
	}
	return v1.PodStatus{}, false
}

// Phase is the pod's recorded phase, Pending when none was recorded.
func (m *Manager) Phase(pod *v1.Pod) v1.PodPhase {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e, ok := m.entries[pod.UID]; ok && e.status.Phase != "" {
		return e.status.Phase
	}
	return v1.PodPending
}

// Retain drops the statuses of the pods keep rejects (pods neither desired
// nor known to the engine); nothing more is written for them.
func (m *Manager) Retain(keep func(types.UID) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for uid := range m.entries {
		if !keep(uid) {
			delete(m.entries, uid)
		}
	}
}

// PodChanged re-checks the recorded pod that the API pod is for: the
// informer saw it change (its deletion requested, its status written by
// someone else, a readiness gate's condition among it, a static pod's
// mirror pod created). The recorded Ready follows the gates' conditions at
// once; the write that follows merges them with the API's copy anew (the
// kubelet's HandlePodReconcile, which resyncs a pod whose Ready the gates
// changed).
func (m *Manager) PodChanged(pod *v1.Pod) {
	now := metav1.NewTime(m.clock.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	if !kubetypes.IsMirror(pod) {
		if e, ok := m.entries[pod.UID]; ok && !e.static {
			m.regateLocked(e, pod.Status.Conditions, now)
			m.enqueueLocked(pod.UID, e)
		}
		return
	}
	for uid, e := range m.entries {
		if e.static && e.namespace == pod.Namespace && e.name == pod.Name {
			m.regateLocked(e, pod.Status.Conditions, now)
			m.enqueueLocked(uid, e)
		}
	}
}

// regateLocked applies the pod's readiness gates to its recorded status
// anew, given the API's conditions.
func (m *Manager) regateLocked(e *entry, apiConditions []v1.PodCondition, now metav1.Time) {
	if e.pod == nil || len(e.pod.Spec.ReadinessGates) == 0 {
		return
	}
	st := *e.status.DeepCopy()
	gateReady(e.pod.Spec.ReadinessGates, apiConditions, st.Conditions, nil, now)
	e.status = st
}

// apiConditions are the conditions of the pod's API status as fresh as the
// agent knows them: the informer's copy of the pod with its UID, or of a
// static pod's mirror pod; else (no API server, or not seen yet) the pod's
// own.
func (m *Manager) apiConditions(pod *v1.Pod) []v1.PodCondition {
	if len(pod.Spec.ReadinessGates) == 0 {
		return nil
	}
	if m.pods != nil {
		p, ok := m.pods.Get(pod.Namespace, pod.Name)
		static := kubetypes.IsStatic(pod)
		if ok && ((static && isMirrorOf(p, pod)) || (!static && p.UID == pod.UID)) {
			return p.Status.Conditions
		}
	}
	return pod.Status.Conditions
}

// isMirrorOf reports whether mp is the mirror pod of static's version: its
// kubernetes.io/config.mirror is static's config hash. The mirror of
// another version of the manifest is that version's (the old one while it
// stops, or the new one once it started), so it takes none of static's
// status: the kubelet's status manager likewise skips a pod whose mirror
// belongs to another static UID. A static pod without a hash has no mirror.
func isMirrorOf(mp, static *v1.Pod) bool {
	hash := static.Annotations[kubetypes.ConfigHashAnnotation]
	return kubetypes.IsMirror(mp) && hash != "" && mp.Annotations[v1.MirrorPodAnnotationKey] == hash
}

// enqueueLocked queues the pod's sync while the API writer runs.
func (m *Manager) enqueueLocked(uid types.UID, e *entry) {
	if m.queue != nil && !e.gone {
		m.queue.Add(uid)
	}
}

// enqueueAll queues every pod's sync: the resync.
func (m *Manager) enqueueAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for uid, e := range m.entries {
		m.enqueueLocked(uid, e)
	}
}
