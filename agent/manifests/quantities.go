package manifests

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

var (
	podType      = reflect.TypeFor[v1.Pod]()
	quantityType = reflect.TypeFor[resource.Quantity]()
)

// checkQuantities finds the values in a manifest that the Pod type holds as
// resource quantities and that do not parse as one. Decoding the typed pod
// fails on the first with the parser's message alone; this names each field
// (spec.containers[0].resources.limits[memory]). It walks the manifest as
// plain JSON alongside the Pod type, so it covers every quantity field the
// type has; values of the wrong shape are left to the typed decode.
func checkQuantities(data []byte) field.ErrorList {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil // the typed decode reports it
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber() // a number is checked as written, as Quantity.UnmarshalJSON does
	var doc any
	if d.Decode(&doc) != nil {
		return nil
	}
	var errs field.ErrorList
	walkQuantities(doc, podType, nil, &errs)
	return errs
}

func walkQuantities(v any, t reflect.Type, at *field.Path, errs *field.ErrorList) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		checkQuantity(v, at, errs)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		walkFields(obj, t, at, errs)
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range list {
			walkQuantities(e, t.Elem(), at.Index(i), errs)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			walkQuantities(obj[k], t.Elem(), at.Key(k), errs)
		}
	}
}

// walkFields visits the fields of struct type t present in obj, by their
// JSON names; an embedded struct without a name is inlined, as
// encoding/json does.
func walkFields(obj map[string]any, t reflect.Type, at *field.Path, errs *field.ErrorList) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "" && f.Anonymous:
			if ft := f.Type; ft.Kind() == reflect.Struct {
				walkFields(obj, ft, at, errs)
			}
		default:
			if name == "" {
				name = f.Name
			}
			if v, ok := obj[name]; ok {
				walkQuantities(v, f.Type, child(at, name), errs)
			}
		}
	}
}

func child(at *field.Path, name string) *field.Path {
	if at == nil {
		return field.NewPath(name)
	}
	return at.Child(name)
}

func checkQuantity(v any, at *field.Path, errs *field.ErrorList) {
	raw, err := json.Marshal(v)
	if err != nil {
		return
	}
	var q resource.Quantity
	if err := q.UnmarshalJSON(raw); err != nil {
		var shown any = string(raw)
		if s, ok := v.(string); ok {
			shown = s
		}
		*errs = append(*errs, field.Invalid(at, shown, err.Error()))
	}
}
