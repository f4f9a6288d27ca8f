package agent

import (
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/agent/devicemanager"
	"github.com/podlife/podlife/worker"
)

// newDeviceManager prepares the device manager on <root
// dir>/device-plugins (New starts it last). A change of the device
// plugins' resources asks the Node for a status update; a change of a
// device's health resyncs the pods holding it.
func (a *Agent) newDeviceManager() (*devicemanager.Manager, error) {
	return devicemanager.New(devicemanager.Config{
		Dir: filepath.Join(a.cfg.RootDir, devicemanager.DirName), Clock: a.clock, Logger: a.log,
		OnChange: func() {
			if a.cluster != nil {
				a.cluster.node.ResourcesChanged()
			}
		},
		OnHealth: a.resyncPods,
	})
}

// resyncPods syncs the admitted pods among uids: their statuses say
// their devices' health anew.
func (a *Agent) resyncPods(uids []types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, uid := range uids {
		if e, ok := a.pods[uid]; ok && e.rejection == nil {
			a.updatePod(worker.SyncPodSync, e.pod)
		}
	}
}

// deviceStatuses is the syncer's StatusWriter: the status manager's, with
// the health of each container's devices set in its status.
type deviceStatuses struct{ a *Agent }

func (d deviceStatuses) SetPodStatus(pod *v1.Pod, status v1.PodStatus) {
	d.a.devices.SetAllocatedResourcesStatus(pod, &status)
	d.a.statuses.SetPodStatus(pod, status)
}

// deviceAdmitter allocates the devices of a pod's extended resources
// served by device plugins, or refuses the pod with the kubelet's
// UnexpectedAdmissionError (its resource allocator's admit handler). A
// pod a later handler refuses holds them until the next admission or
// housekeeping frees them, as in the kubelet.
func (a *Agent) deviceAdmitter() admission.Handler {
	return admission.HandlerFunc(func(pod *v1.Pod, active []*v1.Pod) admission.Result {
		if err := a.devices.Admit(pod, active); err != nil {
			return admission.Result{Reason: devicemanager.ReasonUnexpectedAdmissionError, Message: err.Error()}
		}
		return admission.Result{Admit: true}
	})
}
