package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/cri"
)

// countingRuntime counts ContainerStatus calls.
type countingRuntime struct {
	*rotationRuntime
	statuses int
}

func (r *countingRuntime) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	r.statuses++
	return r.rotationRuntime.ContainerStatus(ctx, id, verbose)
}

// An exited container's log beyond MaxSize keeps its last MaxSize bytes
// from the first whole line in them, its mode, and reads as those lines;
// it is trimmed once (an exited container writes no more); a planted
// symbolic link is not followed.
func TestLogRotatorTrimsExited(t *testing.T) {
	var log strings.Builder
	for i := range 10 {
		log.WriteString(rec(i, "stdout", "F", "line "+string(rune('a'+i))))
	}
	line := int64(len(rec(0, "stdout", "F", "line a")))
	for _, tc := range []struct {
		name    string
		maxSize int64
		link    bool
		want    string // what the log reads after
		wantErr string
	}{
		{name: "within the size", maxSize: 10 * line, want: "line a\nline b\nline c\nline d\nline e\nline f\nline g\nline h\nline i\nline j\n"},
		{name: "whole lines", maxSize: 3 * line, want: "line h\nline i\nline j\n"},
		{name: "a cut line is dropped", maxSize: 3*line - 1, want: "line i\nline j\n"},
		{name: "one line longer than the size", maxSize: line - 1, want: ""},
		{name: "a symbolic link", maxSize: 3 * line, link: true, wantErr: "symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "ns_pod_uid", "app")
			if err := os.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "0.log")
			target := path
			if tc.link {
				target = filepath.Join(t.TempDir(), "elsewhere")
				if err := os.Symlink(target, path); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(target, []byte(log.String()), 0o640); err != nil {
				t.Fatal(err)
			}
			rt := &countingRuntime{rotationRuntime: &rotationRuntime{
				containers: []*runtimeapi.Container{{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_EXITED, Labels: map[string]string{cri.PodUIDLabel: "uid"}}},
				logPaths:   map[string]string{"c1": path},
			}}
			r := NewRotator(rt, rt, root, clocktesting.NewFakeClock(time.Now()), tc.maxSize, 3)
			err := r.Rotate(t.Context())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Rotate: %v, want %q", err, tc.wantErr)
				}
				if data, _ := os.ReadFile(target); string(data) != log.String() {
					t.Errorf("the link's target changed: %q", data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(path)
			if err != nil || fi.Mode() != 0o640 || fi.Size() > tc.maxSize {
				t.Fatalf("after: %v %v; want mode 0640 and at most %d bytes", fi, err, tc.maxSize)
			}
			var out strings.Builder
			if err := Write(t.Context(), path, Options{TailLines: -1}, &out, exited); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("reads %q, want %q", out.String(), tc.want)
			}
			if names := names(t, dir); len(names) != 1 {
				t.Errorf("files %v; want the log alone", names)
			}
			if err := r.Rotate(t.Context()); err != nil || rt.statuses != 1 {
				t.Errorf("a second round: %v, %d status calls; want none more", err, rt.statuses)
			}
		})
	}
}
