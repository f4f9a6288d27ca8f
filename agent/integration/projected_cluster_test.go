package integration_test

// Projected service-account volumes in cluster mode: the kube-api-access
// volume every pod of a real cluster has (the token, kube-root-ca.crt, the
// namespace), on containerd, and what the Node authorizer refuses the
// node, on the embedded runtime (which reads the volumes' sources too).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/agent/objectcache"
	"github.com/podlife/podlife/agent/token"
)

// serviceAccountDir is where a pod's kube-api-access volume is mounted.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// ensureServiceAccount makes service account sa and the kube-root-ca.crt
// ConfigMap in the node's namespace, as the controller manager's service
// account and root-CA publisher controllers do (a control plane without
// them has neither), and returns the ConfigMap's ca.crt.
func (m *clusterNode) ensureServiceAccount(sa string) string {
	m.tb.Helper()
	ctx := context.Background()
	core := m.c.Admin.CoreV1()
	_, err := core.ServiceAccounts(m.ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		m.tb.Fatalf("create service account %s: %v", sa, err)
	}
	ca, err := os.ReadFile(filepath.Join(m.c.Dir, "pki", "ca.crt"))
	if err != nil {
		m.tb.Fatal(err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": string(ca)}}
	_, err = core.ConfigMaps(m.ns).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		m.tb.Fatalf("create kube-root-ca.crt: %v", err)
	}
	// With the root-CA publisher it was there already: its content wins.
	cm, err = core.ConfigMaps(m.ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		m.tb.Fatal(err)
	}
	return cm.Data["ca.crt"]
}

// withAPIAccess gives pod service account sa and a projected volume
// shaped as the ServiceAccount admission plugin's kube-api-access-*,
// mounted read-only at serviceAccountDir in each container; extra sources
// are added to it.
func withAPIAccess(pod *v1.Pod, sa string, extra ...v1.VolumeProjection) *v1.Pod {
	mode, exp := int32(0o644), int64(3607)
	pod.Spec.ServiceAccountName = sa
	pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "kube-api-access-test", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: append([]v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}, extra...),
	}}})
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: "kube-api-access-test", MountPath: serviceAccountDir, ReadOnly: true})
	}
	return pod
}

// review is the admin's TokenReview of tok.
func (m *clusterNode) review(ctx context.Context, tok string) (*authenticationv1.TokenReview, error) {
	return m.c.Admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tok}}, metav1.CreateOptions{})
}

// readerScript prints, from the service account volume, the namespace,
// the CA's sha256, whether the volume is writable, and the token, into
// the termination message.
const readerScript = "cd " + serviceAccountDir + " || exit 1; { cat namespace; echo; sha256sum ca.crt | cut -d' ' -f1; " +
	"if touch x 2>/dev/null; then echo writable; else echo read-only; fi; cat token; } > /dev/termination-log"

// TestContainerdClusterServiceAccountVolume: a pod with a kube-api-access
// volume reads, in its container, the namespace, the cluster's CA and a
// token that the API server authenticates as the pod's service account,
// bound to the pod; the volume is read-only and its files are the
// kubelet's layout on the node. Once the pod is deleted, its token is
// refused.
func TestContainerdClusterServiceAccountVolume(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	ca := n.ensureServiceAccount("builder")
	var root string
	joinContainerd(e, n, func(cfg *config.Config) { root = cfg.RootDir })
	pod := withAPIAccess(n.busyboxPod("reader", 1, agenttest.CtrdContainer{Name: "main", Command: []string{"sh", "-c", readerScript}}, keeper), "builder")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod = n.create(pod)
	e.RemoveAtEnd(string(pod.UID))
	n.checkAPIAccess(root, pod, "builder", "kube-api-access-test", ca)
}

// TestContainerdClusterAutomaticAPIAccess: with the ServiceAccount
// admission plugin and the controller manager (as every real cluster has
// them), a plain pod gets its kube-api-access-* volume from the API
// server, and it works as the kubelet's does.
func TestContainerdClusterAutomaticAPIAccess(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	var root string
	joinContainerd(e, n, func(cfg *config.Config) { root = cfg.RootDir })
	pod := n.busyboxPod("plain", 1, agenttest.CtrdContainer{Name: "main", Command: []string{"sh", "-c", readerScript}}, keeper)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod = n.create(pod)
	e.RemoveAtEnd(string(pod.UID))
	volume := ""
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") && v.Projected != nil {
			volume = v.Name
		}
	}
	if volume == "" {
		t.Skipf("SKIPPED: the API server gave the pod no kube-api-access volume: this control plane runs without the ServiceAccount admission plugin")
	}
	cm, err := n.c.Admin.CoreV1().ConfigMaps(n.ns).Get(context.Background(), "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kube-root-ca.crt, which the root-CA publisher makes: %v", err)
	}
	t.Logf("the API server's volume %s for service account %s", volume, pod.Spec.ServiceAccountName)
	n.checkAPIAccess(root, pod, pod.Spec.ServiceAccountName, volume, cm.Data["ca.crt"])
}

