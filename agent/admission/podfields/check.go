package podfields

import (
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Reason is the admission reason of a pod refused for its fields. The
// kubelet has none (its feature gates drop such fields at the API server),
// so it is podlife's own, in the kubelet's style.
const Reason = "UnsupportedPodField"

// Refusal is one refused field that a pod sets.
type Refusal struct {
	// Path is the field's path in the pod, e.g.
	// "spec.containers[1].volumeDevices".
	Path string
	Why  string
}

// Refusals lists the fields pod sets that the table refuses at admission,
// in the order of the spec; nil when there are none. Fields refused by
// other code (Row.By) are left to it.
func Refusals(pod *v1.Pod) []Refusal {
	var out []Refusal
	checkStruct(pod, reflect.ValueOf(&pod.Spec).Elem(), "spec", &out)
	return out
}

// Message is the rejection's message for refusals: each field path with
// its reason.
func Message(refusals []Refusal) string {
	parts := make([]string, len(refusals))
	for i, r := range refusals {
		parts[i] = r.Path + ": " + r.Why
	}
	return "podlife does not run this pod, rather than run it with less than its spec asks for: " + strings.Join(parts, "; ")
}

// checkStruct appends to out the refused fields that v, a struct of a type
// with a table, sets, at path.
func checkStruct(pod *v1.Pod, v reflect.Value, path string, out *[]Refusal) {
	tb := tableOf(v.Type())
	if tb == nil {
		// The tables' test walks every descent; reaching here is a bug.
		panic(fmt.Sprintf("podfields: no table for %s at %s", v.Type(), path))
	}
	for _, f := range apiFields(v.Type()) {
		row, ok := tb.Row(f.name)
		fv := v.FieldByIndex(f.index)
		if !ok || unset(fv) {
			continue
		}
		at := path + "." + f.name
		if row.CheckedHere() && (row.Refuses == nil || row.Refuses(pod, fv)) {
			*out = append(*out, Refusal{Path: at, Why: row.Why})
		}
		if row.Descend {
			descend(pod, fv, at, out)
		}
	}
}

// descend checks the struct (or pointer to it, or slice of them) v.
func descend(pod *v1.Pod, v reflect.Value, path string, out *[]Refusal) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			descend(pod, v.Elem(), path, out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			descend(pod, v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Struct:
		checkStruct(pod, v, path, out)
	}
}

// apiField is one field of an API type as JSON names it, through the
// structs it embeds inline (v1.Volume's VolumeSource, v1.Probe's
// ProbeHandler, v1.EphemeralContainer's EphemeralContainerCommon).
type apiField struct {
	name  string
	index []int
	typ   reflect.Type
}

func apiFields(t reflect.Type) []apiField {
	var out []apiField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			for _, inner := range apiFields(f.Type) {
				inner.index = append([]int{i}, inner.index...)
				out = append(out, inner)
			}
			continue
		}
		if name == "" || name == "-" {
			name = f.Name
		}
		out = append(out, apiField{name: name, index: []int{i}, typ: f.Type})
	}
	return out
}

// elemType is the struct type below pointers and slices of t.
func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}
