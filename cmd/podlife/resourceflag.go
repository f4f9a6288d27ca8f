package main

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resourceListFlag is a flag of the form cpu=2,memory=4Gi.
type resourceListFlag struct{ list *v1.ResourceList }

func (f resourceListFlag) String() string {
	if f.list == nil || len(*f.list) == 0 {
		return ""
	}
	parts := make([]string, 0, len(*f.list))
	for name, q := range *f.list {
		parts = append(parts, string(name)+"="+q.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (f resourceListFlag) Set(s string) error {
	list := v1.ResourceList{}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" {
			return fmt.Errorf("%q is not name=quantity", part)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		list[v1.ResourceName(name)] = q
	}
	*f.list = list
	return nil
}

func (resourceListFlag) Type() string { return "resources" }
