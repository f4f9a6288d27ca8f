package main

import (
	"fmt"
	"strings"
	"time"
)

// item is one piece of a format: literal text, or a clock with its decimals.
type item struct {
	kind     byte // 0: text; 't': wall clock; 'T': time since the start
	text     string
	decimals int
}

// format is a parsed FORMAT argument.
type format struct {
	items []item
	eol   string // "\n", or "\r" with %r
}

// maxDecimals is the finest clock busybox prints (microseconds).
const maxDecimals = 6

// parseFormat parses FORMAT: text, %Nt, %NT, %r and %%; any other
// specifier is an error that names it.
func parseFormat(s string) (format, error) {
	f := format{eol: "\n"}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			f.items = append(f.items, item{text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			text.WriteByte(s[i])
			continue
		}
		j := i + 1
		n := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			n = n*10 + int(s[j]-'0')
			j++
		}
		if j == len(s) {
			return format{}, fmt.Errorf("format %q ends inside a specifier", s)
		}
		switch c := s[j]; c {
		case '%':
			text.WriteByte('%')
		case 'r':
			f.eol = "\r"
		case 't', 'T':
			if n > maxDecimals {
				return format{}, fmt.Errorf("%%%d%c: at most %d decimals", n, c, maxDecimals)
			}
			flush()
			f.items = append(f.items, item{kind: c, decimals: n})
		default:
			return format{}, fmt.Errorf("specifier %%%s in %q is not supported by this stand-in (only %%Nt, %%NT, %%r and %%%%)", s[i+1:j+1], s)
		}
		i = j
	}
	flush()
	return f, nil
}

// line is one output line at now, for a meter started at start.
func (f format) line(now, start time.Time) string {
	var b strings.Builder
	for _, it := range f.items {
		switch it.kind {
		case 't':
			fmt.Fprintf(&b, "%02d:%02d:%02d", now.Hour(), now.Minute(), now.Second())
			writeFraction(&b, now.Nanosecond(), it.decimals)
		case 'T':
			d := now.Sub(start)
			fmt.Fprintf(&b, "%d", int64(d/time.Second))
			writeFraction(&b, int(d%time.Second), it.decimals)
		default:
			b.WriteString(it.text)
		}
	}
	b.WriteString(f.eol)
	return b.String()
}

// writeFraction writes "." and the first decimals digits of nanos (0 to
// 999999999), truncated as busybox truncates; nothing for 0 decimals.
func writeFraction(b *strings.Builder, nanos, decimals int) {
	if decimals == 0 {
		return
	}
	digits := fmt.Sprintf("%09d", nanos)
	b.WriteString(".")
	b.WriteString(digits[:decimals])
}
