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
	"time"
)

// A volume whose files the agent writes and a running container reads
// (downwardAPI) is updated the kubelet's way (its AtomicWriter): the files
// are in a timestamped directory, "..data" is a symbolic link to it, and
// each of the volume's top-level names is a link through "..data". An
// update writes a new timestamped directory and renames a new "..data"
// link over the old one: a reader sees the old files or the new ones,
// never a mix.

// dataDirName is the link to the current timestamped directory.
const dataDirName = "..data"

// volumeFile is a file of a volume: its content and mode.
type volumeFile struct {
	data []byte
	mode int32
}

// writeAtomically makes dir hold exactly files (paths relative to dir),
// unless it holds them already.
func writeAtomically(dir string, files map[string]volumeFile) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	old, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if old != "" && holds(filepath.Join(dir, old), files) {
		return nil
	}
	ts, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return err
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		f := files[p]
		full := filepath.Join(ts, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.data, fs.FileMode(f.mode)); err != nil {
			return err
		}
		// WriteFile's mode is cut by the umask.
		if err := os.Chmod(full, fs.FileMode(f.mode)); err != nil {
			return err
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

// holds reports whether ts has exactly files, with their modes.
func holds(ts string, files map[string]volumeFile) bool {
	n := 0
	err := filepath.WalkDir(ts, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ts, p)
		f, ok := files[rel]
		info, ierr := d.Info()
		if !ok || ierr != nil || info.Mode().Perm() != fs.FileMode(f.mode) {
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
