package logs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/cri"
)

// rotationRuntime is the part of a runtime the rotator uses: the running
// containers with their log paths, and ReopenContainerLog, which creates
// the log anew as containerd does (or fails with failReopen).
type rotationRuntime struct {
	cri.Runtime
	containers []*runtimeapi.Container
	logPaths   map[string]string
	reopened   []string
	failReopen error
}

func (r *rotationRuntime) ListContainers(_ context.Context, f *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	var out []*runtimeapi.Container
	for _, c := range r.containers {
		if f.GetState() == nil || c.State == f.GetState().GetState() {
			out = append(out, c)
		}
	}
	return out, nil
}

func (r *rotationRuntime) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id, LogPath: r.logPaths[id]}}, nil
}

func (r *rotationRuntime) ReopenContainerLog(_ context.Context, id string) error {
	if r.failReopen != nil {
		return r.failReopen
	}
	r.reopened = append(r.reopened, id)
	return os.WriteFile(r.logPaths[id], nil, 0o600)
}

// names lists dir's files.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// The rotator renames a running container's log of MaxSize bytes or more
// to <log>.<time>, has the runtime reopen it and keeps MaxFiles files in
// all, the oldest rotated ones deleted; smaller logs, containers not of
// the syncer's pods and logs outside its root are left alone, an exited
// container's is rotated without a reopen (TestLogRotatorRotatesExited); a
// failed reopen renames the log back.
func TestLogRotator(t *testing.T) {
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name       string
		size       int      // of the log
		rotated    []string // times of rotated files there already
		state      runtimeapi.ContainerState
		notOurs    bool // no pod UID label
		outside    bool // the log is not under the root
		failReopen error
		want       []string // the files after, sorted
		wantErr    string
	}{
		{name: "below the size", size: 99, want: []string{"0.log"}},
		{name: "at the size", size: 100, want: []string{"0.log", "0.log.20300102-030405"}},
		{name: "the oldest beyond max files deleted", size: 150,
			rotated: []string{"20300101-000001", "20300101-000002", "20300101-000003"},
			want:    []string{"0.log", "0.log.20300101-000002", "0.log.20300101-000003", "0.log.20300102-030405"}},
		{name: "an exited container's, not reopened", size: 150, state: runtimeapi.ContainerState_CONTAINER_EXITED, want: []string{"0.log", "0.log.20300102-030405"}},
		{name: "not a pod of the agent", size: 150, notOurs: true, want: []string{"0.log"}},
		{name: "outside the root", size: 150, outside: true, want: []string{"0.log"}},
		{name: "reopen fails", size: 150, failReopen: errors.New("no reopen"), want: []string{"0.log"}, wantErr: "no reopen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "ns_pod_uid", "app")
			if tt.outside {
				dir = t.TempDir()
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "0.log")
			if err := os.WriteFile(path, []byte(strings.Repeat("x", tt.size)), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, r := range tt.rotated {
				if err := os.WriteFile(path+"."+r, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			labels := map[string]string{cri.PodUIDLabel: "uid", cri.PodNamespaceLabel: "ns", cri.PodNameLabel: "pod"}
			if tt.notOurs {
				labels = nil
			}
			state := tt.state
			if state == 0 {
				state = runtimeapi.ContainerState_CONTAINER_RUNNING
			}
			rt := &rotationRuntime{
				containers: []*runtimeapi.Container{{Id: "c1", State: state, Labels: labels, Metadata: &runtimeapi.ContainerMetadata{Name: "app"}}},
				logPaths:   map[string]string{"c1": path},
				failReopen: tt.failReopen,
			}
			r := NewRotator(rt, rt, root, clocktesting.NewFakeClock(start), 100, 4)
			err := r.Rotate(t.Context())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Rotate: %v, want error %q", err, tt.wantErr)
			}
			if got := names(t, dir); !slices.Equal(got, tt.want) {
				t.Errorf("files after Rotate: %v, want %v", got, tt.want)
			}
			wantReopened := []string(nil)
			if len(tt.want) > 1 && state == runtimeapi.ContainerState_CONTAINER_RUNNING {
				wantReopened = []string{"c1"}
			}
			if !slices.Equal(rt.reopened, wantReopened) {
				t.Errorf("reopened %v, want %v", rt.reopened, wantReopened)
			}
		})
	}
}

// Rotations at successive times keep MaxFiles files, the newest ones, and
// the reader reads them in order.
func TestLogRotatorKeepsNewest(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "ns_pod_uid", "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "0.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rt := &rotationRuntime{
		containers: []*runtimeapi.Container{{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING, Labels: map[string]string{cri.PodUIDLabel: "uid"}}},
		logPaths:   map[string]string{"c1": path},
	}
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC))
	r := NewRotator(rt, rt, root, clk, 1, 3)
	for i := range 6 {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(rec(i, "stdout", "F", "line "+string(rune('a'+i))))
		f.Close()
		if err := r.Rotate(t.Context()); err != nil {
			t.Fatalf("Rotate %d: %v", i, err)
		}
		clk.Step(10 * time.Second)
	}
	if got := names(t, dir); len(got) != 3 {
		t.Errorf("files after 6 rotations: %v, want the log and 2 rotated", got)
	}
	var out strings.Builder
	if err := Write(t.Context(), path, Options{TailLines: -1}, &out, exited); err != nil {
		t.Fatal(err)
	}
	if want := "line e\nline f\n"; out.String() != want {
		t.Errorf("the rotated log reads %q, want %q", out.String(), want)
	}
}
