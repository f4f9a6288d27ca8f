package logs

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"time"
)

// The CRI log format is one record a line: "<RFC 3339 time> <stdout|stderr>
// <tags> <content>\n", the tag P when the next record of the stream
// continues the line (the runtime cuts a long line into records), F when
// the record ends it. A runtime may write a huge record, and a container
// a huge line: the reader holds neither whole. It reads the files in
// blocks, parses a record's header from its first maxRecordHeader bytes,
// and joins a stream's records into lines of at most maxJoinedLine bytes:
// a longer line is written in pieces as it comes (each piece counts as a
// line for a tail; the first alone gets the line's timestamp). What a
// request may cost is then a block, a header and two lines' pieces, never
// a line or a file (the kubelet's reader, bufio's ReadBytes, holds a
// whole record).

// maxRecordHeader bounds a record's "<time> <stream> <tags> " prefix: a
// line without one in that many bytes is no record, and is skipped, as
// the kubelet skips a line it cannot parse.
const maxRecordHeader = 128

// maxJoinedLine is the longest line written whole: eight records of
// containerd's and CRI-O's default 16 KiB.
const maxJoinedLine = 128 << 10

// readBlock is how much of a log is read at a time.
const readBlock = 32 << 10

// errLogLimit ends the output at LimitBytes.
var errLogLimit = errors.New("log output limit reached")

// The streams of a record, an index of logReader.streams.
const (
	stdout = iota
	stderr
)

// recordHeader is a record's parsed header.
type recordHeader struct {
	time    time.Time
	stream  int
	partial bool
}

// splitRecord splits a CRI log line into its header, "<time> <stream>
// <tags>", and its content, after the space that follows; ok is false
// when the line has no three spaces.
func splitRecord(line []byte) (header, content []byte, ok bool) {
	end := 0
	for range 3 {
		i := bytes.IndexByte(line[end:], ' ')
		if i < 0 {
			return nil, nil, false
		}
		end += i + 1
	}
	return line[:end-1], line[end:], true
}

// parseRecordHeader parses "<time> <stream> <tags>"; a header in another
// format is none.
func parseRecordHeader(h []byte) (recordHeader, bool) {
	ts, rest, _ := bytes.Cut(h, []byte(" "))
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return recordHeader{}, false
	}
	stream, tags, _ := bytes.Cut(rest, []byte(" "))
	hdr := recordHeader{time: t}
	switch string(stream) {
	case "stdout":
		hdr.stream = stdout
	case "stderr":
		hdr.stream = stderr
	default:
		return recordHeader{}, false
	}
	tag, _, _ := bytes.Cut(tags, []byte(":"))
	hdr.partial = string(tag) == "P"
	return hdr, true
}

// streamLine is the line a stream's records are joining: its content not
// written yet.
type streamLine struct {
	open    bool      // a record of it was read
	time    time.Time // of its first record
	n       int       // bytes of its piece read, at most maxJoinedLine (and its newline)
	buf     []byte    // those bytes, unless the reader only counts
	started bool      // a piece of it was counted already
}

// recordState is where the reader is in a record.
type recordState int

const (
	inHeader  recordState = iota // collecting the header
	inContent                    // passing the content to its stream's line
	inJunk                       // skipping a line that is no record
)

// logReader reads the CRI log files of one container instance and writes
// its output as Options say.
type logReader struct {
	opts Options
	w    io.Writer // nil: the reader only counts (a tail's first pass)
	left int64     // bytes LimitBytes still allows
	buf  []byte    // a read block

	state   recordState
	header  []byte      // the record's header while state is inHeader
	line    *streamLine // the line the record continues
	partial bool        // the record's tag is P

	streams [2]streamLine

	// units counts the lines completed, and each piece of a line longer
	// than maxJoinedLine; the first skip of them are not written (a tail).
	units, skip int64
}

func newLogReader(opts Options, w io.Writer) *logReader {
	return &logReader{opts: opts, w: w, left: opts.LimitBytes, header: make([]byte, 0, maxRecordHeader)}
}

