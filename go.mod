module github.com/podlife/podlife

go 1.26.0

require (
	github.com/looplab/fsm v1.0.3
	github.com/spf13/cobra v1.10.2
	k8s.io/apimachinery v0.37.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
)
