package explore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Value is a TLA+ value as TLC prints it: a Boolean, an integer, a string, a
// sequence (or tuple), a record, or a function (k1 :> v1 @@ k2 :> v2).
type Value struct {
	Kind   ValueKind
	Bool   bool
	Int    int64
	Str    string
	Elems  []Value // Seq
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
)

// Field is a record field or a function entry.
type Field struct {
	Key   Value // a string for records
	Value Value
}

// Canonical prints v so that equal values print equally: record fields and
// function entries sorted by key; a function with string keys 1..n or a
// record are never confused with sequences.
func (v Value) Canonical() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

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
		b.WriteString("<<")
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteString(">>")
	case RecordValue, FuncValue:
		fields := slices.Clone(v.Fields)
		slices.SortFunc(fields, func(x, y Field) int { return strings.Compare(x.Key.Canonical(), y.Key.Canonical()) })
		if v.Kind == RecordValue {
			b.WriteString("[")
			for i, f := range fields {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(f.Key.Str + " |-> ")
				f.Value.write(b)
			}
			b.WriteString("]")
			return
		}
		b.WriteString("(")
		for i, f := range fields {
			if i > 0 {
				b.WriteString(" @@ ")
			}
			f.Key.write(b)
			b.WriteString(" :> ")
			f.Value.write(b)
		}
		b.WriteString(")")
	}
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
		v := Value{Kind: SeqValue}
		if p.eat(">>") {
			return v, nil
		}
		for {
			e, err := p.value()
			if err != nil {
				return Value{}, err
			}
			v.Elems = append(v.Elems, e)
			if p.eat(">>") {
				return v, nil
			}
			if !p.eat(",") {
				return Value{}, p.errorf("want , or >> in a sequence, have %q", p.rest())
			}
		}
	case p.eat("["):
		return p.record()
	case p.eat("("):
		return p.function()
	case p.i < len(p.s) && p.s[p.i] == '"':
		return p.str()
	}
	return p.integer()
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