// readAll reads f from where it is to its end and returns how many bytes
// it read; a record the runtime has not finished writing goes on at the
// next call.
func (r *logReader) readAll(f io.Reader) (int64, error) {
	if r.buf == nil {
		r.buf = make([]byte, readBlock)
	}
	var total int64
	for {
		n, err := f.Read(r.buf)
		total += int64(n)
		if werr := r.feed(r.buf[:n]); werr != nil {
			return total, werr
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// feed reads data, the log's next bytes.
func (r *logReader) feed(data []byte) error {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return r.recordBytes(data)
		}
		if err := r.recordBytes(data[:i]); err != nil {
			return err
		}
		if err := r.endRecord(); err != nil {
			return err
		}
		data = data[i+1:]
	}
	return nil
}

// recordBytes reads b, the record's next bytes (no newline).
func (r *logReader) recordBytes(b []byte) error {
	switch r.state {
	case inContent:
		return r.content(b)
	case inJunk:
		return nil
	}
	take := b[:min(len(b), maxRecordHeader-len(r.header))]
	r.header = append(r.header, take...)
	h, content, ok := splitRecord(r.header)
	if !ok {
		if len(r.header) == maxRecordHeader {
			r.state = inJunk
		}
		return nil
	}
	hdr, ok := parseRecordHeader(h)
	if !ok {
		r.state = inJunk
		return nil
	}
	r.state = inContent
	r.partial = hdr.partial
	r.line = &r.streams[hdr.stream]
	if !r.line.open {
		r.line.open, r.line.time = true, hdr.time
	}
	if err := r.content(content); err != nil {
		return err
	}
	return r.content(b[len(take):])
}

// endRecord ends the record at its newline: a full record (F) ends its
// line.
func (r *logReader) endRecord() error {
	state, partial, line := r.state, r.partial, r.line
	r.state, r.header, r.line = inHeader, r.header[:0], nil
	if state != inContent || partial {
		return nil
	}
	// The newline may take a full line one byte over maxJoinedLine: it
	// ends the piece rather than making a piece of its own.
	r.keep(line, []byte{'\n'})
	return r.emit(line, true)
}

// content adds b to the record's line.
func (r *logReader) content(b []byte) error { return r.contentOf(r.line, b) }

// contentOf adds b to line l, whose full pieces are emitted as they fill.
func (r *logReader) contentOf(l *streamLine, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), maxJoinedLine-l.n)
		if n == 0 {
			if err := r.emit(l, false); err != nil {
				return err
			}
			continue
		}
		r.keep(l, b[:n])
		b = b[n:]
	}
	return nil
}

// keep adds b to l's piece: its bytes only when the reader writes (a
// count needs none), in a buffer made once for the longest piece.
func (r *logReader) keep(l *streamLine, b []byte) {
	l.n += len(b)
	if r.w == nil {
		return
	}
	if l.buf == nil {
		l.buf = make([]byte, 0, maxJoinedLine+1)
	}
	l.buf = append(l.buf, b...)
}

// emit counts what l holds, a whole line (last) or a piece of one, and
// writes it unless a tail skips it.
func (r *logReader) emit(l *streamLine, last bool) error {
	r.units++
	first, t, out := !l.started, l.time, l.buf
	l.n, l.buf, l.started = 0, l.buf[:0], true
	if last {
		l.open, l.started = false, false
	}
	if r.units <= r.skip {
		return nil
	}
	return r.write(t, first, out)
}

// end writes what the output ended inside of: a last record without its
// newline, and the lines whose last record was partial, oldest first.
func (r *logReader) end() error {
	if r.state == inContent {
		if err := r.endRecord(); err != nil {
			return err
		}
	}
	r.state, r.header = inHeader, r.header[:0]
	var open []*streamLine
	for i := range r.streams {
		if r.streams[i].open {
			open = append(open, &r.streams[i])
		}
	}
	slices.SortStableFunc(open, func(a, b *streamLine) int { return a.time.Compare(b.time) })
	for _, l := range open {
		first, t, out := !l.started, l.time, l.buf
		*l = streamLine{buf: l.buf[:0]}
		if err := r.write(t, first, out); err != nil {
			return err
		}
	}
	return nil
}

// write writes content, a line or a piece of one whose first record is
// at t, with its timestamp when first, unless it is older than Since.
func (r *logReader) write(t time.Time, first bool, content []byte) error {
	if !r.opts.Since.IsZero() && t.Before(r.opts.Since) {
		return nil
	}
	if r.opts.Timestamps && first {
		if err := r.out(t.AppendFormat(nil, time.RFC3339Nano)); err != nil {
			return err
		}
		if err := r.out([]byte{' '}); err != nil {
			return err
		}
	}
	return r.out(content)
}

// out writes p, cut at LimitBytes.
func (r *logReader) out(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if r.opts.LimitBytes > 0 {
		if int64(len(p)) >= r.left {
			if _, err := r.w.Write(p[:r.left]); err != nil {
				return err
			}
			return errLogLimit
		}
		r.left -= int64(len(p))
	}
	_, err := r.w.Write(p)
	return err
}
