package node

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubelet's registration back-off: 100 ms doubling up to 7 s.
const (
	registerFirstDelay = 100 * time.Millisecond
	registerMaxDelay   = 7 * time.Second
)

// register creates the Node or adopts the existing one, retrying with
// back-off until it succeeds (true) or ctx ends (false). An adopted Node's
// labels and status are brought up to date by the first status update.
func (m *Manager) register(ctx context.Context) bool {
	var errs errorLog
	delay := registerFirstDelay
	for {
		node, err := m.tryRegister(ctx)
		if err == nil {
			errs.succeeded(m.log, "Registered the node after errors")
			m.log.Info("Registered the node", "uid", node.UID)
			m.setNode(node)
			return true
		}
		errs.failed(m.log, "Cannot register the node; retrying", err)
		t := m.cfg.Clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
		delay = min(2*delay, registerMaxDelay)
	}
}

// tryRegister creates the Node with its whole status, or, if it exists (a
// restart, or creating is forbidden but getting is not), returns it.
func (m *Manager) tryRegister(ctx context.Context) (*v1.Node, error) {
	nodes := m.cfg.Client.CoreV1().Nodes()
	initial, _ := withDesired(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: m.cfg.NodeName}}, m.desired(), m.cfg.Clock.Now())
	initial.Spec.Taints = append([]v1.Taint(nil), m.cfg.Taints...)
	created, err := nodes.Create(ctx, initial, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("creating node %s: %w", m.cfg.NodeName, err)
	}
	existing, getErr := nodes.Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if getErr != nil {
		return nil, fmt.Errorf("creating node %s: %w; getting it: %w", m.cfg.NodeName, err, getErr)
	}
	m.log.Info("The node was registered before; adopting it", "uid", existing.UID)
	return existing, nil
}
