package agent

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/kubetypes"
	"github.com/podlife/podlife/worker"
)

// What the read-only pod endpoints serve (agent/server): GET /pods is
// PodList, GET /lifecycle is Lifecycle.

// Lifecycle reports every pod the agent knows, each static pod waiting for
// its full name with the pod holding it, and the manifest faults.
func (a *Agent) Lifecycle() api.Lifecycle {
	pods := a.Pods()
	a.mu.Lock()
	for i := range pods {
		pods[i].WaitingFor = a.waitingForLocked(pods[i].UID)
	}
	a.mu.Unlock()
	return api.Lifecycle{Pods: pods, ManifestErrors: a.manifestErrors()}
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
			pod.Status.Message = fmt.Sprintf("waiting for its full name %s, held by pod %s %s", kubetypes.FullName(pod.Name, pod.Namespace), h.UID, h.From())
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
func (a *Agent) waitingForLocked(uid types.UID) *api.NameHolder {
	holder, ok := a.workers.WaitingFor(uid)
	if !ok {
		return nil
	}
	h := &api.NameHolder{UID: holder}
	if e, ok := a.pods[holder]; ok {
		h.Manifest = e.path
	}
	return h
}

// Pods reports every pod the agent knows: those of the manifests and those
// the engine holds without one (orphans, runtime-only pods), by namespace,
// name and UID.
func (a *Agent) Pods() []api.PodInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []api.PodInfo
	for uid, e := range a.pods {
		info := api.PodInfo{UID: uid, Namespace: e.pod.Namespace, Name: e.pod.Name, Static: kubetypes.IsStatic(e.pod), Manifest: e.path, Config: "desired"}
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
		info := api.PodInfo{UID: uid, Static: ws.Static, Config: "orphan"}
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
func (a *Agent) fillLocked(info *api.PodInfo) {
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

// containerInfos summarises container statuses.
func containerInfos(statuses []v1.ContainerStatus) []api.ContainerInfo {
	out := make([]api.ContainerInfo, 0, len(statuses))
	for _, cs := range statuses {
		ci := api.ContainerInfo{Name: cs.Name, Restarts: cs.RestartCount}
		switch {
		case cs.State.Running != nil:
			ci.State = "running"
		case cs.State.Terminated != nil:
			ci.State, ci.Reason = "terminated", cs.State.Terminated.Reason
			code := cs.State.Terminated.ExitCode
			ci.ExitCode = &code
		case cs.State.Waiting != nil:
			ci.State, ci.Reason = "waiting", cs.State.Waiting.Reason
		}
		out = append(out, ci)
	}
	return out
}
