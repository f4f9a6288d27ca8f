package agent

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// statusStore holds each pod's latest API status: the agent's stand-in for
// the kubelet's status manager, with no API server behind it.
type statusStore struct {
	mu sync.RWMutex
	// byUID is written by the syncer and by admission, and read by /pods
	// and admission; entries are dropped by housekeeping once a pod is
	// neither desired nor known to the engine.
	byUID map[types.UID]v1.PodStatus
}

func newStatusStore() *statusStore { return &statusStore{byUID: map[types.UID]v1.PodStatus{}} }

// SetPodStatus records pod's status.
func (s *statusStore) SetPodStatus(pod *v1.Pod, status v1.PodStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byUID[pod.UID] = *status.DeepCopy()
}

// get returns the pod's status and whether there is one.
func (s *statusStore) get(uid types.UID) (v1.PodStatus, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.byUID[uid]
	return st, ok
}

// phase is the pod's recorded phase, Pending when none was recorded.
func (s *statusStore) phase(pod *v1.Pod) v1.PodPhase {
	if st, ok := s.get(pod.UID); ok && st.Phase != "" {
		return st.Phase
	}
	return v1.PodPending
}

// retain drops the statuses of pods keep rejects.
func (s *statusStore) retain(keep func(types.UID) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid := range s.byUID {
		if !keep(uid) {
			delete(s.byUID, uid)
		}
	}
}
