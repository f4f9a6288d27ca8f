package devicemanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// CheckpointName is the file in the manager's directory that keeps the
// allocations across agent restarts (the kubelet's
// kubelet_internal_checkpoint; podlife's has its own format and name).
const CheckpointName = "podlife_device_checkpoint"

// checkpoint is the file's content: what a restarted agent must not hand
// out again, and the resources the Node still names.
type checkpoint struct {
	Allocations []checkpointEntry `json:"allocations"`
	Resources   []string          `json:"resources"`
}

type checkpointEntry struct {
	PodUID    types.UID `json:"podUID"`
	Container string    `json:"container"`
	Resource  string    `json:"resource"`
	DeviceIDs []string  `json:"deviceIDs"`
	// Response is the plugin's Allocate answer (protobuf), if it was asked.
	Response []byte `json:"response,omitempty"`
}

// encode is s's checkpoint.
func (s *state) encode() ([]byte, error) {
	var cp checkpoint
	keys := slices.SortedFunc(maps.Keys(s.allocated), func(a, b containerKey) int {
		if a.pod != b.pod {
			return compare(string(a.pod), string(b.pod))
		}
		return compare(a.container, b.container)
	})
	for _, k := range keys {
		for _, name := range slices.Sorted(maps.Keys(s.allocated[k])) {
			e := checkpointEntry{PodUID: k.pod, Container: k.container, Resource: name, DeviceIDs: s.allocated[k][name]}
			if resp := s.responses[k][name]; resp != nil {
				b, err := proto.Marshal(resp)
				if err != nil {
					return nil, err
				}
				e.Response = b
			}
			cp.Allocations = append(cp.Allocations, e)
		}
	}
	cp.Resources = slices.Sorted(maps.Keys(s.resources))
	return json.Marshal(cp)
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// restore fills an empty state from a checkpoint read at now: the
// allocations (restored, so that only a sweep frees them), and the
// resources as if their plugins had just stopped (no device until they
// register again; dropped after the grace period).
func (s *state) restore(data []byte, now time.Time) error {
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return err
	}
	for _, e := range cp.Allocations {
		k := containerKey{e.PodUID, e.Container}
		if s.allocated[k] == nil {
			s.allocated[k] = map[string][]string{}
		}
		s.allocated[k][e.Resource] = e.DeviceIDs
		s.restored[e.PodUID] = true
		if len(e.Response) > 0 {
			resp := &pluginapi.ContainerAllocateResponse{}
			if err := proto.Unmarshal(e.Response, resp); err != nil {
				return fmt.Errorf("the Allocate answer of container %s of pod %s: %w", e.Container, e.PodUID, err)
			}
			if s.responses[k] == nil {
				s.responses[k] = map[string]*pluginapi.ContainerAllocateResponse{}
			}
			s.responses[k][e.Resource] = resp
		}
	}
	for _, name := range cp.Resources {
		s.resources[name] = &resourceState{devices: map[string]*pluginapi.Device{}, stoppedAt: now}
	}
	return nil
}

// writeCheckpointLocked writes the state's checkpoint (write and rename:
// a crash leaves the old one or the new one).
func (m *Manager) writeCheckpointLocked() {
	data, err := m.state.encode()
	if err == nil {
		path := filepath.Join(m.cfg.Dir, CheckpointName)
		tmp := path + ".tmp"
		if err = os.WriteFile(tmp, data, 0o600); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		m.log.Error("Cannot write the device checkpoint: an agent restarted now forgets the devices of running pods", "err", err)
	}
}

// readCheckpoint restores the state from the checkpoint, if there is one.
func (m *Manager) readCheckpoint() error {
	data, err := os.ReadFile(filepath.Join(m.cfg.Dir, CheckpointName))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = m.state.restore(data, m.cfg.Clock.Now())
	}
	if err != nil {
		return fmt.Errorf("device plugins: the checkpoint %s: %w", CheckpointName, err)
	}
	return nil
}
