package containergc

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

const (
	stRunning = runtimeapi.ContainerState_CONTAINER_RUNNING
	stExited  = runtimeapi.ContainerState_CONTAINER_EXITED
	stCreated = runtimeapi.ContainerState_CONTAINER_CREATED
	stUnknown = runtimeapi.ContainerState_CONTAINER_UNKNOWN
)

// epoch is the tests' time zero.
var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// instance is a listed container "<uid>-<name><attempt>" stCreated at
// second sec of the epoch.
func instance(uid, name string, attempt uint32, state runtimeapi.ContainerState, sec int) *runtimeapi.Container {
	return &runtimeapi.Container{
		Id:        fmt.Sprintf("%s-%s%d", uid, name, attempt),
		Metadata:  &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Labels:    map[string]string{cri.PodUIDLabel: uid, cri.ContainerNameLabel: name},
		State:     state,
		CreatedAt: epoch.Add(time.Duration(sec) * time.Second).UnixNano(),
	}
}

func TestSelectDead(t *testing.T) {
	def := DefaultPolicy()
	unlimited := Policy{MaxPerPodContainer: -1, MaxContainers: -1}
	for _, tc := range []struct {
		name   string
		policy Policy
		now    int // seconds after the epoch
		skip   string
		listed []*runtimeapi.Container
		want   []string // oldest first
	}{{
		name: "crash loop, running: the newest dead instance stays", policy: def, now: 100,
		listed: []*runtimeapi.Container{instance("p", "a", 0, stExited, 1), instance("p", "a", 1, stExited, 2), instance("p", "a", 2, stRunning, 3)},
		want:   []string{"p-a0"},
	}, {
		name: "crash loop in back-off: the newest (dead) stays", policy: def, now: 100,
		listed: []*runtimeapi.Container{instance("p", "a", 2, stExited, 3), instance("p", "a", 0, stExited, 1), instance("p", "a", 1, stExited, 2)},
		want:   []string{"p-a0", "p-a1"},
	}, {
		name: "a restart in progress: the instance before the created one stays", policy: def, now: 100,
		listed: []*runtimeapi.Container{instance("p", "a", 0, stExited, 1), instance("p", "a", 1, stExited, 2), instance("p", "a", 2, stCreated, 3)},
		want:   []string{"p-a0"},
	}, {
		name: "fifty restarts keep one dead instance", policy: def, now: 1000,
		listed: crashLoop("p", "a", 51),
		want:   ids("p", "a", 0, 48),
	}, {
		name: "running never removed, even when old and not the newest", policy: Policy{MaxPerPodContainer: 0, MaxContainers: 0}, now: 100,
		listed: []*runtimeapi.Container{instance("p", "a", 0, stRunning, 1), instance("p", "a", 1, stExited, 2), instance("p", "a", 2, stExited, 3)},
		want:   []string{"p-a1"},
	}, {
		name: "the newest instance is never removed, even at zero", policy: Policy{MaxPerPodContainer: 0, MaxContainers: 0}, now: 100,
		listed: []*runtimeapi.Container{instance("p", "a", 0, stExited, 1), instance("q", "b", 0, stCreated, 1)},
	}, {
		name: "unknown state is never removed; an old created one is", policy: Policy{MaxPerPodContainer: 0, MaxContainers: -1}, now: 100,
		listed: []*runtimeapi.Container{instance("p", "a", 0, stUnknown, 1), instance("p", "a", 1, stCreated, 2), instance("p", "a", 2, stRunning, 3)},
		want:   []string{"p-a1"},
	}, {
		name: "younger than MinAge: kept, and not counted", policy: Policy{MinAge: 5 * time.Second, MaxPerPodContainer: 1, MaxContainers: -1}, now: 10,
		listed: []*runtimeapi.Container{
			instance("p", "a", 0, stExited, 1), instance("p", "a", 1, stExited, 2),
			instance("p", "a", 2, stExited, 6), instance("p", "a", 3, stExited, 7), instance("p", "a", 4, stRunning, 8),
		},
		want: []string{"p-a0"},
	}, {
		name: "MinAge is from creation, inclusive", policy: Policy{MinAge: 5 * time.Second, MaxPerPodContainer: 0, MaxContainers: -1}, now: 10,
		listed: []*runtimeapi.Container{instance("p", "a", 0, stExited, 5), instance("p", "a", 1, stExited, 6), instance("p", "a", 2, stRunning, 7)},
		want:   []string{"p-a0"},
	}, {
		name: "per pod and container name", policy: Policy{MaxPerPodContainer: 2, MaxContainers: -1}, now: 100,
		listed: slices.Concat(crashLoop("p", "a", 4), crashLoop("p", "b", 3), crashLoop("q", "a", 5)),
		want:   []string{"p-a0", "q-a0", "q-a1"},
	}, {
		name: "no limits: nothing", policy: unlimited, now: 100,
		listed: crashLoop("p", "a", 10),
	}, {
		name: "node limit: an equal share per unit first", policy: Policy{MaxPerPodContainer: -1, MaxContainers: 4}, now: 100,
		listed: []*runtimeapi.Container{
			instance("p", "a", 0, stExited, 1), instance("p", "a", 1, stExited, 4), instance("p", "a", 2, stExited, 7), instance("p", "a", 3, stRunning, 10),
			instance("q", "b", 0, stExited, 2), instance("q", "b", 1, stExited, 5), instance("q", "b", 2, stExited, 8), instance("q", "b", 3, stRunning, 11),
			instance("r", "c", 0, stExited, 3), instance("r", "c", 1, stRunning, 12),
		},
		want: []string{"p-a0", "q-b0", "p-a1", "q-b1"},
	}, {
		name: "node limit: then the oldest on the node", policy: Policy{MaxPerPodContainer: -1, MaxContainers: 1}, now: 100,
		listed: []*runtimeapi.Container{
			instance("p", "a", 0, stExited, 1), instance("p", "a", 1, stRunning, 4),
			instance("q", "b", 0, stExited, 2), instance("q", "b", 1, stRunning, 5),
		},
		want: []string{"p-a0"},
	}, {
		name: "node limit: the newest instances stay beyond it", policy: Policy{MaxPerPodContainer: -1, MaxContainers: 1}, now: 100,
		listed: []*runtimeapi.Container{
			instance("p", "a", 0, stExited, 1), instance("p", "a", 1, stExited, 4),
			instance("q", "b", 0, stExited, 2), instance("q", "b", 1, stExited, 5),
		},
		want: []string{"p-a0", "q-b0"},
	}, {
		name: "a pod being removed and containers not ours are left alone", policy: def, now: 100, skip: "p",
		listed: slices.Concat(crashLoop("p", "a", 4), []*runtimeapi.Container{
			{Id: "foreign", Metadata: &runtimeapi.ContainerMetadata{Name: "a"}, State: stExited},
			{Id: "foreign2", Metadata: &runtimeapi.ContainerMetadata{Name: "a"}, State: stExited},
		}),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			now := epoch.Add(time.Duration(tc.now) * time.Second)
			got := selectDead(tc.listed, tc.policy, now, func(uid types.UID) bool { return string(uid) == tc.skip })
			var gotIDs []string
			for _, c := range got {
				gotIDs = append(gotIDs, c.Id)
			}
			if !slices.Equal(gotIDs, tc.want) {
				t.Errorf("removed %v, want %v", gotIDs, tc.want)
			}
		})
	}
}

// crashLoop is n instances of a container, one a second, the last
// stRunning.
func crashLoop(uid, name string, n int) []*runtimeapi.Container {
	var out []*runtimeapi.Container
	for i := range n {
		state := stExited
		if i == n-1 {
			state = stRunning
		}
		out = append(out, instance(uid, name, uint32(i), state, i+1))
	}
	return out
}

// ids are the IDs of attempts from to to of a container, oldest first.
func ids(uid, name string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s-%s%d", uid, name, i))
	}
	return out
}

// BenchmarkSelectDead is the policy's cost on a node of 1,000 pods of 3
// containers with 3 instances each (the running one and 2 dead).
func BenchmarkSelectDead(b *testing.B) {
	var listed []*runtimeapi.Container
	for p := range 1000 {
		for _, name := range []string{"a", "b", "c"} {
			listed = append(listed, crashLoop(fmt.Sprintf("p%d", p), name, 3)...)
		}
	}
	now := epoch.Add(time.Hour)
	none := func(types.UID) bool { return false }
	b.ReportAllocs()
	for b.Loop() {
		if got := selectDead(listed, DefaultPolicy(), now, none); len(got) != 3000 {
			b.Fatalf("selected %d, want 3000", len(got))
		}
	}
}
