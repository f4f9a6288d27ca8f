package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/events"
	"github.com/podlife/podlife/cri/volume"
)

// volumes checks the pod's volumes and sets them up; the embedded runtime
// (no PodsRoot) mounts none, as it runs no process, but still reads what
// its projected volumes show from the API server (volume.SetUp).
func (s *Syncer) volumes(ctx context.Context, pod *v1.Pod) (map[string]volume.Volume, error) {
	if err := volume.Check(pod); err != nil {
		return nil, err
	}
	if s.opts.PodsRoot != "" && volume.NeedsSharedRoot(pod) {
		if err := s.ensureShared(); err != nil {
			return nil, err
		}
	}
	return volume.SetUp(ctx, s.opts.PodsRoot, pod, s.allocatable(), s.opts.VolumeAPI)
}

// ensureShared puts PodsRoot on a shared mount (volume.MakeRShared, the
// kubelet's for its root directory), the first time a pod mounts a volume
// with HostToContainer or Bidirectional propagation; a failure is retried
// with the next such pod's sync.
func (s *Syncer) ensureShared() error {
	s.sharedMu.Lock()
	defer s.sharedMu.Unlock()
	if s.sharedRoot {
		return nil
	}
	if err := os.MkdirAll(s.opts.PodsRoot, 0o750); err != nil {
		return err
	}
	if err := volume.MakeRShared(s.opts.PodsRoot); err != nil {
		return fmt.Errorf("mount propagation: %w", err)
	}
	s.sharedRoot = true
	return nil
}

// failedMount reports volumes that could not be set up, as the kubelet
// does: a FailedMount event (naming the volume when one failed, as the
// kubelet's operation executor; else as its volume manager), and the
// pod's status as it is, its containers not yet created waiting as
// ContainerCreating. The sync fails and is retried; nothing of the pod is
// started meanwhile.
func (s *Syncer) failedMount(pod *v1.Pod, p *cri.PodRuntime, sbID string, err error) {
	msg := events.UnableToMount(err)
	if se := (*volume.SetUpError)(nil); errors.As(err, &se) {
		msg = events.FailedMount(se.Volume, se.Err)
	}
	s.opts.Events.Eventf(pod, v1.EventTypeWarning, events.FailedMountVolume, "%s", msg)
	s.setStatus(pod, p, sbID, false, nil)
}

// allocatable is the node's allocatable CPU and memory: Options.Allocatable,
// or else the machine's.
func (s *Syncer) allocatable() v1.ResourceList {
	if s.opts.Allocatable != nil {
		return s.opts.Allocatable
	}
	list := v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)}
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) == nil {
		list[v1.ResourceMemory] = *resource.NewQuantity(int64(info.Totalram)*int64(info.Unit), resource.BinarySI)
	}
	return list
}
