// Package objectcache reads the Secrets and ConfigMaps that the node's
// pods reference (volumes, projected sources, env), with the node's
// identity, and keeps each for a while (kubelet: pkg/kubelet/secret,
// pkg/kubelet/configmap and their TTL-based manager in
// pkg/kubelet/util/manager). The Node authorizer lets the node get only
// the objects its pods reference, so a pod cannot have the node read
// another namespace's, or an object no pod of the node names. A pod is
// synced about once a sync period; keeping what was read for that long
// spares the API server a read per pod and sync, and a changed object
// still reaches the pod's files within about two periods. One generic
// Cache serves both kinds, and agent/runtimeclass's RuntimeClasses.
package objectcache

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"
)

// Cache reads objects of one kind through get and keeps each for its TTL
// (the kubelet's objectStore). An immutable object is kept without being
// read again for as long as pods keep asking for it: it cannot change,
// only be deleted, and the kubelet keeps showing it then too. A failed
// read (forbidden, not found, the API server away) is not kept, so the
// next call tries again and the pod's sync back-off paces the retries;
// but a failed refresh other than not found returns the object read
// before, as the kubelet does. Its methods may run concurrently.
type Cache[T metav1.Object] struct {
	get       func(ctx context.Context, namespace, name string, opts metav1.GetOptions) (T, error)
	immutable func(T) bool
	// resource names the kind in a not-found error: "secret", as the
	// kubelet's watching managers say (secret "x" not found).
	resource schema.GroupResource
	clock    clock.PassiveClock
	ttl      time.Duration

	mu      sync.Mutex
	entries map[types.NamespacedName]entry[T]
}

// entry is an object read, when, and when a pod last asked for it.
type entry[T any] struct {
	obj  T
	read time.Time
	used time.Time
}

// NewCache returns a cache of resource's objects (a cluster-scoped one's
// namespace is "") that reads through get; immutable tells an object that
// cannot change. clk nil is the real
// clock.
func NewCache[T metav1.Object](resource schema.GroupResource, get func(context.Context, string, string, metav1.GetOptions) (T, error), immutable func(T) bool, clk clock.PassiveClock, ttl time.Duration) *Cache[T] {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Cache[T]{get: get, immutable: immutable, resource: resource, clock: clk, ttl: ttl, entries: map[types.NamespacedName]entry[T]{}}
}

// Get returns namespace/name, as read at most the TTL ago (or ever, if it
// is immutable). The object is shared by every caller: it must not be
// changed. An object that does not exist is an error apierrors.IsNotFound
// recognizes.
func (c *Cache[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	k := types.NamespacedName{Namespace: namespace, Name: name}
	now := c.clock.Now()
	c.mu.Lock()
	// What no pod asked for in two TTLs goes: pods are synced about once
	// a TTL, so their objects stay, and those of pods gone are dropped.
	for other, e := range c.entries {
		if now.Sub(e.used) >= 2*c.ttl {
			delete(c.entries, other)
		}
	}
	e, cached := c.entries[k]
	if cached {
		e.used = now
		c.entries[k] = e
	}
	c.mu.Unlock()
	if cached && (c.immutable(e.obj) || now.Sub(e.read) < c.ttl) {
		return e.obj, nil
	}
	// An object read before is probably unchanged: the API server's
	// watch cache may answer (resourceVersion "0"), sparing etcd, as the
	// kubelet's periodic refresh does.
	var opts metav1.GetOptions
	if cached {
		opts.ResourceVersion = "0"
	}
	obj, err := c.get(ctx, namespace, name, opts)
	switch {
	case err == nil:
	case cached && !apierrors.IsNotFound(err):
		// The API server away: the object read before is still the
		// best there is (the kubelet's objectStore keeps it too); the
		// next call tries again.
		return e.obj, nil
	default:
		c.mu.Lock()
		delete(c.entries, k)
		c.mu.Unlock()
		if apierrors.IsNotFound(err) {
			err = apierrors.NewNotFound(c.resource, name)
		}
		var zero T
		return zero, err
	}
	c.mu.Lock()
	c.entries[k] = entry[T]{obj: obj, read: now, used: now}
	c.mu.Unlock()
	return obj, nil
}

// Objects are the Secrets and ConfigMaps the node's pods reference, each
// kind in its own cache: volume.API's and envvars' getters.
type Objects struct {
	configMaps *Cache[*v1.ConfigMap]
	secrets    *Cache[*v1.Secret]
}

// New returns the caches of both kinds, reading through client and
// keeping what they read for ttl; clk nil is the real clock.
func New(client interface {
	corev1.ConfigMapsGetter
	corev1.SecretsGetter
}, clk clock.PassiveClock, ttl time.Duration) *Objects {
	getConfigMap := func(ctx context.Context, ns, name string, opts metav1.GetOptions) (*v1.ConfigMap, error) {
		return client.ConfigMaps(ns).Get(ctx, name, opts)
	}
	getSecret := func(ctx context.Context, ns, name string, opts metav1.GetOptions) (*v1.Secret, error) {
		return client.Secrets(ns).Get(ctx, name, opts)
	}
	return &Objects{
		configMaps: NewCache(v1.Resource("configmap"), getConfigMap, func(cm *v1.ConfigMap) bool { return cm.Immutable != nil && *cm.Immutable }, clk, ttl),
		secrets:    NewCache(v1.Resource("secret"), getSecret, func(s *v1.Secret) bool { return s.Immutable != nil && *s.Immutable }, clk, ttl),
	}
}

// ConfigMap is namespace/name, as Cache.Get returns it.
func (o *Objects) ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error) {
	return o.configMaps.Get(ctx, namespace, name)
}

// Secret is namespace/name, as Cache.Get returns it.
func (o *Objects) Secret(ctx context.Context, namespace, name string) (*v1.Secret, error) {
	return o.secrets.Get(ctx, namespace, name)
}
