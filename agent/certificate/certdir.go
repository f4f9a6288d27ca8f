package certificate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// PrepareCertDir creates the certificate directory (mode 0700, with its
// missing parents) and returns its absolute path. It holds the node's
// private keys, and whoever could write it could make the agent present
// their certificate or lose its own: one that is not the agent's own is
// refused (reached through a symbolic link, not a directory, owned by
// another user, open to group or others, or in a parent another user
// could rename it out of).
func PrepareCertDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("cert directory %s: %w", dir, err)
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return "", fmt.Errorf("cert directory: %w", err)
		}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("cert directory: %w", err)
	}
	if resolved != abs {
		return "", fmt.Errorf("cert directory %s is reached through a symbolic link (it resolves to %s); give the real path", abs, resolved)
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", fmt.Errorf("cert directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("cert directory %s is not a directory (mode %s)", abs, fi.Mode())
	}
	self := os.Geteuid()
	if owner := int(fi.Sys().(*syscall.Stat_t).Uid); owner != self {
		return "", fmt.Errorf("cert directory %s is owned by uid %d, not by the agent's uid %d", abs, owner, self)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("cert directory %s is open to group or others (mode %04o); it holds private keys: chmod 0700 it", abs, perm)
	}
	for parent := filepath.Dir(abs); ; parent = filepath.Dir(parent) {
		pi, err := os.Lstat(parent)
		if err != nil {
			return "", fmt.Errorf("cert directory %s: %w", abs, err)
		}
		if owner := int(pi.Sys().(*syscall.Stat_t).Uid); owner != 0 && owner != self {
			return "", fmt.Errorf("cert directory %s: its parent %s is owned by uid %d, who could replace it", abs, parent, owner)
		}
		if m := pi.Mode(); m.Perm()&0o022 != 0 && m&fs.ModeSticky == 0 {
			return "", fmt.Errorf("cert directory %s: its parent %s is writable by group or others without the sticky bit (mode %04o)", abs, parent, m.Perm())
		}
		if parent == filepath.Dir(parent) {
			return abs, nil
		}
	}
}
