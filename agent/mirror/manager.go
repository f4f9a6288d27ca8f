package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/podlife/podlife/kubetypes"
)

// Config configures a Manager.
type Config struct {
	Client   kubernetes.Interface // the node's identity (system:node:<NodeName>)
	NodeName string
	// Node returns the registered Node, whose UID mirror pods name as their
	// owner; false (not registered yet): no mirror pod is created.
	Node   func() (*v1.Node, bool)
	Logger *slog.Logger // nil: no logs
}

// Manager creates and deletes a node's mirror pods. Sync is not called
// concurrently with itself.
type Manager struct {
	cfg Config
	log *slog.Logger
}

// New returns a Manager for cfg.
func New(cfg Config) *Manager {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{cfg: cfg, log: log.With("node", cfg.NodeName)}
}

// Sync makes the mirror pods in the API match statics, the static pods
// whose mirrors are to be reconciled now (the caller's choice: the kubelet
// reconciles a static pod's mirror in its sync, so only a started pod that
// is not terminating), given mirrors, the API's mirror pods on this node as
// the caller's informer has them (other pods in it are ignored). It
// creates a missing mirror; deletes and recreates a mirror whose static pod
// changed (another config.hash), that is being deleted, or that an older
// Node owns; and deletes a mirror of no pod in statics unless
// keep(fullName) says it stays (another static pod of that name waits to
// start, or the one that had it still terminates). Every deletion is of the
// UID seen (a mirror someone recreated is left alone). Errors name the
// pods, are logged, and are returned joined; the caller calls Sync again at
// its next housekeeping.
func (m *Manager) Sync(ctx context.Context, statics, mirrors []*v1.Pod, keep func(fullName string) bool) error {
	existing := make(map[string]*v1.Pod, len(mirrors))
	for _, p := range mirrors {
		if kubetypes.IsMirror(p) && p.Spec.NodeName == m.cfg.NodeName {
			existing[kubetypes.FullName(p.Name, p.Namespace)] = p
		}
	}
	var errs []error
	node, registered := m.cfg.Node()
	wanted := make(map[string]bool, len(statics))
	for _, static := range statics {
		fullName := kubetypes.FullName(static.Name, static.Namespace)
		wanted[fullName] = true
		if !registered || node.DeletionTimestamp != nil {
			continue // the kubelet's rule: no mirror without a live Node
		}
		if err := m.syncOne(ctx, static, existing[fullName], node); err != nil {
			errs = append(errs, err)
		}
	}
	for fullName, mirror := range existing {
		if wanted[fullName] || (keep != nil && keep(fullName)) {
			continue
		}
		if err := m.delete(ctx, mirror, "its static pod is gone"); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	if err != nil {
		m.log.Warn("Cannot sync mirror pods", "err", err)
	}
	return err
}

// syncOne makes mirror, the static pod's mirror in the API or nil, the
// live mirror of static.
func (m *Manager) syncOne(ctx context.Context, static, mirror *v1.Pod, node *v1.Node) error {
	hash, err := staticHash(static)
	if err != nil {
		return err
	}
	if mirror != nil {
		if isMirrorOf(mirror, hash, node.UID) {
			return nil
		}
		if err := m.delete(ctx, mirror, "it is not the mirror of the static pod as it is now"); err != nil {
			return err
		}
	}
	return m.create(ctx, static, hash, node)
}

// create creates the mirror of static. A pod of that name already there
// is fine if it is the mirror wanted (the informer had not seen it yet).
func (m *Manager) create(ctx context.Context, static *v1.Pod, hash string, node *v1.Node) error {
	pods := m.cfg.Client.CoreV1().Pods(static.Namespace)
	created, err := pods.Create(ctx, newMirrorPod(static, hash, node), metav1.CreateOptions{})
	if err == nil {
		m.log.Info("Created a mirror pod", "pod", static.Namespace+"/"+static.Name, "uid", created.UID, "staticUID", static.UID)
		return nil
	}
	if apierrors.IsAlreadyExists(err) {
		there, getErr := pods.Get(ctx, static.Name, metav1.GetOptions{})
		if getErr == nil && isMirrorOf(there, hash, node.UID) {
			return nil
		}
		if getErr == nil && !kubetypes.IsMirror(there) {
			return fmt.Errorf("mirror pod %s/%s of static pod UID %s: a pod that is not a mirror (UID %s) has its name",
				static.Namespace, static.Name, static.UID, there.UID)
		}
	}
	return fmt.Errorf("creating mirror pod %s/%s of static pod UID %s: %w", static.Namespace, static.Name, static.UID, err)
}

// delete deletes mirror at once (grace 0), only if it still has its UID.
// A mirror already gone, or replaced, is no error.
func (m *Manager) delete(ctx context.Context, mirror *v1.Pod, why string) error {
	zero := int64(0)
	uid := mirror.UID
	err := m.cfg.Client.CoreV1().Pods(mirror.Namespace).Delete(ctx, mirror.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	switch {
	case err == nil:
		m.log.Info("Deleted a mirror pod", "pod", mirror.Namespace+"/"+mirror.Name, "uid", uid, "why", why)
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil
	}
	return fmt.Errorf("deleting mirror pod %s/%s (UID %s), as %s: %w", mirror.Namespace, mirror.Name, uid, why, err)
}
