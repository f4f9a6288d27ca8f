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

// exitedLog is an exited container's log of ten lines under a log root,
// and the rotator of that root, whose files are at most maxLines lines.
type exitedLog struct {
	dir, path string
	rt        *countingRuntime
	r         *Rotator
	want      string // every line, in order
}

func newExitedLog(t *testing.T, maxLines int64, link bool) *exitedLog {
	t.Helper()
	var log, want strings.Builder
	for i := range 10 {
		log.WriteString(rec(i, "stdout", "F", "line "+string(rune('a'+i))))
		want.WriteString("line " + string(rune('a'+i)) + "\n")
	}
	root := t.TempDir()
	e := &exitedLog{dir: filepath.Join(root, "ns_pod_uid", "app"), want: want.String()}
	if err := os.MkdirAll(e.dir, 0o750); err != nil {
		t.Fatal(err)
	}
	e.path = filepath.Join(e.dir, "0.log")
	target := e.path
	if link {
		target = filepath.Join(t.TempDir(), "elsewhere")
		if err := os.Symlink(target, e.path); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(target, []byte(log.String()), 0o640); err != nil {
		t.Fatal(err)
	}
	e.rt = &countingRuntime{rotationRuntime: &rotationRuntime{
		containers: []*runtimeapi.Container{{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_EXITED, Labels: map[string]string{cri.PodUIDLabel: "uid"}}},
		logPaths:   map[string]string{"c1": e.path},
	}}
	line := int64(len(rec(0, "stdout", "F", "line a")))
	e.r = NewRotator(e.rt, e.rt, root, clocktesting.NewFakeClock(time.Now()), maxLines*line, 3)
	return e
}

// An exited container's log beyond MaxSize is rotated once, as a running
// one's, with an empty log of its mode in its place (no runtime reopens
// it); it still reads whole and in order; a planted symbolic link is
// neither followed nor rotated.
func TestLogRotatorRotatesExited(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxLines  int64
		link      bool
		wantFiles int
	}{
		{name: "within the size", maxLines: 11, wantFiles: 1},
		{name: "beyond the size", maxLines: 3, wantFiles: 2},
		{name: "a symbolic link", maxLines: 3, link: true, wantFiles: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newExitedLog(t, tc.maxLines, tc.link)
			if err := e.r.Rotate(t.Context()); err != nil {
				t.Fatal(err)
			}
			if names := names(t, e.dir); len(names) != tc.wantFiles {
				t.Errorf("files %v; want %d", names, tc.wantFiles)
			}
			fi, err := os.Lstat(e.path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.link {
				if fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the planted link was replaced: %v", fi.Mode())
				}
				return
			}
			if fi.Mode() != 0o640 {
				t.Errorf("the log's mode %v, want 0640", fi.Mode())
			}
			var out strings.Builder
			if err := Write(t.Context(), e.path, Options{TailLines: -1}, &out, exited); err != nil {
				t.Fatal(err)
			}
			if out.String() != e.want {
				t.Errorf("reads %q, want %q", out.String(), e.want)
			}
			if err := e.r.Rotate(t.Context()); err != nil || e.rt.statuses != 1 {
				t.Errorf("a second round: %v, %d status calls; want none more", err, e.rt.statuses)
			}
		})
	}
}

// A reader following an exited container's log while it is rotated reads
// every line once: the rotation keeps the bytes it already read where it
// reads on.
func TestFollowAcrossExitedRotation(t *testing.T) {
	e := newExitedLog(t, 3, false)
	rotated := false
	running := func(ctx context.Context) (bool, error) {
		if !rotated {
			rotated = true
			if err := e.r.Rotate(ctx); err != nil {
				return false, err
			}
			if names := names(t, e.dir); len(names) != 2 {
				t.Errorf("files %v after the rotation; want the log and a rotated one", names)
			}
		}
		return false, nil
	}
	var out strings.Builder
	if err := Write(t.Context(), e.path, Options{TailLines: -1, Follow: true}, &out, running); err != nil {
		t.Fatal(err)
	}
	if out.String() != e.want {
		t.Errorf("followed %q, want %q", out.String(), e.want)
	}
}
