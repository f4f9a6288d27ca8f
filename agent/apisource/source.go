package apisource

import (
	"context"
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/podlife/podlife/kubetypes"
)

// Handler receives the source's changes, one at a time, in the order the
// informer saw them.
type Handler struct {
	// Change is a pod to run, or no longer to run: Add, a lifecycle-
	// relevant Update, or Remove (the pod is gone from the API). Mirror
	// pods never come here: they are the static pods' copies.
	Change func(kubetypes.Change)
	// Seen is every pod added or updated, mirror pods and status-only
	// updates included (the status manager's cue to look again).
	Seen func(*v1.Pod)
}

// Source is the pods bound to one node.
type Source struct {
	informer cache.SharedIndexInformer
	lister   corelisters.PodLister
	factory  informers.SharedInformerFactory
}

// New returns a source of the pods bound to nodeName; nothing is watched
// until Run.
func New(client kubernetes.Interface, nodeName string) *Source {
	selector := fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	f := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }))
	pods := f.Core().V1().Pods()
	return &Source{informer: pods.Informer(), lister: pods.Lister(), factory: f}
}

// Run watches until ctx ends, calling h. It re-lists by itself after a
// broken watch or an apiserver restart.
func (s *Source) Run(ctx context.Context, h Handler) error {
	_, err := s.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*v1.Pod); ok {
				h.Seen(pod)
				if !kubetypes.IsMirror(pod) {
					h.Change(kubetypes.Change{Op: kubetypes.Add, Pod: annotated(pod)})
				}
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*v1.Pod)
			pod, ok2 := newObj.(*v1.Pod)
			if !ok1 || !ok2 {
				return
			}
			h.Seen(pod)
			if !kubetypes.IsMirror(pod) && LifecycleChanged(old, pod) {
				h.Change(kubetypes.Change{Op: kubetypes.Update, Pod: annotated(pod)})
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				if !kubetypes.IsMirror(pod) {
					h.Change(kubetypes.Change{Op: kubetypes.Remove, Pod: annotated(pod)})
				}
			}
		},
	})
	if err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	s.factory.Start(ctx.Done())
	<-ctx.Done()
	s.factory.Shutdown()
	return nil
}

// HasSynced reports whether the first list was delivered: until then the
// agent must not take the pods it runs for pods nobody wants.
func (s *Source) HasSynced() bool { return s.informer.HasSynced() }

// WaitForSync waits until HasSynced or timeout.
func (s *Source) WaitForSync(ctx context.Context, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return cache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced)
}

// Get returns the API's current copy of a pod (do not modify it).
func (s *Source) Get(namespace, name string) (*v1.Pod, bool) {
	pod, err := s.lister.Pods(namespace).Get(name)
	return pod, err == nil
}

// Mirrors lists the mirror pods bound to this node.
func (s *Source) Mirrors() []*v1.Pod {
	all, _ := s.lister.List(labels.Everything())
	var out []*v1.Pod
	for _, p := range all {
		if kubetypes.IsMirror(p) {
			out = append(out, p)
		}
	}
	return out
}

// LifecycleChanged reports whether an update matters to the pod's
// lifecycle: its spec, labels, annotations or deletion changed. A change
// of status alone (the agent's own writes among them) does not, as the
// kubelet's config layer sends no UPDATE for it.
func LifecycleChanged(old, pod *v1.Pod) bool {
	return !apiequality.Semantic.DeepEqual(old.Spec, pod.Spec) ||
		!maps.Equal(old.Labels, pod.Labels) ||
		!maps.Equal(old.Annotations, pod.Annotations) ||
		!apiequality.Semantic.DeepEqual(old.DeletionTimestamp, pod.DeletionTimestamp) ||
		!apiequality.Semantic.DeepEqual(old.DeletionGracePeriodSeconds, pod.DeletionGracePeriodSeconds)
}

// annotated is a copy of an API pod marked as coming from the API server,
// so kubetypes.IsStatic never takes it for a static pod whose annotations it
// copied.
func annotated(pod *v1.Pod) *v1.Pod {
	pod = pod.DeepCopy()
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[kubetypes.ConfigSourceAnnotation] = kubetypes.SourceAPI
	return pod
}
