package podfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// Which message the kubelet reports: the file's, else (FallbackToLogsOnError
// on a failure) the log's tail; an unreadable file says so.
func TestTerminationMessageSelection(t *testing.T) {
	errLog := errors.New("disk on fire")
	for _, tc := range []struct {
		name     string
		file     messageFile
		fallback bool
		log      string
		logErr   error
		want     string
	}{
		{"the file", messageFile{path: "/f", data: []byte("bye")}, false, "log\n", nil, "bye"},
		{"the file, even with fallback", messageFile{path: "/f", data: []byte("bye")}, true, "log\n", nil, "bye"},
		{"an empty file without fallback", messageFile{path: "/f"}, false, "log\n", nil, ""},
		{"an empty file with fallback", messageFile{path: "/f"}, true, "log\n", nil, "log\n"},
		{"a missing file with fallback", messageFile{path: "/f", err: fs.ErrNotExist}, true, "log\n", nil, "log\n"},
		{"a missing file without fallback", messageFile{path: "/f", err: fs.ErrNotExist}, false, "log\n", nil, ""},
		{"no file with fallback", messageFile{}, true, "log\n", nil, "log\n"},
		{"an unreadable file", messageFile{path: "/f", err: fs.ErrPermission}, true, "log\n", nil,
			"Error on reading termination log /f: " + fs.ErrPermission.Error()},
		{"an unreadable log", messageFile{path: "/f"}, true, "", errLog,
			"Error on reading termination message from logs: disk on fire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			got := terminationMessage(tc.file, tc.fallback, func() (string, error) { read = true; return tc.log, tc.logErr })
			if got != tc.want {
				t.Errorf("message %q, want %q", got, tc.want)
			}
			if read && !tc.fallback {
				t.Errorf("the log was read without fallback")
			}
		})
	}
}

// The message reader: the file's last 4 KiB, the fallback only for a
// failed container (not one that could not run), the runtime's message
// first.
func TestMessageReader(t *testing.T) {
	root := t.TempDir()
	r := MessageReader{PodsRoot: filepath.Join(root, "pods"), LogRoot: filepath.Join(root, "logs")}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	long := strings.Repeat("x", 5000) + "END"
	logLines := "2030-01-02T03:04:05.000000000Z stdout F out line\n2030-01-02T03:04:05.000000001Z stderr F err line\n"
	for _, tc := range []struct {
		name    string
		policy  v1.TerminationMessagePolicy
		file    *string // nil: no file
		exit    int32
		reason  string
		runtime string // the runtime's own message
		want    string
		noPath  bool
	}{
		{"file", v1.TerminationMessageReadFile, new("done"), 0, "Completed", "", "done", false},
		{"the last 4 KiB", v1.TerminationMessageReadFile, &long, 1, "Error", "", long[len(long)-4096:], false},
		{"fallback on failure", v1.TerminationMessageFallbackToLogsOnError, new(""), 1, "Error", "", "out line\nerr line\n", false},
		{"no fallback on success", v1.TerminationMessageFallbackToLogsOnError, new(""), 0, "Completed", "", "", false},
		{"no fallback when it could not run", v1.TerminationMessageFallbackToLogsOnError, new(""), 128, "ContainerCannotRun", "", "", false},
		{"no fallback with policy File", v1.TerminationMessageReadFile, new(""), 1, "Error", "", "", false},
		{"the runtime's message first", v1.TerminationMessageReadFile, new("bye"), 137, "OOMKilled", "oom", "oom: bye", false},
		{"the runtime's message alone", v1.TerminationMessageReadFile, new(""), 137, "OOMKilled", "oom", "oom", false},
		{"no terminationMessagePath", v1.TerminationMessageFallbackToLogsOnError, nil, 1, "Error", "", "out line\nerr line\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1.Container{Name: "app", TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: tc.policy}
			if tc.noPath {
				c.TerminationMessagePath = ""
			}
			path := filepath.Join(r.PodsRoot, "u1", "containers", "app", "3")
			os.Remove(path)
			if tc.file != nil {
				crifake.WriteFile(t, path, *tc.file)
			}
			crifake.WriteFile(t, filepath.Join(r.LogRoot, "ns_web_u1", "app", "3.log"), logLines)
			st := exitedStatus("app", 3, tc.exit, tc.reason)
			st.Message = tc.runtime
			if got := r.Message(pod, c, st); got != tc.want {
				t.Errorf("message %.60q (%d bytes), want %.60q (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
		})
	}
	t.Run("zero reader", func(t *testing.T) {
		st := exitedStatus("app", 3, 1, "Error")
		st.Message = "runtime"
		c := &v1.Container{Name: "app", TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError}
		if got := (MessageReader{}).Message(pod, c, st); got != "runtime" {
			t.Errorf("message %q, want only the runtime's", got)
		}
	})
}

// exitedStatus is the runtime status of the attempt-th instance of
// container name, exited with code and reason.
func exitedStatus(name string, attempt uint32, code int32, reason string) *runtimeapi.ContainerStatus {
	return &runtimeapi.ContainerStatus{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		State:    runtimeapi.ContainerState_CONTAINER_EXITED,
		ExitCode: code,
		Reason:   reason,
	}
}
