package kubeletconfig

import (
	"encoding/json"
	"reflect"
	"strings"
)

// leaf is one field of a KubeletConfiguration that holds a value: a
// scalar, a list, a map, a pointer, or a struct with a JSON form of its
// own (a duration, a quantity). Path is its name in the file, the JSON
// names joined by dots ("authentication.x509.clientCAFile").
type leaf struct {
	Path  string
	Value reflect.Value
}

// leaves lists v's leaves in field order, descending into the structs
// that only group fields (authentication, logging.options ...).
func leaves(v reflect.Value, prefix string) []leaf {
	var out []leaf
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			if f.Type.Name() != "TypeMeta" {
				out = append(out, leaves(v.Field(i), prefix)...)
			}
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		if groups(f.Type) {
			out = append(out, leaves(v.Field(i), path+".")...)
			continue
		}
		out = append(out, leaf{Path: path, Value: v.Field(i)})
	}
	return out
}

// groups holds for a struct that only groups fields: one without a JSON
// form of its own.
func groups(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	marshaler := reflect.TypeFor[json.Marshaler]()
	return !t.Implements(marshaler) && !reflect.PointerTo(t).Implements(marshaler)
}

// isSet holds when the file gave the leaf a value: anything but its zero
// value, which the kubelet replaces with its default. A quantity counts
// by its value ("0" is unset), a list or map by its length.
func isSet(v reflect.Value) bool {
	if v.Kind() == reflect.Map || v.Kind() == reflect.Slice {
		return v.Len() > 0
	}
	if v.Kind() == reflect.Struct && v.CanAddr() {
		if z, ok := v.Addr().Interface().(interface{ IsZero() bool }); ok {
			return !z.IsZero()
		}
	}
	return !v.IsZero()
}
