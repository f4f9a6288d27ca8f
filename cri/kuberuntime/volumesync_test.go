package kuberuntime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri/mount"
	"github.com/podlife/podlife/cri/volume"
	"github.com/podlife/podlife/internal/crifake"
)

// Each container gets its volumeMounts first, in order, then the pod's
// files: an emptyDir shared by two containers (read-only in one), a
// downwardAPI volume always read-only, a hostPath as the node's path, a
// subPath through its bind mount; a volume mounted at /etc/hosts replaces
// the pod's hosts file.
func TestVolumeMountList(t *testing.T) {
	crifake.NeedRoot(t)
	root := crifake.MountRoot(t)
	host := t.TempDir()
	h := newHarness(t, Options{PodsRoot: root}, "img")
	mounts := recordMounts(h)
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "side"})
	pod.Spec.Volumes = []v1.Volume{
		crifake.EmptyDir("shared"),
		{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
			Items: []v1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
		crifake.HostPathVolume("node", host, v1.HostPathDirectory),
	}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
		{Name: "shared", MountPath: "/data"},
		{Name: "info", MountPath: "/etc/podinfo"},
		{Name: "node", MountPath: "/node", ReadOnly: true},
	}
	pod.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{
		{Name: "shared", MountPath: "/in", ReadOnly: true},
		{Name: "shared", MountPath: "/etc/hosts", SubPath: "hosts"},
	}
	h.mustSync(pod)

	podDir := filepath.Join(root, "uid-web")
	shared := filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "shared")
	wantApp := []*runtimeapi.Mount{
		{ContainerPath: "/data", HostPath: shared},
		{ContainerPath: "/etc/podinfo", HostPath: filepath.Join(podDir, "volumes", "kubernetes.io~downward-api", "info"), Readonly: true},
		{ContainerPath: "/node", HostPath: host, Readonly: true},
		{ContainerPath: "/etc/hosts", HostPath: filepath.Join(podDir, "etc-hosts")},
	}
	wantSide := []*runtimeapi.Mount{
		{ContainerPath: "/in", HostPath: shared, Readonly: true},
		{ContainerPath: "/etc/hosts", HostPath: filepath.Join(podDir, "volume-subpaths", "shared", "side", "1")},
	}
	for name, want := range map[string][]*runtimeapi.Mount{"app": wantApp, "side": wantSide} {
		got := mounts()[name+"/0"]
		if !mountsEqual(got, want) {
			t.Errorf("mounts of %s:\n%v\nwant\n%v", name, got, want)
		}
		for _, m := range got {
			if m.Propagation != runtimeapi.MountPropagation_PROPAGATION_PRIVATE {
				t.Errorf("mount %s of %s: propagation %v, want private", m.ContainerPath, name, m.Propagation)
			}
		}
	}
	if fi, err := os.Stat(filepath.Join(shared, "hosts")); err != nil || !fi.IsDir() {
		t.Errorf("the missing subPath: %v, %v; want it made a directory", fi, err)
	}
}

// A volume podlife cannot mount fails the sync before anything of the pod
// is created: an error naming pod and volume, a FailedMount event, the
// containers waiting as ContainerCreating; the sync is retried. So does a
// hostPath whose type check fails, until the path is what the type says,
// and a projected token the API server (Options.VolumeAPI) refuses, until
// it grants one.
func TestVolumeFailedMount(t *testing.T) {
	t.Run("not supported", func(t *testing.T) {
		h := newHarness(t, Options{PodsRoot: t.TempDir()}, "img")
		pod := crifake.VolumePod([]v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}},
			v1.VolumeMount{Name: "data", MountPath: "/data"})
		for range 2 {
			_, err := h.syncPod(pod)
			if err == nil || !strings.Contains(err.Error(), `pod ns/web: volume "data": volume type persistentVolumeClaim is not supported by podlife`) {
				t.Fatalf("SyncPod: %v; want the volume type refused", err)
			}
		}
		wantFailedMount(t, h, pod, `volume type persistentVolumeClaim is not supported by podlife`)
	})
	t.Run("without a pods root", func(t *testing.T) {
		h := newHarness(t, Options{}, "img")
		pod := crifake.VolumePod(nil, v1.VolumeMount{Name: "nope", MountPath: "/x"})
		if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), `the pod has no volume "nope"`) {
			t.Fatalf("SyncPod: %v; want the mount of no volume refused", err)
		}
		wantFailedMount(t, h, pod, `volumeMount "nope"`)
	})
	t.Run("hostPath File", func(t *testing.T) {
		h := newHarness(t, Options{PodsRoot: t.TempDir()}, "img")
		file := filepath.Join(t.TempDir(), "config")
		pod := crifake.VolumePod([]v1.Volume{crifake.HostPathVolume("cfg", file, v1.HostPathFile)}, v1.VolumeMount{Name: "cfg", MountPath: "/cfg"})
		_, err := h.syncPod(pod)
		if err == nil || !strings.Contains(err.Error(), `pod ns/web: volume "cfg": hostPath type check failed`) || !strings.Contains(err.Error(), file) {
			t.Fatalf("SyncPod: %v; want the check failed, naming pod, volume and path", err)
		}
		wantFailedMount(t, h, pod, file)
		crifake.WriteFile(t, file, "x")
		h.mustSync(pod)
		if h.calls("RunPodSandbox") != 1 || h.calls("StartContainer") != 1 {
			t.Errorf("calls %v; want the pod started once the file is there", h.fake.GetCalls())
		}
	})
	t.Run("projected token refused, then granted", func(t *testing.T) {
		crifake.NeedRoot(t) // a projected volume is a tmpfs
		tokens := &switchTokens{err: errors.New(`serviceaccounts "default" is forbidden`)}
		h := newHarness(t, Options{PodsRoot: crifake.MountRoot(t), VolumeAPI: volume.API{Tokens: tokens}}, "img")
		pod := crifake.VolumePod([]v1.Volume{{Name: "api", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}}},
			v1.VolumeMount{Name: "api", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"})
		pod.Spec.ServiceAccountName = "default"
		if _, err := h.syncPod(pod); err == nil || !strings.Contains(err.Error(), `spec.volumes[0].projected.sources[0].serviceAccountToken: serviceaccounts "default" is forbidden`) {
			t.Fatalf("SyncPod: %v; want the refusal, naming the source", err)
		}
		wantFailedMount(t, h, pod, `serviceaccounts "default" is forbidden`)
		tokens.err = nil
		h.mustSync(pod)
		if h.calls("RunPodSandbox") != 1 || h.calls("StartContainer") != 1 {
			t.Errorf("calls %v; want the pod started once the token is granted", h.fake.GetCalls())
		}
	})
}

