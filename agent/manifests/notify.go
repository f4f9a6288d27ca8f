package manifests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Notify watches dir with inotify, as the kubelet's file source does, and
// sends on the returned channel when any entry of dir changed, so that Run
// scans at once instead of at its next tick: a removed manifest's pod is
// killed within milliseconds, not within fileCheckFrequency. Sends never
// block; a burst of changes while a scan runs is one more scan.
//
// The interval's polling stays the ground truth: Notify only hastens it.
// A directory that does not exist yet is watched once it does (tried
// every retry); a watch that fails is reported to report (may be nil) and
// set up again after retry. The watch ends with ctx.
func Notify(ctx context.Context, dir string, retry time.Duration, report func(error)) <-chan struct{} {
	return notify(ctx, dir, retry, report, nil)
}

// Watch is Notify for s's directory, which also tells s of every file
// removed or renamed away (Removed) before it wakes the scan: a manifest
// removed and written again before the scan runs is still a removal, and
// its pod is stopped and started again, as the kubelet's file source,
// which sends each inotify event on its own, does.
func (s *Source) Watch(ctx context.Context, retry time.Duration, report func(error)) <-chan struct{} {
	return notify(ctx, s.dir, retry, report, s.Removed)
}

// notify is Notify, calling removed (may be nil) with each path removed or
// renamed away.
func notify(ctx context.Context, dir string, retry time.Duration, report func(error), removed func(path string)) <-chan struct{} {
	if retry <= 0 {
		retry = DefaultInterval
	}
	wake := make(chan struct{}, 1)
	go func() {
		for {
			err := watch(ctx, dir, wake, removed)
			if ctx.Err() != nil {
				return
			}
			if err != nil && report != nil {
				report(fmt.Errorf("watching %s for changes (it is still read every %v): %w", dir, retry, err))
			}
			t := time.NewTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	return wake
}

// watch sends on wake for every event in dir, after calling removed (may
// be nil) for a path removed or renamed away, until ctx ends or the watch
// fails. A missing dir is no error: Scan reports it.
func watch(ctx context.Context, dir string, wake chan<- struct{}, removed func(path string)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	if err := w.Add(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	// The directory may have changed between the caller's last scan and
	// the watch: one scan more covers it.
	poke(wake)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("watch closed")
			}
			if ev.Name == dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return nil // the directory itself went: watched again once it is back
			}
			if removed != nil && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				removed(ev.Name)
			}
			poke(wake)
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("watch closed")
			}
			return err
		}
	}
}

func poke(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}
