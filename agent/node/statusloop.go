package node

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	nodeutil "k8s.io/component-helpers/node/util"
)

// statusUpdateRetries is how many times in a row a status update is tried
// (the kubelet's nodeStatusUpdateRetry).
const statusUpdateRetries = 5

// keepStatus updates the status at once, then every StatusUpdateFrequency
// and whenever SetShuttingDown or ClearShuttingDown asks, until ctx ends.
func (m *Manager) keepStatus(ctx context.Context) {
	ticker := m.cfg.Clock.NewTicker(m.cfg.StatusUpdateFrequency)
	defer ticker.Stop()
	var (
		errs       errorLog
		lastReport time.Time // when the status was last written; zero: never by this Manager
	)
	for {
		// Read before the status is computed: a status written without
		// error then says the node is shutting down, unless a
		// ClearShuttingDown came between (a cancellation racing the
		// shutdown's first write, which then returns early).
		shutdown, shuttingDown := m.shutdownState()
		var err error
		for range statusUpdateRetries {
			if err = m.updateStatus(ctx, &lastReport); err == nil || ctx.Err() != nil {
				break
			}
		}
		switch {
		case ctx.Err() != nil:
		case err != nil:
			errs.failed(m.log, "Cannot update the node's status; retrying", err)
		default:
			errs.succeeded(m.log, "Updated the node's status after errors")
			if shuttingDown {
				shutdown.close()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-m.statusChange:
		}
	}
}

// updateStatus computes the status from the Node as the API has it and
// writes it if it changed or was last written StatusReportFrequency ago
// (the kubelet's tryUpdateNodeStatus).
func (m *Manager) updateStatus(ctx context.Context, lastReport *time.Time) error {
	current, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("getting node %s: %w", m.cfg.NodeName, err)
	}
	m.setNode(current)
	now := m.cfg.Clock.Now()
	updated, changed := withDesired(current, m.desired(), now)
	if !changed && !lastReport.IsZero() && now.Sub(*lastReport) < m.cfg.StatusReportFrequency {
		return nil
	}
	patched, _, err := nodeutil.PatchNodeStatus(m.cfg.Client.CoreV1(), types.NodeName(m.cfg.NodeName), current, updated)
	if err != nil {
		return fmt.Errorf("node %s (UID %s): %w", m.cfg.NodeName, current.UID, err)
	}
	*lastReport = now
	m.setNode(patched)
	if changed {
		m.log.Debug("Wrote the node's changed status", "ready", readyStatus(patched))
	}
	return nil
}
