package logs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// TailLines, when not negative, starts at that many lines from the end.
	TailLines int64
	// Timestamps prefixes each line with its RFC 3339 time.
	Timestamps bool
	// Since, when set, skips the lines written before it.
	Since time.Time
	// LimitBytes, when positive, ends the output after that many bytes.
	LimitBytes int64
}

// logRecord is one line of the CRI log format.
type logRecord struct {
	time    time.Time
	stream  string
	partial bool   // tag P: the next record of the stream continues the line
	content []byte // without the newline
}

// parseCRIRecord parses one line of the CRI log format,
// "<RFC 3339 time> <stdout|stderr> <tags> <content>". A line in another
// format is none (the kubelet skips it too).
func parseCRIRecord(line []byte) (logRecord, bool) {
	ts, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return logRecord{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return logRecord{}, false
	}
	stream, rest, ok := bytes.Cut(rest, []byte(" "))
	if !ok || (string(stream) != "stdout" && string(stream) != "stderr") {
		return logRecord{}, false
	}
	tags, content, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return logRecord{}, false
	}
	tag, _, _ := bytes.Cut(tags, []byte(":"))
	return logRecord{time: t, stream: string(stream), partial: string(tag) == "P", content: content}, true
}

// logLine is a line of a container's output: its records joined, with the
// time of its first.
type logLine struct {
	time    time.Time
	content []byte // with its newline, unless the output ended inside the line
}

// lineJoiner joins the partial records of each stream into lines: the
// runtime cuts a long line into records, and stdout and stderr records
// interleave.
type lineJoiner struct {
	pending map[string]*logLine
}

// add takes the next record and returns the line it completes, if any.
func (j *lineJoiner) add(r logRecord) (logLine, bool) {
	p := j.pending[r.stream]
	if p == nil {
		p = &logLine{time: r.time}
	}
	p.content = append(p.content, r.content...)
	if r.partial {
		if j.pending == nil {
			j.pending = map[string]*logLine{}
		}
		j.pending[r.stream] = p
		return logLine{}, false
	}
	delete(j.pending, r.stream)
	p.content = append(p.content, '\n')
	return *p, true
}

// rest returns the lines the output ended inside of, oldest first.
func (j *lineJoiner) rest() []logLine {
	var out []logLine
	for _, p := range j.pending {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b logLine) int { return a.time.Compare(b.time) })
	j.pending = nil
	return out
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

// errLogLimit ends the output at LimitBytes.
var errLogLimit = errors.New("log output limit reached")

// logReader reads the CRI log files of one container instance and writes
// its output as LogOptions say.
type logReader struct {
	opts   Options
	w      io.Writer
	left   int64 // bytes LimitBytes still allows
	joiner lineJoiner
	carry  []byte // a record not yet ended by its newline
	// tail holds the last TailLines lines while the existing files are
	// read; nil once they are written.
	tail []logLine
	// tailing is true while tail collects.
	tailing bool
}

// Write writes the output of the container instance whose log is at
// path, its rotated files first, as opts says. With opts.Follow it keeps
// reading, across rotations, until running reports that the container has
// exited (then it reads what is left) or ctx ends.
func Write(ctx context.Context, path string, opts Options, w io.Writer, running func(context.Context) (bool, error)) error {
	r := &logReader{opts: opts, w: w, left: opts.LimitBytes, tailing: opts.TailLines >= 0}
	err := r.run(ctx, path, running)
	if errors.Is(err, errLogLimit) {
		return nil
	}
	return err
}

