package kuberuntime

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri/logs"
)

// The kubelet's caps on termination messages (kubecontainer's constants).
const (
	// maxMessageFile is how much of a message file is read: its last 4 KiB.
	maxMessageFile = 4 * 1024
	// maxPodMessages is what all the messages of one pod's statuses may
	// take together, shared evenly between its containers.
	maxPodMessages = 12 * 1024
)

// terminationMessageMount creates the message file of the attempt-th
// instance of container c (empty, mode 0666 whatever the umask, so that any
// user the container runs as can write it) and returns its read-write
// mount at c's terminationMessagePath; nil when c has none.
func terminationMessageMount(podsRoot string, pod *v1.Pod, c *v1.Container, attempt uint32) (*runtimeapi.Mount, error) {
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

// messageReader finds the termination messages of exited containers: in
// their message files under podsRoot and, as a fallback, in their logs
// under logRoot. Its zero value finds none.
type messageReader struct{ podsRoot, logRoot string }

// message is the terminated state's message of st, an exited instance of
// spec container c: the runtime's own message, then, after ": ", the
// container's termination message (the kubelet's
// convertToKubeContainerStatus).
func (r messageReader) message(pod *v1.Pod, c *v1.Container, st *runtimeapi.ContainerStatus) string {
	msg := st.GetMessage()
	if r.podsRoot == "" && r.logRoot == "" {
		return msg
	}
	attempt := st.GetMetadata().GetAttempt()
	var file messageFile
	if r.podsRoot != "" && c.TerminationMessagePath != "" {
		path, err := terminationMessageFile(r.podsRoot, pod, c.Name, attempt)
		if err == nil {
			file.path = path
			file.data, file.err = readLast(path, maxMessageFile)
		}
	}
	logTail := func() (string, error) {
		if r.logRoot == "" {
			return "", nil
		}
		dir, err := logs.PodDir(r.logRoot, pod)
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

// capPodMessages cuts the terminated messages of the pod's statuses so that
// together they fit maxPodMessages, each to an even share: the kubelet's
// status manager does so (normalizeStatus) before it writes a status.
func capPodMessages(pod *v1.Pod, st *v1.PodStatus) {
	share := maxPodMessages
	if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers); n > 0 {
		share /= n
	}
	for _, statuses := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range statuses {
			for _, t := range []*v1.ContainerStateTerminated{statuses[i].State.Terminated, statuses[i].LastTerminationState.Terminated} {
				if t != nil && len(t.Message) > share {
					t.Message = t.Message[:share]
				}
			}
		}
	}
}
