package manifests

import (
	"context"
	"time"

	"github.com/podlife/podlife/kubetypes"
)

// DefaultInterval is the kubelet's period for re-listing its manifest
// directory.
const DefaultInterval = 20 * time.Second

// Run scans at once, then every interval (DefaultInterval if not
// positive) and whenever wake (may be nil; Notify's) fires, reporting each
// scan's errors to report (may be nil) and then its changes, in order, to
// handle. It returns when ctx is done; a scan's changes are all handled
// even if ctx ends meanwhile, since the Source counts them as reported.
//
// As the kubelet, a change is seen at once through inotify (Notify) and
// the interval's re-read catches whatever the watch may miss (a
// filesystem without inotify: NFS, FUSE).
func (s *Source) Run(ctx context.Context, interval time.Duration, wake <-chan struct{}, handle func(kubetypes.Change), report func(error)) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if ctx.Err() != nil {
		return
	}
	// Made before the first scan, so ticks keep to the interval whatever a
	// scan costs, and a test sees the ticker once it sees the first scan.
	ticker := s.clock.NewTicker(interval)
	defer ticker.Stop()
	for {
		changes, errs := s.Scan()
		if report != nil {
			for _, err := range errs {
				report(err)
			}
		}
		for _, c := range changes {
			handle(c)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-wake:
		}
		if ctx.Err() != nil {
			return
		}
	}
}
