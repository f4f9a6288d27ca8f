package logs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
// container's log over MaxSize is trimmed to its last MaxSize bytes, once
// (trimLog). Rotate is not for concurrent use.
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
	// trimmed are the exited containers whose logs are within MaxSize:
	// an exited container writes no more.
	trimmed map[string]bool
}

// NewRotator rotates the logs under root (the syncer's LogRoot) of the
// containers of rt; the logs of other containers of the runtime are not
// its own.
func NewRotator(rt cri.Runtime, reopen Reopener, root string, clk clock.Clock, maxSize int64, maxFiles int) *Rotator {
	return &Rotator{rt: rt, reopen: reopen, root: root, clock: clk, MaxSize: maxSize, MaxFiles: maxFiles, trimmed: map[string]bool{}}
}

// Rotate rotates every running container's log that reached MaxSize, and
// trims every exited container's log beyond it. It goes on past a
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
			if r.trimmed[c.Id] {
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
				r.trimmed[c.Id] = true // not ours to trim, now or later
			}
			continue
		}
		if !exited[c.Id] {
			err = r.rotateOne(ctx, c, path)
		} else if err = trimLog(path, r.MaxSize); err != nil {
			err = fmt.Errorf("log rotation of exited container %.12s: %w", c.Id, err)
		} else {
			r.trimmed[c.Id] = true
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for id := range r.trimmed {
		if !exited[id] {
			delete(r.trimmed, id) // removed
		}
	}
	return errors.Join(errs...)
}

// rotateOne rotates the log at path of container c if it reached MaxSize.
func (r *Rotator) rotateOne(ctx context.Context, c *runtimeapi.Container, path string) error {
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
	if err := r.reopen.ReopenContainerLog(ctx, c.Id); err != nil {
		// The runtime still writes to the renamed file: it is the log
		// again, as the kubelet does.
		if rerr := os.Rename(to, path); rerr != nil {
			return fmt.Errorf("log rotation of %s: reopen the log: %w; and renaming it back failed: %v", name, err, rerr)
		}
		return fmt.Errorf("log rotation of %s: reopen the log: %w", name, err)
	}
	return nil
}
