package shutdown

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Band is one step of a graceful shutdown: the pods whose priority falls in
// the band get Period to stop before the next band's pods are asked to.
type Band struct {
	Priority int32
	Period   time.Duration
}

// The priorities the two-duration configuration maps to: the default
// priority of a pod without a priority class, and the kubelet's
// system-critical priority (scheduling.SystemCriticalPriority).
const (
	DefaultPriority  int32 = 0
	CriticalPriority int32 = 2000000000
)

// Bands validates a shutdown configuration as the kubelet does and returns
// its bands sorted by priority; an empty result disables graceful shutdown.
//
// Either form may be used, not both: shutdownGracePeriod with its last
// criticalPeriod reserved for critical pods, or explicit byPriority bands.
// The durations must be 0 or at least 1 s, with critical <= total; they
// become a band at DefaultPriority for total-critical and one at
// CriticalPriority for critical, each truncated to whole seconds, because
// the kubelet's configuration and grace periods count whole seconds. For
// the same reason, byPriority periods must be whole non-negative seconds,
// and two bands may not share a priority (a pod would fit both).
func Bands(shutdownGracePeriod, criticalPeriod time.Duration, byPriority []Band) ([]Band, error) {
	if len(byPriority) > 0 {
		if shutdownGracePeriod != 0 || criticalPeriod != 0 {
			return nil, errors.New("cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod/shutdownGracePeriodCriticalPods")
		}
		return sortedBands(byPriority)
	}
	if err := validateDurations(shutdownGracePeriod, criticalPeriod); err != nil {
		return nil, err
	}
	if shutdownGracePeriod == 0 {
		return nil, nil
	}
	return []Band{
		{Priority: DefaultPriority, Period: (shutdownGracePeriod - criticalPeriod).Truncate(time.Second)},
		{Priority: CriticalPriority, Period: criticalPeriod.Truncate(time.Second)},
	}, nil
}

func validateDurations(total, critical time.Duration) error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"shutdownGracePeriod", total}, {"shutdownGracePeriodCriticalPods", critical}} {
		switch {
		case d.v < 0:
			errs = append(errs, fmt.Errorf("%s %v must be >= 0", d.name, d.v))
		case d.v > 0 && d.v < time.Second:
			errs = append(errs, fmt.Errorf("%s %v must be either zero or otherwise >= 1s", d.name, d.v))
		}
	}
	if critical > total {
		errs = append(errs, fmt.Errorf("shutdownGracePeriodCriticalPods %v must be <= shutdownGracePeriod %v", critical, total))
	}
	return errors.Join(errs...)
}

// sortedBands validates explicit bands and returns a sorted copy.
func sortedBands(bands []Band) ([]Band, error) {
	var errs []error
	for i, b := range bands {
		if b.Period < 0 || b.Period%time.Second != 0 {
			errs = append(errs, fmt.Errorf("shutdownGracePeriodByPodPriority[%d] (priority %d): period %v must be a whole number of seconds >= 0", i, b.Priority, b.Period))
		}
	}
	sorted := slices.Clone(bands)
	slices.SortStableFunc(sorted, func(a, b Band) int { return cmp.Compare(a.Priority, b.Priority) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Priority == sorted[i-1].Priority {
			errs = append(errs, fmt.Errorf("shutdownGracePeriodByPodPriority: priority %d appears more than once", sorted[i].Priority))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return sorted, nil
}