// keeper keeps a pod running once its main container exited, so that its
// volumes stay set up (a terminated pod's are torn down) for the checks
// on the node.
var keeper = agenttest.CtrdContainer{Name: "keeper", Command: []string{"sleep", "1000"}}

// checkAPIAccess waits until the main container of pod, which runs
// readerScript, exited 0 (its keeper still runs), and checks what it read
// of its service account volume, the volume's files on the node (under
// root), the token's TokenReview as sa, bound to the pod, and, once the
// pod is deleted, its refusal.
func (n *clusterNode) checkAPIAccess(root string, pod *v1.Pod, sa, volume, ca string) {
	t := n.tb
	t.Helper()
	var term *v1.ContainerStateTerminated
	n.waitAPI("the main container exited 0", func(ctx context.Context) (bool, error) {
		p, err := n.apiGet(ctx, pod.Name)
		if p == nil || err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "main" {
				term = cs.State.Terminated
			}
		}
		return term != nil && term.ExitCode == 0, nil
	})
	lines := strings.SplitN(term.Message, "\n", 4)
	if len(lines) != 4 {
		t.Fatalf("termination message %q; want namespace, CA digest, read-only, token", term.Message)
	}
	sum := sha256.Sum256([]byte(ca))
	if lines[0] != n.ns || lines[1] != hex.EncodeToString(sum[:]) || lines[2] != "read-only" {
		t.Errorf("the container read namespace %q, ca.crt sha256 %s, %s; want %s, %x, read-only", lines[0], lines[1], lines[2], n.ns, sum)
	}
	tok := lines[3]
	t.Logf("the container's token: %d bytes; namespace %s; ca.crt sha256 %s", len(tok), lines[0], lines[1])

	dir := filepath.Join(root, "pods", string(pod.UID), "volumes", "kubernetes.io~projected", volume)
	for _, f := range []string{"token", "ca.crt", "namespace"} {
		link, err := os.Readlink(filepath.Join(dir, f))
		fi, serr := os.Stat(filepath.Join(dir, f))
		if err != nil || link != "..data/"+f || serr != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s on the node: link %q (%v), %v (%v); want a 0644 file through ..data", f, link, err, fi, serr)
		}
	}
	if onNode, err := os.ReadFile(filepath.Join(dir, "token")); err != nil || string(onNode) != tok {
		t.Errorf("the node's token file %d bytes (%v); want the container's", len(onNode), err)
	}

	ctx := context.Background()
	rev, err := n.review(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	st := rev.Status
	wantUser := "system:serviceaccount:" + n.ns + ":" + sa
	t.Logf("TokenReview: authenticated=%v user=%s audiences=%v pod-name=%v pod-uid=%v", st.Authenticated, st.User.Username, st.Audiences,
		st.User.Extra["authentication.kubernetes.io/pod-name"], st.User.Extra["authentication.kubernetes.io/pod-uid"])
	if !st.Authenticated || st.User.Username != wantUser {
		t.Fatalf("TokenReview: %+v; want authenticated as %s", st, wantUser)
	}
	if got := st.User.Extra["authentication.kubernetes.io/pod-uid"]; len(got) != 1 || got[0] != string(pod.UID) {
		t.Errorf("the token's pod-uid %v; want %s: the token must be bound to the pod", got, pod.UID)
	}
	n.kubectl("delete", "pod", pod.Name, "-n", n.ns, "--wait=false")
	n.waitDeleted(pod.Name)
	n.waitAPI("the deleted pod's token is refused", func(ctx context.Context) (bool, error) {
		rev, err := n.review(ctx, tok)
		return err == nil && !rev.Status.Authenticated, err
	})
}

