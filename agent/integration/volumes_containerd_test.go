package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// What the containers of a pod see of its volumes, on containerd: an
// emptyDir one container writes and another reads (read-only: its write
// fails), a Memory emptyDir that is a tmpfs of its sizeLimit, a subPath of
// the emptyDir made a directory, a downwardAPI labels file, and a hostPath
// File whose check fails (no sandbox, FailedMount, ContainerCreating)
// until the file is there. Each container reports through its termination
// message. Once the pod terminated, its volumes are torn down (the tmpfs
// and the volumes' directories go, as the kubelet's volume manager tears
// them down: the node e2e "Kubelet Volume Manager ... should remove the
// volume from the node"); its directory goes with the pod; the hostPath
// stays.
func TestContainerdVolumes(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) { root = c.RootDir })
	uid := e.NewUID()
	hostDir := t.TempDir()
	cfgFile := filepath.Join(hostDir, "app.conf")
	writeManifest(t, manifests, "vols.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: vols
  namespace: %s
  uid: %s
  labels: {tier: web, release: "7"}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes:
  - name: shared
    emptyDir: {}
  - name: mem
    emptyDir: {medium: Memory, sizeLimit: 8Mi}
  - name: info
    downwardAPI:
      items:
      - path: labels
        fieldRef: {fieldPath: metadata.labels}
  - name: cfg
    hostPath: {path: %s, type: File}
  containers:
  - name: writer
    image: %[4]s
    imagePullPolicy: Never
    command: [sh, -c, "echo hello > /data/msg && echo sub > /sub/f && cat /data/deep/dir/f > /dev/termination-log"]
    volumeMounts:
    - {name: shared, mountPath: /data}
    - {name: shared, mountPath: /sub, subPath: deep/dir}
  - name: reader
    image: %[4]s
    imagePullPolicy: Never
    command: [sh, -c, "until [ -f /in/msg ]; do sleep 0.1; done; cat /in/msg > /dev/termination-log; if touch /in/mine 2>/dev/null; then echo writable; else echo read-only; fi >> /dev/termination-log"]
    volumeMounts:
    - {name: shared, mountPath: /in, readOnly: true}
  - name: mem
    image: %[4]s
    imagePullPolicy: Never
    command: [sh, -c, "grep ' /mem ' /proc/mounts > /dev/termination-log"]
    volumeMounts:
    - {name: mem, mountPath: /mem}
  - name: info
    image: %[4]s
    imagePullPolicy: Never
    command: [sh, -c, "cat /etc/podinfo/labels > /dev/termination-log"]
    volumeMounts:
    - {name: info, mountPath: /etc/podinfo}
  - name: cfg
    image: %[4]s
    imagePullPolicy: Never
    command: [sh, -c, "cat /etc/app.conf > /dev/termination-log"]
    volumeMounts:
    - {name: cfg, mountPath: /etc/app.conf, readOnly: true}
`, agenttest.CtrdNamespace, uid, cfgFile, critest.BusyboxImage))

	agenttest.CtrdEventually(t, "the hostPath check fails: FailedMount, the pod waits as ContainerCreating", func() (bool, string) {
		st, ok := a.PodStatus(types.UID(uid))
		failed := a.Logs.Lines("FailedMount", cfgFile)
		if !ok || st.Phase != v1.PodPending || len(st.ContainerStatuses) != 5 || len(failed) == 0 {
			return false, fmt.Sprintf("%+v; FailedMount events %q", st, failed)
		}
		for _, cs := range st.ContainerStatuses {
			if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" {
				return false, fmt.Sprintf("%s: %+v", cs.Name, cs.State)
			}
		}
		return true, ""
	})
	if sbs := e.Sandboxes(uid); len(sbs) != 0 {
		t.Fatalf("the pod has %d sandbox(es) while its volume check fails; want none", len(sbs))
	}
	if err := os.WriteFile(cfgFile, []byte("key=value"), 0o644); err != nil {
		t.Fatal(err)
	}

	var st v1.PodStatus
	agenttest.CtrdEventually(t, "every container of the pod terminated", func() (bool, string) {
		var ok bool
		st, ok = a.PodStatus(types.UID(uid))
		if !ok || len(st.ContainerStatuses) != 5 {
			return false, fmt.Sprintf("%+v", st)
		}
		for _, cs := range st.ContainerStatuses {
			if cs.State.Terminated == nil {
				return false, fmt.Sprintf("%s: %+v", cs.Name, cs.State)
			}
		}
		return true, ""
	})
	messages := map[string]string{}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Terminated.ExitCode != 0 {
			t.Errorf("container %s exited %d: %q", cs.Name, cs.State.Terminated.ExitCode, cs.State.Terminated.Message)
		}
		messages[cs.Name] = cs.State.Terminated.Message
	}
	if got := messages["reader"]; got != "hello\nread-only\n" {
		t.Errorf("reader: %q; want the writer's file, and its own write refused", got)
	}
	if got := messages["mem"]; !strings.HasPrefix(got, "tmpfs /mem tmpfs ") || !strings.Contains(got, "size=8192k") {
		t.Errorf("mem: /proc/mounts says %q; want a tmpfs of 8Mi", got)
	}
	if got := messages["info"]; got != "release=\"7\"\ntier=\"web\"" {
		t.Errorf("info: labels file %q", got)
	}
	if got := messages["cfg"]; got != "key=value" {
		t.Errorf("cfg: %q; want the hostPath file", got)
	}
	if got := messages["writer"]; got != "sub\n" {
		t.Errorf("writer: the subPath's file in the emptyDir holds %q", got)
	}
	podDir := filepath.Join(root, "pods", uid)
	volumes := filepath.Join(podDir, "volumes")
	tmpfs := filepath.Join(volumes, "kubernetes.io~empty-dir", "mem")
	agenttest.CtrdEventually(t, "the terminated pod's volumes are torn down", func() (bool, string) {
		_, err := os.Lstat(volumes)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
	if mounted(t, tmpfs) {
		t.Errorf("the tmpfs at %s outlived the pod's termination", tmpfs)
	}
	if _, err := os.Stat(podDir); err != nil {
		t.Errorf("the pod's directory before the pod is removed: %v", err)
	}

	if err := os.Remove(filepath.Join(manifests, "vols.yaml")); err != nil {
		t.Fatal(err)
	}
	e.WaitRuntimeGone(uid)
	agenttest.CtrdEventually(t, "the pod's directory is removed", func() (bool, string) {
		_, err := os.Stat(podDir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
	if got, err := os.ReadFile(cfgFile); err != nil || string(got) != "key=value" {
		t.Errorf("the hostPath file after the pod: %q, %v; want it untouched", got, err)
	}
}

// A container cannot steer a subPath mount out of its volume: an init
// container makes two subPaths links out of it, one absolute, one through
// ".."; the app containers are not created (CreateContainerConfigError
// naming the escape), and the directory the links name is neither mounted
// nor touched. (The links name a directory of the test, not /etc: a broken
// build must not put the node's files at risk.)
func TestContainerdSubPathSymlinkEscape(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) { root = c.RootDir })
	canary := filepath.Join(e.Dir, "canary")
	writeManifestFile(t, filepath.Join(canary, "secret"), "node secret")
	uid := e.NewUID()
	// From the emptyDir, <root>/pods/<uid>/volumes/kubernetes.io~empty-dir/shared,
	// five ".." lead to e.dir.
	writeManifest(t, manifests, "escape.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: escape, namespace: %s, uid: %s}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes:
  - name: shared
    emptyDir: {}
  initContainers:
  - name: plant
    image: %[3]s
    imagePullPolicy: Never
    command: [sh, -c, "ln -s %[4]s /data/abs && ln -s ../../../../../canary /data/rel"]
    volumeMounts:
    - {name: shared, mountPath: /data}
  containers:
  - name: abs
    image: %[3]s
    imagePullPolicy: Never
    command: [sh, -c, "cat /x/secret > /dev/termination-log"]
    volumeMounts:
    - {name: shared, mountPath: /x, subPath: abs}
  - name: rel
    image: %[3]s
    imagePullPolicy: Never
    command: [sh, -c, "cat /x/secret > /dev/termination-log"]
    volumeMounts:
    - {name: shared, mountPath: /x, subPath: rel}
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage, canary))
	agenttest.CtrdEventually(t, "both app containers are refused", func() (bool, string) {
		st, ok := a.PodStatus(types.UID(uid))
		if !ok || len(st.ContainerStatuses) != 2 {
			return false, fmt.Sprintf("%+v", st)
		}
		for _, cs := range st.ContainerStatuses {
			w := cs.State.Waiting
			if w == nil || w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, fmt.Sprintf("subPath %q", cs.Name)) ||
				!strings.Contains(w.Message, "leads out of the volume") {
				return false, fmt.Sprintf("%s: %+v", cs.Name, cs.State)
			}
		}
		return true, ""
	})
	for _, c := range e.Containers(uid) {
		if name := c.GetMetadata().GetName(); name != "plant" {
			t.Errorf("container %s was created: %s", name, c.Id)
		}
	}
	if got, err := os.ReadFile(filepath.Join(canary, "secret")); err != nil || string(got) != "node secret" {
		t.Errorf("the directory the links name: %q, %v", got, err)
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), " "+filepath.Join(root, "pods", uid)+"/volume-subpaths/") {
		t.Errorf("a subPath was mounted:\n%s", data)
	}
}

// writeManifestFile writes content to path, its directory made.
func writeManifestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mounted reports whether path is a mount point of the test's mount
// namespace (the agent's).
func mounted(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}
