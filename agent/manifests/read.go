package manifests

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// MaxManifestSize is the largest manifest read, the kubelet's cap for its
// config sources (10 MiB). A larger file is rejected without being read: it
// would stall the scan, and its pod would make sandbox requests larger than
// the runtime takes.
const MaxManifestSize = 10 << 20

// readManifest reads the manifest at path and says when it was modified. A
// file over MaxManifestSize is refused by its size before reading, and by
// what is read in case it grew meanwhile. It is opened non-blocking, so a
// FIFO swapped in after the listing cannot block the scan.
func readManifest(path string) ([]byte, time.Time, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, time.Time{}, err
	case !info.Mode().IsRegular():
		return nil, time.Time{}, fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	case info.Size() > MaxManifestSize:
		return nil, info.ModTime(), tooLarge(fmt.Sprintf("%d bytes", info.Size()))
	}
	data, err := readAtMostMax(f)
	return data, info.ModTime(), err
}

// readAtMostMax reads r to its end, but no more than MaxManifestSize bytes.
func readAtMostMax(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxManifestSize {
		return nil, tooLarge(fmt.Sprintf("more than %d bytes", MaxManifestSize))
	}
	return data, nil
}

func tooLarge(size string) error {
	return fmt.Errorf("manifest too large: %s, over the limit of %d bytes (10 MiB); not read", size, MaxManifestSize)
}
