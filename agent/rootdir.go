package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// prepareRootDir creates the root directory (mode 0700, with its missing
// parents) and returns its absolute path. Whoever controls the root
// directory decides where the agent, often root, writes pod logs and who
// can reach its sockets, so one that is not the agent's own is refused:
// owned by another user, writable by group or others, reached through a
// symbolic link, or not a directory.
func prepareRootDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("root directory %s: %w", dir, err)
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return "", fmt.Errorf("root directory: %w", err)
		}
	}
	// A link planted before MkdirAll ran is caught here too.
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("root directory: %w", err)
	}
	if resolved != abs {
		return "", fmt.Errorf("root directory %s is reached through a symbolic link (it resolves to %s); give the real path", abs, resolved)
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", fmt.Errorf("root directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("root directory %s is not a directory (mode %s)", abs, fi.Mode())
	}
	self := os.Geteuid()
	if owner := fi.Sys().(*syscall.Stat_t).Uid; int(owner) != self {
		return "", fmt.Errorf("root directory %s is owned by uid %d, not by the agent's uid %d", abs, owner, self)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return "", fmt.Errorf("root directory %s is writable by group or others (mode %04o); chmod go-w it or choose another", abs, perm)
	}
	if err := checkParents(abs, self); err != nil {
		return "", err
	}
	return abs, nil
}

// checkParents refuses a root directory whose parent directories another
// user could rename it out of (and put their own in its place): each
// parent must belong to root or to the agent's user and be writable by
// group or others only with the sticky bit, as /tmp is.
func checkParents(abs string, self int) error {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if err != nil {
			return fmt.Errorf("root directory %s: %w", abs, err)
		}
		owner := int(fi.Sys().(*syscall.Stat_t).Uid)
		if owner != 0 && owner != self {
			return fmt.Errorf("root directory %s: its parent %s is owned by uid %d, who could replace it", abs, dir, owner)
		}
		if perm := fi.Mode(); perm.Perm()&0o022 != 0 && perm&fs.ModeSticky == 0 {
			return fmt.Errorf("root directory %s: its parent %s is writable by group or others without the sticky bit (mode %04o), so they could replace it", abs, dir, perm.Perm())
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}
