package volume

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/envvars"
)

// A downwardAPI volume's files are written atomically at every sync, and
// only when their content or mode changed: a later sync writes the pod's
// new labels and annotations, and a container that has the volume mounted
// sees the new files at once (not with subPath: that mount is of the
// files of its time).

// defaultDownwardAPIMode is the API's default mode of a downwardAPI
// volume's files.
const defaultDownwardAPIMode = 0o644

// downwardAPIFiles are a downwardAPI volume's files: each item's content,
// with the item's mode, or else the volume's defaultMode, or else 0644.
func downwardAPIFiles(pod *v1.Pod, src *v1.DownwardAPIVolumeSource, allocatable v1.ResourceList) (map[string]volumeFile, error) {
	mode := int32(defaultDownwardAPIMode)
	if src.DefaultMode != nil {
		mode = *src.DefaultMode
	}
	return downwardAPIItemFiles(pod, src.Items, mode, allocatable)
}

// downwardAPIItemFiles are the files of downward API items, a downwardAPI
// volume's or a projected volume's source's: each item's content, with
// the item's mode or else mode.
func downwardAPIItemFiles(pod *v1.Pod, items []v1.DownwardAPIVolumeFile, mode int32, allocatable v1.ResourceList) (map[string]volumeFile, error) {
	files := map[string]volumeFile{}
	for _, item := range items {
		f := volumeFile{mode: mode}
		if item.Mode != nil {
			f.mode = *item.Mode
		}
		if f.mode < 0 || f.mode > 0o777 {
			return nil, fmt.Errorf("item %q: mode %#o is not a file mode (0 to 0777)", item.Path, f.mode)
		}
		var content string
		var err error
		switch {
		case item.FieldRef != nil:
			content, err = podFieldValue(pod, item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			content, err = envvars.ResourceFieldValue(pod, nil, item.ResourceFieldRef, allocatable)
		default:
			err = fmt.Errorf("neither fieldRef nor resourceFieldRef is set")
		}
		if err != nil {
			return nil, fmt.Errorf("item %q: %w", item.Path, err)
		}
		f.data = []byte(content)
		files[path.Clean(item.Path)] = f
	}
	return files, nil
}

// podFieldValue is the value of one of the pod's fields a downwardAPI
// volume may show: its name, namespace, UID, labels or annotations (all,
// or one by key as in metadata.labels['app']), as the kubelet writes
// them.
func podFieldValue(pod *v1.Pod, fieldPath string) (string, error) {
	if v, ok := envvars.MetadataValue(pod, fieldPath); ok {
		return v, nil
	}
	switch fieldPath {
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	}
	return "", fmt.Errorf("fieldRef %q is not supported in a downwardAPI volume (metadata.name, metadata.namespace, metadata.uid, metadata.labels, metadata.annotations)", fieldPath)
}

// formatMap is the kubelet's format of labels and annotations: a line
// key="value" (Go-quoted) per key, in key order, with no newline at the
// end.
func formatMap(m map[string]string) string {
	lines := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}
