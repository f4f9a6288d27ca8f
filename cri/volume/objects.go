package volume

import (
	"context"
	"fmt"
	"path"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podlife/podlife/cri/envvars"
)

// A secret or configMap volume (the kubelet's secret and configmap
// plugins), and a projected volume's secret and configMap sources, show
// an object's keys as files: every key, or only the items, each at its
// path with its mode. One code path makes all four: objectRef says which
// object, keyFiles makes the files. The files are written atomically at
// every sync (atomicwriter.go), so an update of the object reaches a
// running container within about the sync period plus the object cache's
// TTL (agent/objectcache). A secret volume is a tmpfs, as the kubelet
// mounts it, so a Secret's data is never written to the node's disk.

const (
	secretPlugin    = "kubernetes.io~secret"
	configMapPlugin = "kubernetes.io~configmap"
	// defaultObjectMode is the API's default defaultMode of secret,
	// configMap and projected volumes.
	defaultObjectMode = 0o644
)

// ConfigMapGetter and SecretGetter read the objects volumes show; the
// env code reads through the same getters.
type (
	ConfigMapGetter = envvars.ConfigMapGetter
	SecretGetter    = envvars.SecretGetter
)

// objectRef is a reference to a Secret's or a ConfigMap's keys: a
// volume's or a projected source's.
type objectRef struct {
	secret   bool // a Secret, else a ConfigMap
	name     string
	items    []v1.KeyToPath
	optional bool
}

func secretRef(name string, items []v1.KeyToPath, optional *bool) objectRef {
	return objectRef{secret: true, name: name, items: items, optional: optional != nil && *optional}
}

func configMapRef(name string, items []v1.KeyToPath, optional *bool) objectRef {
	return objectRef{name: name, items: items, optional: optional != nil && *optional}
}

// objectFiles are the files of ref's object in pod's namespace, mode the
// mode of a file its item does not give one: an object that does not
// exist is an error, unless ref is optional (then it is an empty object).
func objectFiles(ctx context.Context, pod *v1.Pod, ref objectRef, mode int32, api API) (map[string]volumeFile, error) {
	data, err := objectData(ctx, pod.Namespace, ref, api)
	if err != nil {
		if ref.optional && apierrors.IsNotFound(err) {
			data = nil
		} else {
			return nil, err
		}
	}
	return keyFiles(ref, data, mode)
}

// objectData reads ref's object: a Secret's data, or a ConfigMap's data
// and binaryData (whose keys the API keeps apart).
func objectData(ctx context.Context, namespace string, ref objectRef, api API) (map[string][]byte, error) {
	if ref.secret {
		if api.Secrets == nil {
			return nil, envvars.ErrNoAPI
		}
		s, err := api.Secrets.Secret(ctx, namespace, ref.name)
		if err != nil {
			return nil, err
		}
		return s.Data, nil
	}
	if api.ConfigMaps == nil {
		return nil, envvars.ErrNoAPI
	}
	cm, err := api.ConfigMaps.ConfigMap(ctx, namespace, ref.name)
	if err != nil {
		return nil, err
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return data, nil
}

// keyFiles are the files of an object's data, as the kubelet's
// secret.MakePayload and configmap.MakePayload make them: without items,
// every key as a file of its name with mode; with items, each item's key
// at its path, with its mode or else mode. An item's key the object does
// not have is an error with the kubelet's message, unless ref is
// optional: then the item is left out.
func keyFiles(ref objectRef, data map[string][]byte, mode int32) (map[string]volumeFile, error) {
	files := map[string]volumeFile{}
	if len(ref.items) == 0 {
		for k, v := range data {
			if !filePath(k) {
				return nil, fmt.Errorf("%s: key %q cannot be a file name", ref, k)
			}
			files[k] = volumeFile{data: v, mode: mode}
		}
		return files, nil
	}
	for _, item := range ref.items {
		v, ok := data[item.Key]
		if !ok {
			if ref.optional {
				continue
			}
			if ref.secret {
				return nil, fmt.Errorf("references non-existent secret key: %s", item.Key)
			}
			return nil, fmt.Errorf("configmap references non-existent config key: %s", item.Key)
		}
		f := volumeFile{data: v, mode: mode}
		if item.Mode != nil {
			f.mode = *item.Mode
		}
		files[path.Clean(item.Path)] = f
	}
	return files, nil
}

// String names the object as the API's errors do.
func (ref objectRef) String() string {
	if ref.secret {
		return fmt.Sprintf("secret %q", ref.name)
	}
	return fmt.Sprintf("configmap %q", ref.name)
}

// checkKeyItems refuses items podlife cannot write: a mode that is not a
// file mode, a path that leaves the volume, and a user (the alpha
// AtomicWriteVolumeUserFields, which podlife does not apply). field is
// the path of the items' source.
func checkKeyItems(field string, items []v1.KeyToPath) error {
	for k, item := range items {
		if err := checkMode(item.Mode); err != nil {
			return fmt.Errorf("%s.items[%d].mode: %w", field, k, err)
		}
		if item.User != nil {
			return fmt.Errorf("%s.items[%d].user: %w", field, k, errUserFields)
		}
		if !filePath(item.Path) {
			return fmt.Errorf("%s.items[%d].path: %q must be a relative path without \"..\" and no element starting with \"..\"", field, k, item.Path)
		}
	}
	return nil
}

// errUserFields refuses the file owners the alpha feature
// AtomicWriteVolumeUserFields adds (defaultUser, user): an API server
// without the feature drops them, and podlife does not apply them.
var errUserFields = fmt.Errorf("file owners (the alpha feature AtomicWriteVolumeUserFields) are not supported by podlife")

// checkObjectVolume refuses a secret or configMap volume podlife cannot
// write; i is the volume's index.
func checkObjectVolume(i int, v *v1.Volume) error {
	var field, name string
	var items []v1.KeyToPath
	var defaultMode *int32
	var defaultUser *int64
	if s := v.Secret; s != nil {
		field, name, items, defaultMode, defaultUser = fmt.Sprintf("spec.volumes[%d].secret", i), s.SecretName, s.Items, s.DefaultMode, s.DefaultUser
	} else {
		cm := v.ConfigMap
		field, name, items, defaultMode, defaultUser = fmt.Sprintf("spec.volumes[%d].configMap", i), cm.Name, cm.Items, cm.DefaultMode, cm.DefaultUser
	}
	if name == "" {
		return fmt.Errorf("%s: no object is named", field)
	}
	if err := checkMode(defaultMode); err != nil {
		return fmt.Errorf("%s.defaultMode: %w", field, err)
	}
	if defaultUser != nil {
		return fmt.Errorf("%s.defaultUser: %w", field, errUserFields)
	}
	return checkKeyItems(field, items)
}

// objectVolumeFiles are a secret or configMap volume's files.
func objectVolumeFiles(ctx context.Context, pod *v1.Pod, v *v1.Volume, api API) (map[string]volumeFile, error) {
	var ref objectRef
	var defaultMode *int32
	if s := v.Secret; s != nil {
		ref, defaultMode = secretRef(s.SecretName, s.Items, s.Optional), s.DefaultMode
	} else {
		cm := v.ConfigMap
		ref, defaultMode = configMapRef(cm.Name, cm.Items, cm.Optional), cm.DefaultMode
	}
	mode := int32(defaultObjectMode)
	if defaultMode != nil {
		mode = *defaultMode
	}
	return objectFiles(ctx, pod, ref, mode, api)
}
