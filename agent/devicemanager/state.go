package devicemanager

import (
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// endpointStopGracePeriod is how long a resource whose plugin went away
// keeps its capacity before it is dropped (the kubelet's: the upstream
// e2e suite waits for it).
const endpointStopGracePeriod = 5 * time.Minute

// resourceState is what the manager knows of one extended resource.
type resourceState struct {
	// devices are the plugin's last ListAndWatch answer, by ID; nil until
	// its first.
	devices map[string]*pluginapi.Device
	// sockets are the connected plugins, in registration order: the last
	// serves the resource.
	sockets []string
	// stoppedAt is when its last plugin went away; zero while one is
	// connected. All of its devices are unhealthy from then on.
	stoppedAt time.Time
}

// healthy reports whether device id is reported and healthy, with its
// plugin still there.
func (r *resourceState) healthy(id string) bool {
	d, ok := r.devices[id]
	return ok && r.stoppedAt.IsZero() && d.Health == pluginapi.Healthy
}

// healthyIDs are the resource's healthy devices, sorted.
func (r *resourceState) healthyIDs() []string {
	var ids []string
	for id := range r.devices {
		if r.healthy(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// containerKey names one container of one pod.
type containerKey struct {
	pod       types.UID
	container string
}

// state is the manager's pure core: resources, and the devices allocated
// to containers. Its methods take the time they need as an argument.
type state struct {
	resources map[string]*resourceState
	// removed are resources dropped after the grace period: their capacity
	// is written as 0, as the kubelet does, until a plugin registers them
	// again (a resource that never had a device plugin is absent).
	removed map[string]bool
	// allocated: container -> resource -> device IDs (sorted).
	allocated map[containerKey]map[string][]string
	// responses are the plugins' Allocate answers, by container and
	// resource; a container is allocated once.
	responses map[containerKey]map[string]*pluginapi.ContainerAllocateResponse
	// restored are the pods whose devices came from the checkpoint: only
	// a sweep frees them (admission runs before every pod of the sources
	// is known again).
	restored map[types.UID]bool
}

func newState() *state {
	return &state{
		resources: map[string]*resourceState{},
		removed:   map[string]bool{},
		allocated: map[containerKey]map[string][]string{},
		responses: map[containerKey]map[string]*pluginapi.ContainerAllocateResponse{},
		restored:  map[types.UID]bool{},
	}
}

// connect records a plugin of resource name at socket; false if that
// socket already serves it.
func (s *state) connect(name, socket string) bool {
	r := s.resources[name]
	if r == nil {
		r = &resourceState{}
		s.resources[name] = r
	}
	if slices.Contains(r.sockets, socket) {
		return false
	}
	if !r.stoppedAt.IsZero() {
		// The devices stay unhealthy until the new plugin lists them.
		for id, d := range r.devices {
			r.devices[id] = &pluginapi.Device{ID: d.ID, Health: pluginapi.Unhealthy, Topology: d.Topology}
		}
	}
	r.sockets = append(r.sockets, socket)
	r.stoppedAt = time.Time{}
	delete(s.removed, name)
	return true
}

// disconnect records that the plugin at socket stopped serving name (it
// went away, or its ListAndWatch ended). When it was the last, every
// device of the resource becomes unhealthy as of now.
func (s *state) disconnect(name, socket string, now time.Time) {
	r := s.resources[name]
	if r == nil || !slices.Contains(r.sockets, socket) {
		return
	}
	r.sockets = slices.DeleteFunc(r.sockets, func(s string) bool { return s == socket })
	if len(r.sockets) == 0 {
		r.stoppedAt = now
		if r.devices == nil {
			r.devices = map[string]*pluginapi.Device{}
		}
	}
}

// current is the socket that serves name, "" if none does.
func (s *state) current(name string) string {
	if r := s.resources[name]; r != nil && len(r.sockets) > 0 {
		return r.sockets[len(r.sockets)-1]
	}
	return ""
}

// listed records a ListAndWatch answer of the plugin at socket: the
// resource's devices from now on. It returns the pods with an allocated
// device whose health changed.
func (s *state) listed(name, socket string, devices []*pluginapi.Device) []types.UID {
	r := s.resources[name]
	if r == nil || s.current(name) != socket {
		return nil
	}
	old := r.devices
	r.devices = make(map[string]*pluginapi.Device, len(devices))
	changed := map[string]bool{}
	for _, d := range devices {
		r.devices[d.ID] = d
		if o, ok := old[d.ID]; !ok || o.Health != d.Health {
			changed[d.ID] = true
		}
	}
	var pods []types.UID
	for k, byResource := range s.allocated {
		if slices.ContainsFunc(byResource[name], func(id string) bool { return changed[id] }) && !slices.Contains(pods, k.pod) {
			pods = append(pods, k.pod)
		}
	}
	slices.Sort(pods)
	return pods
}

// expire drops the resources whose plugin went away more than the grace
// period before now, and reports whether it dropped any.
func (s *state) expire(now time.Time) bool {
	dropped := false
	for name, r := range s.resources {
		if !r.stoppedAt.IsZero() && now.Sub(r.stoppedAt) > endpointStopGracePeriod {
			delete(s.resources, name)
			s.removed[name] = true
			dropped = true
		}
	}
	return dropped
}

// capacity is what the Node says of the device plugins' resources at now:
// capacity counts every device, allocatable the healthy ones. A resource
// registered but not yet listed is not there yet; a removed one is 0.
func (s *state) capacity(now time.Time) (capacity, allocatable v1.ResourceList) {
	capacity, allocatable = v1.ResourceList{}, v1.ResourceList{}
	for name, r := range s.resources {
		if r.devices == nil {
			continue
		}
		capacity[v1.ResourceName(name)] = *resource.NewQuantity(int64(len(r.devices)), resource.DecimalSI)
		allocatable[v1.ResourceName(name)] = *resource.NewQuantity(int64(len(r.healthyIDs())), resource.DecimalSI)
	}
	for name := range s.removed {
		capacity[v1.ResourceName(name)] = *resource.NewQuantity(0, resource.DecimalSI)
		allocatable[v1.ResourceName(name)] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	return capacity, allocatable
}

// isDeviceResource reports whether name is a device plugin's resource:
// listed by its plugin (or left without devices by it), or still
// allocated to a container. A resource registered but not listed yet is
// not one yet, as in the kubelet: a pod admitted meanwhile gets its
// devices when its container is created.
func (s *state) isDeviceResource(name string) bool {
	if r, ok := s.resources[name]; ok && r.devices != nil {
		return true
	}
	for _, byResource := range s.allocated {
		if _, ok := byResource[name]; ok {
			return true
		}
	}
	return false
}

// inUse are the devices of resource name allocated to any container.
func (s *state) inUse(name string) map[string]bool {
	used := map[string]bool{}
	for _, byResource := range s.allocated {
		for _, id := range byResource[name] {
			used[id] = true
		}
	}
	return used
}

// hasPod reports whether pod uid holds devices.
func (s *state) hasPod(uid types.UID) bool {
	for k := range s.allocated {
		if k.pod == uid {
			return true
		}
	}
	return false
}

// free releases the devices of every pod but those in keep (and, unless
// sweep, those restored from the checkpoint), and reports whether it
// released any. A sweep ends the restored pods' protection.
func (s *state) free(keep map[types.UID]bool, sweep bool) bool {
	freed := false
	for _, k := range slices.Collect(maps.Keys(s.allocated)) {
		if !keep[k.pod] && (sweep || !s.restored[k.pod]) {
			delete(s.allocated, k)
			delete(s.responses, k)
			freed = true
		}
	}
	if sweep {
		clear(s.restored)
	}
	return freed
}
