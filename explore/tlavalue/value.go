// Package tlavalue reads and prints TLA+ values in the notation TLC uses
// (its error traces and state dumps), and compares them by TLA+'s equality:
// the explorer's states meet TLC's through it. It has no kubelet
// counterpart.
package tlavalue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Value is a TLA+ value as TLC prints it: a Boolean, an integer, a string, a
// sequence (or tuple) <<a, b>>, a set {a, b}, a record [f |-> v], or a
// function (k1 :> v1 @@ k2 :> v2).
//
// A record and a function are the same kind of value in TLA+: a record is a
// function whose domain is a set of strings, and a function whose domain is
// 1..n is a sequence. TLC prints every function whose domain is a set of
// strings as a record ([p1 |-> ..., p2 |-> ...] for [p \in {"p1", "p2"} |->
// ...]) and one whose domain is 1..n as a sequence. Canonical, Equal and
// everything built on them (explore's State.Canonical, DiffStates, WriteDump)
// follow
// TLA+'s equality, not the Kind a value was built or parsed with.
type Value struct {
	Kind   ValueKind
	Bool   bool
	Int    int64
	Str    string
	Elems  []Value // Seq and Set
	Fields []Field // Record (name -> value) and Func (key -> value)
}

// ValueKind tells the variants of Value apart.
type ValueKind uint8

const (
	BoolValue ValueKind = iota
	IntValue
	StringValue
	SeqValue
	RecordValue
	FuncValue
	SetValue
)

// Field is a record field or a function entry.
type Field struct {
	Key   Value // a string for records
	Value Value
}

// Canonical prints v in the form TLC prints it, so that equal TLA+ values
// print equally: record fields, function entries and set elements sorted
// (sets without duplicates); a function (or record) with string keys that
// are identifiers as a record; a function with the keys 1..n, and any empty
// function, as a sequence; other functions as (k :> v @@ ...).
func (v Value) Canonical() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

// Equal reports whether v and w are the same TLA+ value (for example a
// record and a function with the same string keys and values).
func (v Value) Equal(w Value) bool { return v.Canonical() == w.Canonical() }

func (v Value) write(b *strings.Builder) {
	switch v.Kind {
	case BoolValue:
		if v.Bool {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case IntValue:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case StringValue:
		b.WriteString(strconv.Quote(v.Str))
	case SeqValue:
		writeSeq(b, v.Elems)
	case SetValue:
		elems := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			elems[i] = e.Canonical()
		}
		slices.Sort(elems)
		b.WriteString("{" + strings.Join(slices.Compact(elems), ", ") + "}")
	case RecordValue, FuncValue:
		v.writeFunction(b)
	}
}

func writeSeq(b *strings.Builder, elems []Value) {
	b.WriteString("<<")
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		e.write(b)
	}
	b.WriteString(">>")
}

// writeFunction prints a record or a function by its keys (see Canonical).
func (v Value) writeFunction(b *strings.Builder) {
	type entry struct {
		key   string // canonical
		field Field
	}
	entries := make([]entry, len(v.Fields))
	record := true
	for i, f := range v.Fields {
		entries[i] = entry{f.Key.Canonical(), f}
		record = record && f.Key.Kind == StringValue && isIdentifier(f.Key.Str)
	}
	slices.SortFunc(entries, func(x, y entry) int { return strings.Compare(x.key, y.key) })
	entries = slices.CompactFunc(entries, func(x, y entry) bool { return x.key == y.key })
	if seq := sequence(v.Fields); seq != nil {
		writeSeq(b, seq)
		return
	}
	if record {
		b.WriteString("[")
		for i, e := range entries {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.field.Key.Str + " |-> ")
			e.field.Value.write(b)
		}
		b.WriteString("]")
		return
	}
	b.WriteString("(")
	for i, e := range entries {
		if i > 0 {
			b.WriteString(" @@ ")
		}
		b.WriteString(e.key + " :> ")
		e.field.Value.write(b)
	}
	b.WriteString(")")
}

// sequence returns the elements of a function whose keys are the integers
// 1..n (n >= 0), in order; nil otherwise. An empty function is <<>>.
func sequence(fields []Field) []Value {
	elems := make([]Value, len(fields))
	seen := make([]bool, len(fields))
	for _, f := range fields {
		if f.Key.Kind != IntValue || f.Key.Int < 1 || f.Key.Int > int64(len(fields)) || seen[f.Key.Int-1] {
			return nil
		}
		seen[f.Key.Int-1] = true
		elems[f.Key.Int-1] = f.Value
	}
	return elems
}

