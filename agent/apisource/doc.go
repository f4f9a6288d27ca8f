// Package apisource is the agent's second pod source in cluster mode: the
// pods the API server binds to this node, watched through a client-go
// informer (field selector spec.nodeName), as the kubelet's apiserver
// config source watches them. It tells the agent which pods were added,
// updated in a way that matters to their lifecycle, or removed, and keeps
// the API's current copy of every pod for the status manager and the mirror
// pods.
package apisource