// TestClusterProjectedVolumeRefusals: with the node's identity, the agent's
// ConfigMap and token getters are refused what no pod of the node
// references (another namespace's ConfigMap, one of its own namespace no
// pod names, a token bound to a pod of another node): the Node authorizer
// sees to it. A pod whose ConfigMap is missing waits in
// ContainerCreating with a FailedMount event naming the source's field
// path, while the agent runs its other pods (one with a kube-api-access
// volume); once the ConfigMap is created, the sync's back-off retry
// starts the pod.
func TestClusterProjectedVolumeRefusals(t *testing.T) {
	m := join(t, agenttest.WithSyncBackOff(time.Second))
	m.ensureServiceAccount("builder")
	ctx := context.Background()
	other := m.c.Namespace(t)
	for _, cm := range []struct{ ns, name string }{{other, "private"}, {m.ns, "unreferenced"}} {
		obj := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.ns, Name: cm.name}, Data: map[string]string{"k": "v"}}
		if _, err := m.c.Admin.CoreV1().ConfigMaps(cm.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodeClient := m.c.NodeClient(t, m.node)
	cms := objectcache.New(nodeClient.CoreV1(), nil, time.Minute)
	for _, cm := range []struct{ ns, name string }{{other, "private"}, {m.ns, "unreferenced"}} {
		_, err := cms.ConfigMap(ctx, cm.ns, cm.name)
		t.Logf("the node reads ConfigMap %s/%s: %v", cm.ns, cm.name, err)
		if !apierrors.IsForbidden(err) {
			t.Errorf("the node reads ConfigMap %s/%s: %v; want forbidden by the Node authorizer", cm.ns, cm.name, err)
		}
	}
	elsewhere := m.apiPod("elsewhere", 1, "main")
	elsewhere.Spec.NodeSelector, elsewhere.Spec.NodeName, elsewhere.Spec.ServiceAccountName = nil, "not-"+m.node, "builder"
	elsewhere = m.create(elsewhere)
	exp := int64(600)
	_, err := token.New(nodeClient.CoreV1(), nil, nil).ServiceAccountToken(ctx, m.ns, "builder", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &exp, BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: elsewhere.Name, UID: elsewhere.UID},
	}})
	t.Logf("the node requests a token bound to another node's pod: %v", err)
	if !apierrors.IsForbidden(err) {
		t.Errorf("a token bound to another node's pod: %v; want forbidden", err)
	}

	m.create(withAPIAccess(m.apiPod("steady", 1, "main"), "builder"))
	waiting := withAPIAccess(m.apiPod("waiting", 1, "main"), "builder",
		v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "app-config"}}})
	m.create(waiting)
	m.waitPhase("steady", v1.PodRunning)
	want := `MountVolume.SetUp failed for volume "kube-api-access-test" : spec.volumes[0].projected.sources[3].configMap: configmap "app-config" not found`
	var message string
	m.waitAPI("a FailedMount event for the pod whose ConfigMap is missing", func(ctx context.Context) (bool, error) {
		evs, err := m.c.Admin.CoreV1().Events(m.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=waiting,reason=FailedMount"})
		if err != nil || len(evs.Items) == 0 {
			return false, err
		}
		message = evs.Items[0].Message
		return strings.Contains(message, want), nil
	})
	t.Logf("FailedMount: %s", message)
	p, err := m.apiGet(ctx, "waiting")
	if err != nil {
		t.Fatal(err)
	}
	if cs := p.Status.ContainerStatuses; p.Status.Phase != v1.PodPending || len(cs) != 1 || cs[0].State.Waiting == nil || cs[0].State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("the waiting pod: %s %+v; want Pending, ContainerCreating", p.Status.Phase, cs)
	}
	obj := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: m.ns, Name: "app-config"}, Data: map[string]string{"k": "v"}}
	if _, err := m.c.Admin.CoreV1().ConfigMaps(m.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	m.waitPhase("waiting", v1.PodRunning)
	if p, err := m.apiGet(ctx, "steady"); err != nil || p.Status.Phase != v1.PodRunning || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("the steady pod: %v, %v; want Running all along", p.Status, err)
	}
}

// TestContainerdClusterTokenRefresh: a token of the shortest lifetime the
// API allows (600 s) is requested again once 80% of it passed: at the
// next sync after 480 s, the running container's token file changes
// (a new ..data directory), and the new token passes a TokenReview. It
// takes about nine minutes, so it runs only with
// PODLIFE_TOKEN_REFRESH_TEST=1.
func TestContainerdClusterTokenRefresh(t *testing.T) {
	if os.Getenv("PODLIFE_TOKEN_REFRESH_TEST") == "" {
		t.Skip("SKIPPED: takes nine minutes (a 600 s token refreshed at 480 s); set PODLIFE_TOKEN_REFRESH_TEST=1 to run it")
	}
	e := agenttest.NewCtrdEnv(t)
	n := newClusterNode(t)
	n.ensureServiceAccount("builder")
	var root string
	joinContainerd(e, n, func(cfg *config.Config) {
		root = cfg.RootDir
		cfg.SyncFrequency.Duration = 5 * time.Second
	})
	pod := withAPIAccess(n.busyboxPod("long", 1, agenttest.CtrdTrapper("main")), "builder")
	exp := int64(600)
	pod.Spec.Volumes[0].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds = &exp
	pod = n.create(pod)
	e.RemoveAtEnd(string(pod.UID))
	n.waitPhase("long", v1.PodRunning)
	dir := filepath.Join(root, "pods", string(pod.UID), "volumes", "kubernetes.io~projected", "kube-api-access-test")
	read := func() (string, string) {
		tok, _ := os.ReadFile(filepath.Join(dir, "token"))
		data, _ := os.Readlink(filepath.Join(dir, "..data"))
		return string(tok), data
	}
	first, firstData := read()
	if first == "" {
		t.Fatalf("no token in %s", dir)
	}
	start := time.Now()
	var second, secondData string
	n.waitAPIWithin(9*time.Minute, "the token file holds a new token", func(context.Context) (bool, error) {
		second, secondData = read()
		return second != "" && second != first, nil
	})
	t.Logf("the token was replaced %v after the pod ran (80%% of 600 s is 480 s); ..data %s -> %s", time.Since(start).Round(time.Second), firstData, secondData)
	if secondData == firstData {
		t.Errorf("..data still links to %s: the new token was not written through a new directory", firstData)
	}
	rev, err := n.review(context.Background(), second)
	if err != nil || !rev.Status.Authenticated {
		t.Errorf("TokenReview of the new token: %+v, %v; want authenticated", rev, err)
	}
}
