package logs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/cri"
)

// Reopener is the CRI call that has the runtime reopen a container's
// log file after it was renamed. containerd's does; the embedded runtime,
// which writes no logs, has no need of it.
type Reopener interface {
	ReopenContainerLog(ctx context.Context, containerID string) error
}

// Rotator rotates the logs of the running containers by size, as the
// kubelet's container log manager does: a log of MaxSize bytes or more is
// renamed to <log>.<YYYYMMDD-hhmmss>, the runtime reopens it, and the
// oldest rotated files beyond MaxFiles-1 are deleted. Rotated files are
// not compressed (the kubelet gzips all but the newest). An exited
// container's log over MaxSize is rotated too, once: nobody reopens it,
// so an empty log takes its place (the kubelet rotates only running
// containers' logs and leaves the others to the garbage collector, and a
// container that wrote gigabytes between two rounds and exited would keep
// them until then). Rotate is not for concurrent use.
type Rotator struct {
	rt     cri.Runtime
	reopen Reopener
	root   string
	clock  clock.Clock
	// MaxSize is the size in bytes at which a log is rotated.
	MaxSize int64
	// MaxFiles is how many files of a container's log are kept, the
	// current one included (at least 2).
	MaxFiles int
	// settled are the exited containers whose logs are within MaxSize
	// (rotated, or not ours): an exited container writes no more.
	settled map[string]bool
}

// NewRotator rotates the logs under root (the syncer's LogRoot) of the
// containers of rt; the logs of other containers of the runtime are not
// its own.
func NewRotator(rt cri.Runtime, reopen Reopener, root string, clk clock.Clock, maxSize int64, maxFiles int) *Rotator {
	return &Rotator{rt: rt, reopen: reopen, root: root, clock: clk, MaxSize: maxSize, MaxFiles: maxFiles, settled: map[string]bool{}}
}

// Rotate rotates every container's log that reached MaxSize. It goes on past a
// container it cannot rotate and returns every such error.
func (r *Rotator) Rotate(ctx context.Context) error {
	listed, err := r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return fmt.Errorf("log rotation: list containers: %w", err)
	}
	var errs []error
	exited := map[string]bool{}
	for _, c := range listed {
		if _, ours := c.GetLabels()[cri.PodUIDLabel]; !ours {
			continue
		}
		switch c.State {
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			exited[c.Id] = true
			if r.settled[c.Id] {
				continue
			}
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
		default:
			continue
		}
		resp, err := r.rt.ContainerStatus(ctx, c.Id, false)
		if err != nil {
			errs = append(errs, fmt.Errorf("log rotation: status of container %.12s: %w", c.Id, err))
			continue
		}
		path := resp.GetStatus().GetLogPath()
		if rel, err := filepath.Rel(r.root, path); path == "" || err != nil || !filepath.IsLocal(rel) {
			if exited[c.Id] {
				r.settled[c.Id] = true // not ours to rotate, now or later
			}
			continue
		}
		reopen := func(os.FileMode) error { return r.reopen.ReopenContainerLog(ctx, c.Id) }
		if exited[c.Id] {
			reopen = func(mode os.FileMode) error { return createEmptyLog(path, mode) }
		}
		if err = r.rotateOne(c, path, reopen); err == nil && exited[c.Id] {
			r.settled[c.Id] = true
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for id := range r.settled {
		if !exited[id] {
			delete(r.settled, id) // removed
		}
	}
	return errors.Join(errs...)
}

// rotateOne rotates the log at path of container c if it reached MaxSize:
// it renames the log and has reopen (given the log's mode) put a new one
// in its place. The renamed file keeps every byte, in order: a reader
// following the log reads it to its end, then the new one, and loses or
// repeats nothing.
func (r *Rotator) rotateOne(c *runtimeapi.Container, path string, reopen func(os.FileMode) error) error {
	name := fmt.Sprintf("container %q of pod %s/%s (%.12s)", c.GetMetadata().GetName(),
		c.GetLabels()[cri.PodNamespaceLabel], c.GetLabels()[cri.PodNameLabel], c.Id)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // not written yet
	}
	if err != nil {
		return fmt.Errorf("log rotation of %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() < r.MaxSize {
		return nil
	}
	rotated, err := rotatedLogs(path)
	if err != nil {
		return fmt.Errorf("log rotation of %s: %w", name, err)
	}
	// Room for the file about to be rotated: MaxFiles-1 rotated ones after.
	for len(rotated) > r.MaxFiles-2 {
		if err := os.Remove(rotated[0]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("log rotation of %s: remove the oldest rotated log: %w", name, err)
		}
		rotated = rotated[1:]
	}
	to := path + "." + r.clock.Now().Format(rotatedLogTime)
	if _, err := os.Lstat(to); err == nil {
		return nil // rotated within this second already; the next round does it
	}
	if err := os.Rename(path, to); err != nil {
		return fmt.Errorf("log rotation of %s: %w", name, err)
	}
	if err := reopen(fi.Mode().Perm()); err != nil {
		// The runtime still writes to the renamed file: it is the log
		// again, as the kubelet does.
		if rerr := os.Rename(to, path); rerr != nil {
			return fmt.Errorf("log rotation of %s: reopen the log: %w; and renaming it back failed: %v", name, err, rerr)
		}
		return fmt.Errorf("log rotation of %s: reopen the log: %w", name, err)
	}
	return nil
}

// createEmptyLog puts an empty log at path, an exited container's, whose
// log was renamed: readers of the container's log find the current file
// where they look for it. It neither follows nor replaces anything there.
func createEmptyLog(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	// The mode whatever the umask.
	err = f.Chmod(mode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
