package envvars

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A container's environment may take values from the pod's namespace's
// ConfigMaps and Secrets (envFrom, configMapKeyRef, secretKeyRef), read
// through getters the agent hands in (agent/objectcache): this package
// talks to no API server itself. A missing optional object or key leaves
// its variables out; any other failure fails the container with the
// kubelet's message.

// ConfigMapGetter reads a ConfigMap with the node's identity, which the
// Node authorizer lets read only what the node's pods reference (the
// kubelet's configmap manager). A ConfigMap that does not exist is an
// error that apierrors.IsNotFound recognizes. The object returned may be
// shared: it is read, never changed.
type ConfigMapGetter interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
}

// SecretGetter is ConfigMapGetter for Secrets (the kubelet's secret
// manager).
type SecretGetter interface {
	Secret(ctx context.Context, namespace, name string) (*v1.Secret, error)
}

// ErrNoAPI is an object reference on an agent without an API server.
var ErrNoAPI = errors.New("the agent has no API server to read it from (standalone mode)")

// objectReader reads the ConfigMaps and Secrets one container's
// environment names, each once (the kubelet's makeEnvironmentVariables
// keeps them for the call too, so two keys of one object agree).
type objectReader struct {
	ctx        context.Context
	namespace  string
	configMaps ConfigMapGetter
	secrets    SecretGetter
	cms        map[string]*v1.ConfigMap
	ss         map[string]*v1.Secret
}

// configMap is name's data; missing is true for a ConfigMap that does not
// exist and is optional.
func (r *objectReader) configMap(name string, optional bool) (data map[string]string, missing bool, err error) {
	if cm, ok := r.cms[name]; ok {
		return cm.Data, false, nil
	}
	if r.configMaps == nil {
		return nil, false, fmt.Errorf("couldn't get configMap %s/%s: %w", r.namespace, name, ErrNoAPI)
	}
	cm, err := r.configMaps.ConfigMap(r.ctx, r.namespace, name)
	if err != nil {
		if optional && apierrors.IsNotFound(err) {
			return nil, true, nil
		}
		return nil, false, err
	}
	r.cms[name] = cm
	return cm.Data, false, nil
}

// secret is configMap for Secrets.
func (r *objectReader) secret(name string, optional bool) (data map[string][]byte, missing bool, err error) {
	if s, ok := r.ss[name]; ok {
		return s.Data, false, nil
	}
	if r.secrets == nil {
		return nil, false, fmt.Errorf("couldn't get secret %s/%s: %w", r.namespace, name, ErrNoAPI)
	}
	s, err := r.secrets.Secret(r.ctx, r.namespace, name)
	if err != nil {
		if optional && apierrors.IsNotFound(err) {
			return nil, true, nil
		}
		return nil, false, err
	}
	r.ss[name] = s
	return s.Data, false, nil
}

// envFrom is the variables of the container's envFrom sources, in order,
// a later source's variable replacing an earlier one's: every key of the
// ConfigMap's data or the Secret's, with the source's prefix. Keys are not
// checked as names: the API allows any printable name but "=" in env
// (RelaxedEnvironmentVariableValidation, GA and locked since 1.34), and
// the kubelet uses every key as it is. A missing optional object adds
// nothing.
func (r *objectReader) envFrom(sources []v1.EnvFromSource, set func(name, value string)) error {
	for _, from := range sources {
		switch {
		case from.ConfigMapRef != nil:
			ref := from.ConfigMapRef
			data, _, err := r.configMap(ref.Name, ref.Optional != nil && *ref.Optional)
			if err != nil {
				return err
			}
			for _, k := range slices.Sorted(maps.Keys(data)) {
				set(from.Prefix+k, data[k])
			}
		case from.SecretRef != nil:
			ref := from.SecretRef
			data, _, err := r.secret(ref.Name, ref.Optional != nil && *ref.Optional)
			if err != nil {
				return err
			}
			for _, k := range slices.Sorted(maps.Keys(data)) {
				set(from.Prefix+k, string(data[k]))
			}
		default:
			return errors.New("an envFrom source has neither configMapRef nor secretRef")
		}
	}
	return nil
}

// configMapKey is a configMapKeyRef's value; skip says an optional one
// whose ConfigMap or key is missing leaves the variable out.
func (r *objectReader) configMapKey(ref *v1.ConfigMapKeySelector) (value string, skip bool, err error) {
	optional := ref.Optional != nil && *ref.Optional
	data, missing, err := r.configMap(ref.Name, optional)
	if err != nil || missing {
		return "", missing, err
	}
	value, ok := data[ref.Key]
	if !ok {
		if optional {
			return "", true, nil
		}
		return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, r.namespace, ref.Name)
	}
	return value, false, nil
}

// secretKey is configMapKey for a secretKeyRef.
func (r *objectReader) secretKey(ref *v1.SecretKeySelector) (value string, skip bool, err error) {
	optional := ref.Optional != nil && *ref.Optional
	data, missing, err := r.secret(ref.Name, optional)
	if err != nil || missing {
		return "", missing, err
	}
	b, ok := data[ref.Key]
	if !ok {
		if optional {
			return "", true, nil
		}
		return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, r.namespace, ref.Name)
	}
	return string(b), false, nil
}
