package logs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// The links log shippers read (the kubelet's legacy container log
// location, kuberuntime/legacy.go): one symbolic link a container
// instance, <pod>_<namespace>_<container>-<containerID>.log, to its log
// under the pod log root, made when the instance is created and removed
// with it.
const (
	linkSuffix = ".log"
	// maxFileName is ext4's limit on a file name: a longer link name is
	// cut, as the kubelet cuts it.
	maxFileName = 255
)

// LinkDir is the directory of the links: the kubelet's /var/log/containers
// is the sibling of its default pod log root /var/log/pods, and podlife
// keeps them siblings, so that a node whose log root is elsewhere (a test,
// a user's own) needs nothing under /var/log.
func LinkDir(logRoot string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(logRoot)), "containers")
}

// LinkPath is the link of container instance containerID of the pod
// named podName in podNamespace.
func LinkPath(logRoot, podName, podNamespace, container, containerID string) string {
	name := fmt.Sprintf("%s_%s_%s-%s", podName, podNamespace, container, containerID)
	if len(name) > maxFileName-len(linkSuffix) {
		name = name[:maxFileName-len(linkSuffix)]
	}
	return filepath.Join(LinkDir(logRoot), name+linkSuffix)
}

// Link links the log at logPath (the instance's, under logRoot) of
// container instance containerID of pod. As the kubelet, a log the runtime
// has not made is not linked (the link would dangle); a link already there
// is kept.
func Link(logRoot, logPath string, pod *v1.Pod, container, containerID string) error {
	for _, e := range []struct{ field, value string }{
		{"metadata.name", pod.Name}, {"metadata.namespace", pod.Namespace}, {"container name", container}, {"container ID", containerID},
	} {
		if err := cri.PathElement(pod, e.field, e.value); err != nil {
			return err
		}
	}
	if rel, err := filepath.Rel(logRoot, logPath); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("not linking the log %s, which is not under %s", logPath, logRoot)
	}
	if _, err := os.Stat(logPath); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(LinkDir(logRoot), 0o755); err != nil {
		return fmt.Errorf("container log link: %w", err)
	}
	link := LinkPath(logRoot, pod.Name, pod.Namespace, container, containerID)
	if err := os.Symlink(logPath, link); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("container log link: %w", err)
	}
	return nil
}

// Unlink removes the link of container instance id, named container, of
// the pod its runtime labels name, as the kubelet does when it removes the
// instance's log.
func Unlink(logRoot, id, container string, labels map[string]string) error {
	name, namespace := labels[cri.PodNameLabel], labels[cri.PodNamespaceLabel]
	if name == "" || namespace == "" || container == "" || strings.ContainsRune(name+namespace+container+id, '/') {
		return nil // not podlife's, or no name to find a link by
	}
	err := os.Remove(LinkPath(logRoot, name, namespace, container, id))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove container log link: %w", err)
	}
	return nil
}

// StatusFunc answers a container's state, found reports whether the
// runtime knows it.
type StatusFunc func(ctx context.Context, id string) (state runtimeapi.ContainerState, found bool, err error)

// RemoveDanglingLinks removes the links whose log is gone, unless their
// instance still runs (its log is between a rotation's rename and the
// runtime's reopen), as the kubelet's container garbage collector does.
func RemoveDanglingLinks(ctx context.Context, logRoot string, status StatusFunc) error {
	links, err := filepath.Glob(filepath.Join(LinkDir(logRoot), "*"+linkSuffix))
	if err != nil {
		return err
	}
	var errs []error
	for _, link := range links {
		if _, err := os.Stat(link); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if id := linkContainerID(link); id != "" {
			// As the kubelet: only a known instance that has not exited
			// keeps its link; an error does not.
			state, found, err := status(ctx, id)
			if err == nil && found && state != runtimeapi.ContainerState_CONTAINER_EXITED {
				continue
			}
		}
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// linkContainerID is the container ID a link's name ends with ("" when it
// has none long enough to name one: the kubelet's 6 characters).
func linkContainerID(link string) string {
	base := strings.TrimSuffix(filepath.Base(link), linkSuffix)
	i := strings.LastIndexByte(base, '-')
	if i < 0 || len(base)-i-1 < 6 {
		return ""
	}
	return base[i+1:]
}
