// Package owndir creates and checks a directory the agent, often root,
// writes what matters into (its root directory, its private keys): one
// another local user could write, replace or redirect is refused. It has no
// kubelet counterpart; the kubelet trusts its flags' directories.
package owndir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Prepare creates dir (mode 0700, with its missing parents) and returns its
// absolute path. what names the directory in errors ("root directory").
// It refuses a directory reached through a symbolic link, not a directory,
// owned by another user, writable by group or others (with private, open to
// them at all: it holds keys), or in a parent another user could rename it
// out of and put their own in its place.
func Prepare(what, dir string, private bool) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%s is empty", what)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, dir, err)
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
	}
	// A link planted before MkdirAll ran is caught here too.
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if resolved != abs {
		return "", fmt.Errorf("%s %s is reached through a symbolic link (it resolves to %s); give the real path", what, abs, resolved)
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s %s is not a directory (mode %s)", what, abs, fi.Mode())
	}
	self := os.Geteuid()
	if owner := int(fi.Sys().(*syscall.Stat_t).Uid); owner != self {
		return "", fmt.Errorf("%s %s is owned by uid %d, not by the agent's uid %d", what, abs, owner, self)
	}
	perm := fi.Mode().Perm()
	switch {
	case private && perm&0o077 != 0:
		return "", fmt.Errorf("%s %s is open to group or others (mode %04o); it holds private keys: chmod 0700 it", what, abs, perm)
	case perm&0o022 != 0:
		return "", fmt.Errorf("%s %s is writable by group or others (mode %04o); chmod go-w it or choose another", what, abs, perm)
	}
	return abs, checkParents(what, abs, self)
}

// checkParents refuses a directory whose parents another user could rename
// it out of: each parent must belong to root or to the agent's user and be
// writable by group or others only with the sticky bit, as /tmp is.
func checkParents(what, abs string, self int) error {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if err != nil {
			return fmt.Errorf("%s %s: %w", what, abs, err)
		}
		if owner := int(fi.Sys().(*syscall.Stat_t).Uid); owner != 0 && owner != self {
			return fmt.Errorf("%s %s: its parent %s is owned by uid %d, who could replace it", what, abs, dir, owner)
		}
		if m := fi.Mode(); m.Perm()&0o022 != 0 && m&fs.ModeSticky == 0 {
			return fmt.Errorf("%s %s: its parent %s is writable by group or others without the sticky bit (mode %04o), so they could replace it", what, abs, dir, m.Perm())
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}
