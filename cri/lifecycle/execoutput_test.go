package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	fakecri "k8s.io/cri-api/pkg/apis/testing"
	utilexec "k8s.io/utils/exec"

	"github.com/podlife/podlife/cri/prober"
	"github.com/podlife/podlife/internal/crifake"
)

// execAnswer is a runtime whose ExecSync answers with fixed output and,
// for a non-zero exit, the CRI client's error, which holds stderr whole.
type execAnswer struct {
	*crifake.HookRuntime
	stdout, stderr []byte
	exit           int
}

func (r *execAnswer) ExecSync(_ context.Context, _ string, cmd []string, _ time.Duration) ([]byte, []byte, error) {
	if r.exit == 0 {
		return r.stdout, r.stderr, nil
	}
	return r.stdout, r.stderr, utilexec.CodeExitError{
		Err:  fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), r.exit, r.stderr),
		Code: r.exit,
	}
}

// An exec probe's and an exec hook's output is kept to its first 10 KiB,
// stdout then stderr, as the kubelet's exec prober keeps it, whatever the
// command printed: the probe's output (its Unhealthy event and log) and
// the hook's error (its log line and the container's PostStartHookError
// message) hold no more, and the exit code is kept.
func TestExecOutputCut(t *testing.T) {
	const mib8 = 8 << 20
	big := func(c byte) []byte { return bytes.Repeat([]byte{c}, mib8) }
	for _, tc := range []struct {
		name           string
		stdout, stderr []byte
		exit           int
		want           string // the kept output
	}{
		{name: "small, both streams", stdout: []byte("out\n"), stderr: []byte("err\n"), exit: 1, want: "out\nerr\n"},
		{name: "8 MiB of stdout", stdout: big('o'), stderr: []byte("err"), exit: 1, want: strings.Repeat("o", MaxOutputLength)},
		{name: "8 MiB of stderr", stdout: []byte("out"), stderr: big('e'), exit: 2, want: "out" + strings.Repeat("e", MaxOutputLength-3)},
		{name: "8 MiB of both, success", stdout: big('o'), stderr: big('e'), want: strings.Repeat("o", MaxOutputLength)},
		{name: "exactly the cap", stdout: bytes.Repeat([]byte("o"), MaxOutputLength-1), stderr: []byte("ee"), exit: 1,
			want: strings.Repeat("o", MaxOutputLength-1) + "e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &execAnswer{HookRuntime: &crifake.HookRuntime{FakeRuntimeService: fakecri.NewFakeRuntimeService()},
				stdout: tc.stdout, stderr: tc.stderr, exit: tc.exit}
			pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
			c := &pod.Spec.Containers[0]
			cmd := []string{"sh", "-c", "chatty"}

			res, out, err := NewProbeRunner(rt).Probe(t.Context(), prober.Target{Pod: pod, Container: c, ContainerID: "c1"},
				&v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: cmd}}})
			wantRes := prober.Success
			if tc.exit != 0 {
				wantRes = prober.Failure
			}
			if err != nil || res != wantRes || out != tc.want {
				t.Errorf("probe: %v, %d bytes of output (%.20q...), %v; want %v, the first %d bytes", res, len(out), out, err, wantRes, len(tc.want))
			}

			herr := RunHook(t.Context(), rt, pod, c, "c1", "sb1", &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: cmd}})
			if tc.exit == 0 {
				if herr != nil {
					t.Errorf("hook: %v, want none", herr)
				}
				return
			}
			if herr == nil {
				t.Fatal("hook: no error for a non-zero exit")
			}
			msg := herr.Error()
			wantMsg := fmt.Sprintf("exec lifecycle hook (sh -c chatty) for container \"app\" in pod %s/web failed - error: command 'sh -c chatty' exited with %d, message: %q",
				pod.Namespace, tc.exit, tc.want)
			if msg != wantMsg {
				t.Errorf("hook error: %d bytes (%.120q...), want %d bytes: %.120q...", len(msg), msg, len(wantMsg), wantMsg)
			}
			if exit, ok := errors.AsType[utilexec.ExitError](herr); !ok || exit.ExitStatus() != tc.exit {
				t.Errorf("hook error %T: not an exit error with code %d", herr, tc.exit)
			}
		})
	}
}
