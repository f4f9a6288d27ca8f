package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"

	"github.com/podlife/podlife/cri"
)

// MaxOutputLength is how much of an exec probe's or hook's output is kept
// for its event, log line and status message: the first 10 KiB of stdout
// followed by stderr, the kubelet's exec prober's cap (pkg/probe/exec's
// maxReadLength, a LimitWriter over stdout then stderr). A container
// decides what its commands print; without the cap, 8 MiB of output went
// whole into an event and the agent's log.
const MaxOutputLength = 10 << 10

// execSync runs cmd in the container through the runtime's ExecSync and
// returns its output cut to MaxOutputLength. The runtime's answer (as
// large as the CRI client's message limit) is dropped at once: only the
// cut copy outlives the call. A non-zero exit is an error with its code
// (a utilexec.ExitError) and without the runtime client's copy of stderr,
// which the output holds already, cut.
func execSync(ctx context.Context, rt cri.Runtime, containerID string, cmd []string, timeout time.Duration) (string, error) {
	// The client would log every failing command at length (klog); the
	// caller reports it.
	stdout, stderr, err := rt.ExecSync(klog.NewContext(ctx, klog.Logger{}), containerID, cmd, timeout)
	out := cutOutput(stdout, stderr)
	if exit, ok := errors.AsType[utilexec.ExitError](err); ok {
		err = utilexec.CodeExitError{
			Err:  fmt.Errorf("command '%s' exited with %d", strings.Join(cmd, " "), exit.ExitStatus()),
			Code: exit.ExitStatus(),
		}
	}
	return out, err
}

// cutOutput is the first MaxOutputLength bytes of stdout followed by
// stderr, in a copy of its own.
func cutOutput(stdout, stderr []byte) string {
	stdout = stdout[:min(len(stdout), MaxOutputLength)]
	stderr = stderr[:min(len(stderr), MaxOutputLength-len(stdout))]
	var b strings.Builder
	b.Grow(len(stdout) + len(stderr))
	b.Write(stdout)
	b.Write(stderr)
	return b.String()
}
