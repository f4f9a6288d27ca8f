module github.com/podlife/podlife

go 1.26.0

require (
	github.com/looplab/fsm v1.0.3
	k8s.io/apimachinery v0.37.0
)
