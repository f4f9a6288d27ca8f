package podfields

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Every row refused at admission is enforced: a pod that sets the field
// (at its table's path, with one element in each list on the way) is
// refused at that path. Rows with their own Refuses are tested with the
// values they refuse in TestRefusals.
func TestEveryRefusedRowIsEnforced(t *testing.T) {
	for _, tb := range tables {
		for _, row := range tb.Rows[tb.Inherited:] {
			if !row.CheckedHere() || row.Refuses != nil {
				continue
			}
			pod := &v1.Pod{}
			path := strings.Replace(tb.Path, "spec", "", 1) + "." + row.Field
			want := "spec" + strings.ReplaceAll(path, "[*]", "[0]")
			setAt(reflect.ValueOf(&pod.Spec).Elem(), strings.Split(strings.TrimPrefix(path, "."), "."))
			var got []string
			for _, r := range Refusals(pod) {
				got = append(got, r.Path)
			}
			if len(got) != 1 || got[0] != want {
				t.Errorf("a pod setting %s is refused at %q, want only %q", want, got, want)
			}
		}
	}
}

// setAt follows the JSON names of path from the struct v, making one
// element of each list and a value for each pointer on the way, and sets
// the last field to a value that is not its zero value.
func setAt(v reflect.Value, path []string) {
	name, list := strings.CutSuffix(path[0], "[*]")
	var field reflect.Value
	for _, f := range apiFields(v.Type()) {
		if f.name == name {
			field = v.FieldByIndex(f.index)
		}
	}
	if len(path) == 1 {
		setNonZero(field)
		return
	}
	switch {
	case list:
		field.Set(reflect.MakeSlice(field.Type(), 1, 1))
		field = field.Index(0)
	case field.Kind() == reflect.Pointer:
		field.Set(reflect.New(field.Type().Elem()))
		field = field.Elem()
	}
	setAt(field, path[1:])
}
