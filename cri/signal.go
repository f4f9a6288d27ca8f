package cri

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The names of the stop signals: the API's and the CRI's.

// RuntimeSignal is the CRI's name for a stop signal: SIGUSR1 is
// SIGNAL_SIGUSR1, SIGRTMIN+1 SIGNAL_SIGRTMINPLUS1, SIGRTMAX-1
// SIGNAL_SIGRTMAXMINUS1.
func RuntimeSignal(sig v1.Signal) (runtimeapi.Signal, bool) {
	name := strings.NewReplacer("+", "PLUS", "-", "MINUS").Replace(string(sig))
	v, ok := runtimeapi.Signal_value["SIGNAL_"+name]
	if !ok || v == int32(runtimeapi.Signal_SIGNAL_RUNTIME_DEFAULT) {
		return 0, false
	}
	return runtimeapi.Signal(v), true
}

// APISignal is the API's name of a CRI signal, RuntimeSignal's inverse:
// SIGNAL_SIGRTMINPLUS1 is SIGRTMIN+1; RUNTIME_DEFAULT has none.
func APISignal(sig runtimeapi.Signal) (v1.Signal, bool) {
	name, ok := runtimeapi.Signal_name[int32(sig)]
	if !ok || sig == runtimeapi.Signal_SIGNAL_RUNTIME_DEFAULT {
		return "", false
	}
	name = strings.TrimPrefix(name, "SIGNAL_")
	return v1.Signal(strings.NewReplacer("PLUS", "+", "MINUS", "-").Replace(name)), true
}
