package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The demo's pods. Each manifest names its UID, so the script can follow a
// pod; a static pod without one gets a UID from its file's content.
const (
	webUID      = "0b6e3c5a-0000-4000-8000-000000000001"
	jobUID      = "0b6e3c5a-0000-4000-8000-000000000002"
	cacheUID    = "0b6e3c5a-0000-4000-8000-000000000003"
	scratchUID  = "0b6e3c5a-0000-4000-8000-000000000004"
	dbUID       = "0b6e3c5a-0000-4000-8000-000000000005"
	dbNextUID   = "0b6e3c5a-0000-4000-8000-000000000006"
	bigUID      = "0b6e3c5a-0000-4000-8000-000000000007"
	criticalUID = "0b6e3c5a-0000-4000-8000-000000000008"
	batchUID    = "0b6e3c5a-0000-4000-8000-000000000009"
	orphanUID   = "0b6e3c5a-0000-4000-8000-0000000000ff"
)

// podNames name the UIDs in progress lines.
var podNames = map[string]string{
	webUID: "web", jobUID: "job", cacheUID: "cache", scratchUID: "scratch", dbUID: "db (1st)",
	dbNextUID: "db (2nd)", bigUID: "big", criticalUID: "critical", batchUID: "batch", orphanUID: "leftover",
}

// image is any name: the embedded runtime "pulls" every image at once.
const image = "registry.k8s.io/pause:3.10"

// podManifest is a pod with one container per name in containers.
type podManifest struct {
	name, uid     string
	restartPolicy string
	grace         int
	priority      int32
	cpu           string // request; "" none
	containers    []string
	labels        string // extra YAML label lines, indented by 4
}

func (m podManifest) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: demo\n  uid: %s\n  labels:\n    app: %s\n%s", m.name, m.uid, m.name, m.labels)
	fmt.Fprintf(&b, "spec:\n  restartPolicy: %s\n  terminationGracePeriodSeconds: %d\n", m.restartPolicy, m.grace)
	if m.priority != 0 {
		fmt.Fprintf(&b, "  priority: %d\n", m.priority)
	}
	b.WriteString("  containers:\n")
	for _, c := range m.containers {
		fmt.Fprintf(&b, "  - name: %s\n    image: %s\n    imagePullPolicy: IfNotPresent\n", c, image)
		if m.cpu != "" {
			fmt.Fprintf(&b, "    resources:\n      requests:\n        cpu: %q\n", m.cpu)
		}
	}
	return b.String()
}

// write puts the manifest in dir as <file>, atomically, so a scan never
// reads half a file.
func write(dir, file, content string) error {
	tmp := filepath.Join(dir, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, file))
}

// mustResources parses a fixed resource list.
func mustResources(s string) v1.ResourceList {
	list := v1.ResourceList{}
	for _, part := range strings.Split(s, ",") {
		name, value, _ := strings.Cut(part, "=")
		list[v1.ResourceName(name)] = resource.MustParse(value)
	}
	return list
}
