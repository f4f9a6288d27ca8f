package mirror

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podlife/podlife/agent/manifests"
	"github.com/podlife/podlife/internal/clustertest"
	"github.com/podlife/podlife/kubetypes"
)

// fixture is a node (created by the admin), a namespace, and a Manager
// with the node's identity.
type fixture struct {
	t    *testing.T
	c    *clustertest.Cluster
	ns   string
	node *v1.Node
	m    *Manager
}

func newFixture(t *testing.T) *fixture {
	c := clustertest.Require(t)
	name := c.NodeName(t)
	node, err := c.Admin.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, c: c, ns: c.Namespace(t), node: node}
	f.m = New(Config{
		Client:   c.NodeClient(t, name),
		NodeName: name,
		Node:     func() (*v1.Node, bool) { return f.node, true },
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return f
}

// static decodes a manifest as the agent's file source does.
func (f *fixture) static(name, image string) *v1.Pod {
	f.t.Helper()
	manifest := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {app: %s}\nspec:\n  containers:\n  - name: c\n    image: %s\n",
		name, f.ns, name, image)
	pod, err := manifests.Decode("/etc/podlife/manifests/"+name+".yaml", []byte(manifest), f.node.Name)
	if err != nil {
		f.t.Fatal(err)
	}
	return pod
}

// mirrors lists the API's pods on the node, as the caller's informer
// would hand them to Sync (mirror or not).
func (f *fixture) mirrors() []*v1.Pod {
	f.t.Helper()
	list, err := f.c.Admin.CoreV1().Pods(f.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + f.node.Name})
	if err != nil {
		f.t.Fatal(err)
	}
	var pods []*v1.Pod
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pods
}

// sync runs Sync with the listed pods and fails the test on an error.
func (f *fixture) sync(statics []*v1.Pod, keep func(string) bool) {
	f.t.Helper()
	if err := f.m.Sync(context.Background(), statics, f.mirrors(), keep); err != nil {
		f.t.Fatalf("Sync: %v", err)
	}
}

// get returns the pod named name in the namespace, or nil if there is none.
func (f *fixture) get(name string) *v1.Pod {
	f.t.Helper()
	pod, err := f.c.Admin.CoreV1().Pods(f.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return pod
}

// gone waits until the pod with uid no longer exists (a deletion with
// grace 0 of a pod on a node is immediate, but the check does not rely on
// it).
func (f *fixture) gone(name string, uid types.UID) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		p := f.get(name)
		return p == nil || p.UID != uid, nil
	})
	if err != nil {
		f.t.Fatalf("pod %s/%s (UID %s) still there", f.ns, name, uid)
	}
}

func TestSyncCreatesAndRecreatesOnChange(t *testing.T) {
	f := newFixture(t)
	static := f.static("web", "registry.k8s.io/pause:3.10")
	f.sync([]*v1.Pod{static}, nil)

	mirror := f.get(static.Name)
	if mirror == nil {
		t.Fatalf("no mirror pod %s/%s", f.ns, static.Name)
	}
	if mirror.UID == static.UID {
		t.Errorf("the mirror has the static pod's UID %s", static.UID)
	}
	if got := mirror.Annotations[v1.MirrorPodAnnotationKey]; got != static.Annotations[kubetypes.ConfigHashAnnotation] {
		t.Errorf("mirror annotation %q, want the static pod's hash %q", got, static.Annotations[kubetypes.ConfigHashAnnotation])
	}
	if mirror.Spec.NodeName != f.node.Name || mirror.Labels["app"] != "web" || mirror.Annotations["kubernetes.io/config.source"] != "file" {
		t.Errorf("mirror %+v does not copy the static pod", mirror.ObjectMeta)
	}
	if owner := metav1.GetControllerOf(mirror); owner == nil || owner.Kind != "Node" || owner.Name != f.node.Name || owner.UID != f.node.UID {
		t.Errorf("owner %+v, want the Node %s (UID %s)", owner, f.node.Name, f.node.UID)
	}

	f.sync([]*v1.Pod{static}, nil)
	if again := f.get(static.Name); again == nil || again.UID != mirror.UID {
		t.Fatalf("an up-to-date mirror was replaced: %v", again)
	}

	changed := f.static("web", "registry.k8s.io/pause:3.9")
	if changed.Annotations[kubetypes.ConfigHashAnnotation] == static.Annotations[kubetypes.ConfigHashAnnotation] {
		t.Fatal("the changed manifest has the same hash")
	}
	f.sync([]*v1.Pod{changed}, nil)
	f.gone(changed.Name, mirror.UID)
	recreated := f.get(changed.Name)
	if recreated == nil || recreated.Annotations[v1.MirrorPodAnnotationKey] != changed.Annotations[kubetypes.ConfigHashAnnotation] ||
		recreated.Spec.Containers[0].Image != "registry.k8s.io/pause:3.9" {
		t.Fatalf("mirror after the change: %+v", recreated)
	}
}

