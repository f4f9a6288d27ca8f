package volume

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podlife/podlife/internal/crifake"
)

// fakeSecrets holds Secrets by namespace/name; others are not found.
type fakeSecrets map[string]*v1.Secret

func (f fakeSecrets) Secret(_ context.Context, namespace, name string) (*v1.Secret, error) {
	if s, ok := f[namespace+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

// objectsAPI has Secret ns/creds and ConfigMap ns/cfg.
func objectsAPI() (API, fakeSecrets, *fakeConfigMaps) {
	secrets := fakeSecrets{"ns/creds": {Data: map[string][]byte{"user": []byte("admin"), "pass": []byte("s3cr3t")}}}
	cms := &fakeConfigMaps{cms: map[string]*v1.ConfigMap{"ns/cfg": {Data: map[string]string{"mode": "fast"}, BinaryData: map[string][]byte{"blob": {1, 2}}}}}
	return API{ConfigMaps: cms, Secrets: secrets}, secrets, cms
}

func secretVolume(name, secret string, items []v1.KeyToPath, defaultMode *int32, optional *bool) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: secret, Items: items, DefaultMode: defaultMode, Optional: optional}}}
}

func configMapVolume(name, cm string, items []v1.KeyToPath, defaultMode *int32, optional *bool) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: cm}, Items: items, DefaultMode: defaultMode, Optional: optional}}}
}

// Secret and configMap volumes as the kubelet's plugins write them: every
// key with defaultMode (0644 unless set), or the items at their paths
// with their modes; a missing optional object is an empty volume, a
// missing key of an optional one is left out; a missing required object
// or key fails with the kubelet's message. The same path makes the
// projected sources.
func TestObjectVolumes(t *testing.T) {
	crifake.NeedRoot(t)
	api, _, _ := objectsAPI()
	yes, no := new(true), new(false)
	m := func(mode int32) *int32 { return &mode }
	for _, tc := range []struct {
		name    string
		vol     v1.Volume
		want    []string
		wantErr string
	}{
		{"secret, every key", secretVolume("v", "creds", nil, nil, nil), []string{"pass 0644 s3cr3t", "user 0644 admin"}, ""},
		{"secret, defaultMode", secretVolume("v", "creds", nil, m(0o400), no), []string{"pass 0400 s3cr3t", "user 0400 admin"}, ""},
		{"secret, items with a mode", secretVolume("v", "creds", []v1.KeyToPath{{Key: "pass", Path: "a/b/pw", Mode: m(0o600)}, {Key: "user", Path: "u"}}, m(0o440), nil),
			[]string{"a/b/pw 0600 s3cr3t", "u 0440 admin"}, ""},
		{"secret, missing key", secretVolume("v", "creds", []v1.KeyToPath{{Key: "none", Path: "n"}}, nil, nil), nil,
			`pod ns/web: volume "v": references non-existent secret key: none`},
		{"secret, missing key, optional", secretVolume("v", "creds", []v1.KeyToPath{{Key: "none", Path: "n"}, {Key: "user", Path: "u"}}, nil, yes),
			[]string{"u 0644 admin"}, ""},
		{"secret, missing", secretVolume("v", "gone", nil, nil, nil), nil, `pod ns/web: volume "v": secret "gone" not found`},
		{"secret, missing, optional: empty", secretVolume("v", "gone", []v1.KeyToPath{{Key: "k", Path: "k"}}, nil, yes), nil, ""},
		{"configMap, data and binaryData", configMapVolume("v", "cfg", nil, nil, nil), []string{"blob 0644 \x01\x02", "mode 0644 fast"}, ""},
		{"configMap, items", configMapVolume("v", "cfg", []v1.KeyToPath{{Key: "mode", Path: "conf/mode", Mode: m(0o755)}}, nil, nil), []string{"conf/mode 0755 fast"}, ""},
		{"configMap, missing key", configMapVolume("v", "cfg", []v1.KeyToPath{{Key: "none", Path: "n"}}, nil, no), nil,
			`volume "v": configmap references non-existent config key: none`},
		{"configMap, missing", configMapVolume("v", "gone", nil, nil, nil), nil, `configmaps "gone" not found`},
		{"configMap, missing, optional", configMapVolume("v", "gone", nil, nil, yes), nil, ""},
		{"projected Secret and ConfigMap", v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{DefaultMode: m(0o640), Sources: []v1.VolumeProjection{
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Items: []v1.KeyToPath{{Key: "pass", Path: "pw"}}}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Items: []v1.KeyToPath{{Key: "mode", Path: "mode", Mode: m(0o444)}}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Optional: yes}},
		}}}}, []string{"mode 0444 fast", "pw 0640 s3cr3t"}, ""},
		{"projected Secret, missing key", v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Items: []v1.KeyToPath{{Key: "none", Path: "n"}}}},
		}}}}, nil, `spec.volumes[0].projected.sources[0].secret: references non-existent secret key: none`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := crifake.MountRoot(t)
			pod := crifake.VolumePod([]v1.Volume{tc.vol})
			if err := Check(pod); err != nil {
				t.Fatal(err)
			}
			vols, err := SetUp(context.Background(), pods, pod, nil, api)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("SetUp: %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := vols["v"]
			if !v.readOnly {
				t.Errorf("volume %+v; want read-only", v)
			}
			got := readVolume(t, v.hostPath)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("files %q; want %q", got, tc.want)
			}
		})
	}
}

