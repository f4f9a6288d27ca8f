// Package services is the cluster's Services as the node agent watches
// them, the source of the Service variables of the containers' env (the
// kubelet's serviceLister, made in NewMainKubelet from a client-go
// informer over every namespace). The Node authorizer and the system:node
// role let a node list and watch Services.
package services

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Cache is the Services of every namespace, kept by an informer; it
// implements envvars.ServiceLister.
type Cache struct {
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
	lister   corelisters.ServiceLister
}

// New returns a cache of client's Services; nothing is watched until Run.
func New(client kubernetes.Interface) *Cache {
	f := informers.NewSharedInformerFactory(client, 0)
	svcs := f.Core().V1().Services()
	return &Cache{factory: f, informer: svcs.Informer(), lister: svcs.Lister()}
}

// Run watches until ctx ends; the informer re-lists by itself after a
// broken watch.
func (c *Cache) Run(ctx context.Context) {
	c.factory.Start(ctx.Done())
	<-ctx.Done()
	c.factory.Shutdown()
}

// HasSynced reports whether the Services were listed at least once.
func (c *Cache) HasSynced() bool { return c.informer.HasSynced() }

// Services are namespace's Services as last seen; the caller must not
// change them.
func (c *Cache) Services(namespace string) ([]*v1.Service, error) {
	return c.lister.Services(namespace).List(labels.Everything())
}
