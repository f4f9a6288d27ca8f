// Package logs finds, reads and rotates the logs the runtime writes of
// podlife's containers (kubelet: pkg/kubelet/kuberuntime/logs, and
// pkg/kubelet/logs' ContainerLogManager): the directory of a pod's logs,
// the log of a container instance (Lookup), its output read back from the
// CRI log format as /containerLogs asks (tail, follow across rotations,
// timestamps, since, a byte limit; with bounded memory whatever the
// lines' length, see logrecord.go), the rotation of the running
// containers' logs by size, and the tail of a log that a failed
// container's termination message falls back to.
package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// LookupError is why a container's log cannot be served: the container,
// the instance or the log is missing (NotFound), or the request does not
// say which container (a pod of several).
type LookupError struct {
	NotFound bool
	msg      string
}

func (e *LookupError) Error() string { return e.msg }

func logNotFound(format string, args ...any) error {
	return &LookupError{NotFound: true, msg: fmt.Sprintf(format, args...)}
}

// ContainerLog is the log of one instance of a container of a pod.
type ContainerLog struct {
	// Path is the instance's current log file; its rotated files are
	// beside it.
	Path        string
	rt          cri.Runtime
	containerID string
}

// Lookup finds the log under logRoot of container (of pod's spec; "" when
// the pod has one container) in its latest instance on rt, or the one
// before with previous, as the kubelet's /containerLogs does. The path is
// built from the pod's checked fields and the container's attempt, not
// taken from the runtime.
func Lookup(ctx context.Context, rt cri.Runtime, logRoot string, pod *v1.Pod, container string, previous bool) (*ContainerLog, error) {
	podName := pod.Namespace + "/" + pod.Name
	name, err := logContainerName(pod, container)
	if err != nil {
		return nil, err
	}
	if logRoot == "" {
		return nil, logNotFound("container %q of pod %s: the embedded runtime writes no container logs (its containers run no process); run the agent on a real CRI runtime (--runtime-endpoint)", name, podName)
	}
	listed, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{
		cri.PodUIDLabel: string(pod.UID), cri.ContainerNameLabel: name,
	}})
	if err != nil {
		return nil, fmt.Errorf("container %q of pod %s: list its instances: %w", name, podName, err)
	}
	sort.Slice(listed, func(i, j int) bool { return listed[i].CreatedAt > listed[j].CreatedAt })
	n := 0
	if previous {
		n = 1
	}
	if len(listed) <= n {
		if previous {
			return nil, logNotFound("container %q of pod %s has no previous instance: it has not restarted (or the earlier one was removed)", name, podName)
		}
		return nil, logNotFound("container %q of pod %s has not been created yet", name, podName)
	}
	if !previous && listed[0].State == runtimeapi.ContainerState_CONTAINER_CREATED {
		// As the kubelet: an instance not started yet has no log to
		// follow (it would end at once, empty); the caller asks again.
		return nil, logNotFound("container %q in pod %s is waiting to start: ContainerCreating", name, podName)
	}
	dir, err := PodDir(logRoot, pod)
	if err == nil {
		err = cri.PathElement(pod, "container name", name)
	}
	if err != nil {
		return nil, err
	}
	// The directories are the runtime's (root's) to create: a symbolic
	// link there would lead the read elsewhere.
	for _, d := range []string{dir, filepath.Join(dir, name)} {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, logNotFound("container %q of pod %s has no log directory %s", name, podName, d)
		}
		if err != nil {
			return nil, fmt.Errorf("container %q of pod %s: %w", name, podName, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("container %q of pod %s: log directory %s is not a directory (mode %s)", name, podName, d, fi.Mode())
		}
	}
	attempt := listed[n].GetMetadata().GetAttempt()
	path := filepath.Join(dir, name, strconv.FormatUint(uint64(attempt), 10)+".log")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, logNotFound("container %q of pod %s (restart %d) has no log file %s", name, podName, attempt, path)
	}
	return &ContainerLog{Path: path, rt: rt, containerID: listed[n].Id}, nil
}

// logContainerName is container, checked against pod's spec, or the pod's
// only container when it is "". The error lists the choices, as kubectl's.
func logContainerName(pod *v1.Pod, container string) (string, error) {
	var names, inits, ephemeral []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.InitContainers {
		inits = append(inits, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		ephemeral = append(ephemeral, c.Name)
	}
	choices := "[" + strings.Join(names, " ") + "]"
	if len(inits) > 0 {
		choices += " or one of the init containers: [" + strings.Join(inits, " ") + "]"
	}
	if len(ephemeral) > 0 {
		choices += " or one of the ephemeral containers: [" + strings.Join(ephemeral, " ") + "]"
	}
	if container == "" {
		if len(names) == 1 && len(inits) == 0 {
			return names[0], nil
		}
		return "", &LookupError{msg: fmt.Sprintf("a container name must be specified for pod %s/%s, choose one of: %s", pod.Namespace, pod.Name, choices)}
	}
	for _, n := range slices.Concat(names, inits, ephemeral) {
		if n == container {
			return n, nil
		}
	}
	return "", logNotFound("container %q is not valid for pod %s/%s, choose one of: %s", container, pod.Namespace, pod.Name, choices)
}

// NewContainerLog is the log at path of the instance containerID on rt
// (Lookup finds both; a server's tests make their own).
func NewContainerLog(path string, rt cri.Runtime, containerID string) *ContainerLog {
	return &ContainerLog{Path: path, rt: rt, containerID: containerID}
}

// Write writes the instance's output to w as opts says; a follow ends
// when the instance has exited and its log is read.
func (l *ContainerLog) Write(ctx context.Context, opts Options, w io.Writer) error {
	return Write(ctx, l.Path, opts, w, l.running)
}

// running reports whether the instance still runs; a removed one does not.
func (l *ContainerLog) running(ctx context.Context) (bool, error) {
	resp, err := l.rt.ContainerStatus(ctx, l.containerID, false)
	if status.Code(err) == codes.NotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("container %.12s: %w", l.containerID, err)
	}
	return resp.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING, nil
}

// PodDir is the kubelet's layout: <root>/<namespace>_<name>_<uid>. It
// refuses a pod whose namespace, name or UID would lead the path elsewhere.
func PodDir(logRoot string, pod *v1.Pod) (string, error) {
	for _, f := range []struct{ field, value string }{
		{"metadata.namespace", pod.Namespace}, {"metadata.name", pod.Name}, {"metadata.uid", string(pod.UID)},
	} {
		if err := cri.PathElement(pod, f.field, f.value); err != nil {
			return "", err
		}
	}
	return filepath.Join(logRoot, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)), nil
}