// A secret volume is a tmpfs in kubernetes.io~secret, a configMap volume
// a directory in kubernetes.io~configmap; a changed ConfigMap reaches the
// files at the next SetUp, through a new ..data directory.
func TestObjectVolumeUpdates(t *testing.T) {
	crifake.NeedRoot(t)
	api, _, cms := objectsAPI()
	pods := crifake.MountRoot(t)
	pod := crifake.VolumePod([]v1.Volume{secretVolume("s", "creds", nil, nil, nil), configMapVolume("c", "cfg", nil, nil, nil)})
	vols, err := SetUp(context.Background(), pods, pod, nil, api)
	if err != nil {
		t.Fatal(err)
	}
	secretDir := filepath.Join(pods, "uid-web", "volumes", "kubernetes.io~secret", "s")
	cmDir := filepath.Join(pods, "uid-web", "volumes", "kubernetes.io~configmap", "c")
	if vols["s"].hostPath != secretDir || vols["c"].hostPath != cmDir {
		t.Fatalf("volumes %+v; want %s and %s", vols, secretDir, cmDir)
	}
	if crifake.CountMounts(t, secretDir) != 1 || crifake.CountMounts(t, cmDir) != 0 {
		t.Errorf("mounts: %d on the secret volume, %d on the configMap's; want a tmpfs, none", crifake.CountMounts(t, secretDir), crifake.CountMounts(t, cmDir))
	}
	first, _ := os.Readlink(filepath.Join(cmDir, "..data"))
	cms.cms["ns/cfg"] = &v1.ConfigMap{Data: map[string]string{"mode": "slow", "new": "n"}}
	if _, err := SetUp(context.Background(), pods, pod, nil, api); err != nil {
		t.Fatal(err)
	}
	if got, want := readVolume(t, cmDir), []string{"mode 0644 slow", "new 0644 n"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the update: %q; want %q", got, want)
	}
	if second, _ := os.Readlink(filepath.Join(cmDir, "..data")); second == first {
		t.Errorf("..data still %s after the update", first)
	}
	if crifake.CountMounts(t, secretDir) != 1 {
		t.Errorf("the secret volume's tmpfs mounted again")
	}
	if err := RemovePodDir(pods, pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pods, "uid-web")); !os.IsNotExist(err) {
		t.Errorf("the pod's directory after its removal: %v", err)
	}
}

