package container

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	cfsm "github.com/podlife/podlife/fsm/container"
	"github.com/podlife/podlife/internal/jsonline"
)

// Line is one line of a container trace, in the types of fsm/container.
type Line struct {
	Seq       uint64
	Pod       string
	Sync      uint64
	Container string
	Event     cfsm.Event
	Row       string
	From, To  cfsm.State
	Params    cfsm.Params
	Before    cfsm.Vars
	After     cfsm.Vars
	Effects   cfsm.Effect
}

var lineKeys = []string{"seq", "pod", "sync", "container", "event", "row", "from", "to", "params", "before", "after", "effects"}

// Read parses an NDJSON container trace. Every line must be one object with
// exactly the fields a Recorder writes (none missing, none unknown), and
// every name one that fsm/container knows; blank lines are skipped.
func Read(r io.Reader) ([]Line, error) {
	return jsonline.Read(r, "container trace", parseLine)
}

func parseLine(text []byte) (Line, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(text, &raw); err != nil {
		return Line{}, err
	}
	if err := jsonline.SameKeys("", raw, lineKeys); err != nil {
		return Line{}, err
	}
	var l Line
	var event, from, to string
	var effects []string
	for _, f := range []struct {
		key string
		dst any
	}{{"seq", &l.Seq}, {"pod", &l.Pod}, {"sync", &l.Sync}, {"container", &l.Container}, {"event", &event}, {"row", &l.Row},
		{"from", &from}, {"to", &to}, {"effects", &effects}} {
		if err := json.Unmarshal(raw[f.key], f.dst); err != nil {
			return Line{}, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	var err error
	if l.Event, err = enum[cfsm.Event]("event", event); err != nil {
		return Line{}, err
	}
	if l.From, err = enum[cfsm.State]("from", from); err != nil {
		return Line{}, err
	}
	if l.To, err = enum[cfsm.State]("to", to); err != nil {
		return Line{}, err
	}
	for _, name := range effects {
		f, err := effect(name)
		if err != nil {
			return Line{}, err
		}
		if l.Effects.Has(f) {
			return Line{}, fmt.Errorf("effects: %s twice", name)
		}
		l.Effects |= f
	}
	for _, s := range []struct {
		key string
		dst any
	}{{"params", &l.Params}, {"before", &l.Before}, {"after", &l.After}} {
		if err := decodeStruct(s.key, raw[s.key], reflect.ValueOf(s.dst).Elem()); err != nil {
			return Line{}, err
		}
	}
	return l, nil
}

// decodeStruct fills the struct dst (cfsm.Params or cfsm.Vars) from the
// object data, whose keys must be exactly dst's field names with a
// lower-case first letter. Reading by reflection keeps the reader in step
// with the generated types: a parameter the table gains is read (and
// required) without a change here.
func decodeStruct(section string, data json.RawMessage, dst reflect.Value) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("%s: %w", section, err)
	}
	typ := dst.Type()
	keys := make([]string, typ.NumField())
	for i := range typ.NumField() {
		keys[i] = FieldName(typ.Field(i).Name)
	}
	if err := jsonline.SameKeys(section+".", obj, keys); err != nil {
		return err
	}
	for i, key := range keys {
		f := dst.Field(i)
		where := section + "." + key
		switch {
		case f.Kind() == reflect.Bool || f.Kind() == reflect.Int:
			if err := json.Unmarshal(obj[key], f.Addr().Interface()); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		case f.Kind() == reflect.Uint8 && f.Type().Implements(reflect.TypeFor[fmt.Stringer]()):
			var name string
			if err := json.Unmarshal(obj[key], &name); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			v, ok := enumValue(f.Type(), name)
			if !ok {
				return fmt.Errorf("%s: %q is not a value of %s", where, name, f.Type().Name())
			}
			f.SetUint(v)
		default:
			return fmt.Errorf("%s: cannot read a field of type %s", where, f.Type())
		}
	}
	return nil
}

// FieldName is the name of a Params or Vars field in traces and in the
// TLA+ records: the Go name with a lower-case first letter.
func FieldName(goName string) string { return strings.ToLower(goName[:1]) + goName[1:] }

// enumValue finds the value of the uint8 enum type typ whose String() is
// name (the generated enums have no parser).
func enumValue(typ reflect.Type, name string) (uint64, bool) {
	v := reflect.New(typ).Elem()
	for i := range uint64(256) {
		v.SetUint(i)
		if v.Interface().(fmt.Stringer).String() == name {
			return i, true
		}
	}
	return 0, false
}

func enum[T interface {
	~uint8
	fmt.Stringer
}](field, name string) (T, error) {
	v, ok := enumValue(reflect.TypeFor[T](), name)
	if !ok {
		return 0, fmt.Errorf("%s: %q is not a value of %s", field, name, reflect.TypeFor[T]().Name())
	}
	return T(v), nil
}

func effect(name string) (cfsm.Effect, error) {
	for f := cfsm.Effect(1); f != 0; f <<= 1 {
		if f.String() == name {
			return f, nil
		}
	}
	return 0, fmt.Errorf("effects: %q is not an effect", name)
}

// sameKeys reports fields that are missing or unknown.
