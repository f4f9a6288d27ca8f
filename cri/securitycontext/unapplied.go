package securitycontext

import (
	"reflect"
	"strings"
)

// appliedPodFields are the fields of v1.PodSecurityContext this package
// (or the volume layer, for fsGroup's ownership of volume files) applies,
// by JSON name. windowsOptions are Windows' own: the kubelet ignores them
// on Linux, and so does podlife (they are applied as nothing, not
// refused). seLinuxChangePolicy is missing: podlife does not relabel
// volumes, so a pod asking how they are relabelled is refused.
var appliedPodFields = map[string]bool{
	"seLinuxOptions":           true,
	"windowsOptions":           true,
	"runAsUser":                true,
	"runAsGroup":               true,
	"runAsNonRoot":             true,
	"supplementalGroups":       true,
	"supplementalGroupsPolicy": true,
	"fsGroup":                  true,
	"fsGroupChangePolicy":      true,
	"sysctls":                  true,
	"seccompProfile":           true,
	"appArmorProfile":          true,
}

// appliedContainerFields are those of v1.SecurityContext, likewise.
var appliedContainerFields = map[string]bool{
	"capabilities":             true,
	"privileged":               true,
	"seLinuxOptions":           true,
	"windowsOptions":           true,
	"runAsUser":                true,
	"runAsGroup":               true,
	"runAsNonRoot":             true,
	"readOnlyRootFilesystem":   true,
	"allowPrivilegeEscalation": true,
	"procMount":                true,
	"seccompProfile":           true,
	"appArmorProfile":          true,
}

// Unapplied names, as field paths under path, the set fields of the
// security context that ptr points to (a *v1.PodSecurityContext or a
// *v1.SecurityContext) that podlife does not apply. It walks the struct by
// reflection: a field a future API adds is not in the applied lists, so
// it is refused until it is applied here.
func Unapplied(path string, ptr any) []string {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	applied := appliedContainerFields
	if strings.HasSuffix(v.Elem().Type().Name(), "PodSecurityContext") {
		applied = appliedPodFields
	}
	var fields []string
	v = v.Elem()
	for i := range v.NumField() {
		name := jsonName(v.Type().Field(i))
		if !v.Field(i).IsZero() && !applied[name] {
			fields = append(fields, path+"."+name)
		}
	}
	return fields
}

// jsonName is the field's name in the API.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
