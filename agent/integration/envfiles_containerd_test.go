package integration_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/internal/agenttest"
	"github.com/podlife/podlife/internal/critest"
)

// env valueFrom.fileKeyRef on containerd (the kubelet's EnvFiles, as the
// node e2e "MirrorPod with EnvFiles" uses it): an init container writes
// an env file into an emptyDir, and the main container, which does not
// even mount the volume, gets its keys as variables, an optional missing
// key left out. In a second pod a required key the file lacks leaves the
// container waiting in CreateContainerConfigError, with a Failed event
// in the kubelet's words.
func TestContainerdEnvFiles(t *testing.T) {
	e := agenttest.NewCtrdEnv(t)
	manifests := filepath.Join(e.Dir, "manifests")
	a := e.StartAgent(manifests, nil)
	okUID, missingUID := e.NewUID(), e.NewUID()
	const spec = `apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  uid: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes:
  - name: config
    emptyDir: {}
  initContainers:
  - name: setup-envfile
    image: %[4]s
    imagePullPolicy: Never
    command: [sh, -c, "echo CONFIG_1=\\'value1\\' > /data/config.env && echo CONFIG_2=\\'two words\\' >> /data/config.env"]
    volumeMounts:
    - {name: config, mountPath: /data}
  containers:
  - name: use-envfile
    image: %[4]s
    imagePullPolicy: Never
    command: [sh, -c, "env | grep -E '^(CONFIG_|MISSING)' | sort > /dev/termination-log"]
    env:
    - name: CONFIG_1
      valueFrom: {fileKeyRef: {volumeName: config, path: config.env, key: CONFIG_1}}
    - name: CONFIG_2
      valueFrom: {fileKeyRef: {volumeName: config, path: config.env, key: CONFIG_2}}
    - name: %[5]s
      valueFrom: {fileKeyRef: {volumeName: config, path: config.env, key: MISSING_KEY, optional: %[6]t}}
`
	writeManifest(t, manifests, "envfile.yaml", fmt.Sprintf(spec, "envfile", agenttest.CtrdNamespace, okUID, critest.BusyboxImage, "MISSING_OPTIONAL", true))
	writeManifest(t, manifests, "missing.yaml", fmt.Sprintf(spec, "missing", agenttest.CtrdNamespace, missingUID, critest.BusyboxImage, "MISSING_REQUIRED", false))

	var st v1.PodStatus
	agenttest.CtrdEventually(t, "the pod with the env file succeeded", func() (bool, string) {
		var ok bool
		st, ok = a.PodStatus(types.UID(okUID))
		return ok && st.Phase == v1.PodSucceeded && len(st.ContainerStatuses) == 1, fmt.Sprintf("%+v", st)
	})
	term := st.ContainerStatuses[0].State.Terminated
	if want := "CONFIG_1=value1\nCONFIG_2=two words\n"; term == nil || term.ExitCode != 0 || term.Message != want {
		t.Errorf("use-envfile: %+v; want exit 0 and the variables %q, the optional missing key left out", term, want)
	}

	// The file's path on the node is the emptyDir's, as the kubelet's.
	wantMsg := `environment variable key "MISSING_KEY" not found in file "`
	wantPath := `/` + missingUID + `/volumes/kubernetes.io~empty-dir/config/config.env"`
	var failed []string
	agenttest.CtrdEventually(t, "the pod missing a required key waits in CreateContainerConfigError", func() (bool, string) {
		st, ok := a.PodStatus(types.UID(missingUID))
		if !ok || len(st.ContainerStatuses) != 1 || len(st.InitContainerStatuses) != 1 {
			return false, fmt.Sprintf("%+v", st)
		}
		init, w := st.InitContainerStatuses[0].State.Terminated, st.ContainerStatuses[0].State.Waiting
		failed = a.Logs.Lines("Failed", `Error: container \"use-envfile\"`, `environment variable key \"MISSING_KEY\" not found in file`)
		return init != nil && init.ExitCode == 0 && w != nil && w.Reason == "CreateContainerConfigError" &&
				strings.Contains(w.Message, wantMsg) && strings.HasSuffix(w.Message, wantPath) && len(failed) > 0 && st.Phase == v1.PodPending,
			fmt.Sprintf("phase %s, init %+v, waiting %+v, Failed events %q", st.Phase, init, w, failed)
	})
	t.Logf("the Failed event: %s", failed[0])
}