// owned is "path mode group" of every file and directory under dir, links
// left out (their targets are listed).
func owned(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 || strings.HasPrefix(d.Name(), "..") && d.IsDir() && p != dir {
			if err == nil && d.IsDir() {
				// The timestamped directory: listed as "..ts".
				fi, _ := d.Info()
				out = append(out, fmt.Sprintf("..ts %s %d", modeString(fi.Mode()), fi.Sys().(*syscall.Stat_t).Gid))
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if first, rest, ok := strings.Cut(rel, "/"); ok && strings.HasPrefix(first, "..") {
			rel = rest
		}
		out = append(out, fmt.Sprintf("%s %s %d", rel, modeString(fi.Mode()), fi.Sys().(*syscall.Stat_t).Gid))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// modeString is a mode's permission bits in octal, setgid as a leading 2.
func modeString(m fs.FileMode) string {
	s := fmt.Sprintf("%#o", m.Perm())
	if m&fs.ModeSetgid != 0 {
		s = "02" + strings.TrimPrefix(s, "0")
	}
	return s
}

// fsGroup owns the volumes podlife makes, as SetVolumeOwnership does:
// group fsGroup everywhere, files the group's read bits (read and write in
// an emptyDir), directories the group's search bit and setgid; the token
// 0600 with a fsGroup or a common runAsUser (then 0640, owned by that
// user); a hostPath untouched; an emptyDir changed when made only.
func TestFSGroupOwnership(t *testing.T) {
	crifake.NeedRoot(t)
	api, _, _ := objectsAPI()
	api.Tokens = &fakeTokens{token: "tok"}
	m := func(mode int32) *int32 { return &mode }
	host := t.TempDir()
	crifake.WriteFile(t, filepath.Join(host, "f"), "host")
	volumes := func() []v1.Volume {
		return []v1.Volume{
			secretVolume("s", "creds", []v1.KeyToPath{{Key: "pass", Path: "pw", Mode: m(0o400)}, {Key: "user", Path: "dir/user"}}, m(0o600), nil),
			configMapVolume("c", "cfg", []v1.KeyToPath{{Key: "mode", Path: "mode"}}, nil, nil),
			{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
				{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
				{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Items: []v1.KeyToPath{{Key: "mode", Path: "mode"}}}},
			}}}},
			crifake.EmptyDir("e"),
			crifake.HostPathVolume("h", host, v1.HostPathDirectory),
		}
	}
	user := func(uid int64) func(*v1.Pod) {
		return func(pod *v1.Pod) {
			pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: &uid}
		}
	}
	group := func(gid int64) func(*v1.Pod) {
		return func(pod *v1.Pod) {
			pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &gid}
		}
	}
	for _, tc := range []struct {
		name string
		sc   func(*v1.Pod)
		want map[string][]string // by volume
	}{
		{"no fsGroup, no runAsUser", func(*v1.Pod) {}, map[string][]string{
			"s": {". 0755 0", "..ts 0755 0", "dir 0755 0", "dir/user 0600 0", "pw 0400 0"},
			"p": {". 0755 0", "..ts 0755 0", "mode 0644 0", "token 0644 0"},
			"e": {". 0777 0"},
		}},
		{"runAsUser: the token 0600, the user's", user(1000), map[string][]string{
			"p": {". 0755 0", "..ts 0755 0", "mode 0644 0", "token 0600 0 uid 1000"},
		}},
		{"fsGroup", group(2000), map[string][]string{
			"s": {". 02755 2000", "..ts 02755 2000", "dir 02755 2000", "dir/user 0640 2000", "pw 0440 2000"},
			"c": {". 02755 2000", "..ts 02755 2000", "mode 0644 2000"},
			"p": {". 02755 2000", "..ts 02755 2000", "mode 0644 2000", "token 0640 2000"},
			"e": {". 02777 2000"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := crifake.MountRoot(t)
			pod := crifake.VolumePod(volumes())
			pod.Spec.ServiceAccountName = "sa"
			tc.sc(pod)
			vols, err := SetUp(context.Background(), pods, pod, nil, api)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				got := owned(t, vols[name].hostPath)
				if name == "p" {
					fi, err := os.Stat(filepath.Join(vols[name].hostPath, "token"))
					if err != nil {
						t.Fatal(err)
					}
					if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 0 {
						for i, g := range got {
							if strings.HasPrefix(g, "token ") {
								got[i] += fmt.Sprintf(" uid %d", uid)
							}
						}
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("volume %s: %q; want %q", name, got, want)
				}
			}
			if fi, err := os.Stat(filepath.Join(host, "f")); err != nil || fi.Sys().(*syscall.Stat_t).Gid != 0 || fi.Mode().Perm() != 0o644 {
				t.Errorf("the hostPath's file: %v, %v; want it untouched", fi, err)
			}
			// Synced again: nothing is written anew, and the emptyDir's
			// later changes stay (changed when made only).
			data, _ := os.Readlink(filepath.Join(vols["s"].hostPath, "..data"))
			if err := os.Chmod(vols["e"].hostPath, 0o750); err != nil {
				t.Fatal(err)
			}
			if _, err := SetUp(context.Background(), pods, pod, nil, api); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.Readlink(filepath.Join(vols["s"].hostPath, "..data")); again != data {
				t.Errorf("the secret volume written again though unchanged: ..data %s, then %s", data, again)
			}
			if fi, _ := os.Stat(vols["e"].hostPath); fi.Mode().Perm() != 0o750 {
				t.Errorf("the emptyDir's mode changed at a later sync: %v", fi.Mode())
			}
		})
	}
}

// The token's owner is the runAsUser every container has, its own or the
// pod's; none when one has none or two differ (the kubelet's FsUserFrom).
func TestCommonRunAsUser(t *testing.T) {
	u := func(uid int64) *int64 { return &uid }
	sc := func(uid *int64) *v1.SecurityContext { return &v1.SecurityContext{RunAsUser: uid} }
	for _, tc := range []struct {
		name                   string
		podUser, app, sidecar  *int64
		init                   *int64
		want                   *int64
		withInit, withSidecars bool
	}{
		{name: "none", want: nil},
		{name: "the pod's", podUser: u(5), want: u(5)},
		{name: "the containers' own", app: u(7), sidecar: u(7), withSidecars: true, want: u(7)},
		{name: "two differ", app: u(7), sidecar: u(8), withSidecars: true, want: nil},
		{name: "one has none", app: u(7), withSidecars: true, want: nil},
		{name: "the pod's, one overrides it", podUser: u(5), sidecar: u(6), withSidecars: true, want: nil},
		{name: "an init container differs", podUser: u(5), init: u(0), withInit: true, want: nil},
	} {
		pod := crifake.VolumePod(nil)
		if tc.podUser != nil {
			pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: tc.podUser}
		}
		if tc.app != nil {
			pod.Spec.Containers[0].SecurityContext = sc(tc.app)
		}
		if tc.withSidecars {
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "sidecar"})
			if tc.sidecar != nil {
				pod.Spec.Containers[1].SecurityContext = sc(tc.sidecar)
			}
		}
		if tc.withInit {
			pod.Spec.InitContainers = []v1.Container{{Name: "init", SecurityContext: sc(tc.init)}}
		}
		got := commonRunAsUser(pod)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
}
