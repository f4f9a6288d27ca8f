package agent

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/worker"
)

// handler serves the local endpoint: /metrics, /healthz, /pods and
// POST /shutdown.
func (a *Agent) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{Registry: a.registry}))
	mux.HandleFunc("GET /healthz", a.serveHealthz)
	mux.HandleFunc("GET /pods", a.servePods)
	mux.HandleFunc("GET /lifecycle", a.serveLifecycle)
	mux.HandleFunc("POST /shutdown", func(w http.ResponseWriter, _ *http.Request) {
		a.RequestShutdown()
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintln(w, "node shutdown started")
	})
	return mux
}

// Pods reports every pod the agent knows: those of the manifests and those
// the engine holds without one (orphans, runtime-only pods), by namespace,
// name and UID.
func (a *Agent) Pods() []PodInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []PodInfo
	for uid, e := range a.pods {
		info := PodInfo{UID: uid, Namespace: e.pod.Namespace, Name: e.pod.Name, Static: worker.IsStatic(e.pod), Manifest: e.path, Config: "desired"}
		if e.rejection != nil {
			info.Config = "rejected"
		}
		a.fillLocked(&info)
		out = append(out, info)
	}
	for uid, ws := range a.working {
		if _, ok := a.pods[uid]; ok {
			continue
		}
		info := PodInfo{UID: uid, Static: ws.Static, Config: "orphan"}
		if !ws.HasConfig {
			info.Config = "runtime-only"
		}
		if ps, err := a.cache.Get(uid); err == nil {
			info.Namespace, info.Name = ps.Namespace, ps.Name
		}
		a.fillLocked(&info)
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].UID < out[j].UID
	})
	return out
}

// fillLocked adds the engine's state and the latest status to info.
func (a *Agent) fillLocked(info *PodInfo) {
	if s, ok := a.workers.State(info.UID); ok {
		info.Lifecycle = s.String()
		info.Worker = workerPhase(a.workers, info.UID)
	}
	if st, ok := a.statuses.get(info.UID); ok {
		info.Phase, info.Reason, info.Message = st.Phase, st.Reason, st.Message
		info.InitContainers = containerInfos(st.InitContainerStatuses)
		info.Containers = containerInfos(st.ContainerStatuses)
	}
}

// workerPhase names the engine's phase for uid.
func workerPhase(w *worker.PodWorkers, uid types.UID) string {
	switch {
	case w.IsPodKnownTerminated(uid):
		return worker.TerminatedPod.String()
	case w.IsPodTerminationRequested(uid):
		return worker.TerminatingPod.String()
	}
	return worker.SyncPod.String()
}
