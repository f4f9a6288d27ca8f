package logs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// trimLog keeps of the log at path, that of an exited container, only its
// last maxSize bytes from the first line that begins in them: nobody
// writes it any more, so it is rewritten whole (a new file renamed over
// it). The kubelet rotates only running containers' logs and relies on
// the garbage collector for the others; a container that wrote gigabytes
// between two rotation rounds and exited would keep them until then.
func trimLog(path string, maxSize int64) error {
	f, err := openLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() <= maxSize {
		return nil
	}
	// From the byte before the kept part: a newline there means the kept
	// part begins with a whole line.
	start := fi.Size() - maxSize - 1
	r := bufio.NewReader(io.NewSectionReader(f, start, fi.Size()-start))
	for {
		_, err := r.ReadSlice('\n')
		if err == nil {
			break
		}
		if errors.Is(err, io.EOF) {
			break // no line begins in the kept part: nothing is kept
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".trim-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing there
	_, err = io.Copy(tmp, r)
	if err == nil {
		err = tmp.Chmod(fi.Mode().Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("trim the log: %w", err)
	}
	return nil
}
