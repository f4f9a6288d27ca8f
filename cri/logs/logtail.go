package logs

import (
	"bytes"
)

// logTailChunk is how much of a log ReadTail reads first, from its end
// (then as much as it has read, each time); maxLogTailRead bounds what it
// reads in all, whatever the records.
const (
	logTailChunk   = 8 * 1024
	maxLogTailRead = 1 << 20
)

// The kubelet's caps on a termination message taken from the log
// (kubecontainer's constants): maxLogMessage and maxLogMessageLines bound
// it to the last 80 lines, cut to their last 2 KiB.
const (
	maxLogMessage      = 2 * 1024
	maxLogMessageLines = 80
)

// ReadTail is what the kubelet reports of a failed container's log as
// its termination message: the content of the last maxLogMessageLines
// records of the CRI log at path (stdout and stderr alike), cut to its last
// maxLogMessage bytes. It reads the file backwards, only as far as those
// need.
func ReadTail(path string) (string, error) {
	f, err := openLog(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	var buf []byte
	var records [][]byte
	for off := fi.Size(); off > 0 && int64(len(buf)) < maxLogTailRead; {
		// Each read doubles what is read, so that a log of long lines
		// costs a few reads, not a copy of the whole per chunk.
		n := min(max(logTailChunk, int64(len(buf))), off, maxLogTailRead-int64(len(buf)))
		off -= n
		chunk := make([]byte, n, n+int64(len(buf)))
		if _, err := f.ReadAt(chunk, off); err != nil {
			return "", err
		}
		buf = append(chunk, buf...)
		records = lastRecords(buf, off == 0)
		if len(records) >= maxLogMessageLines || contentLen(records) >= maxLogMessage {
			break
		}
	}
	var out []byte
	for _, r := range records {
		out = append(out, r...)
	}
	return string(out[max(len(out)-maxLogMessage, 0):]), nil
}

// lastRecords parses the CRI log records in buf, the end of a log, and
// returns the content of the last maxLogMessageLines of them; the first
// line counts only when buf starts at the file's start (whole), since it
// may be cut otherwise. A line that is no CRI record is skipped, as the
// kubelet skips it.
func lastRecords(buf []byte, whole bool) [][]byte {
	lines := bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n"))
	if !whole {
		lines = lines[1:]
	}
	lines = lines[max(len(lines)-maxLogMessageLines, 0):]
	out := make([][]byte, 0, len(lines))
	for _, l := range lines {
		if content, ok := parseCRILogLine(l); ok {
			out = append(out, content)
		}
	}
	return out
}

func contentLen(records [][]byte) int {
	n := 0
	for _, r := range records {
		n += len(r)
	}
	return n
}

// parseCRILogLine returns the content of one line of the CRI log format
// (see logrecord.go): with its newline back for a full record (tag F),
// without for a partial one (P), whose line the next record continues.
func parseCRILogLine(line []byte) ([]byte, bool) {
	h, content, ok := splitRecord(line)
	if !ok {
		return nil, false
	}
	r, ok := parseRecordHeader(h)
	if !ok {
		return nil, false
	}
	if r.partial {
		return content, true
	}
	return append(content[:len(content):len(content)], '\n'), true
}
