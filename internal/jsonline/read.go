package jsonline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Read parses r's lines with parse, skipping blank ones; an error names
// what is read (e.g. "trace") and the line's number. Lines may be up to
// 1 MiB long.
func Read[T any](r io.Reader, what string, parse func([]byte) (T, error)) ([]T, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var out []T
	for n := 1; sc.Scan(); n++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		v, err := parse(text)
		if err != nil {
			return out, fmt.Errorf("%s line %d: %w", what, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading %s: %w", what, err)
	}
	return out, nil
}

// SameKeys reports an object's missing and unknown fields against want;
// prefix names the object's place in the line ("params.").
func SameKeys(prefix string, obj map[string]json.RawMessage, want []string) error {
	var missing, extra []string
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			missing = append(missing, prefix+k)
		}
	}
	for k := range obj {
		if !slices.Contains(want, k) {
			extra = append(extra, prefix+k)
		}
	}
	slices.Sort(extra)
	switch {
	case len(missing) > 0:
		return fmt.Errorf("missing field(s) %s", strings.Join(missing, ", "))
	case len(extra) > 0:
		return fmt.Errorf("unknown field(s) %s", strings.Join(extra, ", "))
	}
	return nil
}
