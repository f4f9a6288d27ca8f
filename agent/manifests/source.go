package manifests

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/podlife/podlife/kubetypes"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Source is the static pods of one manifest directory, as of the last Scan.
// Its methods may be called from several goroutines; scans are serialised.
type Source struct {
	dir      string
	nodeName string
	clock    clock.WithTicker

	mu       sync.Mutex
	files    map[string]*file        // by path, every manifest of the last listing
	reported map[types.UID]*reported // the pods reported and not removed
	dirErr   string                  // the directory error last reported
	dirFault error                   // the directory's fault as of the last Scan
	// removed are the paths the watch saw removed since the last Scan
	// (Removed), whatever is at them now.
	removed map[string]bool
}

// file is what is known of one manifest path.
type file struct {
	read bool              // sum is the content last read
	sum  [sha256.Size]byte // so an unchanged file is not decoded again
	pod  *v1.Pod           // the last good decode; kept while the file is bad
	err  error             // why the content last read is not used
	last string            // the errors last reported for this file
	// faults are why the file is not used (or its newest content is not),
	// as of the last Scan.
	faults []error
	// modTime orders files that newly claim one pod name or UID.
	modTime time.Time
}

// reported is a pod as last reported: decoded is Decode's result, compared
// with the next decode; pod is the copy handed out, with config.seen.
type reported struct {
	path    string
	decoded *v1.Pod
	pod     *v1.Pod
}

// NewSource returns a source for the manifests in dir, for the node named
// nodeName. clk gives config.seen and Run's ticks (nil: the real clock); it
// is a WithTicker rather than a PassiveClock so Run needs nothing else.
// dir is made absolute: it is part of every derived UID, so starting the
// agent from another working directory must not change them.
func NewSource(dir, nodeName string, clk clock.WithTicker) (*Source, error) {
	if err := checkNodeName(nodeName); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("manifest directory is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("manifest directory %q: %w", dir, err)
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Source{
		dir:      abs,
		nodeName: nodeName,
		clock:    clk,
		files:    map[string]*file{},
		reported: map[types.UID]*reported{},
	}, nil
}

// Removed records that the file at path was removed (or renamed away): the
// next Scan reports the removal of the pod it had, and, if a file is back
// at path, that file's pod as a new one, even if it is the same pod. The
// directory alone cannot show a file removed and written again between
// two scans; the kubelet, which sees each inotify event, stops and starts
// its pod again.
func (s *Source) Removed(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed == nil {
		s.removed = map[string]bool{}
	}
	s.removed[filepath.Clean(path)] = true
}

// Dir is the absolute path of the manifest directory.
func (s *Source) Dir() string { return s.dir }

// Scan reads the directory and returns how its pods changed since the last
// Scan, in the order documented at sortChanges, and the errors not reported
// before: a *FileError for a manifest, a *DirError for the directory. A
// missing directory counts as empty (as in the kubelet: removing it removes
// its pods); any other listing error changes nothing.
func (s *Source) Scan() (changes []kubetypes.Change, errs []error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	paths, err := s.list()
	switch {
	case err == nil:
		s.dirErr, s.dirFault = "", nil
	case errors.Is(err, fs.ErrNotExist):
		errs = s.reportDirErr(err, errs)
		paths = nil
	default:
		return nil, s.reportDirErr(err, errs)
	}
	s.files = s.read(paths)
	accepted, conflicts := s.resolve(paths)
	errs = append(errs, s.fileErrors(paths, conflicts)...)
	removed := s.removed
	s.removed = nil
	return s.diff(accepted, removed), errs
}

func (s *Source) reportDirErr(err error, errs []error) []error {
	err = &DirError{Dir: s.dir, Err: unwrapPath(err)}
	s.dirFault = err
	if msg := err.Error(); msg != s.dirErr {
		s.dirErr = msg
		errs = append(errs, err)
	}
	return errs
}

// list returns the manifest paths in dir, sorted. Like the kubelet it skips
// dotfiles and does not recurse; it also skips other extensions, and
// anything that is not a regular file once symlinks are followed (reading a
// FIFO would block the scan).
func (s *Source) list() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !isManifestName(name) {
			continue
		}
		p := filepath.Join(s.dir, name)
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			info, err := os.Stat(p)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				continue // dangling
			case err != nil:
				paths = append(paths, p) // the read reports why it cannot be followed
				continue
			}
			mode = info.Mode()
		}
		if mode.IsRegular() {
			paths = append(paths, p)
		}
	}
	return paths, nil // os.ReadDir sorts by name, so paths are sorted
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// read brings the state of every listed file up to date. Only a file whose
// content hash changed is decoded again. A file that cannot be read or
// decoded keeps its last good pod.
func (s *Source) read(paths []string) map[string]*file {
	files := make(map[string]*file, len(paths))
	for _, p := range paths {
		f := s.files[p]
		if f == nil {
			f = &file{}
		}
		data, modTime, err := readManifest(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing
		}
		files[p] = f
		f.modTime = modTime
		if err != nil {
			f.read, f.err = false, fileErr(p, fmt.Errorf("cannot read: %w", unwrapPath(err)))
			continue
		}
		sum := sha256.Sum256(data)
		if f.read && f.sum == sum {
			continue
		}
		f.read, f.sum = true, sum
		pod, err := Decode(p, data, s.nodeName)
		if err != nil {
			f.err = err
			continue
		}
		f.pod, f.err = pod, nil
	}
	return files
}

// fileErrors returns the errors of each file that differ from those last
// reported for it: a bad file is reported once per content (and conflict),
// not on every scan; once it is fine again, a new fault is reported anew.
func (s *Source) fileErrors(paths []string, conflicts map[string]error) []error {
	var errs []error
	for _, p := range paths {
		f := s.files[p]
		if f == nil {
			continue
		}
		var now []error
		if f.err != nil {
			now = append(now, f.err)
		}
		if c := conflicts[p]; c != nil {
			now = append(now, c)
		}
		key := ""
		if len(now) > 0 {
			key = fmt.Sprintf("%x %v", f.sum, now)
		}
		if key != f.last && key != "" {
			errs = append(errs, now...)
		}
		f.last, f.faults = key, now
	}
	return errs
}

// Faults returns what stands in the way as of the last Scan, whether
// reported by that Scan or an earlier one: the directory's fault (a
// *DirError), then each file's (*FileError), by path. A fault is gone once
// a Scan found it mended, or its file removed.
func (s *Source) Faults() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []error
	if s.dirFault != nil {
		out = append(out, s.dirFault)
	}
	for _, p := range slices.Sorted(maps.Keys(s.files)) {
		out = append(out, s.files[p].faults...)
	}
	return out
}

func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
