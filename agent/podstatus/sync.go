package podstatus

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/podlife/podlife/kubetypes"
)

// syncPod brings the API status of the pod with uid in line with the
// recorded one, then deletes the API pod if it is done with. recheck asks
// for another sync soon: the pod waits on the engine. An error asks for a
// retry with back-off.
func (m *Manager) syncPod(ctx context.Context, uid types.UID) (recheck bool, err error) {
	e, ok := m.entryToSync(uid)
	if !ok {
		return false, nil
	}
	apiPod, err := m.apiPod(ctx, uid, e)
	if err != nil || apiPod == nil {
		return false, err
	}
	apiPod, heldBack, err := m.writeStatus(ctx, uid, e, apiPod)
	if err != nil || apiPod == nil {
		return false, err
	}
	if e.static || !deletionWanted(apiPod) {
		return heldBack, nil
	}
	if !m.engine.ShouldPodRuntimeBeRemoved(uid) {
		return true, nil
	}
	return false, m.deletePod(ctx, uid, apiPod)
}

// entryToSync is a copy of the pod's entry, unless there is nothing to
// write for it.
func (m *Manager) entryToSync(uid types.UID) (entry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.entries[uid]
	if !ok || e.gone {
		return entry{}, false
	}
	c := *e
	c.status = *e.status.DeepCopy()
	return c, true
}

// apiPod is the API pod that receives the status: the pod itself, or a
// static pod's mirror pod (of its version: isMirrorOf). nil means nothing
// can be written now: no mirror pod of it yet (the next resync or its
// creation brings the pod back), or the pod is gone.
func (m *Manager) apiPod(ctx context.Context, uid types.UID, e entry) (*v1.Pod, error) {
	if e.static {
		if mp, ok := m.pods.Get(e.namespace, e.name); ok && isMirrorOf(mp, e.pod) {
			return mp, nil
		}
		m.log.Debug("static pod has no mirror pod yet; its status waits", "pod", e.namespace+"/"+e.name, "uid", uid)
		m.metrics.syncs.WithLabelValues(resultNoMirror).Inc()
		return nil, nil
	}
	if pod, ok := m.pods.Get(e.namespace, e.name); ok && pod.UID == uid {
		return pod, nil
	}
	// The lister does not hold this pod: it lags behind, or the pod was
	// deleted or replaced by another of the same name. The API says which.
	pod, err := m.client.CoreV1().Pods(e.namespace).Get(ctx, e.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		m.podGone(uid, e.namespace, e.name, "deleted")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get pod %s/%s (UID %s): %w", e.namespace, e.name, uid, err)
	case pod.UID != uid:
		m.podGone(uid, e.namespace, e.name, "replaced by UID "+string(pod.UID))
		return nil, nil
	}
	return pod, nil
}

