package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// What the containers of a pod see of the files the agent makes for them,
// on containerd: /etc/hosts lists the pod's IP with its hostname and
// subdomain FQDN, and the host aliases; what a container writes to its
// termination message path (the default or its own) is its terminated
// message; an empty message of a failed FallbackToLogsOnError container is
// its log's tail. The pod's directory goes with the pod.
func TestContainerdPodFiles(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) { root = c.RootDir })
	uid := e.NewUID()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: files
  namespace: %s
  uid: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  hostname: h1
  subdomain: sub
  hostAliases:
  - ip: 10.9.8.7
    hostnames: [alias.one, alias.two]
  containers:
  - name: hosts
    image: %[3]s
    imagePullPolicy: Never
    command: [sh, -c, "cat /etc/hosts > /dev/termination-log"]
  - name: message
    image: %[3]s
    imagePullPolicy: Never
    command: [sh, -c, "printf 'bye from message' > /dev/termination-log"]
  - name: fallback
    image: %[3]s
    imagePullPolicy: Never
    terminationMessagePolicy: FallbackToLogsOnError
    command: [sh, -c, "echo first; echo oops >&2; exit 3"]
  - name: custom
    image: %[3]s
    imagePullPolicy: Never
    terminationMessagePath: /tmp/last-words
    command: [sh, -c, "printf custom > /tmp/last-words"]
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage)
	writeManifest(t, manifests, "files.yaml", manifest)

	var st v1.PodStatus
	agenttest.CtrdEventually(t, "every container of the pod terminated", func() (bool, string) {
		var ok bool
		st, ok = a.PodStatus(types.UID(uid))
		if !ok || st.Phase != v1.PodFailed || len(st.ContainerStatuses) != 4 {
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
		messages[cs.Name] = cs.State.Terminated.Message
	}
	if st.PodIP == "" {
		t.Fatalf("no pod IP in %+v", st)
	}
	for _, line := range []string{
		"127.0.0.1\tlocalhost\n",
		"\n" + st.PodIP + "\th1.sub." + agenttest.CtrdNamespace + ".svc.cluster.local\th1\n",
		"# Entries added by HostAliases.\n10.9.8.7\talias.one\talias.two\n",
	} {
		if !strings.Contains(messages["hosts"], line) {
			t.Errorf("/etc/hosts in the container has no line %q:\n%s", line, messages["hosts"])
		}
	}
	if got := messages["message"]; got != "bye from message" {
		t.Errorf("message: %q, want what the container wrote", got)
	}
	// stdout and stderr reach the log through two pipes: their order in it
	// is containerd's, not the container's.
	if got := strings.Fields(messages["fallback"]); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"first", "oops"}) {
		t.Errorf("fallback message: %q, want the log's lines first (stdout) and oops (stderr)", messages["fallback"])
	}
	if got := messages["custom"]; got != "custom" {
		t.Errorf("message at a custom path: %q, want what the container wrote", got)
	}

	podDir := filepath.Join(root, "pods", uid)
	if _, err := os.Stat(filepath.Join(podDir, "etc-hosts")); err != nil {
		t.Fatalf("the pod's hosts file: %v", err)
	}
	if err := os.Remove(filepath.Join(manifests, "files.yaml")); err != nil {
		t.Fatal(err)
	}
	e.WaitRuntimeGone(uid)
	agenttest.CtrdEventually(t, "the pod's directory is removed", func() (bool, string) {
		_, err := os.Stat(podDir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
}

// writeManifest writes a manifest atomically: a scan never reads half a
// file (dotfiles are skipped).
func writeManifest(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// TestContainerdHostNetworkPod: a pod on the node's network runs (its
// sandbox has no hostname of its own: runc cannot set one without a UTS
// namespace) and sees the node's hostname.
func TestContainerdHostNetworkPod(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	uid := e.NewUID()
	writeManifest(t, manifests, "hostnet.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: hostnet, namespace: %s, uid: %s}
spec:
  hostNetwork: true
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, "hostname > /dev/termination-log"]
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage))
	var st v1.PodStatus
	agenttest.CtrdEventually(t, "the host-network pod ran", func() (bool, string) {
		var ok bool
		st, ok = a.PodStatus(types.UID(uid))
		return ok && st.Phase == v1.PodSucceeded, fmt.Sprintf("%+v", st)
	})
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(st.ContainerStatuses[0].State.Terminated.Message); got != host {
		t.Errorf("the container's hostname is %q, want the node's %q", got, host)
	}
}
