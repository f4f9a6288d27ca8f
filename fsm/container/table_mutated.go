//go:build podlife_mutation

package container

import (
	"fmt"
	"reflect"

	"github.com/podlife/podlife/spec"
	sc "github.com/podlife/podlife/spec/container"
)

// This file is built only with the tag podlife_mutation, for the mutation
// tests of internal/mutants (explore/container's TestContainerMutants):
// podlife itself always runs the generated rows.

// UseTable makes Fire run the given rows instead of the generated ones
// with the same IDs, evaluating their spec expressions. Restore puts the
// generated rows back.
func UseTable(table []spec.Row) (restore func(), err error) {
	saved := rows
	for k := range table {
		r := table[k]
		i := -1
		for j := range rows {
			if rows[j].id == r.ID {
				i = j
			}
		}
		if i < 0 {
			rows = saved
			return nil, fmt.Errorf("container: the generated table has no row %s", r.ID)
		}
		if State(r.From) != rows[i].from || Event(r.Event) != rows[i].event {
			rows = saved
			return nil, fmt.Errorf("container: row %s moved to another (state, event)", r.ID)
		}
		rows[i].to, rows[i].effects = State(r.To), Effect(r.Effects)
		rows[i].guard = func(v Vars, p Params) bool { return r.Guard.Eval(env(v, p)) == 1 }
		rows[i].apply = func(v Vars, p Params) Vars { return varsOf(r.ApplyIn(sc.Schema, env(v, p))) }
	}
	return func() { rows = saved }, nil
}

// env is the spec environment of a record's variables and an event's
// parameters: their fields are in container.Vars and container.Params
// order.
func env(v Vars, p Params) *spec.Env {
	e := sc.Schema.NewEnv()
	fill(e.Vars, reflect.ValueOf(v))
	fill(e.Params, reflect.ValueOf(p))
	return e
}

func fill(dst []int, v reflect.Value) {
	for i := range dst {
		switch f := v.Field(i); f.Kind() {
		case reflect.Bool:
			if f.Bool() {
				dst[i] = 1
			}
		case reflect.Int:
			dst[i] = int(f.Int())
		default:
			dst[i] = int(f.Uint())
		}
	}
}

func varsOf(vals []int) Vars {
	var v Vars
	rv := reflect.ValueOf(&v).Elem()
	for i, x := range vals {
		switch f := rv.Field(i); f.Kind() {
		case reflect.Bool:
			f.SetBool(x == 1)
		case reflect.Int:
			f.SetInt(int64(x))
		default:
			f.SetUint(uint64(x))
		}
	}
	return v
}
