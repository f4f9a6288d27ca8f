package volume

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A volume whose files the agent writes and a running container reads
// (downwardAPI) is updated the kubelet's way (its AtomicWriter): the files
// are in a timestamped directory, "..data" is a symbolic link to it, and
// each of the volume's top-level names is a link through "..data". An
// update writes a new timestamped directory and renames a new "..data"
// link over the old one: a reader sees the old files or the new ones,
// never a mix. A volume's own directory is 0755, as readable as the
// kubelet's (the containers of the pod read it, whatever their user; the
// mounts of these volumes are read-only, and the node's users cannot reach
// it through the agent's root directory, 0700). With a fsGroup, each
// write is followed by the ownership change (ownership.go).

// dataDirName is the link to the current timestamped directory.
const dataDirName = "..data"

// volumeDirMode is the mode of a volume's own directory and of the
// directories in it.
const volumeDirMode = 0o755

// volumeFile is a file of a volume: its content and mode, and its owner
// when it is not the agent (a projected token's, ownership.fsUser).
type volumeFile struct {
	data  []byte
	mode  int32
	owner *int64
}

// The limits of a file's path in a volume, the kubelet's AtomicWriter's.
const (
	maxFileNameLength = 255
	maxPathLength     = 4096
)

// checkFilePath refuses a path the atomic writer must not write, as the
// kubelet's AtomicWriter does (validatePath): empty, absolute, too long,
// with a ".." element (out of the volume), or whose first element starts
// with ".." ("..data" would replace the writer's own link, a loop, and
// leave a timestamped directory behind on every write). Admission refuses
// such paths first (agent/admission VolumePaths); this holds whoever
// calls.
func checkFilePath(p string) error {
	if p == "" {
		return errors.New("invalid path: must not be empty")
	}
	if filepath.IsAbs(p) {
		return fmt.Errorf("invalid path %q: must be a relative path", p)
	}
	if len(p) > maxPathLength {
		return fmt.Errorf("invalid path: must be at most %d characters", maxPathLength)
	}
	elems := strings.Split(p, "/")
	for _, e := range elems {
		if e == ".." {
			return fmt.Errorf("invalid path %q: must not contain '..'", p)
		}
		if len(e) > maxFileNameLength {
			return fmt.Errorf("invalid path %q: a file name must be at most %d characters", p, maxFileNameLength)
		}
	}
	if strings.HasPrefix(elems[0], "..") {
		return fmt.Errorf("invalid path %q: must not start with '..'", p)
	}
	return nil
}

// writeAtomically makes dir hold exactly files (paths relative to dir),
// owned as own says, unless it holds them already. A path checkFilePath
// refuses fails it before anything is written.
func writeAtomically(dir string, files map[string]volumeFile, own ownership) error {
	for p := range files {
		if err := checkFilePath(p); err != nil {
			return fmt.Errorf("volume %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	old, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if old != "" && holds(filepath.Join(dir, old), files, own) {
		return nil
	}
	if old == "" {
		if err := os.Chmod(dir, volumeDirMode); err != nil {
			return err
		}
	}
	ts, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return err
	}
	if err := os.Chmod(ts, volumeDirMode); err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		f := files[p]
		full := filepath.Join(ts, p)
		if err := os.MkdirAll(filepath.Dir(full), volumeDirMode); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.data, fs.FileMode(f.mode)); err != nil {
			return err
		}
		// WriteFile's mode is cut by the umask.
		if err := os.Chmod(full, fs.FileMode(f.mode)); err != nil {
			return err
		}
		if f.owner != nil {
			if err := os.Lchown(full, int(*f.owner), -1); err != nil {
				return err
			}
		}
	}
	// The whole volume, as the kubelet's setPerms does: the new files,
	// and the volume's directory on its first write.
	if own.fsGroup != nil {
		if err := changeOwnership(dir, *own.fsGroup, true); err != nil {
			return fmt.Errorf("fsGroup %d: %w", *own.fsGroup, err)
		}
	}
	tmpLink := filepath.Join(dir, "..data_tmp")
	if err := os.Remove(tmpLink); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(filepath.Base(ts), tmpLink); err != nil {
		return err
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataDirName)); err != nil {
		return fmt.Errorf("switch %s to the new files: %w", dir, err)
	}
	if err := linkTopNames(dir, files); err != nil {
		return err
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// holds reports whether ts has exactly files, with the modes and owners
// own gives them.
func holds(ts string, files map[string]volumeFile, own ownership) bool {
	n := 0
	err := filepath.WalkDir(ts, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ts, p)
		f, ok := files[rel]
		info, ierr := d.Info()
		if !ok || ierr != nil || !ownedAs(info, f, own) {
			return fs.ErrInvalid
		}
		if data, err := os.ReadFile(p); err != nil || !bytes.Equal(data, f.data) {
			return fs.ErrInvalid
		}
		n++
		return nil
	})
	return err == nil && n == len(files)
}

// ownedAs reports whether the file of info has f's mode and owner, and
// own's group and group bits.
func ownedAs(info fs.FileInfo, f volumeFile, own ownership) bool {
	mode := fs.FileMode(f.mode)
	if own.fsGroup != nil {
		mode |= readOnlyGroupBits
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && info.Mode().Perm() == mode &&
		(f.owner == nil || int64(st.Uid) == *f.owner) &&
		(own.fsGroup == nil || int64(st.Gid) == *own.fsGroup)
}

// linkTopNames makes each top-level name of files a link through "..data"
// and removes the links of names no longer there.
func linkTopNames(dir string, files map[string]volumeFile) error {
	top := map[string]bool{}
	for p := range files {
		first, _, _ := strings.Cut(p, "/")
		top[first] = true
	}
	for name := range top {
		link := filepath.Join(dir, name)
		target := filepath.Join(dataDirName, name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") && !top[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
