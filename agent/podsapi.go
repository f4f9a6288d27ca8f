package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/worker"
)

// The read-only pod endpoints. GET /pods is the kubelet's: a v1.PodList of
// the pods of the manifests (admitted or rejected), each with its spec and
// its latest status, so that tools made for the kubelet read it. GET
// /lifecycle is podlife's own view (Lifecycle): the engine's state of every
// pod it holds (orphans and runtime-only pods too, which are in no
// manifest), and the manifests it cannot use. It is an endpoint of its own
// rather than annotations on /pods because most of it describes no pod of
// the list, and because annotations are the manifest's: a pod's metadata
// stays what its file says.

// Lifecycle is what GET /lifecycle returns and `podlife status` shows.
type Lifecycle struct {
	Pods []PodInfo `json:"pods"`
	// ManifestErrors are the manifest files, or the directory, the agent
	// cannot use.
	ManifestErrors []ManifestError `json:"manifestErrors,omitempty"`
}

// Lifecycle reports every pod the agent knows, each static pod waiting for
// its full name with the pod holding it, and the manifest faults.
func (a *Agent) Lifecycle() Lifecycle {
	pods := a.Pods()
	a.mu.Lock()
	for i := range pods {
		pods[i].WaitingFor = a.waitingForLocked(pods[i].UID)
	}
	a.mu.Unlock()
	return Lifecycle{Pods: pods, ManifestErrors: a.manifestErrors()}
}

// PodList is the pods of the manifests as the kubelet's /pods lists them,
// by namespace, name and UID. A pod without a recorded status is Pending;
// one waiting for its full name says for whom in its status.
func (a *Agent) PodList() *v1.PodList {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := &v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: make([]v1.Pod, 0, len(a.pods))}
	for uid, e := range a.pods {
		pod := e.pod.DeepCopy()
		pod.Status = v1.PodStatus{Phase: v1.PodPending}
		if st, ok := a.statuses.Get(uid); ok {
			pod.Status = st
		}
		if h := a.waitingForLocked(uid); h != nil {
			pod.Status.Reason = "WaitingForFullName"
			pod.Status.Message = fmt.Sprintf("waiting for its full name %s, held by pod %s %s", kubetypes.FullName(pod.Name, pod.Namespace), h.UID, h.from())
		}
		list.Items = append(list.Items, *pod)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		x, y := &list.Items[i], &list.Items[j]
		if x.Namespace != y.Namespace {
			return x.Namespace < y.Namespace
		}
		if x.Name != y.Name {
			return x.Name < y.Name
		}
		return x.UID < y.UID
	})
	return list
}

// waitingForLocked is the pod holding the full name the static pod uid
// waits for, nil when it waits for none.
func (a *Agent) waitingForLocked(uid types.UID) *NameHolder {
	holder, ok := a.workers.WaitingFor(uid)
	if !ok {
		return nil
	}
	h := &NameHolder{UID: holder}
	if e, ok := a.pods[holder]; ok {
		h.Manifest = e.path
	}
	return h
}

func (a *Agent) servePods(w http.ResponseWriter, _ *http.Request) { writeJSON(w, a.PodList()) }

func (a *Agent) serveLifecycle(w http.ResponseWriter, _ *http.Request) { writeJSON(w, a.Lifecycle()) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Pods reports every pod the agent knows: those of the manifests and those
// the engine holds without one (orphans, runtime-only pods), by namespace,
// name and UID.
func (a *Agent) Pods() []PodInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []PodInfo
	for uid, e := range a.pods {
		info := PodInfo{UID: uid, Namespace: e.pod.Namespace, Name: e.pod.Name, Static: kubetypes.IsStatic(e.pod), Manifest: e.path, Config: "desired"}
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
	if st, ok := a.statuses.Get(info.UID); ok {
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
