package tlavalue

import (
	"testing"
)

func TestParseValueCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`TRUE`, `TRUE`},
		{` -1 `, `-1`},
		{`"a\"b"`, `"a\"b"`},
		{`<<>>`, `<<>>`},
		{`<<"p1", "p2">>`, `<<"p1", "p2">>`},
		{`[state |-> "Absent", grace |-> 0]`, `[grace |-> 0, state |-> "Absent"]`},
		// A function over strings is a record; TLC prints it as one.
		{`("p2" :> [a |-> 1] @@ "p1" :> [a |-> 2])`, `[p1 |-> [a |-> 2], p2 |-> [a |-> 1]]`},
		{"(\"p1\" :>\n   [ b |-> FALSE,\n     a |-> <<1, 2>> ])", `[p1 |-> [a |-> <<1, 2>>, b |-> FALSE]]`},
		{"[ p1 |->\n      [ static |-> FALSE,\n        state |-> \"Absent\" ] ]", `[p1 |-> [state |-> "Absent", static |-> FALSE]]`},
		// Keys that are not field names, or not all strings, stay a function.
		{`("a b" :> 1 @@ "c" :> 2)`, `("a b" :> 1 @@ "c" :> 2)`},
		{`(2 :> 2 @@ "p1" :> 1)`, `("p1" :> 1 @@ 2 :> 2)`},
		{`(0 :> "a" @@ 1 :> "b")`, `(0 :> "a" @@ 1 :> "b")`},
		// A function over 1..n is a sequence, an empty one is <<>>.
		{`(2 :> "b" @@ 1 :> "a")`, `<<"a", "b">>`},
		{`[]`, `<<>>`},
		// Sets: sorted, without duplicates.
		{`{"b", "a", "b"}`, `{"a", "b"}`},
		{`{}`, `{}`},
		{`{[x |-> 1], ("x" :> 1)}`, `{[x |-> 1]}`},
	}
	for _, tt := range tests {
		v, err := ParseValue(tt.in)
		if err != nil {
			t.Errorf("ParseValue(%q): %v", tt.in, err)
			continue
		}
		if got := v.Canonical(); got != tt.want {
			t.Errorf("ParseValue(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{`[a |-> ]`, `<<1 2>>`, `("p1" :> 1`, `"open`, `[a = 1]`, `1 2`, `{1 2}`, `{1,`} {
		if _, err := ParseValue(bad); err == nil {
			t.Errorf("ParseValue(%q) succeeded", bad)
		}
	}
}

func TestValueEqual(t *testing.T) {
	str := func(s string) Value { return Value{Kind: StringValue, Str: s} }
	num := func(n int64) Value { return Value{Kind: IntValue, Int: n} }
	fn := Value{Kind: FuncValue, Fields: []Field{{str("p2"), num(2)}, {str("p1"), num(1)}}}
	rec := Value{Kind: RecordValue, Fields: []Field{{str("p1"), num(1)}, {str("p2"), num(2)}}}
	if !fn.Equal(rec) || fn.Canonical() != "[p1 |-> 1, p2 |-> 2]" {
		t.Errorf("a function over strings %s and the record %s differ", fn.Canonical(), rec.Canonical())
	}
	seq := Value{Kind: SeqValue, Elems: []Value{str("a"), str("b")}}
	fn12 := Value{Kind: FuncValue, Fields: []Field{{num(2), str("b")}, {num(1), str("a")}}}
	if !seq.Equal(fn12) {
		t.Errorf("the function %s and the sequence %s differ", fn12.Canonical(), seq.Canonical())
	}
	if empty := (Value{Kind: FuncValue}); !empty.Equal(Value{Kind: SeqValue}) {
		t.Errorf("the empty function %s is not <<>>", empty.Canonical())
	}
	if other := (Value{Kind: RecordValue, Fields: []Field{{str("p1"), num(1)}, {str("p2"), num(3)}}}); fn.Equal(other) {
		t.Errorf("%s equals %s", fn.Canonical(), other.Canonical())
	}
}
