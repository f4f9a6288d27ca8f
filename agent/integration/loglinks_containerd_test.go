package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
)

// Logs where log shippers look, as the kubelet writes them, under a
// configured pod log root (podLogsDir; here a temporary <dir>/log/pods, so
// the links are in <dir>/log/containers): the runtime writes
// <namespace>_<pod>_<uid>/<container>/<restart>.log, the agent links
// <pod>_<namespace>_<container>-<containerID>.log to it when it creates the
// instance, podlife logs reads it, and the link goes with the pod.
func TestContainerdLogLinks(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	podLogs := filepath.Join(e.Dir, "log", "pods")
	a := e.StartAgent(manifests, func(c *config.Config) { c.PodLogsDir = podLogs })
	uid := e.NewUID()
	writeManifest(t, manifests, "shipped.yaml", logPod("shipped", uid, "Never", "echo to-the-shipper; sleep 3600"))
	waitLog(t, a, "shipped")
	pod := "shipped-" + a.Node
	logFile := filepath.Join(podLogs, agenttest.CtrdNamespace+"_"+pod+"_"+uid, "app", "0.log")

	var id string
	agenttest.CtrdEventually(t, "the container runs", func() (bool, string) {
		running := e.RunningContainers(uid)
		id = running["app"]
		return id != "", fmt.Sprint(running)
	})
	link := filepath.Join(e.Dir, "log", "containers", pod+"_"+agenttest.CtrdNamespace+"_app-"+id+".log")
	agenttest.CtrdEventually(t, "the line in the log and through its link", func() (bool, string) {
		direct, derr := os.ReadFile(logFile)
		linked, lerr := os.ReadFile(link)
		return derr == nil && lerr == nil && strings.Contains(string(direct), "to-the-shipper") && string(linked) == string(direct),
			fmt.Sprintf("%s: %q %v; %s: %q %v", logFile, direct, derr, link, linked, lerr)
	})
	if target, err := os.Readlink(link); err != nil || target != logFile {
		t.Errorf("link %s -> %q (%v), want %s", link, target, err, logFile)
	}
	t.Logf("%s -> %s", link, logFile)
	if out, err := readLogs(t, a, "shipped", nil); err != nil || out != "to-the-shipper\n" {
		t.Errorf("podlife logs: %q, %v; want the line", out, err)
	}
	// The pod's own directory is not in the log root.
	if _, err := os.Stat(filepath.Join(podLogs, uid)); err == nil {
		t.Errorf("a pod directory %s in the log root", filepath.Join(podLogs, uid))
	}

	if err := os.Remove(filepath.Join(manifests, "shipped.yaml")); err != nil {
		t.Fatal(err)
	}
	e.WaitRuntimeGone(uid)
	agenttest.CtrdEventually(t, "the link and the log directory removed with the pod", func() (bool, string) {
		_, lerr := os.Lstat(link)
		_, derr := os.Stat(filepath.Dir(filepath.Dir(logFile)))
		return os.IsNotExist(lerr) && os.IsNotExist(derr), fmt.Sprintf("link: %v, log directory: %v", lerr, derr)
	})
}