// writeStatus patches apiPod's status to the merge of the recorded one
// unless it already is that, and returns the API pod as it now is (nil if
// it turned out to be gone) and whether a terminal phase was held back.
func (m *Manager) writeStatus(ctx context.Context, uid types.UID, e entry, apiPod *v1.Pod) (*v1.Pod, bool, error) {
	for attempt := 1; ; attempt++ {
		// A static pod's generation is 0 (a manifest has none): its
		// mirror's observedGeneration stays unset, as the kubelet leaves it.
		in := mergeInput{api: apiPod.Status, local: e.status, generation: e.generation, now: metav1.NewTime(m.clock.Now())}
		if e.pod != nil {
			in.readinessGates = e.pod.Spec.ReadinessGates
		}
		if isTerminal(e.status.Phase) && !isTerminal(apiPod.Status.Phase) {
			in.containersStopped = !m.engine.CouldHaveRunningContainers(uid)
		}
		status, outcome := mergeStatus(in)
		m.logOutcome(uid, apiPod, e.status.Phase, outcome)
		heldBack := outcome == phaseHeldBack
		if apiequality.Semantic.DeepEqual(apiPod.Status, status) {
			m.metrics.syncs.WithLabelValues(resultUnchanged).Inc()
			return apiPod, heldBack, nil
		}
		patch, err := statusPatch(apiPod.UID, apiPod.ResourceVersion, apiPod.Status, status)
		if err != nil {
			return nil, false, fmt.Errorf("pod %s/%s (UID %s): %w", apiPod.Namespace, apiPod.Name, apiPod.UID, err)
		}
		patched, err := m.client.CoreV1().Pods(apiPod.Namespace).Patch(ctx, apiPod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if err == nil {
			m.metrics.syncs.WithLabelValues(resultWritten).Inc()
			m.log.Debug("pod status written", "pod", apiPod.Namespace+"/"+apiPod.Name, "uid", apiPod.UID, "phase", patched.Status.Phase)
			return patched, heldBack, nil
		}
		patchErr := fmt.Errorf("patch the status of pod %s/%s (UID %s): %w", apiPod.Namespace, apiPod.Name, apiPod.UID, err)
		if !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) {
			return nil, false, patchErr
		}
		// The copy was stale (a Conflict), or the pod may have been
		// replaced (a UID mismatch is Invalid): read the pod as it is now.
		fresh, err := m.client.CoreV1().Pods(apiPod.Namespace).Get(ctx, apiPod.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			m.podGone(uid, e.namespace, e.name, "deleted")
			return nil, false, nil
		case err != nil:
			return nil, false, fmt.Errorf("%w; get it again: %w", patchErr, err)
		case fresh.UID != apiPod.UID:
			m.podGone(uid, e.namespace, e.name, "replaced by UID "+string(fresh.UID))
			return nil, false, nil
		case attempt > 1 || !apierrors.IsConflict(patchErr):
			return nil, false, patchErr
		}
		apiPod = fresh // merge again onto the current status
	}
}

// logOutcome says when the API does not get the recorded phase.
func (m *Manager) logOutcome(uid types.UID, apiPod *v1.Pod, local v1.PodPhase, outcome phaseOutcome) {
	switch outcome {
	case phaseHeldBack:
		m.log.Debug("terminal phase held back while containers may run", "pod", apiPod.Namespace+"/"+apiPod.Name, "uid", uid, "phase", local, "apiPhase", apiPod.Status.Phase)
	case phaseKeptTerminal:
		m.log.Warn("the API's terminal phase is kept over the recorded one", "pod", apiPod.Namespace+"/"+apiPod.Name, "uid", uid, "phase", local, "apiPhase", apiPod.Status.Phase)
	}
}

// deletionWanted reports whether the API pod may be deleted for good as
// far as the API can tell (the engine must also have removed its runtime):
// its deletion was requested, it is not a mirror pod (those belong to the
// static pod's lifecycle), and the API shows its terminal phase, as the
// kubelet's canBeDeleted asks. A pod that never ran here (deleted while
// Pending) is no exception: its termination writes it Failed first, and a
// pod a finalizer keeps must show that phase (a status recorded before the
// termination, still Pending, is not the last word).
func deletionWanted(apiPod *v1.Pod) bool {
	return apiPod.DeletionTimestamp != nil && !kubetypes.IsMirror(apiPod) && isTerminal(apiPod.Status.Phase)
}

// deletePod deletes the API pod at once, only if it still is the pod with
// this UID. Not found or a UID conflict: someone else deleted it.
func (m *Manager) deletePod(ctx context.Context, uid types.UID, apiPod *v1.Pod) error {
	err := m.client.CoreV1().Pods(apiPod.Namespace).Delete(ctx, apiPod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(apiPod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s (UID %s): %w", apiPod.Namespace, apiPod.Name, apiPod.UID, err)
	}
	if err != nil {
		m.podGone(uid, apiPod.Namespace, apiPod.Name, "deleted by someone else: "+err.Error())
		return nil
	}
	m.metrics.deletions.Inc()
	m.log.Info("pod terminated and deleted from the API", "pod", apiPod.Namespace+"/"+apiPod.Name, "uid", uid)
	m.markGone(uid)
	return nil
}

// podGone stops the writes for a pod whose API object is no more.
func (m *Manager) podGone(uid types.UID, namespace, name, why string) {
	m.log.Info("pod status not written: the API pod is gone", "pod", namespace+"/"+name, "uid", uid, "why", why)
	m.metrics.syncs.WithLabelValues(resultPodGone).Inc()
	m.markGone(uid)
}

func (m *Manager) markGone(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[uid]; ok {
		e.gone = true
	}
}
