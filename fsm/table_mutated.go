//go:build podlife_mutation

package fsm

import (
	"fmt"
	"reflect"

	looplab "github.com/looplab/fsm"

	"github.com/podlife/podlife/spec"
)

// This file is built only with the tag podlife_mutation, for the mutation
// tests of internal/mutants: podlife itself always runs the generated table.

// UseTable makes machines created from now on run the given rows instead
// of the generated ones with the same IDs, evaluating their spec
// expressions. Restore puts the generated rows back.
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
			return nil, fmt.Errorf("fsm: the generated table has no row %s", r.ID)
		}
		if State(r.From) != rows[i].from || Event(r.Event) != rows[i].event {
			rows = saved
			return nil, fmt.Errorf("fsm: row %s moved to another (state, event)", r.ID)
		}
		rows[i].to, rows[i].effects, rows[i].ignores = State(r.To), Effect(r.Effects), r.Ignores()
		rows[i].guard = func(v Vars, p Params) bool { return r.Guard.Eval(env(v, p)) == 1 }
		rows[i].apply = func(v Vars, p Params) Vars { return varsOf(r.Apply(env(v, p))) }
	}
	return func() { rows = saved }, nil
}

// events are the looplab events of the rows in use.
func events() looplab.Events {
	var out looplab.Events
	for _, r := range rows {
		if r.from != r.to {
			out = append(out, looplab.EventDesc{Name: r.id, Src: []string{r.from.String()}, Dst: r.to.String()})
		}
	}
	return out
}

// env is the spec environment of a record's variables and an event's
// parameters: their fields are in spec.Vars and spec.Params order.
func env(v Vars, p Params) *spec.Env {
	e := spec.NewEnv()
	fill(e.Vars, reflect.ValueOf(v))
	fill(e.Params, reflect.ValueOf(p))
	return e
}

func fill(dst []int, v reflect.Value) {
	for i := range dst {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			if f.Bool() {
				dst[i] = 1
			}
		case reflect.Int64:
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
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(x == 1)
		case reflect.Int64:
			f.SetInt(int64(x))
		default:
			f.SetUint(uint64(x))
		}
	}
	return v
}
