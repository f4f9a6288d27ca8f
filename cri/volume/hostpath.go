package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	v1 "k8s.io/api/core/v1"
)

// checkHostPath checks a hostPath volume's path against its type, as the
// kubelet does before it mounts one: "" checks nothing; DirectoryOrCreate
// and FileOrCreate make a missing directory (0755, parents too) or file
// (0644, in an existing directory); the other types want the path to be
// one already. The path is followed through symbolic links, as the
// runtime follows them when it mounts it.
func checkHostPath(src *v1.HostPathVolumeSource) error {
	p := src.Path
	kind := v1.HostPathUnset
	if src.Type != nil {
		kind = *src.Type
	}
	switch kind {
	case v1.HostPathUnset:
		return nil
	case v1.HostPathDirectoryOrCreate:
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return os.MkdirAll(p, 0o755)
		}
		kind = v1.HostPathDirectory
	case v1.HostPathFileOrCreate:
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
		kind = v1.HostPathFile
	}
	want, ok := hostPathModes[kind]
	if !ok {
		return fmt.Errorf("hostPath type %q is not a type the API knows", kind)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("hostPath type check failed: %w", err)
	}
	if fi.Mode().Type() != want.mode {
		return fmt.Errorf("hostPath type check failed: %s is not a %s", p, want.what)
	}
	return nil
}

// hostPathModes are the file types the types that check want, and how
// the kubelet names them.
var hostPathModes = map[v1.HostPathType]struct {
	mode fs.FileMode
	what string
}{
	v1.HostPathDirectory: {fs.ModeDir, "directory"},
	v1.HostPathFile:      {0, "file"},
	v1.HostPathSocket:    {fs.ModeSocket, "socket file"},
	v1.HostPathCharDev:   {fs.ModeDevice | fs.ModeCharDevice, "character device"},
	v1.HostPathBlockDev:  {fs.ModeDevice, "block device"},
}
