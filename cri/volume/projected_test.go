package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/podlife/podlife/internal/crifake"
)

// fakeTokens answers every request with token, or fails with err, and
// keeps the requests.
type fakeTokens struct {
	token    string
	err      error
	requests []string // "namespace/name", then the spec
	specs    []authenticationv1.TokenRequestSpec
}

func (f *fakeTokens) ServiceAccountToken(_ context.Context, namespace, name string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.requests = append(f.requests, namespace+"/"+name)
	f.specs = append(f.specs, req.Spec)
	if f.err != nil {
		return nil, f.err
	}
	return &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: f.token}}, nil
}

// fakeConfigMaps holds ConfigMaps by namespace/name; others are not found,
// or, in forbidden, refused.
type fakeConfigMaps struct {
	cms       map[string]*v1.ConfigMap
	forbidden map[string]bool
}

func (f *fakeConfigMaps) ConfigMap(_ context.Context, namespace, name string) (*v1.ConfigMap, error) {
	gr := schema.GroupResource{Resource: "configmaps"}
	if f.forbidden[namespace+"/"+name] {
		return nil, apierrors.NewForbidden(gr, name, errors.New("no relationship found between node and this object"))
	}
	if cm, ok := f.cms[namespace+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(gr, name)
}

// apiAccessPod is testdata/kube-api-access.yaml.
func apiAccessPod(t *testing.T) *v1.Pod {
	t.Helper()
	data, err := os.ReadFile("testdata/kube-api-access.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pod v1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
}

// rootCA is the kube-root-ca.crt ConfigMap of namespace ns.
func rootCA(ns, ca string) *v1.ConfigMap {
	cm := &v1.ConfigMap{Data: map[string]string{"ca.crt": ca}}
	cm.Namespace, cm.Name = ns, "kube-root-ca.crt"
	return cm
}

// readVolume is every file of a volume directory, as "path mode content",
// read through its top-level link, which must lead through ..data.
func readVolume(t *testing.T, dir string) []string {
	t.Helper()
	data := filepath.Join(dir, "..data")
	var files []string
	err := filepath.WalkDir(data+"/", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(data, p)
		top, _, _ := strings.Cut(rel, "/")
		if link, err := os.Readlink(filepath.Join(dir, top)); err != nil || link != filepath.Join("..data", top) {
			return fmt.Errorf("%s: top-level link %q, %v; want ..data/%s", rel, link, err, top)
		}
		fi, err := os.Stat(filepath.Join(dir, rel))
		if err != nil {
			return err
		}
		content, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return err
		}
		files = append(files, fmt.Sprintf("%s %#o %s", rel, fi.Mode().Perm(), content))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The kube-api-access volume as the kubelet lays it out: the token bound
// to the pod, ca.crt and namespace, 0644 (defaultMode 420), in
// kubernetes.io~projected/<name>, mounted read-only. A new token and a
// changed ConfigMap replace the files at the next SetUp, through a new
// ..data directory; the old one goes.
func TestProjectedServiceAccountVolume(t *testing.T) {
	crifake.NeedRoot(t)
	pods := crifake.MountRoot(t)
	pod := apiAccessPod(t)
	if err := Check(pod); err != nil {
		t.Fatal(err)
	}
	tokens := &fakeTokens{token: "tok-1"}
	cms := &fakeConfigMaps{cms: map[string]*v1.ConfigMap{"ns/kube-root-ca.crt": rootCA("ns", "CA-1")}}
	api := API{Tokens: tokens, ConfigMaps: cms}
	vols, err := SetUp(context.Background(), pods, pod, nil, api)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(pods, "uid-web", "volumes", "kubernetes.io~projected", "kube-api-access-x7k2p")
	if v := vols["kube-api-access-x7k2p"]; v.hostPath != dir || !v.readOnly {
		t.Fatalf("volume %+v; want %s, read-only", v, dir)
	}
	if n := crifake.CountMounts(t, dir); n != 1 {
		t.Errorf("%d mounts on the projected volume; want 1, a tmpfs", n)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the volume's directory: %v, %v; want 0755", fi, err)
	}
	want := []string{"ca.crt 0644 CA-1", "namespace 0644 ns", "token 0644 tok-1"}
	if got := readVolume(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files %q; want %q", got, want)
	}
	wantSpec := authenticationv1.TokenRequestSpec{
		ExpirationSeconds: tokens.specs[0].ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "uid-web"},
	}
	if tokens.requests[0] != "ns/builder" || *tokens.specs[0].ExpirationSeconds != 3607 || len(tokens.specs[0].Audiences) != 0 ||
		fmt.Sprint(tokens.specs[0]) != fmt.Sprint(wantSpec) {
		t.Errorf("token request %s %+v; want ns/builder, 3607 s, no audience, bound to the pod", tokens.requests[0], tokens.specs[0])
	}
	first, _ := os.Readlink(filepath.Join(dir, "..data"))

	tokens.token = "tok-2"
	cms.cms["ns/kube-root-ca.crt"] = rootCA("ns", "CA-2")
	if _, err := SetUp(context.Background(), pods, pod, nil, api); err != nil {
		t.Fatal(err)
	}
	want = []string{"ca.crt 0644 CA-2", "namespace 0644 ns", "token 0644 tok-2"}
	if got := readVolume(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the refresh: files %q; want %q", got, want)
	}
	second, _ := os.Readlink(filepath.Join(dir, "..data"))
	if second == first {
		t.Errorf("..data still links to %s: the update was not a new directory", first)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the old directory %s: %v; want it removed", first, err)
	}
	if link, _ := os.Readlink(filepath.Join(dir, "token")); link != "..data/token" {
		t.Errorf("token links to %q; want ..data/token", link)
	}
}

// A configMap source's files: every key (data and binaryData), or only
// the items at their paths with their modes; a missing key names it
// unless optional; a missing optional ConfigMap adds nothing; a refused
// one fails with the API's reason and the source's field path.
func TestProjectedConfigMapFiles(t *testing.T) {
	cm := &v1.ConfigMap{Data: map[string]string{"a": "A", "b": "B"}, BinaryData: map[string][]byte{"bin": {0, 1}}}
	cms := &fakeConfigMaps{cms: map[string]*v1.ConfigMap{"ns/cfg": cm}, forbidden: map[string]bool{"ns/theirs": true}}
	yes := true
	mode := func(m int32) *int32 { return &m }
	for _, tc := range []struct {
		name    string
		src     v1.ProjectedVolumeSource
		want    []string
		wantErr string
	}{
		{"every key", v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}},
			[]string{"a 0644 A", "b 0644 B", "bin 0644 \x00\x01"}, ""},
		{"items, modes, defaultMode", v1.ProjectedVolumeSource{DefaultMode: mode(0o600), Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"},
			Items:                []v1.KeyToPath{{Key: "a", Path: "dir/x"}, {Key: "b", Path: "y", Mode: mode(0o440)}}}}}},
			[]string{"dir/x 0600 A", "y 0440 B"}, ""},
		{"missing key", v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Items: []v1.KeyToPath{{Key: "nope", Path: "n"}}}}}},
			nil, `spec.volumes[0].projected.sources[0].configMap: configmap references non-existent config key: nope`},
		{"missing key, optional", v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Optional: &yes, Items: []v1.KeyToPath{{Key: "nope", Path: "n"}, {Key: "a", Path: "a"}}}}}},
			[]string{"a 0644 A"}, ""},
		{"missing ConfigMap", v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "gone"}}}}},
			nil, `spec.volumes[0].projected.sources[0].configMap: configmaps "gone" not found`},
		{"missing ConfigMap, optional", v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Optional: &yes}}}},
			nil, ""},
		{"refused, even optional", v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{}}, {ConfigMap: &v1.ConfigMapProjection{
			LocalObjectReference: v1.LocalObjectReference{Name: "theirs"}, Optional: &yes}}}},
			nil, `spec.volumes[0].projected.sources[1].configMap: configmaps "theirs" is forbidden`},
		{"a later source wins a path", v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Items: []v1.KeyToPath{{Key: "a", Path: "name"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}}},
			[]string{"name 0644 web"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crifake.NeedRoot(t)
			pods := crifake.MountRoot(t)
			pod := crifake.VolumePod([]v1.Volume{{Name: "p", VolumeSource: v1.VolumeSource{Projected: &tc.src}}})
			if err := Check(pod); err != nil {
				t.Fatal(err)
			}
			_, err := SetUp(context.Background(), pods, pod, nil, API{ConfigMaps: cms})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("SetUp: %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := readVolume(t, filepath.Join(pods, "uid-web", "volumes", "kubernetes.io~projected", "p"))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("files %q; want %q", got, tc.want)
			}
		})
	}
}

