module myapp-operator/hack/tools/ginkgo

go 1.26.0

require github.com/onsi/ginkgo/v2 v2.27.4

require (
	github.com/Masterminds/semver/v3 v3.4.0 // indirect
	github.com/go-task/slim-sprig/v3 v3.0.0 // indirect
	github.com/google/pprof v0.0.0-20250403155104-27863c87afa6 // indirect
	golang.org/x/mod v0.32.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/tools v0.40.0 // indirect
)

// The reference graph's versions of the modules this one shares with it (hack/tools/align.sh).
replace (
	golang.org/x/sync => golang.org/x/sync v0.19.0
	golang.org/x/tools => golang.org/x/tools v0.41.0
)