// switchTokens grants a token, or fails with err.
type switchTokens struct{ err error }

func (s *switchTokens) ServiceAccountToken(context.Context, string, string, *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	if s.err != nil {
		return nil, s.err
	}
	return &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "tok"}}, nil
}

// wantFailedMount checks that nothing of pod was created, that a
// FailedMount event names what, and that the container waits as
// ContainerCreating.
func wantFailedMount(t *testing.T, h *harness, pod *v1.Pod, what string) {
	t.Helper()
	if n := h.calls("RunPodSandbox") + h.calls("CreateContainer"); n != 0 {
		t.Errorf("%d sandboxes or containers created; want none", n)
	}
	msgs := h.events.Messages(pod.UID, "FailedMount")
	if len(msgs) == 0 || !strings.Contains(msgs[0], what) {
		t.Errorf("FailedMount events %q; want one naming %q", msgs, what)
	}
	st := h.statuses.last(t, pod.UID)
	if st.Phase != v1.PodPending || len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Waiting == nil ||
		st.ContainerStatuses[0].State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("status %+v; want Pending, the container waiting as ContainerCreating", st)
	}
}

// A downwardAPI volume follows the pod's labels on the next sync, and its
// files go with the pod's directory.
func TestDownwardAPIVolumeUpdate(t *testing.T) {
	root := t.TempDir()
	h := newHarness(t, Options{PodsRoot: root}, "img")
	pod := crifake.VolumePod([]v1.Volume{{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}}},
		v1.VolumeMount{Name: "info", MountPath: "/info"})
	pod.Labels = map[string]string{"tier": "web"}
	h.mustSync(pod)
	file := filepath.Join(root, "uid-web", "volumes", "kubernetes.io~downward-api", "info", "labels")
	if got, err := os.ReadFile(file); err != nil || string(got) != `tier="web"` {
		t.Fatalf("labels file: %q, %v", got, err)
	}
	pod = pod.DeepCopy()
	pod.Labels["release"] = "2"
	h.mustSync(pod)
	if got, err := os.ReadFile(file); err != nil || string(got) != "release=\"2\"\ntier=\"web\"" {
		t.Errorf("labels file after the update: %q, %v", got, err)
	}
	if h.calls("CreateContainer") != 1 {
		t.Errorf("calls %v; want the container kept (a label is no spec change)", h.fake.GetCalls())
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 3 || !strings.HasPrefix(names[0], "..20") || names[1] != "..data" || names[2] != "labels" {
		t.Errorf("volume holds %v; want ..data, one timestamped directory and labels", names)
	}
}

