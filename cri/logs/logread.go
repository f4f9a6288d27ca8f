package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Options are the kubelet's /containerLogs query parameters.
type Options struct {
	// Follow keeps reading the log, across rotations, until the container
	// exits.
	Follow bool
	// TailLines, when not negative, starts at that many lines from the
	// end (a line longer than maxJoinedLine counts once per piece); any
	// int64 is fine.
	TailLines int64
	// Timestamps prefixes each line with its RFC 3339 time.
	Timestamps bool
	// Since, when set, skips the lines written before it.
	Since time.Time
	// LimitBytes, when positive, ends the output after that many bytes.
	LimitBytes int64
}

// rotatedLogTime is the suffix the rotation adds to a rotated log's name
// (the kubelet's): its names sort as their times do.
const rotatedLogTime = "20060102-150405"

// rotatedLogs are the rotated files of the log at path, oldest first: the
// regular files named <path>.<time>. A symbolic link is none.
func rotatedLogs(path string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	prefix := filepath.Base(path) + "."
	var out []string
	for _, e := range entries {
		suffix, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if _, err := time.Parse(rotatedLogTime, suffix); err != nil {
			continue
		}
		out = append(out, filepath.Join(filepath.Dir(path), e.Name()))
	}
	slices.Sort(out)
	return out, nil
}

// openLog opens a log file for reading without following a symbolic link
// planted in its place (the runtime, root, writes there): only a regular
// file is read, and a FIFO planted there does not block the open.
func openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("log %s is not a regular file (mode %s)", path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// logFollowPoll is how often a followed log is checked for more output, a
// rotation, or its container's exit.
const logFollowPoll = 200 * time.Millisecond

// Write writes the output of the container instance whose log is at
// path, its rotated files first, as opts says. With opts.Follow it keeps
// reading, across rotations, until running reports that the container has
// exited (then it reads what is left) or ctx ends. Its memory is bounded
// whatever the log holds (logrecord.go): a line is joined up to
// maxJoinedLine bytes, and a tail is found by counting the lines in a
// first pass over the files, not by keeping them.
func Write(ctx context.Context, path string, opts Options, w io.Writer, running func(context.Context) (bool, error)) error {
	err := run(ctx, path, opts, w, running)
	if errors.Is(err, errLogLimit) {
		return nil
	}
	return err
}

func run(ctx context.Context, path string, opts Options, w io.Writer, running func(context.Context) (bool, error)) error {
	// The current file is opened before the rotated ones are listed: a
	// rotation in between makes it one of them, read once, as itself.
	cur, err := openLog(path)
	if err != nil {
		return err
	}
	defer func() { cur.Close() }()
	curInfo, err := cur.Stat()
	if err != nil {
		return err
	}
	rotated, err := rotatedLogs(path)
	if err != nil {
		return err
	}
	// The rotated files are opened at once, so that both passes of a
	// tail read the same files whatever a rotation deletes meanwhile.
	files, err := openRotated(rotated, curInfo)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if err != nil {
		return err
	}
	r := newLogReader(opts, w)
	if err := r.readExisting(append(files[:len(files):len(files)], cur)); err != nil {
		return err
	}
	if !opts.Follow {
		return r.end()
	}
	tick := time.NewTicker(logFollowPoll)
	defer tick.Stop()
	var prev *os.File // the file before a rotation, read once more
	defer func() {
		if prev != nil {
			prev.Close()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		// Whether it runs is asked before the last read: what it wrote
		// before it exited is then read.
		alive, err := running(ctx)
		if err != nil {
			return err
		}
		if prev != nil {
			_, err := r.readAll(prev)
			prev.Close()
			prev = nil
			if err != nil {
				return err
			}
		}
		if _, err := r.readAll(cur); err != nil {
			return err
		}
		if next, err := openLog(path); err == nil {
			if fi, err := next.Stat(); err == nil && !os.SameFile(fi, curInfo) {
				// Rotated: the old file is read to its end above; the
				// runtime writes to the new one once it has created it,
				// but a write in flight then may still land in the old
				// one, which is read once more at the next tick.
				prev, cur, curInfo = cur, next, fi
				if _, err := r.readAll(cur); err != nil {
					return err
				}
			} else {
				next.Close()
			}
		}
		if !alive && prev == nil {
			return r.end()
		}
	}
}

// openRotated opens the rotated logs at paths, but the current one (cur)
// if a rotation made it one of them; one the rotation deleted since it was
// listed is none. It returns what it opened even with an error.
func openRotated(paths []string, cur os.FileInfo) ([]*os.File, error) {
	var files []*os.File
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && os.SameFile(fi, cur) {
			continue
		}
		f, err := openLog(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

// readExisting reads files, the log's existing files oldest first, each
// from its start to its end, leaving the last one's offset at its end.
// With a tail, a first pass counts the lines and a second, over the same
// bytes, writes only the last TailLines: the two see the same lines, as
// the reading is the same.
func (r *logReader) readExisting(files []*os.File) error {
	if r.opts.TailLines < 0 {
		for _, f := range files {
			if _, err := r.readAll(f); err != nil {
				return err
			}
		}
		return nil
	}
	count := newLogReader(Options{}, nil)
	count.skip = math.MaxInt64
	sizes := make([]int64, len(files))
	for i, f := range files {
		n, err := count.readAll(f)
		if err != nil {
			return err
		}
		sizes[i] = n
	}
	// TailLines may be as large as an int64 goes: the difference cannot
	// overflow, both being positive.
	r.skip = max(count.units-r.opts.TailLines, 0)
	r.buf = count.buf
	for i, f := range files {
		if _, err := r.readAll(io.NewSectionReader(f, 0, sizes[i])); err != nil {
			return err
		}
	}
	return nil
}
