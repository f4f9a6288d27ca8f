// Package runtimeclass resolves a pod's runtimeClassName to the runtime
// handler its sandbox runs with, reading RuntimeClasses (node.k8s.io/v1)
// with the node's identity, which the Node authorizer lets read them
// (kubelet: pkg/kubelet/runtimeclass, whose manager watches them through
// an informer). A RuntimeClass is read once per sandbox a pod creates, so
// agent/objectcache's TTL cache spares the API server without a watch; a
// changed class reaches new sandboxes within the TTL.
package runtimeclass

import (
	"context"
	"fmt"
	"time"

	nodev1api "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	nodev1 "k8s.io/client-go/kubernetes/typed/node/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/agent/objectcache"
)

// Cache reads RuntimeClasses through the API and keeps each for its TTL,
// as objectcache.Cache does. Its methods may run concurrently.
type Cache struct {
	classes *objectcache.Cache[*nodev1api.RuntimeClass]
}

// New returns a cache that reads through client and keeps a class for
// ttl; clk nil is the real clock.
func New(client nodev1.RuntimeClassesGetter, clk clock.PassiveClock, ttl time.Duration) *Cache {
	get := func(ctx context.Context, _, name string, opts metav1.GetOptions) (*nodev1api.RuntimeClass, error) {
		return client.RuntimeClasses().Get(ctx, name, opts)
	}
	mutable := func(*nodev1api.RuntimeClass) bool { return false }
	return &Cache{classes: objectcache.NewCache(nodev1api.Resource("runtimeclass"), get, mutable, clk, ttl)}
}

// RuntimeHandler is the handler of RuntimeClass name, as read at most the
// TTL ago. A class that does not exist is the NotFound error the kubelet's
// lister gives (runtimeclass.node.k8s.io "name" not found); another
// failure says the lookup failed, as the kubelet's does.
func (c *Cache) RuntimeHandler(ctx context.Context, name string) (string, error) {
	rc, err := c.classes.Get(ctx, "", name)
	if apierrors.IsNotFound(err) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %v", name, err)
	}
	return rc.Handler, nil
}
