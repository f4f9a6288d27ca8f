package manifests

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxDurationSeconds is the longest period in seconds a pod may ask for: a
// time.Duration holds about 9.2e9 s, and the CRI client adds its request
// timeout to a container's grace period, so a day is kept to spare. A longer
// grace period overflows and every StopContainer fails at once.
const maxDurationSeconds = int64(math.MaxInt64/int64(time.Second)) - 24*60*60

// checkNodeName rejects a node name that would make every pod name invalid,
// so the fault is not blamed on each manifest in turn.
func checkNodeName(nodeName string) error {
	if nodeName == "" {
		return errors.New("node name is empty")
	}
	if errs := validation.IsDNS1123Subdomain(strings.ToLower(nodeName)); len(errs) > 0 {
		return fmt.Errorf("node name %q: %s", nodeName, strings.Join(errs, ", "))
	}
	return nil
}

// validate returns every problem of a pod as written (before defaulting),
// so one edit can fix them all. Object meta is checked with the apiserver's
// own rules (names, labels, annotation size); of the spec, what the agent
// relies on: names usable by the runtime and in paths, containers that can
// be started, and the fields the pod workers read.
func validate(pod *v1.Pod, nodeName string) field.ErrorList {
	errs := validateMeta(&pod.ObjectMeta, nodeName)
	errs = append(errs, validateSpec(&pod.Spec, field.NewPath("spec"))...)
	return errs
}

func validateMeta(meta *metav1.ObjectMeta, nodeName string) field.ErrorList {
	path := field.NewPath("metadata")
	m := *meta
	if m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault // as applyDefaults will
	}
	nameFn := func(at *field.Path, name string) field.ErrorList {
		var errs field.ErrorList
		for _, msg := range apivalidation.NameIsDNSSubdomain(podName(name, nodeName), false) {
			errs = append(errs, field.Invalid(at, name, fmt.Sprintf("%s (checked as %q, with the node name appended)", msg, podName(name, nodeName))))
		}
		return errs
	}
	errs := apivalidation.ValidateObjectMetaWithOpts(&m, true, nameFn, path)
	if m.Name == "" {
		// The apiserver's errors offer generateName, which a static pod
		// cannot use: nothing generates its name.
		errs = slices.DeleteFunc(errs, func(e *field.Error) bool { return e.Field == path.Child("name").String() })
		errs = append(errs, field.Required(path.Child("name"), "a static pod must be named in its manifest"))
	}
	errs = append(errs, validateUID(string(meta.UID), path.Child("uid"))...)
	// The pod workers would take such a pod as being deleted already.
	if meta.DeletionTimestamp != nil {
		errs = append(errs, field.Forbidden(path.Child("deletionTimestamp"), "must not be set in a manifest"))
	}
	if meta.DeletionGracePeriodSeconds != nil {
		errs = append(errs, field.Forbidden(path.Child("deletionGracePeriodSeconds"), "must not be set in a manifest"))
	}
	return errs
}

// maxUIDLength is far more than a UUID (36) or a derived UID (32) needs.
const maxUIDLength = 128

// validateUID checks a UID written in the manifest. The apiserver sets UIDs
// itself (UUIDs), so it has no rule for them; the agent puts them in paths
// (the pod's log directory), so only UUID-like values are taken: letters,
// digits, '-' and '.', starting and ending with a letter or digit. The
// dangerous cases get their own reason.
func validateUID(uid string, at *field.Path) field.ErrorList {
	if uid == "" {
		return nil // derived from the content
	}
	if len(uid) > maxUIDLength {
		return field.ErrorList{field.TooLong(at, "", maxUIDLength)}
	}
	var errs field.ErrorList
	if strings.ContainsFunc(uid, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		errs = append(errs, field.Invalid(at, uid, "must not contain control characters"))
	}
	if strings.ContainsAny(uid, `/\`) {
		errs = append(errs, field.Invalid(at, uid, "must not contain a path separator"))
	}
	if strings.Contains(uid, "..") {
		errs = append(errs, field.Invalid(at, uid, `must not contain ".."`))
	}
	if len(errs) == 0 && !isUIDLike(uid) {
		errs = append(errs, field.Invalid(at, uid, "must consist of letters, digits, '-' and '.', and start and end with a letter or digit (a UUID such as 2f7a3c1e-0000-4000-8000-000000000001 does)"))
	}
	return errs
}

func isUIDLike(uid string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(uid); i++ {
		if c := uid[i]; !alnum(c) && (c != '-' && c != '.' || i == 0 || i == len(uid)-1) {
			return false
		}
	}
	return true
}

func validateSpec(s *v1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "at least one container is required"))
	}
	names := map[string]*field.Path{} // container name → field that first used it
	checkContainers := func(at *field.Path, cs []v1.Container) {
		for i := range cs {
			errs = append(errs, validateContainer(&cs[i], at.Index(i), names)...)
			errs = append(errs, validateRestartPolicy(&cs[i], at.Index(i))...)
		}
	}
	checkContainers(path.Child("initContainers"), s.InitContainers)
	checkContainers(path.Child("containers"), s.Containers)
	errs = append(errs, validateFileKeyRefs(s, path)...)

	if g := s.TerminationGracePeriodSeconds; g != nil {
		errs = append(errs, validateSeconds(*g, 0, path.Child("terminationGracePeriodSeconds"))...)
	}
	if d := s.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		// The apiserver's bound, well within a time.Duration.
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	switch s.RestartPolicy {
	case "", v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), s.RestartPolicy,
			[]v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}))
	}
	return errs
}

// validateSeconds checks a period the agent turns into a time.Duration.
func validateSeconds(sec, lowest int64, at *field.Path) field.ErrorList {
	switch {
	case sec < lowest:
		return field.ErrorList{field.Invalid(at, sec, fmt.Sprintf("must be at least %d", lowest))}
	case sec > maxDurationSeconds:
		return field.ErrorList{field.Invalid(at, sec, fmt.Sprintf("must be at most %d (the longest period the runtime can represent)", maxDurationSeconds))}
	}
	return nil
}

func validateContainer(c *v1.Container, at *field.Path, names map[string]*field.Path) field.ErrorList {
	var errs field.ErrorList
	switch name := at.Child("name"); {
	case c.Name == "":
		errs = append(errs, field.Required(name, ""))
	case len(validation.IsDNS1123Label(c.Name)) > 0:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(name, c.Name, msg))
		}
	case names[c.Name] != nil:
		dup := field.Duplicate(name, c.Name)
		dup.Detail = "already the name of " + names[c.Name].String()
		errs = append(errs, dup)
	default:
		names[c.Name] = at
	}
	switch {
	case c.Image == "":
		errs = append(errs, field.Required(at.Child("image"), ""))
	case strings.TrimSpace(c.Image) != c.Image:
		errs = append(errs, field.Invalid(at.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	switch c.ImagePullPolicy {
	case "", v1.PullAlways, v1.PullIfNotPresent, v1.PullNever:
	default:
		errs = append(errs, field.NotSupported(at.Child("imagePullPolicy"), c.ImagePullPolicy,
			[]v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent, v1.PullNever}))
	}
	return append(errs, validateResources(&c.Resources, at.Child("resources"))...)
}

// validateResources applies the apiserver's rules for a container's
// quantities: none negative, and no request above its limit. Admission adds
// up requests; a negative one would make room that is not there.
func validateResources(r *v1.ResourceRequirements, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   v1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range slices.Sorted(maps.Keys(list.rl)) {
			if q := list.rl[name]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(at.Child(list.name).Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(at.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}
