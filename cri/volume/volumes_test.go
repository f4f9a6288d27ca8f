package volume

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/internal/crifake"
)

// Check refuses, naming pod, container and volume, what podlife
// cannot mount, and every volume type but emptyDir, hostPath, downwardAPI,
// secret, configMap and projected.
func TestCheckVolumes(t *testing.T) {
	hostToContainer := v1.MountPropagationHostToContainer
	none := v1.MountPropagationNone
	secret := v1.Volume{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}}
	pvc := v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}
	huge := v1.Volume{Name: "huge", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumHugePages}}}
	downward := v1.Volume{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{{Path: "../labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string // "" for no error
	}{
		{"supported", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a"), crifake.HostPathVolume("h", "/var/log", v1.HostPathDirectory)},
			v1.VolumeMount{Name: "a", MountPath: "/a", SubPath: "x/y", MountPropagation: &none}, v1.VolumeMount{Name: "h", MountPath: "/h", ReadOnly: true}), ""},
		{"secret", crifake.VolumePod([]v1.Volume{secret}), ""},
		{"secret: no name", crifake.VolumePod([]v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}}}),
			`pod ns/web: volume "s": spec.volumes[0].secret: no object is named`},
		{"secret: defaultMode", crifake.VolumePod([]v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s", DefaultMode: new(int32(0o1777))}}}}),
			`spec.volumes[0].secret.defaultMode: 01777 is not a file mode`},
		{"secret: defaultUser", crifake.VolumePod([]v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s", DefaultUser: new(int64(1))}}}}),
			`spec.volumes[0].secret.defaultUser: file owners (the alpha feature AtomicWriteVolumeUserFields) are not supported by podlife`},
		{"configMap: an item out of the volume", crifake.VolumePod([]v1.Volume{{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "c"}, Items: []v1.KeyToPath{{Key: "k", Path: "ok"}, {Key: "k", Path: "../x"}}}}}}),
			`spec.volumes[0].configMap.items[1].path: "../x" must be a relative path`},
		{"configMap: an item's mode", crifake.VolumePod([]v1.Volume{{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "c"}, Items: []v1.KeyToPath{{Key: "k", Path: "k", Mode: new(int32(-1))}}}}}}),
			`spec.volumes[0].configMap.items[0].mode: -01 is not a file mode`},
		{"downwardAPI: an item's user", crifake.VolumePod([]v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
			Items: []v1.DownwardAPIVolumeFile{{Path: "n", User: new(int64(1))}}}}}}),
			`spec.volumes[0].downwardAPI.items[0].user: file owners`},
		{"persistentVolumeClaim", crifake.VolumePod([]v1.Volume{pvc}), `volume "data": volume type persistentVolumeClaim is not supported by podlife`},
		{"no type", crifake.VolumePod([]v1.Volume{{Name: "x"}}), `volume "x" has no volume type`},
		{"HugePages medium", crifake.VolumePod([]v1.Volume{huge}), `volume "huge": emptyDir medium "HugePages" is not supported`},
		{"name twice", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a"), crifake.EmptyDir("a")}), `volume name "a" is used twice`},
		{"name not a path element", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("..")}), `volume name ".." cannot be part of a file path`},
		{"relative hostPath", crifake.VolumePod([]v1.Volume{crifake.HostPathVolume("h", "var/log", "")}), `hostPath "var/log" must be an absolute path`},
		{"hostPath with ..", crifake.VolumePod([]v1.Volume{crifake.HostPathVolume("h", "/var/../etc", "")}), `hostPath "/var/../etc" must be an absolute path without ".."`},
		{"downwardAPI item out of the volume", crifake.VolumePod([]v1.Volume{downward}), `spec.volumes[0].downwardAPI.items[0].path: invalid path "../labels": must not contain '..'`},
		{"downwardAPI item ..data", crifake.VolumePod([]v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
			Items: []v1.DownwardAPIVolumeFile{{Path: "name"}, {Path: "..data"}}}}}}),
			`pod ns/web: volume "d": spec.volumes[0].downwardAPI.items[1].path: invalid path "..data": must not start with '..'`},
		{"mount of no volume", crifake.VolumePod(nil, v1.VolumeMount{Name: "nope", MountPath: "/x"}),
			`pod ns/web: container "app": volumeMount "nope" at "/x": the pod has no volume "nope"`},
		{"relative mountPath", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "x"}), `mountPath must be an absolute path`},
		{"absolute subPath", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", SubPath: "/etc"}),
			`subPath "/etc" must be a relative path without ".."`},
		{"subPath with ..", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", SubPath: "sub/../../etc"}),
			`subPath "sub/../../etc" must be a relative path`},
		{"subPathExpr", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", SubPathExpr: "$(POD)"}),
			`subPathExpr is not supported by podlife`},
		// Propagation as the API server checks it (validateMountPropagation).
		{"HostToContainer", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", MountPropagation: &hostToContainer}), ""},
		{"Bidirectional, not privileged", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", MountPropagation: new(v1.MountPropagationBidirectional)}),
			`pod ns/web: container "app": volumeMount "a" at "/x": mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers`},
		{"Bidirectional, privileged", privileged(crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", MountPropagation: new(v1.MountPropagationBidirectional)})), ""},
		{"unknown propagation", crifake.VolumePod([]v1.Volume{crifake.EmptyDir("a")}, v1.VolumeMount{Name: "a", MountPath: "/x", MountPropagation: new(v1.MountPropagationMode("Sideways"))}),
			`mountPropagation: Unsupported value: "Sideways"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.pod)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check: %v; want %q", err, tc.want)
			}
		})
	}
	// An init container's mounts are checked too.
	pod := crifake.VolumePod(nil)
	pod.Spec.InitContainers = []v1.Container{{Name: "init", VolumeMounts: []v1.VolumeMount{{Name: "gone", MountPath: "/g"}}}}
	if err := Check(pod); err == nil || !strings.Contains(err.Error(), `container "init"`) {
		t.Errorf("Check with an init container's mount of no volume: %v", err)
	}
}

// The hostPath type checks of the kubelet: what each type accepts, and
// what the OrCreate types make.
func TestCheckHostPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	crifake.WriteFile(t, file, "x")
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link-to-dir")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	paths := map[string]string{"dir": dir, "file": file, "socket": sock, "char device": "/dev/null", "link to a dir": link, "missing": missing}
	// ok lists the paths each type accepts; the others fail the check.
	for _, tc := range []struct {
		kind v1.HostPathType
		ok   []string
	}{
		{v1.HostPathUnset, []string{"dir", "file", "socket", "char device", "link to a dir", "missing"}},
		{v1.HostPathDirectory, []string{"dir", "link to a dir"}},
		{v1.HostPathDirectoryOrCreate, []string{"dir", "link to a dir"}}, // "missing" is made: below
		{v1.HostPathFile, []string{"file"}},
		{v1.HostPathFileOrCreate, []string{"file"}},
		{v1.HostPathSocket, []string{"socket"}},
		{v1.HostPathCharDev, []string{"char device"}},
		{v1.HostPathBlockDev, nil},
	} {
		for what, p := range paths {
			if what == "missing" && strings.HasSuffix(string(tc.kind), "OrCreate") {
				continue
			}
			kind := tc.kind
			err := checkHostPath(&v1.HostPathVolumeSource{Path: p, Type: &kind})
			want := false
			for _, ok := range tc.ok {
				want = want || ok == what
			}
			if (err == nil) != want {
				t.Errorf("type %q, %s: %v; want accepted=%v", tc.kind, what, err, want)
			}
			if err != nil && what != "missing" && !strings.Contains(err.Error(), "hostPath type check failed: "+p+" is not a ") {
				t.Errorf("type %q, %s: %q; want the kubelet's message naming the path", tc.kind, what, err)
			}
		}
	}

	old := unix.Umask(0o077)
	defer unix.Umask(old)
	made := filepath.Join(dir, "made", "deeper")
	kind := v1.HostPathDirectoryOrCreate
	if err := checkHostPath(&v1.HostPathVolumeSource{Path: made, Type: &kind}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(made); err != nil || !fi.IsDir() {
		t.Errorf("DirectoryOrCreate made %v, %v; want a directory", fi, err)
	}
	kind = v1.HostPathFileOrCreate
	madeFile := filepath.Join(dir, "made", "file")
	if err := checkHostPath(&v1.HostPathVolumeSource{Path: madeFile, Type: &kind}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(madeFile); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Errorf("FileOrCreate made %v, %v; want an empty file", fi, err)
	}
	if err := checkHostPath(&v1.HostPathVolumeSource{Path: filepath.Join(dir, "no-dir", "file"), Type: &kind}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("FileOrCreate in a missing directory: %v; want it refused (the kubelet makes no parent)", err)
	}
	unknown := v1.HostPathType("Pipe")
	if err := checkHostPath(&v1.HostPathVolumeSource{Path: dir, Type: &unknown}); err == nil {
		t.Errorf("an unknown type passed the check")
	}
}

// A subPath is opened beneath its volume: "..", absolute links and links
// out of it are refused; links inside it are followed; missing
// directories are made with the volume's mode, never through a link.
func TestOpenBeneath(t *testing.T) {
	vol := filepath.Join(t.TempDir(), "vol")
	if err := os.Mkdir(vol, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(vol, 0o777); err != nil {
		t.Fatal(err)
	}
	// The links name a directory of the test, not /etc: a broken build
	// must not make directories in the node's.
	outside := filepath.Dir(vol)
	canary := filepath.Join(outside, "canary")
	if err := os.Mkdir(canary, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"etc": canary, "up": "..", "upfar": "../canary", "inside": "real"} {
		if err := os.Symlink(target, filepath.Join(vol, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(vol, "real", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		subPath string
		ok      bool
	}{
		{"real/d", true},
		{"inside/d", true}, // a relative link that stays in the volume
		{"etc", false},
		{"etc/passwd", false},
		{"etc/new-dir", false},
		{"up", false},
		{"up/vol", false},
		{"upfar", false},
		{"../vol", false},
		{"new/deeper", true},
		{"etc/../real", false},
		{"upfar/new-dir", false},
	} {
		fd, err := openBeneath(vol, tc.subPath)
		if err == nil {
			unix.Close(fd)
		}
		if (err == nil) != tc.ok {
			t.Errorf("openBeneath(%q): %v; want accepted=%v", tc.subPath, err, tc.ok)
		}
	}
	if entries, _ := os.ReadDir(canary); len(entries) != 0 {
		t.Errorf("made through a link out of the volume: %v", entries)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 2 {
		t.Errorf("made outside the volume: %v", entries)
	}
	fi, err := os.Stat(filepath.Join(vol, "new", "deeper"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 {
		t.Errorf("made subPath: %v, %v; want a directory with the volume's mode 0777", fi, err)
	}
}

// A subPath mount is a bind mount of what was opened beneath the volume,
// made again for a new instance; the pod directory's removal unmounts it
// first and leaves the volume's files (a hostPath's) alone.
func TestSubPathMount(t *testing.T) {
	crifake.NeedRoot(t)
	host := t.TempDir()
	crifake.WriteFile(t, filepath.Join(host, "sub", "keep"), "host file")
	pods := crifake.MountRoot(t)
	pod := crifake.VolumePod(nil)
	target, err := subPathTarget(pods, pod, "h", "app", 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := subPathMount(host, "sub", target); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(target, "keep")); err != nil || string(got) != "host file" {
		t.Errorf("through the subPath mount: %q, %v", got, err)
	}
	if n := crifake.CountMounts(t, target); n != 1 {
		t.Errorf("%d mounts on %s after two instances; want 1", n, target)
	}
	if err := RemovePodDir(pods, pod.UID); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(host, "sub", "keep")); err != nil || string(got) != "host file" {
		t.Errorf("the hostPath's file after the pod's removal: %q, %v; want it untouched", got, err)
	}
	if _, err := os.Stat(filepath.Join(pods, string(pod.UID))); !os.IsNotExist(err) {
		t.Errorf("pod directory: %v; want it removed", err)
	}
}

// A Memory emptyDir is a tmpfs of sizeLimit's size, mounted once, mode
// 1777, and unmounted when the pod's directory is removed; a disk one is
// a directory, 0777.
func TestEmptyDirTmpfs(t *testing.T) {
	crifake.NeedRoot(t)
	pods := crifake.MountRoot(t)
	allocatable := v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
	limit := resource.MustParse("16Mi")
	pod := crifake.VolumePod([]v1.Volume{
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &limit}}},
		{Name: "big", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		crifake.EmptyDir("disk"),
	})
	var vols map[string]Volume
	for range 2 {
		var err error
		if vols, err = SetUp(context.Background(), pods, pod, allocatable, API{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, size := range map[string]int64{"mem": 16 << 20, "big": 1 << 30} {
		p := vols[name].hostPath
		if want := filepath.Join(pods, "uid-web", "volumes", "kubernetes.io~empty-dir", name); p != want {
			t.Errorf("%s at %s, want %s", name, p, want)
		}
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil || st.Type != unix.TMPFS_MAGIC || int64(st.Blocks)*st.Bsize != size {
			t.Errorf("%s: statfs %+v, %v; want a tmpfs of %d bytes", name, st, err, size)
		}
		if n := crifake.CountMounts(t, p); n != 1 {
			t.Errorf("%s: %d mounts after two syncs, want 1", name, n)
		}
	}
	// A tmpfs's root keeps the kernel's 1777, as the kubelet's do; a disk
	// emptyDir is 0777.
	for name, want := range map[string]fs.FileMode{"mem": 0o777 | fs.ModeSticky, "big": 0o777 | fs.ModeSticky, "disk": 0o777} {
		if fi, err := os.Stat(vols[name].hostPath); err != nil || fi.Mode()&(fs.ModePerm|fs.ModeSticky|fs.ModeSetgid) != want {
			t.Errorf("%s: %v, %v; want mode %v", name, fi, err, want)
		}
	}
	if err := RemovePodDir(pods, pod.UID); err != nil {
		t.Fatal(err)
	}
	if n := crifake.CountMounts(t, vols["mem"].hostPath); n != 0 {
		t.Errorf("the tmpfs stays mounted after the pod's removal")
	}
}

// downwardAPIFiles are the kubelet's: labels and annotations as sorted
// key="value" lines, one key's value, the pod's name, namespace and UID,
// requests and limits in units of the divisor, rounded up (a limit not set
// is the node's allocatable), with the items' modes.
func TestDownwardAPIFiles(t *testing.T) {
	pod := crifake.VolumePod(nil)
	pod.Labels = map[string]string{"b": "two", "a": `o"ne`}
	pod.Annotations = map[string]string{"note": "line1\nline2"}
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("100Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")},
	}
	allocatable := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}
	mode := int32(0o600)
	field := func(p string) *v1.ObjectFieldSelector { return &v1.ObjectFieldSelector{FieldPath: p} }
	res := func(r, divisor string) *v1.ResourceFieldSelector {
		sel := &v1.ResourceFieldSelector{ContainerName: "app", Resource: r}
		if divisor != "" {
			sel.Divisor = resource.MustParse(divisor)
		}
		return sel
	}
	src := &v1.DownwardAPIVolumeSource{DefaultMode: new(int32(0o640)), Items: []v1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: field("metadata.labels")},
		{Path: "annotations", FieldRef: field("metadata.annotations"), Mode: &mode},
		{Path: "meta/name", FieldRef: field("metadata.name")},
		{Path: "meta/namespace", FieldRef: field("metadata.namespace")},
		{Path: "meta/uid", FieldRef: field("metadata.uid")},
		{Path: "label-b", FieldRef: field("metadata.labels['b']")},
		{Path: "cpu-request", ResourceFieldRef: res("requests.cpu", "")},
		{Path: "cpu-request-milli", ResourceFieldRef: res("requests.cpu", "1m")},
		{Path: "cpu-limit", ResourceFieldRef: res("limits.cpu", "")},
		{Path: "mem-request-mi", ResourceFieldRef: res("requests.memory", "1Mi")},
		{Path: "mem-limit", ResourceFieldRef: res("limits.memory", "1Gi")},
	}}
	files, err := downwardAPIFiles(pod, src, allocatable)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"labels":            "a=\"o\\\"ne\"\nb=\"two\"",
		"annotations":       `note="line1\nline2"`,
		"meta/name":         "web",
		"meta/namespace":    "ns",
		"meta/uid":          "uid-web",
		"label-b":           "two",
		"cpu-request":       "1",
		"cpu-request-milli": "250",
		"cpu-limit":         "2",
		"mem-request-mi":    "100",
		"mem-limit":         "8",
	}
	for p, content := range want {
		wantMode := int32(0o640)
		if p == "annotations" {
			wantMode = mode
		}
		if f := files[p]; string(f.data) != content || f.mode != wantMode {
			t.Errorf("%s: %q mode %#o; want %q mode %#o", p, f.data, f.mode, content, wantMode)
		}
	}
	if len(files) != len(want) {
		t.Errorf("%d files, want %d", len(files), len(want))
	}
	for _, item := range []v1.DownwardAPIVolumeFile{
		{Path: "ip", FieldRef: field("status.podIP")},
		{Path: "x", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}},
		{Path: "x", ResourceFieldRef: res("limits.gpu", "")},
		{Path: "x"},
	} {
		if _, err := downwardAPIFiles(pod, &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{item}}, allocatable); err == nil {
			t.Errorf("item %+v accepted", item)
		}
	}
}

