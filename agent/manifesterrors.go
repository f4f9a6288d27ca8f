package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"sort"
	"sync"

	"github.com/podlife/podlife/agent/manifests"
)

// ManifestError is a manifest file, or the manifest directory, the agent
// cannot use, and why.
type ManifestError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// manifestErrors are the manifest faults reported and not yet mended. The
// source reports a fault once and says nothing when it goes away (a file
// fixed into the pod it already described, or removed), so a fault stands
// while its file's content is the content it was reported for: any change
// takes it away, and a change that is still bad is reported anew.
type manifestErrors struct {
	mu     sync.Mutex
	byPath map[string]reportedFault
}

type reportedFault struct {
	message string
	stamp   string // contentStamp of the file when reported
}

// record keeps a fault the source reported, replacing the file's last one.
func (m *manifestErrors) record(err error, dir string) {
	path, message := "", err.Error()
	if fe, ok := errors.AsType[*manifests.FileError](err); ok {
		path, message = fe.Path, fe.Err.Error()
	}
	if missingDir(err, dir) {
		message = "the manifest directory does not exist"
	}
	stamp := contentStamp(path)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byPath == nil {
		m.byPath = map[string]reportedFault{}
	}
	m.byPath[path] = reportedFault{message: message, stamp: stamp}
}

// list returns the faults that stand, by path, and forgets the others.
func (m *manifestErrors) list() []ManifestError {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ManifestError
	for path, f := range m.byPath {
		if contentStamp(path) != f.stamp {
			delete(m.byPath, path)
			continue
		}
		out = append(out, ManifestError{Path: path, Error: f.message})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// contentStamp names what is at path: the hash of a file's content,
// "missing", or "unreadable" (a directory, or a file the agent may not
// read).
func contentStamp(path string) string {
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	}
	return "unreadable"
}

// missingDir reports whether err says that the manifest directory dir does
// not exist.
func missingDir(err error, dir string) bool {
	fe, ok := errors.AsType[*manifests.FileError](err)
	return ok && fe.Path == dir && errors.Is(err, fs.ErrNotExist)
}
