// Package runtimeclass resolves a pod's runtimeClassName to the runtime
// handler its sandbox runs with, reading RuntimeClasses (node.k8s.io/v1)
// with the node's identity, which the Node authorizer lets read them
// (kubelet: pkg/kubelet/runtimeclass, whose manager watches them through
// an informer). A RuntimeClass is read once per sandbox a pod creates, so
// a cache with a TTL spares the API server without a watch; a changed
// class reaches new sandboxes within the TTL.
package runtimeclass

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	nodev1 "k8s.io/client-go/kubernetes/typed/node/v1"
	"k8s.io/utils/clock"
)

// Cache reads RuntimeClasses through the API and keeps each handler for
// its TTL. A failed read (not found, the API server away) is not kept:
// the next sandbox reads again. Its methods may run concurrently.
type Cache struct {
	client nodev1.RuntimeClassesGetter
	clock  clock.PassiveClock
	ttl    time.Duration

	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	handler string
	read    time.Time
}

// New returns a cache that reads through client and keeps a handler for
// ttl; clk nil is the real clock.
func New(client nodev1.RuntimeClassesGetter, clk clock.PassiveClock, ttl time.Duration) *Cache {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Cache{client: client, clock: clk, ttl: ttl, entries: map[string]entry{}}
}

// RuntimeHandler is the handler of RuntimeClass name, as read at most the
// TTL ago. A class that does not exist is the NotFound error the kubelet's
// lister gives (runtimeclass.node.k8s.io "name" not found); another
// failure says the lookup failed, as the kubelet's does.
func (c *Cache) RuntimeHandler(ctx context.Context, name string) (string, error) {
	now := c.clock.Now()
	c.mu.Lock()
	for other, e := range c.entries {
		if now.Sub(e.read) >= c.ttl {
			delete(c.entries, other)
		}
	}
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok {
		return e.handler, nil
	}
	rc, err := c.client.RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", apierrors.NewNotFound(schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclass"}, name)
	}
	if err != nil {
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %v", name, err)
	}
	c.mu.Lock()
	c.entries[name] = entry{handler: rc.Handler, read: now}
	c.mu.Unlock()
	return rc.Handler, nil
}
