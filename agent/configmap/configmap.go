// Package configmap reads the ConfigMaps that the node's pods' projected
// volumes show, with the node's identity, and keeps each for a while
// (kubelet: pkg/kubelet/configmap, its TTL-based manager). The Node
// authorizer lets the node read only the ConfigMaps its pods reference,
// so a pod cannot have the node read another namespace's, or an object
// no pod of the node names. A pod is synced about once a sync period;
// keeping what was read for that long spares the API server a read per
// pod and sync, and a changed ConfigMap still reaches the pod's files
// within about two periods.
package configmap

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"
)

// Cache reads ConfigMaps through the API and keeps each for its TTL.
// Only what was read is kept: a failed read (forbidden, not found, the
// API server away) is tried again at the next call, so the pod's sync
// back-off paces the retries. Its methods may run concurrently.
type Cache struct {
	client corev1.ConfigMapsGetter
	clock  clock.PassiveClock
	ttl    time.Duration

	mu      sync.Mutex
	entries map[types.NamespacedName]entry
}

// entry is a ConfigMap read, and when.
type entry struct {
	cm   *v1.ConfigMap
	read time.Time
}

// New returns a cache that reads through client and keeps a ConfigMap
// for ttl; clk nil is the real clock.
func New(client corev1.ConfigMapsGetter, clk clock.PassiveClock, ttl time.Duration) *Cache {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Cache{client: client, clock: clk, ttl: ttl, entries: map[types.NamespacedName]entry{}}
}

// ConfigMap returns namespace/name, as read at most the TTL ago. The
// object is shared by every caller: it must not be changed.
func (c *Cache) ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error) {
	k := types.NamespacedName{Namespace: namespace, Name: name}
	now := c.clock.Now()
	c.mu.Lock()
	// What expired goes, so ConfigMaps no pod shows any more are not
	// kept.
	for other, e := range c.entries {
		if now.Sub(e.read) >= c.ttl {
			delete(c.entries, other)
		}
	}
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok {
		return e.cm, nil
	}
	cm, err := c.client.ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.entries[k] = entry{cm: cm, read: now}
	c.mu.Unlock()
	return cm, nil
}
