package admission

import (
	"path"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ReasonInvalidVolumePath rejects a pod with a volume file path the API
// server would refuse (VolumePaths).
const ReasonInvalidVolumePath = "InvalidVolumePath"

// VolumePaths rejects a pod whose secret, configMap, downwardAPI or
// projected volume puts a file at a path the API server refuses
// (pkg/apis/core/validation ValidateLocalNonReservedPath): empty,
// absolute, with a ".." element, or starting with "..". A static pod
// never went through the API server, and the agent writes those files
// under its root directory: "..data" would replace the atomic writer's
// own link with a loop, "../x" would leave the volume. The message names
// every bad field path.
func VolumePaths() Handler {
	return HandlerFunc(func(pod *v1.Pod, _ []*v1.Pod) Result {
		if errs := volumePathErrors(pod); len(errs) > 0 {
			return Result{Reason: ReasonInvalidVolumePath, Message: errs.ToAggregate().Error()}
		}
		return Result{Admit: true}
	})
}

// volumePathErrors is every bad file path of pod's volumes.
func volumePathErrors(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	for i := range pod.Spec.Volumes {
		src := &pod.Spec.Volumes[i].VolumeSource
		at := field.NewPath("spec", "volumes").Index(i)
		switch {
		case src.Secret != nil:
			errs = append(errs, keyPathErrors(src.Secret.Items, at.Child("secret", "items"))...)
		case src.ConfigMap != nil:
			errs = append(errs, keyPathErrors(src.ConfigMap.Items, at.Child("configMap", "items"))...)
		case src.DownwardAPI != nil:
			errs = append(errs, downwardPathErrors(src.DownwardAPI.Items, at.Child("downwardAPI", "items"))...)
		case src.Projected != nil:
			for j, s := range src.Projected.Sources {
				sat := at.Child("projected", "sources").Index(j)
				if s.Secret != nil {
					errs = append(errs, keyPathErrors(s.Secret.Items, sat.Child("secret", "items"))...)
				}
				if s.ConfigMap != nil {
					errs = append(errs, keyPathErrors(s.ConfigMap.Items, sat.Child("configMap", "items"))...)
				}
				if s.DownwardAPI != nil {
					errs = append(errs, downwardPathErrors(s.DownwardAPI.Items, sat.Child("downwardAPI", "items"))...)
				}
				if s.ServiceAccountToken != nil {
					errs = append(errs, localNonReservedPath(s.ServiceAccountToken.Path, sat.Child("serviceAccountToken", "path"))...)
				}
			}
		}
	}
	return errs
}

func keyPathErrors(items []v1.KeyToPath, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range items {
		errs = append(errs, localNonReservedPath(items[k].Path, at.Index(k).Child("path"))...)
	}
	return errs
}

func downwardPathErrors(items []v1.DownwardAPIVolumeFile, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range items {
		errs = append(errs, localNonReservedPath(items[k].Path, at.Index(k).Child("path"))...)
	}
	return errs
}

// localNonReservedPath is the API server's ValidateLocalNonReservedPath,
// with its messages, and its Required for an empty path: relative, no
// ".." element, not starting with "..".
func localNonReservedPath(p string, at *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(at, "")}
	}
	var errs field.ErrorList
	if path.IsAbs(p) {
		errs = append(errs, field.Invalid(at, p, "must be a relative path"))
	}
	backstep := false
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			backstep = true
		}
	}
	if backstep {
		errs = append(errs, field.Invalid(at, p, "must not contain '..'"))
	} else if strings.HasPrefix(p, "..") {
		errs = append(errs, field.Invalid(at, p, "must not start with '..'"))
	}
	return errs
}
