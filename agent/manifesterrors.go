package agent

import (
	"errors"
	"io/fs"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/manifests"
)

// manifestErrors are the faults of the manifest source as of its last
// scan: the source knows when one is mended, the log only says when one
// appeared.
func (a *Agent) manifestErrors() []api.ManifestError {
	if a.source == nil {
		return nil
	}
	var out []api.ManifestError
	for _, err := range a.source.Faults() {
		out = append(out, manifestError(err))
	}
	return out
}

// manifestError names the file or directory of a fault of the source.
func manifestError(err error) api.ManifestError {
	if de, ok := errors.AsType[*manifests.DirError](err); ok {
		if errors.Is(err, fs.ErrNotExist) {
			return api.ManifestError{Path: de.Dir, Error: "the manifest directory does not exist"}
		}
		return api.ManifestError{Path: de.Dir, Error: de.Err.Error()}
	}
	if fe, ok := errors.AsType[*manifests.FileError](err); ok {
		return api.ManifestError{Path: fe.Path, Error: fe.Err.Error()}
	}
	return api.ManifestError{Error: err.Error()}
}

// isMissingDir reports whether err says the manifest directory does not
// exist.
func isMissingDir(err error) bool {
	_, ok := errors.AsType[*manifests.DirError](err)
	return ok && errors.Is(err, fs.ErrNotExist)
}
