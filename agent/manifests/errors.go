package manifests

// FileError is an error about one manifest file. Every error this package
// returns for a file is one, so the caller can tell which file to fix.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

func fileErr(path string, err error) error { return &FileError{Path: path, Err: err} }