func TestSyncRecreatesADeletedMirror(t *testing.T) {
	f := newFixture(t)
	static := f.static("db", "registry.k8s.io/pause:3.10")
	f.sync([]*v1.Pod{static}, nil)
	first := f.get(static.Name)
	zero := int64(0)
	if err := f.c.Admin.CoreV1().Pods(f.ns).Delete(context.Background(), static.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	f.gone(static.Name, first.UID)
	f.sync([]*v1.Pod{static}, nil)
	if again := f.get(static.Name); again == nil || again.UID == first.UID {
		t.Fatalf("mirror not recreated after the admin deleted it: %v", again)
	}
}

// TestSyncCreateRacesTheInformer: a mirror created by the last Sync that the
// informer has not seen yet is no error.
func TestSyncCreateRacesTheInformer(t *testing.T) {
	f := newFixture(t)
	static := f.static("cache", "registry.k8s.io/pause:3.10")
	f.sync([]*v1.Pod{static}, nil)
	uid := f.get(static.Name).UID
	if err := f.m.Sync(context.Background(), []*v1.Pod{static}, nil, nil); err != nil {
		t.Fatalf("Sync with a stale mirror list: %v", err)
	}
	if p := f.get(static.Name); p == nil || p.UID != uid {
		t.Fatalf("mirror replaced: %v", p)
	}
}

func TestSyncDeletesOrphansUnlessTerminating(t *testing.T) {
	f := newFixture(t)
	static := f.static("job", "registry.k8s.io/pause:3.10")
	f.sync([]*v1.Pod{static}, nil)
	mirror := f.get(static.Name)
	fullName := static.Name + "_" + static.Namespace

	var asked []string
	f.sync(nil, func(name string) bool { asked = append(asked, name); return true })
	if len(asked) != 1 || asked[0] != fullName {
		t.Errorf("keep asked about %v, want [%s]", asked, fullName)
	}
	if p := f.get(static.Name); p == nil || p.UID != mirror.UID {
		t.Fatalf("the mirror of a terminating static pod was deleted: %v", p)
	}
	f.sync(nil, func(string) bool { return false })
	f.gone(static.Name, mirror.UID)
}

// TestSyncNeverDeletesARecreatedMirror: deleting a mirror seen in a stale
// list does not delete the pod that replaced it.
func TestSyncNeverDeletesARecreatedMirror(t *testing.T) {
	f := newFixture(t)
	static := f.static("api", "registry.k8s.io/pause:3.10")
	f.sync([]*v1.Pod{static}, nil)
	stale := f.mirrors()
	zero := int64(0)
	if err := f.c.Admin.CoreV1().Pods(f.ns).Delete(context.Background(), static.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	f.gone(static.Name, stale[0].UID)
	f.sync([]*v1.Pod{static}, nil)
	replacement := f.get(static.Name)

	if err := f.m.Sync(context.Background(), nil, stale, nil); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if p := f.get(static.Name); p == nil || p.UID != replacement.UID {
		t.Fatalf("the replacement mirror (UID %s) was deleted through a stale one (UID %s)", replacement.UID, stale[0].UID)
	}
}

// TestSyncLeavesOtherPods: a pod that is not a mirror is never deleted,
// even bound to the node with a static pod's name; Sync says why it
// cannot create that mirror.
func TestSyncLeavesOtherPods(t *testing.T) {
	f := newFixture(t)
	static := f.static("squatted", "registry.k8s.io/pause:3.10")
	regular := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: static.Name, Namespace: f.ns},
		Spec:       v1.PodSpec{NodeName: f.node.Name, Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	regular, err := f.c.Admin.CoreV1().Pods(f.ns).Create(context.Background(), regular, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = f.m.Sync(context.Background(), []*v1.Pod{static}, f.mirrors(), nil)
	if err == nil || !strings.Contains(err.Error(), f.ns+"/"+static.Name) || !strings.Contains(err.Error(), "not a mirror") {
		t.Errorf("Sync: %v, want an error naming %s/%s as not a mirror", err, f.ns, static.Name)
	}
	f.sync(nil, nil)
	if p := f.get(static.Name); p == nil || p.UID != regular.UID {
		t.Fatalf("a pod that is not a mirror was touched: %v", p)
	}
}

func TestSyncWithoutANodeCreatesNothing(t *testing.T) {
	f := newFixture(t)
	f.m.cfg.Node = func() (*v1.Node, bool) { return nil, false }
	static := f.static("early", "registry.k8s.io/pause:3.10")
	f.sync([]*v1.Pod{static}, nil)
	if p := f.get(static.Name); p != nil {
		t.Fatalf("a mirror was created before the node registered: %v", p.ObjectMeta)
	}
}

func TestSyncStaticWithoutHash(t *testing.T) {
	f := newFixture(t)
	static := f.static("nohash", "registry.k8s.io/pause:3.10")
	delete(static.Annotations, kubetypes.ConfigHashAnnotation)
	err := f.m.Sync(context.Background(), []*v1.Pod{static}, f.mirrors(), nil)
	if err == nil || !strings.Contains(err.Error(), f.ns+"/"+static.Name) {
		t.Errorf("Sync: %v, want an error naming the pod", err)
	}
	if p := f.get(static.Name); p != nil {
		t.Fatalf("a mirror was created without a hash: %v", p.ObjectMeta)
	}
}

// TestNodeRestrictionRefusesAnotherNodesMirror checks the identity: a node
// cannot create mirror pods owned by another node.
func TestNodeRestrictionRefusesAnotherNodesMirror(t *testing.T) {
	f := newFixture(t)
	other := New(Config{
		Client:   f.c.NodeClient(t, f.c.NodeName(t)),
		NodeName: f.node.Name,
		Node:     func() (*v1.Node, bool) { return f.node, true },
	})
	static := f.static("stolen", "registry.k8s.io/pause:3.10")
	err := other.Sync(context.Background(), []*v1.Pod{static}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("Sync as another node: %v, want forbidden", err)
	}
}
