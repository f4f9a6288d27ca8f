package integration_test

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
	"github.com/podlife/podlife/internal/testlog"
)

// logPod is a static pod of one busybox container running script.
func logPod(name, uid, restartPolicy, script string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  uid: %s
spec:
  restartPolicy: %s
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, %q]
`, name, agenttest.CtrdNamespace, uid, restartPolicy, critest.BusyboxImage, script)
}

// readLogs is what podlife logs prints for container app of the agent's
// static pod name, with query.
func readLogs(t *testing.T, a *agenttest.CtrdAgent, name string, query url.Values) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := client.ContainerLogs(t.Context(), a.ControlSocket(), agenttest.CtrdNamespace, name+"-"+a.Node, "", query, &out)
	return out.String(), err
}

// waitLog waits until the container's log can be read (the runtime created
// the container and its log file).
func waitLog(t *testing.T, a *agenttest.CtrdAgent, name string) {
	t.Helper()
	agenttest.CtrdEventually(t, "the log of pod "+name+" can be read", func() (bool, string) {
		_, err := readLogs(t, a, name, nil)
		return err == nil, fmt.Sprint(err)
	})
}

// numbered is "line 0\n" to "line n-1\n", each with pad.
func numbered(n int, pad string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d%s\n", i, pad)
	}
	return b.String()
}

// loop is a shell script printing n numbered lines, one each interval,
// after a wait that lets the test start following first.
func loop(n int, pad, interval string) string {
	return fmt.Sprintf(`sleep 2; i=0; while [ $i -lt %d ]; do echo "line $i%s"; i=$((i+1)); sleep %s; done`, n, pad, interval)
}

// podlife logs -f on containerd follows a container printing a line per
// 100 ms until it exits, then ends; afterwards the log reads whole, its
// tail, and with timestamps; a container that has not restarted has no
// previous log.
func TestContainerdLogsFollow(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	uid := e.NewUID()
	writeManifest(t, manifests, "printer.yaml", logPod("printer", uid, "Never", loop(20, "", "0.1")+"; echo bye >&2"))
	waitLog(t, a, "printer")

	done := make(chan struct{})
	var followed string
	var followErr error
	go func() {
		defer close(done)
		followed, followErr = readLogs(t, a, "printer", url.Values{"follow": {"true"}})
	}()
	select {
	case <-done:
	case <-time.After(agenttest.CtrdTimeout):
		t.Fatal("podlife logs -f did not end after the container exited")
	}
	want := numbered(20, "") + "bye\n"
	if followErr != nil || followed != want {
		t.Fatalf("podlife logs -f: %v, printed %q, want %q", followErr, followed, want)
	}

	for _, tc := range []struct {
		query url.Values
		want  string
	}{
		{nil, want},
		{url.Values{"tailLines": {"2"}}, "line 19\nbye\n"},
		{url.Values{"limitBytes": {"10"}}, "line 0\nlin"},
	} {
		if got, err := readLogs(t, a, "printer", tc.query); err != nil || got != tc.want {
			t.Errorf("podlife logs %v: %v, printed %q, want %q", tc.query, err, got, tc.want)
		}
	}
	got, err := readLogs(t, a, "printer", url.Values{"timestamps": {"true"}, "tailLines": {"1"}})
	ts, rest, _ := strings.Cut(got, " ")
	if _, perr := time.Parse(time.RFC3339Nano, ts); err != nil || perr != nil || rest != "bye\n" {
		t.Errorf("podlife logs --timestamps --tail 1: %v, printed %q, want an RFC 3339 time and bye", err, got)
	}
	if _, err := readLogs(t, a, "printer", url.Values{"previous": {"true"}}); err == nil || !strings.Contains(err.Error(), `container "app" of pod `+agenttest.CtrdNamespace+"/printer-"+a.Node+" has no previous instance") {
		t.Errorf("podlife logs --previous of a container that never restarted: %v, want an error naming it", err)
	}
}

// podlife logs --previous prints the instance before the current one.
func TestContainerdLogsPrevious(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	uid := e.NewUID()
	writeManifest(t, manifests, "restarter.yaml", logPod("restarter", uid, "OnFailure", "echo started at $(cut -d' ' -f1 /proc/uptime); exit 1"))
	agenttest.CtrdEventually(t, "the container restarted", func() (bool, string) {
		st, ok := a.PodStatus(types.UID(uid))
		return ok && len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].RestartCount >= 1, fmt.Sprintf("%+v", st.ContainerStatuses)
	})
	stamp := func(out string) float64 {
		t.Helper()
		s, ok := strings.CutPrefix(strings.TrimSpace(out), "started at ")
		n, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil {
			t.Fatalf("a log is %q, want one line 'started at <uptime>'", out)
		}
		return n
	}
	var prev, cur string
	var perr, cerr error
	// The current instance may be being replaced; both are read until
	// they come from two instances one after the other.
	agenttest.CtrdEventually(t, "the current and the previous logs", func() (bool, string) {
		prev, perr = readLogs(t, a, "restarter", url.Values{"previous": {"true"}})
		cur, cerr = readLogs(t, a, "restarter", nil)
		return perr == nil && cerr == nil && prev != "" && cur != "" && prev != cur, fmt.Sprintf("previous %q %v, current %q %v", prev, perr, cur, cerr)
	})
	if stamp(prev) >= stamp(cur) {
		t.Errorf("the previous log %q is not older than the current %q", prev, cur)
	}
}

// With a tiny max size, the agent rotates a log while its container keeps
// writing: containerd reopens it (the log file is new), at most
// containerLogMaxFiles files are kept, and a follow loses nothing across
// the rotations.
func TestContainerdLogsRotation(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	var root string
	a := e.StartAgent(manifests, func(c *config.Config) {
		root = c.RootDir
		c.ContainerLogMaxSize = "2Ki"
		c.ContainerLogMaxFiles = 3
		c.ContainerLogMonitorInterval.Duration = 300 * time.Millisecond
	})
	uid := e.NewUID()
	const lines = 250
	pad := " " + strings.Repeat("x", 40)
	writeManifest(t, manifests, "rotated.yaml", logPod("rotated", uid, "Never", loop(lines, pad, "0.02")))
	waitLog(t, a, "rotated")
	logDir := filepath.Join(root, "pods", agenttest.CtrdNamespace+"_rotated-"+a.Node+"_"+uid, "app")

	done := make(chan struct{})
	var followed string
	var followErr error
	go func() {
		defer close(done)
		followed, followErr = readLogs(t, a, "rotated", url.Values{"follow": {"true"}})
	}()
	maxFiles, rotated := 0, map[string]bool{}
	deadline := time.After(agenttest.CtrdTimeout)
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-deadline:
			t.Fatal("podlife logs -f did not end after the container exited")
		case <-time.After(50 * time.Millisecond):
			entries, err := os.ReadDir(logDir)
			if err != nil {
				t.Fatal(err)
			}
			maxFiles = max(maxFiles, len(entries))
			for _, en := range entries {
				if en.Name() != "0.log" {
					rotated[en.Name()] = true
				}
			}
		}
	}
	if want := numbered(lines, pad); followErr != nil || followed != want {
		t.Errorf("podlife logs -f across rotations: %v; printed %d bytes, want %d:\n%s", followErr, len(followed), len(want), firstDiff(followed, want))
	}
	if len(rotated) < 2 {
		t.Errorf("the log was rotated into %v, want at least 2 rotations", rotated)
	}
	if maxFiles > 3 {
		t.Errorf("the log directory held %d files at once, want at most containerLogMaxFiles 3", maxFiles)
	}
	// The tail reads across the rotated files in order.
	if got, err := readLogs(t, a, "rotated", url.Values{"tailLines": {"30"}}); err != nil || got != numbered(lines, pad)[len(numbered(lines-30, pad)):] {
		t.Errorf("podlife logs --tail 30 after rotations: %v:\n%s", err, firstDiff(got, numbered(lines, pad)[len(numbered(lines-30, pad)):]))
	}
}

// firstDiff shows where got first differs from want.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d is %q, want %q", i, gl, wl)
		}
	}
	return "same"
}

// A follow in progress ends, cleanly, when the agent stops: the control
// server ends its requests as it shuts down rather than wait for them
// until the runtime connection is gone.
func TestContainerdLogsFollowEndsWithAgent(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	uid := e.NewUID()
	writeManifest(t, manifests, "sleeper.yaml", logPod("sleeper", uid, "Never", "echo hello; exec sleep 3600"))
	agenttest.CtrdEventually(t, "the container printed hello", func() (bool, string) {
		out, err := readLogs(t, a, "sleeper", nil)
		return out == "hello\n", fmt.Sprintf("%q %v", out, err)
	})
	done := make(chan error, 1)
	out := &testlog.Buffer{} // written by the follow, read here
	go func() {
		done <- client.ContainerLogs(t.Context(), a.ControlSocket(), agenttest.CtrdNamespace, "sleeper-"+a.Node, "app", url.Values{"follow": {"true"}}, out)
	}()
	// The follow is under way once its first line came: before, the agent
	// may still be finding the log, and a stop then answers 503.
	agenttest.CtrdEventually(t, "the follow printed hello", func() (bool, string) {
		return out.String() == "hello\n", fmt.Sprintf("%q", out.String())
	})
	if err := a.Stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case err := <-done:
		if err != nil || out.String() != "hello\n" {
			t.Errorf("the follow ended with %v, printed %q, want hello", err, out.String())
		}
	case <-time.After(agenttest.CtrdTimeout):
		t.Fatal("the follow did not end with the agent")
	}
	if logs := a.Logs.String(); strings.Contains(logs, "output ended early") {
		t.Errorf("the follow was cut by the agent's end rather than ended by it:\n%s", logs)
	}
}
