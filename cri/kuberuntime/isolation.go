package kuberuntime

import (
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/apistatus"
)

// The isolation a pod asks for beyond the runtime's defaults (a security
// context, a runtime class, its own user, PID or IPC namespace) is not
// applied by podlife yet. A pod that asks for it is refused, never run with
// less than it asked: the pod's own fields stop every container before a
// sandbox is made; a container's stop that container, as the kubelet's
// CreateContainerConfigError does.

// explicitDefaults are the security-context values that ask for nothing
// beyond what every container gets already, keyed by JSON field name.
var explicitDefaults = map[string]any{
	"privileged":               false,
	"allowPrivilegeEscalation": true,
	"readOnlyRootFilesystem":   false,
	"runAsNonRoot":             false,
	"procMount":                v1.DefaultProcMount,
}

// unappliedPodIsolation names the fields of pod's own spec that ask for
// isolation podlife does not apply, as field paths; nil when there are none.
func unappliedPodIsolation(pod *v1.Pod) []string {
	spec := &pod.Spec
	var fields []string
	fields = setFields(fields, "spec.securityContext", spec.SecurityContext)
	if spec.RuntimeClassName != nil {
		fields = append(fields, "spec.runtimeClassName")
	}
	if spec.HostUsers != nil && !*spec.HostUsers {
		fields = append(fields, "spec.hostUsers")
	}
	if spec.HostPID {
		fields = append(fields, "spec.hostPID")
	}
	if spec.HostIPC {
		fields = append(fields, "spec.hostIPC")
	}
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace {
		fields = append(fields, "spec.shareProcessNamespace")
	}
	return fields
}

// unappliedContainerIsolation is unappliedPodIsolation for container c of
// pod: the set fields of its security context.
func unappliedContainerIsolation(pod *v1.Pod, c *v1.Container) []string {
	return setFields(nil, containerPath(pod, c)+".securityContext", c.SecurityContext)
}

// isolationError is the refusal of fields, in the status and the event.
func isolationError(fields []string) error {
	return fmt.Errorf("%s: podlife does not apply these fields yet, and will not run a container with less isolation than its spec asks for",
		strings.Join(fields, ", "))
}

// setFields appends to fields the path of each field of the struct that
// ptr points to which is set to anything but an explicit default. It walks
// the struct by reflection, so a field a future API adds is refused until
// podlife applies it.
func setFields(fields []string, path string, ptr any) []string {
	v := reflect.ValueOf(ptr)
	if v.IsNil() {
		return fields
	}
	v = v.Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), jsonName(v.Type().Field(i))
		if f.IsZero() {
			continue
		}
		if def, ok := explicitDefaults[name]; ok && reflect.DeepEqual(reflect.Indirect(f).Interface(), def) {
			continue
		}
		fields = append(fields, path+"."+name)
	}
	return fields
}

// jsonName is the field's name in the API.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// containerPath is c's path in pod: spec.containers[i] or
// spec.initContainers[i].
func containerPath(pod *v1.Pod, c *v1.Container) string {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return fmt.Sprintf("spec.initContainers[%d]", i)
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == c.Name {
			return fmt.Sprintf("spec.containers[%d]", i)
		}
	}
	return fmt.Sprintf("container %q", c.Name)
}

// refuseIsolation reports a pod refused for fields of its own spec: every
// container waits in CreateContainerConfigError, with a Failed event, and
// nothing of the pod is created. The sync fails, and its retries find the
// pod refused again: the API does not let these fields change.
func (s *Syncer) refuseIsolation(pod *v1.Pod, p *cri.PodRuntime, sb *runtimeapi.PodSandbox, fields []string) error {
	err := fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, isolationError(fields))
	waits := map[string]apistatus.Waiting{}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			waits[cs[i].Name] = apistatus.Waiting{Reason: "CreateContainerConfigError", Message: err.Error()}
		}
	}
	s.opts.Events.Eventf(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
	sbID := ""
	if sb != nil {
		sbID = sb.Id
	}
	s.setStatus(pod, p, sbID, false, waits)
	return err
}