// A terminated pod's volumes are torn down, as the kubelet's volume
// manager unmounts them before the pod may be deleted: a memory emptyDir's
// tmpfs and directory are gone, and so are a subPath's bind mount and the
// other volumes' files (the node e2e "Kubelet Volume Manager ... should
// remove the volume from the node" looks for the directory). The pod's
// directory stays with its hosts file until the pod is removed.
func TestSyncTerminatedPodTearsDownVolumes(t *testing.T) {
	crifake.NeedRoot(t)
	root := crifake.MountRoot(t)
	h := newHarness(t, Options{PodsRoot: root}, "img")
	pod := crifake.VolumePod([]v1.Volume{
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		crifake.EmptyDir("disk"),
		{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
			Items: []v1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
	}, v1.VolumeMount{Name: "mem", MountPath: "/mem"}, v1.VolumeMount{Name: "disk", MountPath: "/disk/sub", SubPath: "sub"},
		v1.VolumeMount{Name: "info", MountPath: "/info"})
	h.mustSync(pod)
	podDir := filepath.Join(root, "uid-web")
	mem := filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "mem")
	if crifake.CountMounts(t, mem) != 1 {
		t.Fatalf("no tmpfs on %s after the sync", mem)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), pod, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if err := h.s.SyncTerminatedPod(context.Background(), pod, nil); err != nil {
		t.Fatalf("SyncTerminatedPod: %v", err)
	}
	for _, gone := range []string{"volumes", "volume-subpaths"} {
		if _, err := os.Lstat(filepath.Join(podDir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of the terminated pod: %v, want it removed", gone, err)
		}
	}
	if crifake.CountMounts(t, mem) != 0 {
		t.Errorf("the memory emptyDir's tmpfs is still mounted")
	}
	if _, err := os.Stat(filepath.Join(podDir, "etc-hosts")); err != nil {
		t.Errorf("the pod's hosts file: %v, want it kept until the pod is removed", err)
	}
}

// A sync whose volume setup the pod's termination cancels (the engine
// cancels SyncPod when the pod is deleted) ends with ctx's error, and
// reports neither a FailedMount event nor a status: the pod is no longer
// waiting for its volumes, and its termination writes its status.
func TestSyncPodCancelledDuringVolumeSetUp(t *testing.T) {
	asked := make(chan struct{}, 1)
	cms := blockingConfigMaps{asked: asked}
	h := newHarness(t, Options{PodsRoot: t.TempDir(), VolumeAPI: volume.API{ConfigMaps: cms}}, "img")
	pod := crifake.VolumePod([]v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "slow"}}}}}, v1.VolumeMount{Name: "cfg", MountPath: "/cfg"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.s.SyncPod(ctx, 0, pod, nil, nil)
		done <- err
	}()
	crifake.WaitFor(t, asked, "the ConfigMap to be asked for")
	cancel()
	if err := crifake.WaitFor(t, done, "SyncPod to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("SyncPod = %v, want context.Canceled", err)
	}
	if msgs := h.events.Messages(pod.UID, "FailedMount"); len(msgs) != 0 {
		t.Errorf("FailedMount events %q for a cancelled sync", msgs)
	}
	if n := h.statuses.count(pod.UID); n != 0 {
		t.Errorf("%d statuses written by a cancelled sync", n)
	}
	if n := h.calls("RunPodSandbox"); n != 0 {
		t.Errorf("%d sandboxes created", n)
	}
}

// blockingConfigMaps answers no ConfigMap request before its ctx ends,
// and says on asked that one came.
type blockingConfigMaps struct{ asked chan struct{} }

func (b blockingConfigMaps) ConfigMap(ctx context.Context, _, _ string) (*v1.ConfigMap, error) {
	select {
	case b.asked <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// The pods' root goes on a shared mount when the first pod with mount
// propagation comes: its bind mount once hid the tmpfs of a pod that ran
// before, which then could be neither unmounted nor removed (node e2e:
// every housekeeping failed to remove such a pod's directory, "device or
// resource busy"). The earlier pod's volume keeps working and goes with
// its pod.
func TestSharedRootKeepsEarlierMounts(t *testing.T) {
	crifake.NeedRoot(t)
	root := crifake.MountRoot(t)
	t.Cleanup(func() {
		if err := mount.UnmountAllUnder(root); err != nil {
			t.Error(err)
		}
		_ = unix.Unmount(root, unix.MNT_DETACH)
	})
	h := newHarness(t, Options{PodsRoot: root}, "img")
	first := crifake.VolumePod([]v1.Volume{{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}},
		v1.VolumeMount{Name: "mem", MountPath: "/mem"})
	h.mustSync(first)
	second := crifake.VolumePod([]v1.Volume{crifake.EmptyDir("shared")},
		v1.VolumeMount{Name: "shared", MountPath: "/shared", MountPropagation: new(v1.MountPropagationHostToContainer)})
	second.Name, second.UID = "second", "uid-second"
	h.mustSync(second)
	mem := filepath.Join(root, string(first.UID), "volumes", "kubernetes.io~empty-dir", "mem")
	if n := crifake.CountMounts(t, mem); n != 1 {
		t.Fatalf("%d mounts on %s after the bind, want its tmpfs once", n, mem)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(mem, &fs); err != nil || fs.Type != unix.TMPFS_MAGIC {
		t.Errorf("%s is not a tmpfs after the bind (%v): the pod's files would go to the disk", mem, err)
	}
	if err := h.s.SyncTerminatingPod(context.Background(), first, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod: %v", err)
	}
	if err := h.s.SyncTerminatedPod(context.Background(), first, nil); err != nil {
		t.Fatalf("SyncTerminatedPod of the pod mounted before the propagation pod: %v", err)
	}
	if n := crifake.CountMounts(t, mem); n != 0 {
		t.Errorf("%d tmpfs left on %s", n, mem)
	}
}
