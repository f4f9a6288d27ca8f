module github.com/podlife/podlife

go 1.26.0

require (
	github.com/looplab/fsm v1.0.3 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	k8s.io/api v0.37.0 // indirect
	k8s.io/apimachinery v0.37.0 // indirect
	k8s.io/cri-api v0.37.0 // indirect
	k8s.io/utils v0.0.0-20260707023825-cf1189d6abe3 // indirect
	pgregory.net/rapid v1.2.0 // indirect
)