// Check refuses, by field path, the sources podlife does not project;
// SetUp refuses API sources without an API server and a token with no
// service account, and fails with the API's refusal.
func TestProjectedRefusals(t *testing.T) {
	short := int64(300)
	projected := func(srcs ...v1.VolumeProjection) []v1.Volume {
		return []v1.Volume{crifake.EmptyDir("first"), {Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: srcs}}}}
	}
	token := v1.VolumeProjection{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}
	ns := v1.VolumeProjection{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "ns", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"clusterTrustBundle", crifake.VolumePod(projected(v1.VolumeProjection{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{}})),
			`spec.volumes[1].projected.sources[0].clusterTrustBundle: projected cluster trust bundles are not supported`},
		{"podCertificate", crifake.VolumePod(projected(v1.VolumeProjection{PodCertificate: &v1.PodCertificateProjection{}})),
			`spec.volumes[1].projected.sources[0].podCertificate: projected pod certificates are not supported`},
		{"no source type", crifake.VolumePod(projected(v1.VolumeProjection{})), `spec.volumes[1].projected.sources[0]: no source type is set`},
		{"short token", crifake.VolumePod(projected(v1.VolumeProjection{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "t", ExpirationSeconds: &short}})),
			`serviceAccountToken.expirationSeconds: 300 is less than 600 seconds`},
		{"path out of the volume", crifake.VolumePod(projected(v1.VolumeProjection{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "../t"}})),
			`serviceAccountToken.path: "../t" must be a relative path`},
		{"a token's user", crifake.VolumePod(projected(v1.VolumeProjection{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "t", User: new(int64(5))}})),
			`serviceAccountToken.user: file owners (the alpha feature AtomicWriteVolumeUserFields) are not supported by podlife`},
		{"a secret item's path", crifake.VolumePod(projected(v1.VolumeProjection{Secret: &v1.SecretProjection{Items: []v1.KeyToPath{{Key: "k", Path: "a/../../x"}}}})),
			`sources[0].secret.items[0].path: "a/../../x" must be a relative path`},
		{"path like the writer's", crifake.VolumePod(projected(v1.VolumeProjection{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "..data"}}}})),
			`downwardAPI.items[0].path: "..data" must be a relative path without ".." and no element starting with ".."`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(tc.pod); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v; want %q", err, tc.want)
			}
		})
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "default", errors.New("no relationship found"))
	withSA := func(pod *v1.Pod) *v1.Pod { pod.Spec.ServiceAccountName = "default"; return pod }
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		api  API
		want string
	}{
		{"no API server", withSA(crifake.VolumePod(projected(token))), API{},
			`spec.volumes[1].projected.sources[0].serviceAccountToken: the agent has no API server to read it from (standalone mode)`},
		{"no API server for a ConfigMap", crifake.VolumePod(projected(v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{}})), API{},
			`sources[0].configMap: the agent has no API server`},
		{"no API server for a Secret", crifake.VolumePod(projected(v1.VolumeProjection{Secret: &v1.SecretProjection{}})), API{},
			`sources[0].secret: the agent has no API server`},
		{"no service account", crifake.VolumePod(projected(token)), API{Tokens: &fakeTokens{token: "t"}},
			`the pod has no spec.serviceAccountName`},
		{"refused", withSA(crifake.VolumePod(projected(ns, token))), API{Tokens: &fakeTokens{err: forbidden}},
			`pod ns/web: volume "p": spec.volumes[1].projected.sources[1].serviceAccountToken: serviceaccounts "default" is forbidden`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(tc.pod); err != nil {
				t.Fatal(err)
			}
			for _, root := range []string{t.TempDir(), ""} {
				if _, err := SetUp(context.Background(), root, tc.pod, nil, tc.api); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("SetUp (pods root %q): %v; want %q", root, err, tc.want)
				}
			}
		})
	}
}

// Without a pods root (the embedded runtime) the sources are read, the
// token requested, and nothing is written.
func TestProjectedWithoutPodsRoot(t *testing.T) {
	pod := apiAccessPod(t)
	tokens := &fakeTokens{token: "t"}
	cms := &fakeConfigMaps{cms: map[string]*v1.ConfigMap{"ns/kube-root-ca.crt": rootCA("ns", "CA")}}
	vols, err := SetUp(context.Background(), "", pod, nil, API{Tokens: tokens, ConfigMaps: cms})
	if err != nil || vols != nil || len(tokens.requests) != 1 {
		t.Errorf("SetUp: %v, %v, %d token requests; want no volumes, no error, 1 request", vols, err, len(tokens.requests))
	}
	delete(cms.cms, "ns/kube-root-ca.crt")
	if _, err := SetUp(context.Background(), "", pod, nil, API{Tokens: tokens, ConfigMaps: cms}); err == nil || !strings.Contains(err.Error(), `configmaps "kube-root-ca.crt" not found`) {
		t.Errorf("SetUp with the ConfigMap gone: %v", err)
	}
}
