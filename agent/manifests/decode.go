package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Decode reads one manifest file (YAML or JSON holding a single core/v1 Pod)
// and returns the pod as the kubelet's file source would hand it on:
// defaulted, named for the node, and annotated as a static pod. path is only
// used in the UID and in error messages. Every error is a *FileError for path.
// config.seen is not set here: Source sets it when it first reports the pod.
func Decode(path string, data []byte, nodeName string) (*v1.Pod, error) {
	if err := checkNodeName(nodeName); err != nil {
		return nil, fileErr(path, err)
	}
	pod, err := parse(data)
	if err != nil {
		return nil, fileErr(path, err)
	}
	if errs := validate(pod, nodeName); len(errs) > 0 {
		return nil, fileErr(path, invalid(errs))
	}
	if kind := apiObjectReference(pod); kind != "" {
		return nil, fileErr(path, fmt.Errorf("static pods may not reference %s", kind))
	}
	if pod.UID == "" {
		// Hashed before defaulting, as the kubelet does, so the UID depends
		// on what the file says and not on how this version defaults it.
		if pod.UID, err = contentUID(pod, path, nodeName); err != nil {
			return nil, fileErr(path, err)
		}
	}
	applyDefaults(pod, nodeName)
	return pod, nil
}

// parse decodes the single Pod in data. Unknown and duplicate fields are
// errors: in a hand-written manifest they are typos (imagePullPolice), which
// a lenient decoder would silently drop.
func parse(data []byte) (*v1.Pod, error) {
	n, err := countDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	switch {
	case n == 0:
		return nil, errors.New("empty manifest")
	case n > 1:
		return nil, fmt.Errorf("%d YAML documents; a manifest holds exactly one pod", n)
	}
	// Kind first, leniently, so a Deployment is reported as the wrong kind
	// rather than as a list of unknown fields.
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("invalid YAML or JSON: %w", err)
	}
	if tm.Kind != "" && tm.Kind != "Pod" {
		return nil, fmt.Errorf("kind %q is not Pod", tm.Kind)
	}
	if tm.APIVersion != "" && tm.APIVersion != "v1" {
		return nil, fmt.Errorf("apiVersion %q is not v1", tm.APIVersion)
	}
	// The typed decode stops at the first bad quantity and names no field.
	if errs := checkQuantities(data); len(errs) > 0 {
		return nil, invalid(errs)
	}
	var pod v1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		return nil, fmt.Errorf("invalid YAML or JSON: %w", err)
	}
	return &pod, nil
}

// countDocuments counts the YAML documents in data that hold more than
// comments, since the YAML decoder would silently ignore all but the first.
func countDocuments(data []byte) (int, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	n := 0
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if hasContent(doc) {
			n++
		}
	}
}

func hasContent(doc []byte) bool {
	for line := range strings.Lines(string(doc)) {
		line = strings.TrimSpace(line)
		if line != "" && line != "..." && !strings.HasPrefix(line, "#") {
			return true
		}
	}
	return false
}

// maxShownValue bounds how much of a bad value an error repeats: a label
// value of a megabyte need not be logged whole to be fixed.
const maxShownValue = 256

// invalid reports every problem found, one per field, in a stable order
// (validation walks maps), so the same content gives the same error and is
// reported once.
func invalid(errs field.ErrorList) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		if s, ok := e.BadValue.(string); ok && len(s) > maxShownValue {
			e.BadValue = fmt.Sprintf("%s... (%d bytes)", s[:maxShownValue], len(s))
		}
		msgs[i] = e.Error()
	}
	slices.Sort(msgs)
	return fmt.Errorf("invalid pod: %s", strings.Join(msgs, "; "))
}
