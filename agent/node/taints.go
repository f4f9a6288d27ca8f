package node

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseTaints reads taints in the kubelet's --register-with-taints form,
// key[=value]:Effect separated by commas.
func ParseTaints(s string) ([]v1.Taint, error) {
	var taints []v1.Taint
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kv, effect, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("taint %q: want key[=value]:Effect", part)
		}
		key, value, _ := strings.Cut(kv, "=")
		t := v1.Taint{Key: key, Value: value, Effect: v1.TaintEffect(effect)}
		if err := ValidateTaint(t); err != nil {
			return nil, err
		}
		taints = append(taints, t)
	}
	return taints, nil
}

// FormatTaints is ParseTaints' inverse.
func FormatTaints(taints []v1.Taint) string {
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		kv := t.Key
		if t.Value != "" {
			kv += "=" + t.Value
		}
		parts = append(parts, kv+":"+string(t.Effect))
	}
	return strings.Join(parts, ",")
}

// ValidateTaint checks a taint as the API server does a Node's.
func ValidateTaint(t v1.Taint) error {
	var errs []string
	errs = append(errs, validation.IsQualifiedName(t.Key)...)
	if t.Value != "" {
		errs = append(errs, validation.IsValidLabelValue(t.Value)...)
	}
	switch t.Effect {
	case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
	default:
		errs = append(errs, fmt.Sprintf("effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t.Effect))
	}
	if len(errs) > 0 {
		return fmt.Errorf("taint %s=%s:%s: %w", t.Key, t.Value, t.Effect, errors.New(strings.Join(errs, "; ")))
	}
	return nil
}
