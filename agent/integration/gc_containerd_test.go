package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// crashLoopRestarts is how many restarts the crash-loop test waits for:
// $PODLIFE_GC_RESTARTS (the 50, for a measured run), else 6.
func crashLoopRestarts(t *testing.T) int32 {
	if s := os.Getenv("PODLIFE_GC_RESTARTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PODLIFE_GC_RESTARTS=%q: want a positive number", s)
		}
		return int32(n)
	}
	return 6
}

// A crash-looping container (exit 1, restartPolicy Always) on containerd,
// with the kubelet's garbage collection defaults: after its restarts the
// runtime holds at most 2 instances of it, its log directory and its
// termination message files at most 2 files each (the newest instance's
// and the one before), and its status keeps the restart count and the last
// termination state.
func TestContainerdCrashLoopGarbageCollected(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	e.RestartBackoff = 100 * time.Millisecond
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) { root = c.RootDir })
	uid := e.NewUID()
	writeManifest(t, manifests, "crash.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: crash
  namespace: %s
  uid: %s
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, "echo crashing; echo bye > /dev/termination-log; exit 1"]
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage))
	logDir := filepath.Join(root, "pods", agenttest.CtrdNamespace+"_crash-"+a.Node+"_"+uid, "c")
	msgDir := filepath.Join(root, "pods", uid, "containers", "c")

	want := crashLoopRestarts(t)
	start := time.Now()
	most := 0 // the most instances seen at once, for the log
	var st v1.ContainerStatus
	deadline := time.Now().Add(time.Duration(want)*5*time.Second + agenttest.CtrdTimeout)
	for {
		most = max(most, len(e.Containers(uid)))
		if ps, ok := a.PodStatus(types.UID(uid)); ok && len(ps.ContainerStatuses) == 1 {
			st = ps.ContainerStatuses[0]
			if st.RestartCount >= want {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d restarts of %d after %v: %+v", st.RestartCount, want, time.Since(start), st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	// The collection runs on housekeeping: within a round of the last
	// restart the dead instances beyond the newest are gone.
	agenttest.CtrdEventually(t, "at most 2 instances, logs and messages", func() (bool, string) {
		cs := e.Containers(uid)
		logs, msgs := dirNames(t, logDir), dirNames(t, msgDir)
		// Some are there: the test looks where the agent writes them.
		return len(cs) <= 2 && len(logs) <= 2 && len(msgs) <= 2 && len(logs) > 0 && len(msgs) > 0,
			fmt.Sprintf("%d instances, logs %v, messages %v", len(cs), logs, msgs)
	})
	// The last state comes from the instances the collection keeps. Right
	// after an exit, before the sync that puts the container in its
	// back-off, the kubelet too shows the exit as the state and the
	// instance before as the last state, which the collection may have
	// removed by then: the status settles at the next sync.
	agenttest.CtrdEventually(t, "the last termination state, exit 1 with its message", func() (bool, string) {
		ps, _ := a.PodStatus(types.UID(uid))
		st = ps.ContainerStatuses[0]
		lt := st.LastTerminationState.Terminated
		return lt != nil && lt.ExitCode == 1 && lt.Message == "bye\n", fmt.Sprintf("state %+v, last state %+v", st.State, st.LastTerminationState)
	})
	if st.RestartCount < want {
		t.Errorf("restart count %d after the collection, want at least %d", st.RestartCount, want)
	}
	t.Logf("%d restarts in %v (%.2f s each); at most %d instances held at once; after: %d instances, logs %v, messages %v",
		st.RestartCount, took.Round(time.Millisecond), took.Seconds()/float64(st.RestartCount), most,
		len(e.Containers(uid)), dirNames(t, logDir), dirNames(t, msgDir))

	a.RemovePod(agenttest.CtrdPod{Name: "crash"})
	a.WaitGone(uid)
	e.WaitRuntimeGone(uid)
}

// A pod whose sandbox never comes up (it sets a sysctl the node allows but
// the kernel does not have, so the runtime fails to start it) with a
// Memory emptyDir: the agent set up its volumes, the tmpfs among them,
// before the sandbox failed. Once its
// manifest is removed its directory and tmpfs go, as any pod's.
func TestContainerdPodWithoutSandboxCleaned(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) {
		root = c.RootDir
		c.AllowedUnsafeSysctls = []string{"net.ipv4.conf.nowhere0.forwarding"}
	})
	uid := e.NewUID()
	writeManifest(t, manifests, "nosandbox.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: nosandbox
  namespace: %s
  uid: %s
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 1
  securityContext:
    sysctls: [{name: net.ipv4.conf.nowhere0.forwarding, value: "1"}]
  volumes:
  - name: mem
    emptyDir: {medium: Memory, sizeLimit: 8Mi}
  containers:
  - name: c
    image: %s
    imagePullPolicy: Never
    command: [sleep, "1000"]
    volumeMounts:
    - {name: mem, mountPath: /mem}
`, agenttest.CtrdNamespace, uid, critest.BusyboxImage))
	podDir := filepath.Join(root, "pods", uid)
	tmpfs := filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "mem")
	agenttest.CtrdEventually(t, "the pod's volumes set up, its sandbox failed", func() (bool, string) {
		return mounted(t, tmpfs) && strings.Contains(a.Logs.String(), "FailedCreatePodSandBox"), fmt.Sprintf("mounted %v", mounted(t, tmpfs))
	})
	if sbs := e.Sandboxes(uid); len(sbs) != 0 {
		t.Fatalf("the runtime holds sandboxes %v of the pod", sbs)
	}
	a.RemovePod(agenttest.CtrdPod{Name: "nosandbox"})
	a.WaitGone(uid)
	agenttest.CtrdEventually(t, "the pod's directory and tmpfs gone", func() (bool, string) {
		_, err := os.Lstat(podDir)
		return os.IsNotExist(err) && !mounted(t, tmpfs), fmt.Sprintf("directory: %v; mounted %v", err, mounted(t, tmpfs))
	})
}

// dirNames lists dir's entries; none when it is missing.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		out = append(out, en.Name())
	}
	return out
}
