package manifests

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateFileKeyRefs applies the API server's rules for env
// valueFrom.fileKeyRef (validateFileKeySelector and
// validateFileKeyRefVolumes), which the kubelet applies to a static pod
// too: a key that is an env variable name, a volume of the pod that is an
// emptyDir, a path without "..". A pod from the API server was checked
// there already.
func validateFileKeyRefs(s *v1.PodSpec, path *field.Path) field.ErrorList {
	emptyDir := map[string]bool{}
	for _, v := range s.Volumes {
		emptyDir[v.Name] = v.EmptyDir != nil
	}
	var errs field.ErrorList
	check := func(at *field.Path, c *v1.Container) {
		for j, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.FileKeyRef == nil {
				continue
			}
			ref, at := e.ValueFrom.FileKeyRef, at.Child("env").Index(j).Child("valueFrom", "fileKeyRef")
			if ref.Key == "" {
				errs = append(errs, field.Required(at.Child("key"), ""))
			}
			for _, msg := range validation.IsRelaxedEnvVarName(ref.Key) {
				if ref.Key != "" {
					errs = append(errs, field.Invalid(at.Child("key"), ref.Key, msg))
				}
			}
			isEmptyDir, found := emptyDir[ref.VolumeName]
			switch {
			case ref.VolumeName == "":
				errs = append(errs, field.Required(at.Child("volumeName"), ""))
			case !found:
				errs = append(errs, field.NotFound(at.Child("volumeName"), ref.VolumeName))
			case !isEmptyDir:
				errs = append(errs, field.Invalid(at.Child("volumeName"), ref.VolumeName, "referenced volume must be of type emptyDir"))
			}
			switch {
			case ref.Path == "":
				errs = append(errs, field.Required(at.Child("path"), ""))
			case hasBackstep(ref.Path):
				errs = append(errs, field.Invalid(at.Child("path"), ref.Path, "must not contain '..'"))
			}
		}
	}
	for i := range s.InitContainers {
		check(path.Child("initContainers").Index(i), &s.InitContainers[i])
	}
	for i := range s.Containers {
		check(path.Child("containers").Index(i), &s.Containers[i])
	}
	return errs
}

func hasBackstep(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}