// isIdentifier reports whether s may be a record field name in TLC's
// output: letters, digits and _, not only digits.
func isIdentifier(s string) bool {
	letter := false
	for _, r := range s {
		switch {
		case r == '_' || r < unicode.MaxASCII && unicode.IsLetter(r):
			letter = true
		case r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return letter
}

// ParseValue parses one TLC value.
func ParseValue(s string) (Value, error) {
	p := &valueParser{s: s}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return Value{}, p.errorf("unexpected %q after the value", p.rest())
	}
	return v, nil
}

type valueParser struct {
	s string
	i int
}

func (p *valueParser) errorf(format string, args ...any) error {
	return fmt.Errorf("TLC value at offset %d: "+format, append([]any{p.i}, args...)...)
}

func (p *valueParser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *valueParser) space() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *valueParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *valueParser) value() (Value, error) {
	p.space()
	switch {
	case p.eat("TRUE"):
		return Value{Kind: BoolValue, Bool: true}, nil
	case p.eat("FALSE"):
		return Value{Kind: BoolValue}, nil
	case p.eat("<<"):
		return p.elements(SeqValue, ">>", "sequence")
	case p.eat("{"):
		return p.elements(SetValue, "}", "set")
	case p.eat("["):
		return p.record()
	case p.eat("("):
		return p.function()
	case p.i < len(p.s) && p.s[p.i] == '"':
		return p.str()
	}
	return p.integer()
}

// elements parses the comma-separated values of a sequence or set up to
// its closing token.
func (p *valueParser) elements(kind ValueKind, end, what string) (Value, error) {
	v := Value{Kind: kind}
	if p.eat(end) {
		return v, nil
	}
	for {
		e, err := p.value()
		if err != nil {
			return Value{}, err
		}
		v.Elems = append(v.Elems, e)
		if p.eat(end) {
			return v, nil
		}
		if !p.eat(",") {
			return Value{}, p.errorf("want , or %s in a %s, have %q", end, what, p.rest())
		}
	}
}

func (p *valueParser) record() (Value, error) {
	v := Value{Kind: RecordValue}
	if p.eat("]") {
		return v, nil
	}
	for {
		p.space()
		start := p.i
		for p.i < len(p.s) && (unicode.IsLetter(rune(p.s[p.i])) || unicode.IsDigit(rune(p.s[p.i])) || p.s[p.i] == '_') {
			p.i++
		}
		name := p.s[start:p.i]
		if name == "" || !p.eat("|->") {
			return Value{}, p.errorf("want a record field, have %q", p.rest())
		}
		fv, err := p.value()
		if err != nil {
			return Value{}, err
		}
		v.Fields = append(v.Fields, Field{Key: Value{Kind: StringValue, Str: name}, Value: fv})
		if p.eat("]") {
			return v, nil
		}
		if !p.eat(",") {
			return Value{}, p.errorf("want , or ] in a record, have %q", p.rest())
		}
	}
}

// function parses (k :> v @@ k :> v), the form TLC prints functions in.
func (p *valueParser) function() (Value, error) {
	v := Value{Kind: FuncValue}
	for {
		k, err := p.value()
		if err != nil {
			return Value{}, err
		}
		if !p.eat(":>") {
			return Value{}, p.errorf("want :> in a function, have %q", p.rest())
		}
		fv, err := p.value()
		if err != nil {
			return Value{}, err
		}
		v.Fields = append(v.Fields, Field{Key: k, Value: fv})
		if p.eat(")") {
			return v, nil
		}
		if !p.eat("@@") {
			return Value{}, p.errorf("want @@ or ) in a function, have %q", p.rest())
		}
	}
}

func (p *valueParser) str() (Value, error) {
	end := p.i + 1
	for end < len(p.s) && p.s[end] != '"' {
		if p.s[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(p.s) {
		return Value{}, p.errorf("unterminated string")
	}
	s, err := strconv.Unquote(p.s[p.i : end+1])
	if err != nil {
		return Value{}, p.errorf("bad string: %v", err)
	}
	p.i = end + 1
	return Value{Kind: StringValue, Str: s}, nil
}

func (p *valueParser) integer() (Value, error) {
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	n, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
	if err != nil {
		p.i = start
		return Value{}, p.errorf("want a value, have %q", p.rest())
	}
	return Value{Kind: IntValue, Int: n}, nil
}
