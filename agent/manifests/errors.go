package manifests

import (
	"errors"
	"io/fs"
)

// FileError is an error about one manifest file. Every error this package
// returns for a file is one, so the caller can tell which file to fix.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

func fileErr(path string, err error) error { return &FileError{Path: path, Err: err} }

// DirError is an error about the manifest directory as a whole rather than
// one file. errors.Is(err, fs.ErrNotExist) tells a missing directory, which
// holds no pods, from one that cannot be listed, which changes nothing.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string {
	if errors.Is(e.Err, fs.ErrNotExist) {
		return "manifest directory " + e.Dir + " does not exist"
	}
	return "cannot list the manifest directory " + e.Dir + ": " + e.Err.Error()
}

func (e *DirError) Unwrap() error { return e.Err }
