package logs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// RemoveContainerLog removes a container's log at path and its rotated
// files, as the kubelet's container log manager's Clean does when the
// garbage collector removes the container. A path outside root (the
// runtime's answer, not ours) is refused.
func RemoveContainerLog(root, path string) error {
	if rel, err := filepath.Rel(root, path); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("not removing the log %s, which is not under %s", path, root)
	}
	rotated, err := rotatedLogs(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the log %s: %w", path, err)
	}
	for _, f := range append(rotated, path) {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove the log %s: %w", f, err)
		}
	}
	return nil
}

// PodLogDirs finds the pods' log directories under logRoot by the UID at
// the end of their names (<namespace>_<name>_<uid>, as PodDir makes them),
// as the kubelet's garbage collector does for pods it knows nothing else
// of. Only directories count, not a symbolic link.
func PodLogDirs(logRoot string) (map[types.UID][]string, error) {
	entries, err := os.ReadDir(logRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pod log directories: %w", err)
	}
	out := map[types.UID][]string{}
	for _, e := range entries {
		parts := strings.Split(e.Name(), "_")
		if !e.IsDir() || len(parts) != 3 || parts[2] == "" {
			continue
		}
		uid := types.UID(parts[2])
		out[uid] = append(out[uid], filepath.Join(logRoot, e.Name()))
	}
	return out, nil
}
