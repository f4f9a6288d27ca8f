package agent

import (
	"path/filepath"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/admission"
	"github.com/podlife/podlife/agent/devicemanager"
)

// newDeviceManager prepares the device manager on <root
// dir>/device-plugins; it listens from startDevices. A change of the
// device plugins' resources asks the Node for a status update.
func (a *Agent) newDeviceManager() (*devicemanager.Manager, error) {
	return devicemanager.New(devicemanager.Config{
		Dir: filepath.Join(a.cfg.RootDir, devicemanager.DirName), Clock: a.clock, Logger: a.log,
		OnChange: func() {
			if a.cluster != nil {
				a.cluster.node.ResourcesChanged()
			}
		},
	})
}

// deviceAdmitter allocates the devices of a pod's extended resources
// served by device plugins, or refuses the pod with the kubelet's
// UnexpectedAdmissionError (its resource allocator's admit handler).
func (a *Agent) deviceAdmitter() admission.Handler {
	return admission.HandlerFunc(func(pod *v1.Pod, active []*v1.Pod) admission.Result {
		if err := a.devices.Admit(pod, active); err != nil {
			return admission.Result{Reason: devicemanager.ReasonUnexpectedAdmissionError, Message: err.Error()}
		}
		return admission.Result{Admit: true}
	})
}