func (r *logReader) run(ctx context.Context, path string, running func(context.Context) (bool, error)) error {
	// The current file is opened before the rotated ones are listed: a
	// rotation in between makes it one of them, read once, as itself.
	cur, err := openLog(path)
	if err != nil {
		return err
	}
	defer func() { cur.Close() }()
	rotated, err := rotatedLogs(path)
	if err != nil {
		return err
	}
	curInfo, err := cur.Stat()
	if err != nil {
		return err
	}
	for _, p := range rotated {
		if fi, err := os.Lstat(p); err == nil && os.SameFile(fi, curInfo) {
			continue
		}
		if err := r.readFile(p); err != nil {
			return err
		}
	}
	if err := r.readAll(cur); err != nil {
		return err
	}
	if err := r.endTail(); err != nil {
		return err
	}
	if !r.opts.Follow {
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
			err := r.readAll(prev)
			prev.Close()
			prev = nil
			if err != nil {
				return err
			}
		}
		if err := r.readAll(cur); err != nil {
			return err
		}
		if next, err := openLog(path); err == nil {
			if fi, err := next.Stat(); err == nil && !os.SameFile(fi, curInfo) {
				// Rotated: the old file is read to its end above; the
				// runtime writes to the new one once it has created it,
				// but a write in flight then may still land in the old
				// one, which is read once more at the next tick.
				prev, cur, curInfo = cur, next, fi
				if err := r.readAll(cur); err != nil {
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

// readFile reads a whole rotated log; one the rotation deleted since it
// was listed is none.
func (r *logReader) readFile(path string) error {
	f, err := openLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return r.readAll(f)
}

// readAll reads f from where it is to its end; a record the runtime has
// not finished writing waits in carry.
func (r *logReader) readAll(f *os.File) error {
	buf := make([]byte, 32*1024)
	for {
		n, err := f.Read(buf)
		data := buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				r.carry = append(r.carry, data...)
				break
			}
			line := data[:i]
			if len(r.carry) > 0 {
				line = append(r.carry, line...)
			}
			if err := r.record(line); err != nil {
				return err
			}
			r.carry = r.carry[:0]
			data = data[i+1:]
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (r *logReader) record(line []byte) error {
	rec, ok := parseCRIRecord(line)
	if !ok {
		return nil
	}
	// The joiner keeps content past this call: it gets its own copy.
	rec.content = bytes.Clone(rec.content)
	if l, ok := r.joiner.add(rec); ok {
		return r.line(l)
	}
	return nil
}

// line writes l, or keeps it among the last TailLines.
func (r *logReader) line(l logLine) error {
	if r.tailing {
		if r.opts.TailLines == 0 {
			return nil
		}
		r.tail = append(r.tail, l)
		if int64(len(r.tail)) >= 2*r.opts.TailLines+1024 {
			r.tail = slices.Clone(r.tail[int64(len(r.tail))-r.opts.TailLines:])
		}
		return nil
	}
	return r.write(l)
}

// endTail writes the tail collected from the existing files.
func (r *logReader) endTail() error {
	if !r.tailing {
		return nil
	}
	r.tailing = false
	for _, l := range r.tail[max(int64(len(r.tail))-r.opts.TailLines, 0):] {
		if err := r.write(l); err != nil {
			return err
		}
	}
	r.tail = nil
	return nil
}

// end writes what the output ended inside of: a last record without its
// newline, and the lines whose last record was partial.
func (r *logReader) end() error {
	if len(r.carry) > 0 {
		if err := r.record(r.carry); err != nil {
			return err
		}
		r.carry = nil
	}
	for _, l := range r.joiner.rest() {
		if err := r.write(l); err != nil {
			return err
		}
	}
	return nil
}

func (r *logReader) write(l logLine) error {
	if !r.opts.Since.IsZero() && l.time.Before(r.opts.Since) {
		return nil
	}
	out := l.content
	if r.opts.Timestamps {
		out = append([]byte(l.time.Format(time.RFC3339Nano)+" "), out...)
	}
	if r.opts.LimitBytes > 0 {
		if int64(len(out)) >= r.left {
			_, err := r.w.Write(out[:r.left])
			if err != nil {
				return err
			}
			return errLogLimit
		}
		r.left -= int64(len(out))
	}
	_, err := r.w.Write(out)
	return err
}
