package logs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
