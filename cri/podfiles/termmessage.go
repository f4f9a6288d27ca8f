package podfiles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/logs"
)

// maxMessageFile is how much of a message file is read: its last 4 KiB
// (the kubelet's cap, a kubecontainer constant).
const maxMessageFile = 4 * 1024

// MessageMount creates the message file of the attempt-th instance of
// container c (empty, mode 0666 whatever the umask, so that any user the
// container runs as can write it) and returns its read-write mount at c's
// terminationMessagePath; nil when c has none.
func MessageMount(podsRoot string, pod *v1.Pod, c *v1.Container, attempt uint32) (*runtimeapi.Mount, error) {
	if c.TerminationMessagePath == "" {
		return nil, nil
	}
	path, err := terminationMessageFile(podsRoot, pod, c.Name, attempt)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("termination message file of container %s of pod %s/%s: %w", c.Name, pod.Namespace, pod.Name, err)
	}
	f, err := os.Create(path)
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.Chmod(path, 0o666)
	}
	if err != nil {
		return nil, fmt.Errorf("termination message file of container %s of pod %s/%s: %w", c.Name, pod.Namespace, pod.Name, err)
	}
	return &runtimeapi.Mount{ContainerPath: c.TerminationMessagePath, HostPath: path}, nil
}

// MessageReader finds the termination messages of exited containers: in
// their message files under PodsRoot and, as a fallback, in their logs
// under LogRoot. Its zero value finds none.
type MessageReader struct{ PodsRoot, LogRoot string }

// Message is the terminated state's message of st, an exited instance of
// spec container c: the runtime's own message, then, after ": ", the
// container's termination message (the kubelet's
// convertToKubeContainerStatus).
func (r MessageReader) Message(pod *v1.Pod, c *v1.Container, st *runtimeapi.ContainerStatus) string {
	msg := st.GetMessage()
	if r.PodsRoot == "" && r.LogRoot == "" {
		return msg
	}
	attempt := st.GetMetadata().GetAttempt()
	var file messageFile
	if r.PodsRoot != "" && c.TerminationMessagePath != "" {
		path, err := terminationMessageFile(r.PodsRoot, pod, c.Name, attempt)
		if err == nil {
			file.path = path
			file.data, file.err = readLast(path, maxMessageFile)
		}
	}
	logTail := func() (string, error) {
		if r.LogRoot == "" {
			return "", nil
		}
		dir, err := logs.PodDir(r.LogRoot, pod)
		if err != nil {
			return "", err
		}
		return logs.ReadTail(filepath.Join(dir, c.Name, fmt.Sprintf("%d.log", attempt)))
	}
	fallback := c.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError &&
		st.GetExitCode() != 0 && st.GetReason() != "ContainerCannotRun"
	if t := terminationMessage(file, fallback, logTail); t != "" {
		if msg != "" {
			msg += ": "
		}
		msg += t
	}
	return msg
}

// messageFile is what reading a container's message file gave: path is ""
// when it has none.
type messageFile struct {
	path string
	data []byte
	err  error
}

// terminationMessage chooses a container's termination message as the
// kubelet's getTerminationMessage does: the file's content, or, when
// fallback (FallbackToLogsOnError and the container failed) and the file
// is empty, missing or absent, the tail of the log. An unreadable file is
// reported as such, without fallback.
func terminationMessage(file messageFile, fallback bool, logTail func() (string, error)) string {
	switch {
	case file.path != "" && file.err != nil && !errors.Is(file.err, fs.ErrNotExist):
		return fmt.Sprintf("Error on reading termination log %s: %v", file.path, file.err)
	case len(file.data) > 0 || !fallback:
		return string(file.data)
	}
	tail, err := logTail()
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return tail
}

// readLast reads at most the last n bytes of the file at path.
func readLast(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	start := max(fi.Size()-n, 0)
	return io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
}

// terminationMessageFile is where the attempt-th instance of container name
// of pod finds its termination message on the host.
func terminationMessageFile(podsRoot string, pod *v1.Pod, name string, attempt uint32) (string, error) {
	dir, err := cri.PodDir(podsRoot, pod)
	if err != nil {
		return "", err
	}
	if err := cri.PathElement(pod, "container name", name); err != nil {
		return "", err
	}
	return filepath.Join(dir, "containers", name, strconv.FormatUint(uint64(attempt), 10)), nil
}

// RemoveMessageFile removes the message file of the attempt-th instance
// of container name of pod uid, once the garbage collector removed that
// instance; a missing file, or podsRoot "", is no error.
func RemoveMessageFile(podsRoot string, uid types.UID, name string, attempt uint32) error {
	if podsRoot == "" {
		return nil
	}
	path, err := terminationMessageFile(podsRoot, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}}, name, attempt)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the termination message file: %w", err)
	}
	return nil
}