// writeAtomically switches the volume to new files at once, through the
// ..data link, keeps the directory when nothing changed, and removes the
// old files and names.
func TestWriteAtomically(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	first := map[string]volumeFile{"labels": {data: []byte("a=1"), mode: 0o644}, "meta/name": {data: []byte("web"), mode: 0o600}}
	if err := writeAtomically(dir, first, ownership{}); err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	data, _ := os.Readlink(filepath.Join(dir, "..data"))
	if read("labels") != "a=1" || read("meta/name") != "web" || !strings.HasPrefix(data, "..20") {
		t.Fatalf("files %q %q, ..data -> %q", read("labels"), read("meta/name"), data)
	}
	if err := writeAtomically(dir, first, ownership{}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Readlink(filepath.Join(dir, "..data")); again != data {
		t.Errorf("unchanged files rewritten: ..data %s then %s", data, again)
	}
	if err := writeAtomically(dir, map[string]volumeFile{"labels": {data: []byte("a=2"), mode: 0o644}}, ownership{}); err != nil {
		t.Fatal(err)
	}
	if read("labels") != "a=2" {
		t.Errorf("labels after the update: %q", read("labels"))
	}
	if _, err := os.Lstat(filepath.Join(dir, "meta")); !os.IsNotExist(err) {
		t.Errorf("a name no longer there stays: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, data)); !os.IsNotExist(err) {
		t.Errorf("the old files stay: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "labels")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("labels is %v, %v; want a link through ..data", fi, err)
	}
}

// A subPath made beneath a Memory emptyDir of a pod with an fsGroup gets
// the volume root's mode whole: the fsGroup's setgid and the tmpfs's
// sticky bit, group fsGroup (the upstream conformance spec "nonexistent
// volume subPath should have the correct mode and owner using FSGroup"
// reads dgtrwxrwxrwx).
func TestSubPathBeneathFSGroupTmpfs(t *testing.T) {
	crifake.NeedRoot(t)
	pods := crifake.MountRoot(t)
	fsGroup := int64(123)
	pod := crifake.VolumePod([]v1.Volume{
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
	})
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &fsGroup}
	vols, err := SetUp(context.Background(), pods, pod, nil, API{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := RemovePodDir(pods, pod.UID); err != nil {
			t.Error(err)
		}
	}()
	fd, err := openBeneath(vols["mem"].hostPath, "test-sub")
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	fi, err := os.Stat(filepath.Join(vols["mem"].hostPath, "test-sub"))
	if err != nil {
		t.Fatal(err)
	}
	want := 0o777 | fs.ModeDir | fs.ModeSetgid | fs.ModeSticky
	if fi.Mode() != want {
		t.Errorf("made subPath: mode %v; want %v", fi.Mode(), want)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Gid != uint32(fsGroup) {
		t.Errorf("made subPath: group %d; want the fsGroup %d", st.Gid, fsGroup)
	}
}

// PodDirUIDs lists the pod directories: not the log directories sharing
// the root, not files, not symbolic links.
func TestPodDirUIDs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"u1", "u2", "ns_a_u1"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "u3"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "u1"), filepath.Join(root, "u4")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		root string
		want []types.UID
	}{
		{"pod directories", root, []types.UID{"u1", "u2"}},
		{"a missing root", filepath.Join(root, "missing"), nil},
		{"no root", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodDirUIDs(tc.root)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// privileged makes pod's first container privileged.
func privileged(pod *v1.Pod) *v1.Pod {
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: new(true)}
	return pod
}
