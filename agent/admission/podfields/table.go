package podfields

import (
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Verdict is what podlife does with a field.
type Verdict int

const (
	// Honoured: podlife applies the field; Row.Why says by what.
	Honoured Verdict = iota + 1
	// Refused: a pod that sets the field (to anything but an explicit
	// default) is not run; Row.Why is the reason the user reads.
	Refused
	// Meaningless: the field is for someone else (the scheduler, the API
	// server, another OS); Row.Why says whose it is.
	Meaningless
)

func (v Verdict) String() string {
	switch v {
	case Honoured:
		return "honoured"
	case Refused:
		return "refused"
	case Meaningless:
		return "meaningless"
	}
	return "unknown"
}

// Row is one field's verdict.
type Row struct {
	// Field is the field's JSON name in its type.
	Field   string
	Verdict Verdict
	// Why is one line: what honours the field, the reason it is refused,
	// or why it means nothing on a node.
	Why string
	// By names the code that refuses a Refused field when that is not this
	// package's admission check (a volume type cri/volume cannot mount
	// fails the sync with FailedMount): the check is written once, there.
	By string
	// Which says which values are refused when not all are (README).
	Which string
	// Refuses decides whether a set value is refused at admission; nil
	// refuses any value but an unset one (see unset). pod is the whole
	// pod, for exceptions such as a host port on the host network. Rows
	// refused By other code have none: that code decides.
	Refuses func(pod *v1.Pod, v reflect.Value) bool
	// Descend: the field's type (through pointers and slices) has rows of
	// its own, checked below this one.
	Descend bool
}

// CheckedHere says whether this package's admission check enforces the
// row.
func (r Row) CheckedHere() bool { return r.Verdict == Refused && r.By == "" }

// Table is the rows of one API type, with the path README shows for it.
type Table struct {
	Type reflect.Type
	// Path is where the type sits in a pod, e.g. "spec.containers[*]";
	// the same rows hold wherever else it sits.
	Path string
	Rows []Row
	// Inherited is how many leading rows are another table's, which
	// README lists there (an ephemeral container's are a container's).
	Inherited int
}

// Row returns the row of the field with JSON name field.
func (t *Table) Row(field string) (Row, bool) {
	i := slices.IndexFunc(t.Rows, func(r Row) bool { return r.Field == field })
	if i < 0 {
		return Row{}, false
	}
	return t.Rows[i], true
}

// Tables are every type's rows, PodSpec first. The order is the README's.
func Tables() []*Table { return tables }

// tableOf returns the table of type t, nil when t has none.
func tableOf(t reflect.Type) *Table {
	for _, tb := range tables {
		if tb.Type == t {
			return tb
		}
	}
	return nil
}

var tables = []*Table{
	{Type: reflect.TypeFor[v1.PodSpec](), Path: "spec", Rows: podSpecRows},
	{Type: reflect.TypeFor[v1.PodSecurityContext](), Path: "spec.securityContext", Rows: podSecurityContextRows},
	{Type: reflect.TypeFor[v1.Volume](), Path: "spec.volumes[*]", Rows: volumeRows},
	{Type: reflect.TypeFor[v1.ProjectedVolumeSource](), Path: "spec.volumes[*].projected", Rows: projectedRows},
	{Type: reflect.TypeFor[v1.VolumeProjection](), Path: "spec.volumes[*].projected.sources[*]", Rows: projectionRows},
	{Type: reflect.TypeFor[v1.Container](), Path: "spec.containers[*]", Rows: containerRows},
	{Type: reflect.TypeFor[v1.EphemeralContainer](), Path: "spec.ephemeralContainers[*]", Rows: ephemeralContainerRows, Inherited: len(containerRows)},
	{Type: reflect.TypeFor[v1.SecurityContext](), Path: "spec.containers[*].securityContext", Rows: securityContextRows},
	{Type: reflect.TypeFor[v1.ContainerPort](), Path: "spec.containers[*].ports[*]", Rows: containerPortRows},
	{Type: reflect.TypeFor[v1.EnvVar](), Path: "spec.containers[*].env[*]", Rows: envVarRows},
	{Type: reflect.TypeFor[v1.EnvVarSource](), Path: "spec.containers[*].env[*].valueFrom", Rows: envVarSourceRows},
	{Type: reflect.TypeFor[v1.ResourceRequirements](), Path: "spec.containers[*].resources", Rows: resourceRows},
	{Type: reflect.TypeFor[v1.VolumeMount](), Path: "spec.containers[*].volumeMounts[*]", Rows: volumeMountRows},
	{Type: reflect.TypeFor[v1.Probe](), Path: "spec.containers[*].livenessProbe", Rows: probeRows},
	{Type: reflect.TypeFor[v1.Lifecycle](), Path: "spec.containers[*].lifecycle", Rows: lifecycleRows},
	{Type: reflect.TypeFor[v1.LifecycleHandler](), Path: "spec.containers[*].lifecycle.postStart", Rows: lifecycleHandlerRows},
}

// Row constructors, so that each row reads as one line.

func honoured(field, why string) Row { return Row{Field: field, Verdict: Honoured, Why: why} }

// honouredBelow is an honoured field whose type has rows of its own.
func honouredBelow(field, why string) Row {
	return Row{Field: field, Verdict: Honoured, Why: why, Descend: true}
}

func meaningless(field, why string) Row { return Row{Field: field, Verdict: Meaningless, Why: why} }

// refused is refused at admission whenever it is set.
func refused(field, why string) Row { return Row{Field: field, Verdict: Refused, Why: why} }

// refusedBy is refused by the code by names, not by admission.
func refusedBy(field, by, why string) Row {
	return Row{Field: field, Verdict: Refused, By: by, Why: why}
}

// unset says whether v asks for nothing: its zero value, an empty slice or
// map, a pointer to an unset value (an explicit false, 0 or {}), a struct
// of unset fields.
func unset(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || unset(v.Elem())
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Struct:
		for i := range v.NumField() {
			if !unset(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return v.IsZero()
}
