// Package jsonline builds JSON lines by hand and reads them back: the trace
// writers (package trace and trace/container) write one line per
// transition on the engine's hot path, with strconv into a reused buffer
// instead of encoding/json; their readers share the line loop and the
// strict field check.
package jsonline

import "unicode/utf8"

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string. UIDs and pod and container names
// are plain ASCII in practice and are copied as they are; anything else is
// escaped as encoding/json would (control characters as \u00XX, invalid
// UTF-8 as U+FFFD).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
