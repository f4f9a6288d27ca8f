package manifests

import (
	"context"
	"time"
)

// DefaultInterval is the kubelet's period for re-listing its manifest
// directory.
const DefaultInterval = 20 * time.Second

// Run scans at once and then every interval (DefaultInterval if not
// positive), reporting each scan's errors to report (may be nil) and then
// its changes, in order, to handle. It returns when ctx is done; a scan's
// changes are all handled even if ctx ends meanwhile, since the Source
// counts them as reported.
//
// Polling only, where the kubelet adds inotify: it needs no extra
// dependency, works on every filesystem (NFS, FUSE, bind mounts from a
// configmap), and a manifest change is rare enough that an interval's delay
// costs nothing.
func (s *Source) Run(ctx context.Context, interval time.Duration, handle func(Change), report func(error)) {
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
			if ctx.Err() != nil {
				return
			}
		}
	}
}
