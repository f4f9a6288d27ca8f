package podfields

import (
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/securitycontext"
)

// The security-context rows refused by cri/securitycontext are exactly the
// fields its check refuses: the two say one thing.
func TestSecurityContextRowsMatchTheirCheck(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[v1.PodSecurityContext](), reflect.TypeFor[v1.SecurityContext]()} {
		tb := tableOf(typ)
		for _, f := range apiFields(typ) {
			row, _ := tb.Row(f.name)
			ptr := reflect.New(typ)
			setNonZero(ptr.Elem().FieldByIndex(f.index))
			refusedThere := slices.Contains(securitycontext.Unapplied("sc", ptr.Interface()), "sc."+f.name)
			refusedHere := row.Verdict == Refused && row.By == securityContextCheck
			if refusedThere != refusedHere {
				t.Errorf("%s.%s: cri/securitycontext refuses it: %v; the row says %s by %q", typ.Name(), f.name, refusedThere, row.Verdict, row.By)
			}
		}
	}
}

// setNonZero gives v a value that is set (see unset): a pointer to a set
// value, a list of one set element, a struct with its first field set.
func setNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setNonZero(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		setNonZero(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		key := reflect.New(v.Type().Key()).Elem()
		setNonZero(key)
		v.SetMapIndex(key, reflect.New(v.Type().Elem()).Elem())
	case reflect.Struct:
		setNonZero(v.Field(0))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	default:
		panic("setNonZero: " + v.Kind().String())
	}
}
