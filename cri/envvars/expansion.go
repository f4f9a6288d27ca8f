package envvars

import "strings"

// expand replaces each $(NAME) in input by its value from vars, as the
// kubelet does for env values, command and args (k8s.io/kubernetes
// third_party/forked/golang/expansion): "$$" is a literal "$", a reference
// to a name vars does not hold is left as written, and a "$" that begins no
// reference, or a "$(" never closed, stays as it is.
func expand(input string, vars map[string]string) string {
	var b strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(input); cursor++ {
		if input[cursor] != '$' || cursor+1 >= len(input) {
			continue
		}
		b.WriteString(input[checkpoint:cursor])
		rest := input[cursor+1:]
		advance := 1
		switch rest[0] {
		case '$':
			b.WriteByte('$')
		case '(':
			if end := strings.IndexByte(rest, ')'); end > 0 {
				name := rest[1:end]
				if v, ok := vars[name]; ok {
					b.WriteString(v)
				} else {
					b.WriteString("$(" + name + ")")
				}
				advance = end + 1
			} else {
				b.WriteString("$(")
			}
		default:
			b.WriteString(input[cursor : cursor+2])
		}
		cursor += advance
		checkpoint = cursor + 1
	}
	return b.String() + input[checkpoint:]
}

// ExpandAll is expand over each of inputs; nil stays nil.
func ExpandAll(inputs []string, vars map[string]string) []string {
	if inputs == nil {
		return nil
	}
	out := make([]string, len(inputs))
	for i, s := range inputs {
		out[i] = expand(s, vars)
	}
	return out
}
