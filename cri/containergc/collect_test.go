package containergc

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/logs"
)

// listedRuntime lists the containers as the test says, whatever the fake
// holds: as a list taken before a container started.
type listedRuntime struct {
	*fakecri.FakeRuntimeService
	listed []*runtimeapi.Container
}

func (r *listedRuntime) ListContainers(context.Context, *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	return r.listed, nil
}

// Collect removes a selected instance with its log, rotated logs, log
// link (logs.LinkPath) and message file; it keeps one whose status says it runs after all
// (started since the list), and one whose log it may not remove (outside
// the log root).
func TestCollectRemovesWithFiles(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	fake := fakecri.NewFakeRuntimeService()
	rt := &listedRuntime{FakeRuntimeService: fake}
	type inst struct {
		listed, actual runtimeapi.ContainerState
		log            string
	}
	insts := []inst{
		{stExited, stExited, filepath.Join(root, "ns_p_u", "a", "0.log")},
		{stExited, stRunning, filepath.Join(root, "ns_p_u", "a", "1.log")}, // started since the list
		{stExited, stExited, filepath.Join(outside, "2.log")},
		{stExited, stExited, filepath.Join(root, "ns_p_u", "a", "3.log")},
		{stRunning, stRunning, filepath.Join(root, "ns_p_u", "a", "4.log")},
	}
	files := map[int][]string{}
	var containers []*fakecri.FakeContainer
	for i, in := range insts {
		c := instance("u", "a", uint32(i), in.listed, i+1)
		c.PodSandboxId = "sb"
		c.Labels[cri.PodNameLabel], c.Labels[cri.PodNamespaceLabel] = "p", "ns"
		rt.listed = append(rt.listed, c)
		containers = append(containers, &fakecri.FakeContainer{SandboxID: "sb", ContainerStatus: runtimeapi.ContainerStatus{
			Id: c.Id, Metadata: c.Metadata, State: in.actual, CreatedAt: c.CreatedAt, Labels: c.Labels, LogPath: in.log,
		}})
		files[i] = []string{in.log, in.log + ".20300102-030405", filepath.Join(root, "u", "containers", "a", strconv.Itoa(i))}
		for _, f := range files[i] {
			if err := os.MkdirAll(filepath.Dir(f), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte("x"), 0o640); err != nil {
				t.Fatal(err)
			}
		}
		link := logs.LinkPath(root, "p", "ns", "a", c.Id)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(in.log, link); err != nil {
			t.Fatal(err)
		}
		files[i] = append(files[i], link)
	}
	fake.SetFakeContainers(containers)

	g := New(rt, root, root, clocktesting.NewFakeClock(epoch.Add(time.Minute)), slog.New(slog.DiscardHandler))
	g.Collect(t.Context(), DefaultPolicy(), func(types.UID) bool { return false })

	fake.Lock()
	left := slices.Sorted(maps.Keys(fake.Containers))
	fake.Unlock()
	if want := []string{"u-a1", "u-a2", "u-a3", "u-a4"}; !slices.Equal(left, want) {
		t.Errorf("containers left %v, want %v", left, want)
	}
	for i := range insts {
		for _, f := range files[i] {
			_, err := os.Lstat(f)
			if gone := errors.Is(err, os.ErrNotExist); gone != (i == 0) {
				t.Errorf("instance %d: %s gone %v (%v), want gone %v", i, f, gone, err, i == 0)
			}
		}
	}
}

// Dead sandboxes of a pod beyond its newest go once no held container is
// in them; a ready one, the newest and one in use stay; a pod being
// removed is left to that removal.
func TestCollectSandboxes(t *testing.T) {
	fake := fakecri.NewFakeRuntimeService()
	rt := &listedRuntime{FakeRuntimeService: fake}
	sb := func(id, uid string, state runtimeapi.PodSandboxState, sec int) *fakecri.FakePodSandbox {
		return &fakecri.FakePodSandbox{PodSandboxStatus: runtimeapi.PodSandboxStatus{
			Id: id, State: state, CreatedAt: epoch.Add(time.Duration(sec) * time.Second).UnixNano(),
			Metadata: &runtimeapi.PodSandboxMetadata{Uid: uid}, Labels: map[string]string{cri.PodUIDLabel: uid},
		}}
	}
	fake.SetFakeSandboxes([]*fakecri.FakePodSandbox{
		sb("p-old", "p", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 1),
		sb("p-used", "p", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 2),
		sb("p-ready", "p", runtimeapi.PodSandboxState_SANDBOX_READY, 3),
		sb("p-newest", "p", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 4),
		sb("q-old", "q", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 1),
		sb("q-new", "q", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 2),
		sb("r-only", "r", runtimeapi.PodSandboxState_SANDBOX_NOTREADY, 1),
	})
	used := instance("p", "a", 0, stRunning, 2)
	used.PodSandboxId = "p-used"
	rt.listed = []*runtimeapi.Container{used}
	g := New(rt, "", "", clocktesting.NewFakeClock(epoch.Add(time.Minute)), slog.New(slog.DiscardHandler))
	g.Collect(t.Context(), DefaultPolicy(), func(uid types.UID) bool { return uid == "q" })
	fake.Lock()
	left := slices.Sorted(maps.Keys(fake.Sandboxes))
	fake.Unlock()
	if want := []string{"p-newest", "p-ready", "p-used", "q-new", "q-old", "r-only"}; !slices.Equal(left, want) {
		t.Errorf("sandboxes left %v, want %v", left, want)
	}
}
