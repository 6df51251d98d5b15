# myapp-operator. `make help` lists the targets.
#
# Every tool is built from the Go module proxy into bin/, once per version: no Docker, no
# downloaded binaries. Each tool has its own module under hack/tools/<tool>/, whose go.mod
# is the one place its version is pinned; the file names below carry that version, so a
# bump rebuilds the tool and a second run costs nothing.

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

# The operator's version and its release date; the bundle and the catalog take them from here.
VERSION ?= 0.5.0
BUNDLE_CREATED_AT ?= 2026-11-28T00:00:00Z
IMAGE_TAG_BASE ?= example.com/myapp-operator
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
CONTAINER_TOOL ?= docker

LOCALBIN ?= $(CURDIR)/bin
$(LOCALBIN):
	mkdir -p $@

# One set of build flags for every Go build, test and tool of the project: static
# (CGO_ENABLED=0) and -trimpath. The go command keys a compiled package on its flags, so a
# package that two programs import at one version compiles once only when both build it with
# the same flags: the control plane, the manager, its images, the tests and the tools share
# their compiled packages this way (docs/performance/build-times.md). Static binaries also go
# into images as they are, with no second build.
export CGO_ENABLED = 0
export GOFLAGS := $(strip -trimpath $(filter-out -trimpath,$(GOFLAGS)))

# tool-version reads the version a hack/tools module pins: $(call tool-version,dir,module).
tool-version = $(shell awk '{ for (i = 1; i < NF; i++) if ($$i == "$(2)" && $$(i+1) ~ /^v/) { print $$(i+1); exit } }' hack/tools/$(1)/go.mod)
# The tool cache: every tool is built once per (tool, version, its module's go.mod and go.sum,
# build flags, Go release) into a folder of its own outside the clone, so that another clone
# on the same machine builds and links nothing again. tool-key is that digest:
# $(call tool-key,dir,flags).
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/myapp-operator/tools
GO_RELEASE := $(shell go env GOVERSION)
tool-key = $(shell { cat hack/tools/$(1)/go.mod hack/tools/$(1)/go.sum; echo '$(GO_RELEASE) CGO_ENABLED=$(CGO_ENABLED) $(GOFLAGS) $(TOOL_LDFLAGS) $(2)'; } | sha256sum | cut -c1-12)
# tool-dir is a tool's folder in the cache, from its key computed once:
# $(call tool-dir,name,version,key).
tool-dir = $(TOOLS_CACHE)/$(1)-$(2)-$(3)
# GO_TOOL_BUILD is the `go build` of the tools below. Its compiler runs with a larger GC target
# (GOGC=400): a tool build is mostly compiling dependencies, and a compiler that collects less
# often needs less CPU for it, for a heap that stays well within this machine's memory
# (docs/performance/build-times.md). BUILD_NICE runs them at a lower CPU priority (test-all
# sets it: tools build beside the running stages); empty, they run as any command does.
BUILD_NICE ?=
GO_TOOL_BUILD = GOGC=400 $(BUILD_NICE) go build
# go-build-tool builds packages of a tools module into a tool's folder in the cache:
# $(call go-build-tool,dir,tool folder,packages[,flags]). It builds into a folder of its own
# and renames it into place, so that two clones building the same tool at once never see
# half of it: the first rename wins, and the other build is dropped. Tools are linked without
# their symbol tables and DWARF (TOOL_LDFLAGS, unless the flags give -ldflags of their own,
# which then include it): nobody debugs them here, and the link, which every fresh clone
# whose tool cache is empty pays for each tool, takes a third less.
TOOL_LDFLAGS := -s -w
define go-build-tool
@echo "Building $(notdir $(2)) from the Go module proxy (once per version, into $(TOOLS_CACHE))"
mkdir -p $(TOOLS_CACHE)
tmp=$$(mktemp -d $(2).building-XXXXXX) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd hack/tools/$(1) && $(GO_TOOL_BUILD) $(if $(findstring -ldflags,$(4)),$(4),$(4) -ldflags "$(TOOL_LDFLAGS)") -o $$tmp/ $(3)) && \
	chmod 755 "$$tmp" && { mv -T "$$tmp" $(2) 2>/dev/null || test -d $(2); }
endef

CONTROLLER_TOOLS_VERSION := $(call tool-version,controller-gen,sigs.k8s.io/controller-tools)
KUSTOMIZE_VERSION := $(call tool-version,kustomize,sigs.k8s.io/kustomize/kustomize/v5)
KUBERNETES_VERSION := $(call tool-version,kubernetes,k8s.io/kubernetes)
ETCD_VERSION := $(call tool-version,kubernetes,go.etcd.io/etcd/server/v3)
KWOK_VERSION := $(call tool-version,kubernetes,sigs.k8s.io/kwok)
OPERATOR_SDK_VERSION := $(call tool-version,olm,github.com/operator-framework/operator-sdk)
OPM_VERSION := $(call tool-version,olm,github.com/operator-framework/operator-registry)
OLM_VERSION := $(call tool-version,olm,github.com/operator-framework/operator-lifecycle-manager)
GOLANGCI_LINT_VERSION := $(call tool-version,golangci-lint,github.com/golangci/golangci-lint/v2)
CRD_REF_DOCS_VERSION := $(call tool-version,crd-ref-docs,github.com/elastic/crd-ref-docs)
KUBE_SCORE_VERSION := $(call tool-version,kube-score,github.com/zegl/kube-score)
KUBECONFORM_VERSION := $(call tool-version,kubeconform,github.com/yannh/kubeconform)
PROMETHEUS_VERSION := $(call tool-version,prometheus,github.com/prometheus/prometheus)
TRAEFIK_VERSION := $(call tool-version,traefik,github.com/traefik/traefik/v3)

# Each tool's build flags (they are part of its key in the tool cache) and its folder there.
OPENPGP_TAGS := -tags containers_image_openpgp
# OLM v0, opm, operator-sdk and scorecard-test are one module and one go build
# (hack/tools/olm). Built from source, operator-sdk would call itself "unknown" in the
# bundle's metadata: the build stamps its version.
SDK_VERSION_PKG := github.com/operator-framework/operator-sdk/internal/version
OLM_BUILD_FLAGS := -tags "json1 containers_image_openpgp" \
	-ldflags "$(TOOL_LDFLAGS) -X $(SDK_VERSION_PKG).Version=$(OPERATOR_SDK_VERSION) -X $(SDK_VERSION_PKG).ImageVersion=$(OPERATOR_SDK_VERSION)"
# Prometheus's web UI assets are left out (no builtinassets tag): the tests use its HTTP API.
# So are its pluggable service discoveries (remove_all_sd): the tests scrape static targets,
# and the cloud SDKs the others need are much of the build (docs/performance/build-times.md).
PROMETHEUS_FLAGS := -tags remove_all_sd
# Traefik runs as a pod of an image holding only its binary, without its symbol tables (half
# of its size); it is built from the source hack/tools/traefik/trim/trim.sh trims of what the
# tests never run, so trim/ is part of its key.
TRAEFIK_FLAGS := -ldflags "-s -w"
TRAEFIK_TRIM := $(shell cat hack/tools/traefik/trim/* | sha256sum | cut -c1-12)
CONTROLLER_GEN_KEY := $(call tool-key,controller-gen)
CONTROLLER_GEN ?= $(call tool-dir,controller-gen,$(CONTROLLER_TOOLS_VERSION),$(CONTROLLER_GEN_KEY))/controller-gen
KUSTOMIZE_KEY := $(call tool-key,kustomize)
KUSTOMIZE ?= $(call tool-dir,kustomize,$(KUSTOMIZE_VERSION),$(KUSTOMIZE_KEY))/kustomize
OLM_BIN ?= $(call tool-dir,olm,$(OLM_VERSION)-opm$(OPM_VERSION)-sdk$(OPERATOR_SDK_VERSION),$(call tool-key,olm,$(OLM_BUILD_FLAGS)))
OPM ?= $(OLM_BIN)/opm
OPERATOR_SDK ?= $(OLM_BIN)/operator-sdk
SCORECARD_TEST ?= $(OLM_BIN)/scorecard-test
IMAGE_TOOL ?= $(LOCALBIN)/image-tool
# The real node's NetworkPolicy enforcer (kube-router's policy controller), for make test-realnode.
NETPOL ?= $(LOCALBIN)/netpol
CERT_MANAGER ?= $(LOCALBIN)/certmanager
GOLANGCI_LINT_KEY := $(call tool-key,golangci-lint)
GOLANGCI_LINT ?= $(call tool-dir,golangci-lint,$(GOLANGCI_LINT_VERSION),$(GOLANGCI_LINT_KEY))/golangci-lint
CRD_REF_DOCS_KEY := $(call tool-key,crd-ref-docs)
CRD_REF_DOCS ?= $(call tool-dir,crd-ref-docs,$(CRD_REF_DOCS_VERSION),$(CRD_REF_DOCS_KEY))/crd-ref-docs
KUBE_SCORE_KEY := $(call tool-key,kube-score)
KUBE_SCORE ?= $(call tool-dir,kube-score,$(KUBE_SCORE_VERSION),$(KUBE_SCORE_KEY))/kube-score
GINKGO_VERSION := $(call tool-version,ginkgo,github.com/onsi/ginkgo/v2)
GINKGO ?= $(call tool-dir,ginkgo,$(GINKGO_VERSION),$(call tool-key,ginkgo))/ginkgo
KUBECONFORM_KEY := $(call tool-key,kubeconform)
KUBECONFORM ?= $(call tool-dir,kubeconform,$(KUBECONFORM_VERSION),$(KUBECONFORM_KEY))/kubeconform
TRAEFIK_KEY := $(call tool-key,traefik,$(TRAEFIK_FLAGS) trim:$(TRAEFIK_TRIM))
TRAEFIK ?= $(call tool-dir,traefik,$(TRAEFIK_VERSION),$(TRAEFIK_KEY))/traefik
# Prometheus and promtool (the Go module's version is v0.<major><minor>.<patch>).
PROMETHEUS_KEY := $(call tool-key,prometheus,$(PROMETHEUS_FLAGS))
PROMETHEUS_BIN ?= $(call tool-dir,prometheus,$(PROMETHEUS_VERSION),$(PROMETHEUS_KEY))
PROMTOOL ?= $(PROMETHEUS_BIN)/promtool
PAUSE ?= $(LOCALBIN)/pause

# The control plane: kube-apiserver and etcd (what envtest needs), plus the controller
# manager, the scheduler, kubectl and kwok for the local cluster, in one folder; the real
# node's kubelet and kube-proxy in another (only NODE=real needs them).
# Stamp the release into the binaries, as Kubernetes' own build does; otherwise the API server
# reports v0.0.0 and OLM refuses any CSV with a minKubeVersion. DWARF is left out (-s -w):
# nobody steps through the control plane in a debugger here; it saves the linker that work and
# a third of the size (kube-apiserver 144 -> 101 MB), and stack traces and profiles keep their
# function names.
K8S_VERSION_LDFLAGS := $(foreach pkg,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	-X $(pkg).gitVersion=$(KUBERNETES_VERSION) -X $(pkg).gitMajor=$(word 1,$(subst ., ,$(KUBERNETES_VERSION:v%=%))) \
	-X $(pkg).gitMinor=$(word 2,$(subst ., ,$(KUBERNETES_VERSION:v%=%))) -X $(pkg).gitTreeState=clean)
K8S_BUILD_FLAGS = -ldflags "-s -w $(K8S_VERSION_LDFLAGS)"
K8S_KEY := $(call tool-key,kubernetes,$(K8S_BUILD_FLAGS) $(shell cat hack/tools/kubernetes/etcd/*.go | sha256sum | cut -c1-12))
K8S_BIN ?= $(call tool-dir,kubernetes,$(KUBERNETES_VERSION)-etcd$(ETCD_VERSION)-kwok$(KWOK_VERSION),$(K8S_KEY))
K8S_NODE_BIN ?= $(call tool-dir,kubernetes-node,$(KUBERNETES_VERSION),$(K8S_KEY))
KUBECTL ?= $(K8S_BIN)/kubectl
KWOK ?= $(K8S_BIN)/kwok
# A KUBEBUILDER_ASSETS the user set (e.g. from setup-envtest) is used as it is. A make run by
# a recipe of this one finds it in its environment, set to K8S_BIN: it builds them too.
ifeq ($(origin KUBEBUILDER_ASSETS),undefined)
KUBEBUILDER_ASSETS := $(K8S_BIN)
endif
ifeq ($(KUBEBUILDER_ASSETS),$(K8S_BIN))
# The envtest suite of internal/controller also runs kube-controller-manager's autoscaler
# controller for the stories of a user's own HorizontalPodAutoscaler.
ENVTEST_DEPS := $(K8S_BIN)/kube-apiserver $(K8S_BIN)/etcd $(K8S_BIN)/kube-controller-manager
endif
export KUBEBUILDER_ASSETS
# envtest gives kube-apiserver 20 s to become ready, and retries a start five times. Under
# test-all the unit packages start their control planes side by side while the other lanes'
# clusters run, on two cores: a cold kube-apiserver (its CRDs, its first etcd compaction) can
# take longer than 20 s there, and a suite that never started fails every test it holds.
export KUBEBUILDER_CONTROLPLANE_START_TIMEOUT ?= 2m

# Every process a run of these targets starts carries MYAPP_OPERATOR_RUN (localcluster's
# components, envtest's kube-apiserver and etcd, the suites, the tools): `make sweep` stops
# those of any other run, from any clone (hack/localcluster sweep). A make started by another
# make, by test-all or by .ci/run keeps the id it inherits.
ifndef MYAPP_OPERATOR_RUN
MYAPP_OPERATOR_RUN := $(shell date -u +%Y%m%dT%H%M%SZ)-$(shell od -An -N4 -tx4 /dev/urandom | tr -d ' ')
endif
export MYAPP_OPERATOR_RUN

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and the ClusterRole from the markers in api/ and internal/, and give the CRD's embedded core strings Kubernetes' length bounds (hack/crdbounds).
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/...;./internal/...;./cmd/..." output:crd:artifacts:config=config/crd/bases
	go run ./hack/crdbounds config/crd/bases/example.com_myapps.yaml

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the DeepCopy methods of the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

# Two Go modules: the operator's (the repository's root) and test/'s, the suites that need
# OLM's API and tooling (see test/go.mod). fmt and vet cover both. vet and lint compile and
# type-check every package; they run with GOGC=400, as the tool builds do (GO_TOOL_BUILD).
.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...
	go -C test fmt ./...

.PHONY: vet
vet: ## Run go vet.
	GOGC=400 go vet ./...
	GOGC=400 go -C test vet ./...

# Every Go module of the repository, linted with the one .golangci.yml.
LINT_MODULES := . test hack/crdupgrade hack/tools/image hack/tools/netpol hack/tools/certmanager
.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with .golangci.yml on every Go module of the repository.
	for m in $(LINT_MODULES); do (cd $$m && GOGC=400 $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...) || exit 1; done

# kubeconform and kube-score over config/default, the bundle CSV's Deployment, the samples and
# the children the operator builds for every valid edge case of the API (test/manifestlint).
# kubeconform checks them against strict schemas written from the OpenAPI document of the
# Kubernetes source the control plane is built from (and the MyApp CRD); every kube-score
# finding is fixed or justified, with its reason, in hack/kube-score.yaml.
# What the project ships is also checked against one release of every older Kubernetes minor
# from the CSV's minKubeVersion on (the OpenAPI documents of their k8s.io/kubernetes modules);
# manifestlint fails when a minor is missing.
KUBECONFORM_OLDER_KUBERNETES ?= v1.34.4,v1.35.4
.PHONY: lint-manifests
lint-manifests: manifests helm-chart $(KUSTOMIZE) $(KUBE_SCORE) $(KUBECONFORM) ## Check the shipped manifests, the chart and the operator's children with kubeconform (on every Kubernetes minor the bundle supports) and kube-score; fail on an invalid object or a finding hack/kube-score.yaml does not justify.
	mkdir -p $(LOCALBIN)/manifestlint
	$(KUSTOMIZE) build config/default > $(LOCALBIN)/manifestlint/config-default.yaml
	$(HELM) template myapp-operator $(HELM_CHART) --namespace myapp-operator-system > $(LOCALBIN)/manifestlint/helm-defaults.yaml
	$(HELM) template myapp-operator $(HELM_CHART) --namespace myapp-operator-system $(HELM_ALL_ON) > $(LOCALBIN)/manifestlint/helm-all-on.yaml
	go -C hack/tools/kubernetes mod download k8s.io/kubernetes
	go -C test run ./manifestlint -kube-score $(KUBE_SCORE) -config $(CURDIR)/hack/kube-score.yaml \
		-kubeconform $(KUBECONFORM) -crd $(CURDIR)/config/crd/bases/example.com_myapps.yaml,"$$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd/standard/gateway.networking.k8s.io_httproutes.yaml" -samples $(CURDIR)/config/samples \
		-swagger "$$(go -C hack/tools/kubernetes list -m -f '{{.Dir}}' k8s.io/kubernetes)/api/openapi-spec/swagger.json" \
		-kube-version "$$(go -C hack/tools/kubernetes list -m -f '{{.Version}}' k8s.io/kubernetes)" \
		-older $(KUBECONFORM_OLDER_KUBERNETES) -min-kube-version $(MIN_KUBE_VERSION) \
		-helm $(LOCALBIN)/manifestlint/helm-defaults.yaml,$(LOCALBIN)/manifestlint/helm-all-on.yaml \
		-kustomized $(LOCALBIN)/manifestlint/config-default.yaml \
		-csv $(CURDIR)/$(BUNDLE_DIR)/manifests/myapp-operator.clusterserviceversion.yaml -out $(LOCALBIN)/manifestlint

# The alert rules: config/prometheus/rules holds them as a Prometheus rule file, with its unit
# tests; the PrometheusRule of config/prometheus is generated from it.
PROMETHEUS_RULES := config/prometheus/rules/myapp-operator.rules.yaml
.PHONY: prometheus-rules
prometheus-rules: $(PROMTOOL) ## Check the alert rules with promtool and generate config/prometheus/prometheusrule.yaml from them.
	$(PROMTOOL) check rules $(PROMETHEUS_RULES)
	go run ./hack/prometheusrule -rules $(PROMETHEUS_RULES) -name alerts > config/prometheus/prometheusrule.yaml.tmp
	mv config/prometheus/prometheusrule.yaml.tmp config/prometheus/prometheusrule.yaml

.PHONY: api-docs
api-docs: $(CRD_REF_DOCS) ## Generate the API field reference (docs/api/v1.md) from the Go types of api/v1.
	$(CRD_REF_DOCS) --source-path=./api/v1 --config=hack/crd-ref-docs/config.yaml --renderer=markdown \
		--output-path=docs/api/v1.md --log-level=ERROR

# The fuzz targets, as package:target (a package under ./test/ is in test/'s module). `go test`
# runs each on its seed corpus (and on the inputs in the package's testdata/fuzz); make test
# fuzzes each for TEST_FUZZTIME more, make fuzz for FUZZTIME.
FUZZ_TARGETS := ./internal/desired:FuzzBuilders ./internal/desired:FuzzBuildersForAnyName \
	./internal/status:FuzzCompute ./internal/rollout:FuzzJudge ./test/argocd:FuzzHealthOnAnyObject ./test/argocd:FuzzHealthAgreesWithKstatus
# Fuzz targets against envtest, which only make fuzz fuzzes: make test runs their seed corpus,
# and the property test beside each runs a fixed seed.
ENVTEST_FUZZ_TARGETS := ./api/v1:FuzzMakeableAcceptedMyApps
# make test's fuzzing is a count of inputs, not a duration: Go 1.26's fuzzing coordinator can
# fail a run whose duration ends while a busy machine holds its workers up ("context deadline
# exceeded" with no failing input, golang/go#75804, fixed in Go 1.27), which CI's lanes side by
# side make likely. 2,000 inputs take about 2 s per target on an idle machine.
TEST_FUZZTIME ?= 2000x
FUZZTIME ?= 2m
# run-fuzz fuzzes every target given for the given time: $(call run-fuzz,time,targets).
define run-fuzz
for t in $(2); do echo "fuzzing $$t for $(1)"; pkg=$${t%%:*}; mod=.; \
	case $$pkg in ./test/*) mod=test; pkg=./$${pkg#./test/};; esac; \
	go -C $$mod test $$pkg -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(1) || exit 1; done
endef
# testsummary prints what plain go test prints from `go test -json`, and a line that counts
# the tests (hack/testsummary); GO_TEST_FLAGS are more flags for every go test (test-all sets
# -count=1: a CI run never takes a result from the test cache).
TESTSUMMARY := $(LOCALBIN)/testsummary
GO_TEST_FLAGS ?=
$(TESTSUMMARY): hack/testsummary/main.go | $(LOCALBIN)
	go build -o $@ ./hack/testsummary

.PHONY: test
TEST_TOOLS = $(CONTROLLER_GEN) $(ENVTEST_DEPS) $(SCORECARD_TEST) $(KUSTOMIZE) $(PROMTOOL) $(GINKGO)
# The envtest stories of internal/controller mostly wait (on the reconciler, on Eventually and
# Consistently windows; docs/performance/build-times.md), so the ginkgo command runs them in
# ENVTEST_PROCS processes, each with its own kube-apiserver, etcd and manager (suite_test.go's
# BeforeSuite); `go test ./internal/controller` runs them one after the other. Every other test
# of the root module runs under go test, the plain tests of internal/controller included (the
# ginkgo command would run them once in each process). Both get 20 minutes, inside test-all's
# deadline for the stage, which still stops a hang.
ENVTEST_PROCS ?= 4
test: $(call unprepared,manifests generate fmt vet) $(TEST_TOOLS) $(TESTSUMMARY) ## Unit, envtest (real kube-apiserver and etcd), bundle validation, scorecard, alert rule tests, a short fuzz run.
	$(GINKGO) -p --procs=$(ENVTEST_PROCS) --timeout=20m --cover --coverprofile=controller.cover.out ./internal/controller -- -test.run='^TestControllers$$'
	go test -json -timeout 20m $(GO_TEST_FLAGS) ./... -skip '^TestControllers$$' -coverprofile cover.out 2>&1 | $(TESTSUMMARY)
	cd test && SCORECARD_TEST=$(SCORECARD_TEST) KUSTOMIZE=$(KUSTOMIZE) \
		go test -json $(GO_TEST_FLAGS) $$(go list ./... | grep -v -e /test/e2e -e /test/olm -e /test/realnode) 2>&1 | $(TESTSUMMARY)
	$(call run-fuzz,$(TEST_FUZZTIME),$(FUZZ_TARGETS))
	cd hack/tools/image && go test -json $(GO_TEST_FLAGS) ./... 2>&1 | $(TESTSUMMARY)
	cd hack/crdupgrade && go test -json $(GO_TEST_FLAGS) ./... 2>&1 | $(TESTSUMMARY)
	$(PROMTOOL) test rules config/prometheus/rules/*_test.yaml

# The model of the rollout decision (internal/rollout/model_test.go): make test runs its fixed
# seeds; make model-check walks MODEL_SEEDS more (100,000 take about 4 minutes here).
MODEL_SEEDS ?= 100000
.PHONY: model-check
model-check: ## Walk the model of the rollout decision over MODEL_SEEDS random seeds (a failure prints its seed and steps).
	go test ./internal/rollout -run '^TestModel$$' -count=1 -timeout 60m -model.seeds=$(MODEL_SEEDS)

.PHONY: fuzz
fuzz: $(ENVTEST_DEPS) ## Fuzz every target (builders, status computation, Argo CD health check and kstatus, accepted MyApps make accepted children against envtest) for FUZZTIME each (default 2m).
	$(call run-fuzz,$(FUZZTIME),$(FUZZ_TARGETS) $(ENVTEST_FUZZ_TARGETS))

# test-all runs the stages in lanes side by side, each stage as `make <stage>` alone runs it
# and within a deadline, after one prepare step, while a tool make builds the tools of the
# stages to come, TEST_ALL_JOBS at a time, at a lower CPU priority than the clusters' stages
# (hack/test-all.sh says how and why). A lane holds stages that cannot overlap: the real-node
# stages share the node's bridge and host ports. The checks that only compute run at a lower
# priority (@10) than the lanes whose stories measure clusters serving requests. The deadlines
# stay well inside CI's 90 minutes; each suite's own `go test -timeout` fires first, so that a
# stage that hangs fails with its cluster's logs kept.
TEST_ALL_LANES := checks@10:test,verify-copy kwok:test-e2e,test-olm,test-olmv1 node:test-helm,test-realnode,test-catalog
TEST_ALL_DEADLINES := verify-copy=20m test=25m test-e2e=20m test-olm=15m test-olmv1=11m test-realnode=20m test-catalog=20m test-helm=13m
TEST_ALL_STAGES = $(subst $(comma), ,$(foreach l,$(TEST_ALL_LANES),$(lastword $(subst :, ,$(l)))))
comma := ,
# What every stage shares, made once by test-all before the lanes start (PREPARED=1 then
# leaves it out of each stage): the generated files, one after the other, then the programs,
# side by side. (go vet is left out: make lint, in verify, runs govet over every module.)
TEST_ALL_PREPARE := manifests generate fmt
TEST_ALL_PREPARE_PROGRAMS := manager localcluster manager-image-bin test-app-bins $(TESTSUMMARY)
# The order in which the tool make builds the stages' tools: the lanes with the longest way to
# go first (the kwok and node lanes wait on clusters for most of a run). The node lane starts
# with the Helm stage, whose tools are few: in a cold run, the real-node and catalog stages'
# tools (OLM, Traefik, OLM v1) build while it runs.
TEST_ALL_TOOL_ORDER := test-helm test-e2e test-realnode test verify-copy test-olm test-catalog test-olmv1
TEST_ALL_JOBS ?= 2
TEST_ALL_WORK ?= $(LOCALBIN)/test-all
# Through a variable, the make of hack/test-all.sh is not this one's sub-make: it makes its
# own job slots, and `make -n test-all` prints the line instead of running it.
TEST_ALL_MAKE = $(MAKE)
.PHONY: test-all
test-all: | $(LOCALBIN) ## Every test: generated files, unit, envtest, bundle, scorecard, fuzz, end-to-end, OLM v0 and v1, real node, the catalog and the Helm chart on a real node, in lanes side by side. What .ci/run runs.
	PREPARE="$(TEST_ALL_PREPARE)" PREPARE_PROGRAMS="$(TEST_ALL_PREPARE_PROGRAMS)" TOOL_ORDER="$(TEST_ALL_TOOL_ORDER)" hack/test-all.sh "$(TEST_ALL_MAKE)" $(TEST_ALL_WORK) $(TEST_ALL_JOBS) "$(TEST_ALL_DEADLINES)" $(TEST_ALL_LANES)

.PHONY: bench
bench: $(ENVTEST_DEPS) ## Benchmarks of the pure builders, the status computation, a scrape of the per-MyApp metrics, and the server-side apply read-back (against envtest).
	go test ./internal/... -run '^$$' -bench . -benchmem

.PHONY: verify
VERIFY_TOOLS = $(CONTROLLER_GEN) $(CRD_REF_DOCS) $(PROMTOOL) $(KUSTOMIZE) $(OPERATOR_SDK) $(OPM) $(IMAGE_TOOL) $(GOLANGCI_LINT) $(KUBE_SCORE) $(KUBECONFORM)
verify: manifests generate fmt api-docs prometheus-rules bundle catalog crd-upgrade-check crd-cost-check check-operatorhub lint lint-manifests helm-chart-check $(VERIFY_TOOLS) ## Regenerate code, manifests, API reference, bundle, catalog and go.sum; lint; fail if that changes a committed file, the bundle gets a warning, lint finds anything or the operator's dependencies leave the control plane's versions.
	go mod tidy
	go -C test mod tidy
	hack/check-deps-aligned.sh
	@out=$$($(OPERATOR_SDK) bundle validate ./bundle --select-optional suite=operatorframework 2>&1); echo "$$out"; \
	if echo "$$out" | grep -E 'level=(warning|error)' | grep -vqE '$(OPERATORHUB_ENDPOINTSLICES)'; then echo "bundle validation reported problems"; exit 1; fi
	@if [ -n "$$(git status --porcelain --untracked-files=all)" ]; then \
		echo "Generated files are out of date; run 'make manifests generate fmt bundle catalog' and commit:"; \
		git status --porcelain --untracked-files=all; git --no-pager diff --stat; exit 1; fi

# verify-copy runs make verify in a copy of the working tree, changes not yet committed
# included: verify regenerates files (the CRD, the bundle, the chart) that the stages beside it
# in test-all read, and a file read while it is rewritten is half a file. The copy shares the
# tool cache and has a bin/ of its own. It lives at one path per machine, beside the tool
# cache, not in the clone: golangci-lint keys its cache on each file's absolute path
# (golangci/golangci-lint#6430), so a copy at a new path lints every package again, and at
# the same path only what changed. A lock keeps two checkouts from sharing it at once.
VERIFY_TREE ?= $(dir $(TOOLS_CACHE))verify-tree
.PHONY: verify-copy verify-copy-locked
verify-copy: | $(LOCALBIN)
	mkdir -p $(dir $(VERIFY_TREE)) && flock $(VERIFY_TREE).lock $(MAKE) --no-print-directory verify-copy-locked
# The copy takes the files git would (tracked ones as they are now, untracked ones it does not
# ignore) and .git, each named: tar walks no directory that the lanes beside it change (their
# clusters' state comes and goes in the top folder), and a tracked file that is gone is left out.
verify-copy-locked:
	rm -rf $(VERIFY_TREE) && mkdir -p $(VERIFY_TREE)
	{ git ls-files -z --cached --others --exclude-standard; printf '.git\0'; } | \
		tar -c --null --ignore-failed-read -T - -f - | tar -x -C $(VERIFY_TREE)
	$(MAKE) -C $(VERIFY_TREE) --no-print-directory verify TOOLS_CACHE=$(TOOLS_CACHE)

# The minimum Kubernetes version the bundle claims: the CSV's minKubeVersion (1.34.0).
# test/bundle checks the CRD's CEL rules hold it (their quantity() calls need 1.29 or later).
MIN_KUBE_VERSION = $(shell awk '/^  minKubeVersion:/ { print $$2 }' $(BUNDLE_DIR)/manifests/myapp-operator.clusterserviceversion.yaml)
# operator-sdk prints this deprecation notice for the operatorhub validator itself, whatever the bundle.
OPERATORHUB_DEPRECATION := validator is deprecated; for equivalent validation use
# The operatorhub validator of operator-sdk v1.42.2 (operator-framework/api v0.36.0) warns that an RBAC
# rule on discovery.k8s.io endpointslices uses an API removed in 1.25: a rule names no version, and
# discovery.k8s.io/v1 has served them since 1.21 (operator-framework/api#378, dropped from the check in
# v0.45.0). The manager lists and watches v1 EndpointSlices (internal/controller/endpoints.go); a warning
# that names any other API still fails (here and in verify's operatorframework suite).
OPERATORHUB_ENDPOINTSLICES := Migrate the API\(s\) for endpointslices: \(\[[^:]*\]\)"$$
# The CRD as the API server of the bundle's minKubeVersion validates it on create, CEL cost
# budget included (hack/crdcost, pinned to that release's apiextensions-apiserver): the control
# plane of the tests is 1.36, and 1.30 to 1.33 refuse the MyApp CRD for the cost of its
# quantity rules. It prints the share of the budget the rules take and the most expensive ones
# (docs/design/cel-budget.md says where a new field finds room).
.PHONY: crd-cost-check
crd-cost-check: manifests ## Fail if the API server of the CSV's minKubeVersion would refuse the MyApp CRD; print the CEL budget's use.
	cd hack/crdcost && go run . -min-kube-version $(MIN_KUBE_VERSION) -costs 8 $(CURDIR)/config/crd/bases/example.com_myapps.yaml
LINT_MODULES += hack/crdcost

# bundle/ with every image pinned by digest (hack/pinbundle), as a release publishes it and a
# disconnected cluster installs it. The manager image is built here for PINNED_ARCH, as
# image-build builds it (a reproducible build: the same Go release gives the same digest), and
# with PUSH=1 pushed to PINNED_IMAGE_REPO by that digest, so that the bundle names exactly the
# image published. One architecture: a multi-architecture release would pin its image index,
# which this project does not build. releases/<version> keeps bundle/ as it is, by tag, which
# the upgrade tests install from managers built here.
PINNED_BUNDLE ?= $(LOCALBIN)/bundle-pinned
PINNED_IMAGE_REPO ?= $(IMAGE_TAG_BASE)
PINNED_ARCH ?= amd64
PINNED_MANAGER = $(IMAGES_DIR)/manager-linux-$(PINNED_ARCH)
.PHONY: bundle-pinned
bundle-pinned: $(IMAGE_TOOL) ## Write bundle/ pinned by digest to PINNED_BUNDLE: the manager image for PINNED_ARCH built here (PUSH=1 pushes it to PINNED_IMAGE_REPO), in spec.relatedImages, disconnected "true".
	mkdir -p $(IMAGES_DIR)
	GOOS=linux GOARCH=$(PINNED_ARCH) go build -o $(PINNED_MANAGER) ./cmd
	@out=$$($(IMAGE_TOOL) build --arch $(PINNED_ARCH) --tag $(PINNED_IMAGE_REPO):v$(VERSION) --add $(PINNED_MANAGER):/manager \
		--entrypoint /manager --user 65532:65532 --output $(IMAGES_DIR)/manager-pinned.tar $(if $(filter 1,$(PUSH)),--push --by-digest)) \
		|| { echo "$$out"; exit 1; }; echo "$$out"; \
	digest=$$(echo "$$out" | sed -n 's/^wrote .* (\(sha256:[0-9a-f]*\)) to .*/\1/p'); \
	test -n "$$digest" || { echo "no digest in the output of the image build"; exit 1; }; \
	echo "go run ./hack/pinbundle -bundle $(BUNDLE_DIR) -out $(PINNED_BUNDLE) -image $(IMAGE_TAG_BASE):v$(VERSION)=$(PINNED_IMAGE_REPO)@$$digest"; \
	go run ./hack/pinbundle -bundle $(BUNDLE_DIR) -out $(PINNED_BUNDLE) -image $(IMAGE_TAG_BASE):v$(VERSION)=$(PINNED_IMAGE_REPO)@$$digest

.PHONY: check-operatorhub
check-operatorhub: $(OPERATOR_SDK) bundle-pinned ## The community-operators static checks: operatorhub and operatorframework validators (no warning) on bundle/ and its pinned copy, CSV fields, alm-examples, no NetworkPolicy, preflight's static bundle checks.
	@test -n "$(MIN_KUBE_VERSION)" || { echo "the CSV claims no minKubeVersion"; exit 1; }
	@for dir in ./$(BUNDLE_DIR) $(PINNED_BUNDLE); do for sel in name=operatorhub suite=operatorframework; do \
		echo "operator-sdk bundle validate $$dir --select-optional $$sel --optional-values=k8s-version=$(MIN_KUBE_VERSION)"; \
		out=$$($(OPERATOR_SDK) bundle validate $$dir --select-optional $$sel --optional-values=k8s-version=$(MIN_KUBE_VERSION) 2>&1) \
			|| { echo "$$out"; exit 1; }; echo "$$out"; \
		if echo "$$out" | grep -E 'level=(warning|error)' | grep -vF '$(OPERATORHUB_DEPRECATION)' | grep -vqE '$(OPERATORHUB_ENDPOINTSLICES)'; then \
			echo "bundle validation ($$sel) reported problems"; exit 1; fi; \
	done; done
	PINNED_BUNDLE=$(PINNED_BUNDLE) go -C test test ./bundle -count=1 -run '^TestOperatorHub'

##@ Build

# unprepared leaves out what test-all prepares once for all its stages (PREPARED=1): the
# generated files, fmt and vet, the manager, localcluster and the binaries that go into
# images. A stage run alone makes them as before: $(call unprepared,targets).
unprepared = $(if $(filter 1,$(PREPARED)),,$(1))

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary.
	go build -o bin/manager ./cmd

.PHONY: run
run: manifests generate fmt vet ## Run the operator on this machine against the current kubeconfig.
	go run ./cmd/main.go

.PHONY: docker-build
docker-build: ## Build the manager image (needs a container tool).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image.
	$(CONTAINER_TOOL) push $(IMG)

# The same image as the Dockerfile's, built with no container tool: the static manager binary
# as /manager, user 65532, the user database and /tmp of a distroless static base.
IMAGES_DIR ?= $(LOCALBIN)/images
# The tools that go into images: every build is static (CGO_ENABLED=0), so the tool cache's
# binaries go in as they are.
GRPC_HEALTH_PROBE_VERSION := $(call tool-version,grpc-health-probe,github.com/grpc-ecosystem/grpc-health-probe)
GRPC_HEALTH_PROBE ?= $(call tool-dir,grpc-health-probe,$(GRPC_HEALTH_PROBE_VERSION),$(call tool-key,grpc-health-probe))/grpc-health-probe
UNTAR ?= $(LOCALBIN)/untar
# The manager for the image, built for Linux (the same binary as bin/manager on a Linux machine).
manager-image-bin:
	mkdir -p $(IMAGES_DIR)
	GOOS=linux go build -o $(IMAGES_DIR)/manager ./cmd
.PHONY: image-build manager-image-bin
image-build: $(IMAGE_TOOL) $(call unprepared,manager-image-bin) ## Build the manager image IMG without Docker into bin/images/manager.tar; PUSH=1 also pushes it.
	$(IMAGE_TOOL) build --tag $(IMG) --add $(IMAGES_DIR)/manager:/manager --entrypoint /manager \
		--user 65532:65532 --output $(IMAGES_DIR)/manager.tar $(if $(filter 1,$(PUSH)),--push)

##@ Deployment

ignore-not-found ?= false

.PHONY: install
install: manifests $(KUSTOMIZE) $(KUBECTL) ## Install the CRD into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests $(KUSTOMIZE) $(KUBECTL) ## Remove the CRD (and every MyApp) from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

# config/default; config/monitoring adds a ServiceMonitor and a PrometheusRule (they need the
# Prometheus Operator's CRDs).
DEPLOY_CONFIG ?= config/default
.PHONY: deploy
deploy: manifests $(KUSTOMIZE) $(KUBECTL) ## Deploy the operator with kustomize (image IMG; DEPLOY_CONFIG=config/monitoring adds its ServiceMonitor and alerts).
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build $(DEPLOY_CONFIG) | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) $(KUBECTL) ## Remove the operator deployed with kustomize.
	$(KUSTOMIZE) build $(DEPLOY_CONFIG) | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

##@ OLM bundle and catalog

# The channel this version is published in. The catalog's upgrade graph lives in
# hack/catalog-template.yaml.
CHANNELS ?= alpha
DEFAULT_CHANNEL ?= alpha
BUNDLE_DIR ?= bundle
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:latest

.PHONY: bundle
bundle: manifests $(KUSTOMIZE) $(OPERATOR_SDK) ## Generate the OLM bundle (CSV, CRD, metadata, scorecard config) into BUNDLE_DIR and validate it.
	$(OPERATOR_SDK) generate kustomize manifests -q --interactive=false
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/manifests | $(OPERATOR_SDK) generate bundle -q --overwrite --version $(VERSION) \
		--channels=$(CHANNELS) --default-channel=$(DEFAULT_CHANNEL) --output-dir $(BUNDLE_DIR)
	@# Pin what operator-sdk would otherwise stamp with the current time or leave at 0.0.0, so
	@# that regenerating the bundle gives the committed files back (make verify).
	sed -i -e 's|^    createdAt: .*|    createdAt: "$(BUNDLE_CREATED_AT)"|' \
		-e 's|^    containerImage: .*|    containerImage: $(IMG)|' $(BUNDLE_DIR)/manifests/myapp-operator.clusterserviceversion.yaml
	$(OPERATOR_SDK) bundle validate $(BUNDLE_DIR)

.PHONY: bundle-build
bundle-build: ## Build the bundle image (needs a container tool).
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image.
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

# Bundles of earlier releases, frozen when they were released, that the catalog still serves.
RELEASED_BUNDLES ?= releases/0.1.0 releases/0.2.0 releases/0.3.0 releases/0.3.1 releases/0.3.2 releases/0.4.0 releases/0.4.1

# The published repository of the bundle images; catalog/ names each bundle by digest in it.
BUNDLE_REPO ?= $(IMAGE_TAG_BASE)-bundle
CATALOG_CHECK ?= $(LOCALBIN)/catalogcheck

.PHONY: catalog
catalog: $(OPM) $(IMAGE_TOOL) catalogcheck ## Render the file-based catalog (catalog/) from the bundle images of bundle/ and the released bundles, by digest; validate it and its upgrade graph.
	mkdir -p catalog/myapp-operator
	@# Bundle images built reproducibly and pushed to a throw-away registry on a free loopback
	@# port, rendered from there by digest, then named by BUNDLE_REPO: no network needed.
	{ cat hack/catalog/package.yaml; hack/catalog/render-images.sh $(IMAGE_TOOL) $(OPM) $(BUNDLE_REPO) $(RELEASED_BUNDLES) $(BUNDLE_DIR); } \
		> catalog/myapp-operator/catalog.yaml.tmp && mv catalog/myapp-operator/catalog.yaml.tmp catalog/myapp-operator/catalog.yaml
	$(OPM) validate catalog
	$(CATALOG_CHECK) catalog

# OLM v0 unpacks a bundle that names an image with a Job, which cannot run on simulated nodes;
# make test-olm serves this copy, rendered from the bundle directories (no images, the
# manifests embedded), with the same package and channel.
.PHONY: catalog-from-dirs
catalog-from-dirs: $(OPM)
	rm -rf $(CATALOG_DIRS_OUT) && mkdir -p $(CATALOG_DIRS_OUT)/myapp-operator
	{ cat hack/catalog/package.yaml; for b in $(RELEASED_BUNDLES) $(BUNDLE_DIR); do $(OPM) render ./$$b -o yaml; done; } \
		> $(CATALOG_DIRS_OUT)/myapp-operator/catalog.yaml
	$(OPM) validate $(CATALOG_DIRS_OUT)

# The CRD upgrade-safety gate: OLM v1's rules (sigs.k8s.io/crdify, configured as OLM v1's
# preflight) between the CRD of each release a user may upgrade from (the catalog's skipRange
# lets 0.2.0 jump to the current version) and the current one, with the reviewed exceptions of
# that upgrade (hack/crdupgrade/from-<release>.yaml).
UPGRADE_FROM ?= 0.2.0 0.3.0 0.3.1 0.3.2 0.4.0 0.4.1
CRDUPGRADE ?= $(LOCALBIN)/crdupgrade
.PHONY: crd-upgrade-check
crd-upgrade-check: manifests | $(LOCALBIN) ## Fail on a CRD change from a release of UPGRADE_FROM that OLM v1 refuses to upgrade across, unless a reviewed exception allows it.
	cd hack/crdupgrade && go build -o $(CRDUPGRADE) .
	for from in $(UPGRADE_FROM); do \
		$(CRDUPGRADE) -old releases/$$from/manifests/example.com_myapps.yaml \
			-new config/crd/bases/example.com_myapps.yaml -exceptions hack/crdupgrade/from-$$from.yaml || exit 1; \
	done

.PHONY: catalogcheck
catalogcheck: | $(LOCALBIN)
	go build -o $(CATALOG_CHECK) ./hack/catalogcheck
	rm -f catalog.Dockerfile && $(OPM) generate dockerfile catalog -i quay.io/operator-framework/opm:$(OPM_VERSION) -b quay.io/operator-framework/opm:$(OPM_VERSION)

# The catalog image, built with no container tool: what catalog.Dockerfile describes, opm's
# serving image with catalog/ at /configs, from static builds of opm and grpc_health_probe (the
# registry pod's probes exec it). opm builds its serve cache in /tmp when it starts, as the
# image's non-root user: a cache built here would belong to root, and opm opens it read-write. Into bin/images/catalog.tar; PUSH=1 also pushes it.
.PHONY: catalog-build
catalog-build: $(IMAGE_TOOL) $(OPM) $(GRPC_HEALTH_PROBE) ## Build the catalog image CATALOG_IMG without Docker into bin/images/catalog.tar; PUSH=1 also pushes it.
	$(IMAGE_TOOL) build --tag $(CATALOG_IMG) --add $(OPM):/bin/opm --add $(GRPC_HEALTH_PROBE):/bin/grpc_health_probe \
		--add catalog:/configs --label operators.operatorframework.io.index.configs.v1=/configs --env PATH=/bin \
		--entrypoint /bin/opm,serve,/configs,--cache-dir=/tmp/cache,--cache-enforce-integrity=false --output $(IMAGES_DIR)/catalog.tar $(if $(filter 1,$(PUSH)),--push)

.PHONY: catalog-push
catalog-push: ## Push the catalog image CATALOG_IMG.
	$(MAKE) --no-print-directory catalog-build PUSH=1

.PHONY: catalog-docker-build
catalog-docker-build: ## Build the catalog image from catalog.Dockerfile with a container tool.
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

##@ Local cluster (real control plane; kwok-simulated nodes, or a real node with NODE=real; no Docker)

# NODE=kwok (default): simulated nodes, no container runs, up in seconds. NODE=real: a real
# kubelet, containerd, CNI and kube-proxy, and an image registry; needs root and the Debian
# packages of realnode-packages.
NODE ?= kwok
CLUSTER_STATE ?= $(CURDIR)/.localcluster
CLUSTER_KUBECONFIG := $(CLUSTER_STATE)/kubeconfig
LOCALCLUSTER := $(LOCALBIN)/localcluster --state $(CLUSTER_STATE) --bin $(K8S_BIN) --node-bin $(K8S_NODE_BIN) --kwok $(KWOK) \
	--node $(NODE) --image-tool $(IMAGE_TOOL) --pause $(PAUSE)
CONTROL_PLANE_DEPS := $(K8S_BIN)/etcd $(K8S_BIN)/kube-apiserver $(K8S_BIN)/kube-controller-manager \
	$(K8S_BIN)/kube-scheduler $(KUBECTL)
REALNODE_DEPS := realnode-packages $(K8S_NODE_BIN)/kubelet $(K8S_NODE_BIN)/kube-proxy $(IMAGE_TOOL) $(PAUSE)
CLUSTER_DEPS := $(CONTROL_PLANE_DEPS) $(if $(filter real,$(NODE)),$(REALNODE_DEPS),$(KWOK))

# The Debian packages a real node needs. Installed when this runs as root with apt-get (CI
# does), with retries and deadlines (a mirror that stalls must not hold a CI run); anyone
# else is told what to install.
# busybox-static is for make test-realnode only: the shell, cat, gzip and cp that the images
# of operator-sdk run bundle and OLM's bundle unpacking run; so is ipset, which the
# NetworkPolicy enforcer of its node (hack/tools/netpol) writes the policies' peers with.
REALNODE_PACKAGES := containerd runc containernetworking-plugins iptables busybox-static ipset
REALNODE_FILES := containerd runc iptables ip6tables /usr/lib/cni/bridge /usr/lib/cni/host-local \
	/usr/lib/cni/portmap /usr/lib/cni/loopback /bin/busybox ipset
.PHONY: realnode-packages
realnode-packages: ## Install the Debian packages a real node needs (as root with apt-get), or say which they are.
	@missing=; for f in $(REALNODE_FILES); do command -v $$f >/dev/null || missing=1; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing the Debian packages a real node needs: $(REALNODE_PACKAGES)"; \
		for try in 1 2 3; do \
			timeout 300 apt-get -o Acquire::Retries=3 -o Acquire::http::Timeout=30 update -q && \
			DEBIAN_FRONTEND=noninteractive timeout 600 apt-get -o Acquire::Retries=3 -o Acquire::http::Timeout=30 \
				install -y -q $(REALNODE_PACKAGES) && exit 0; \
			echo "apt-get failed (try $$try of 3)"; sleep $$((try * 10)); \
		done; exit 1; \
	else \
		echo "A real node (NODE=real, make test-realnode) needs root and the Debian packages:"; \
		echo "  $(REALNODE_PACKAGES)"; \
		echo "Install them with: sudo apt-get update && sudo apt-get install $(REALNODE_PACKAGES)"; \
		exit 1; \
	fi
KUBECTL_LOCAL := $(KUBECTL) --kubeconfig $(CLUSTER_KUBECONFIG)
# The operator as `make demo` runs it: probes off (no fixed ports), leader election on.
OPERATOR_ARGS ?= --health-probe-bind-address=0 --leader-elect --leader-election-namespace=default

.PHONY: localcluster
localcluster: | $(LOCALBIN)
	go build -o $(LOCALBIN)/localcluster ./hack/localcluster

.PHONY: cluster-up
cluster-up: $(CLUSTER_DEPS) localcluster ## Start the local cluster (or reuse it); prints its KUBECONFIG. NODE=real for a real node.
	$(LOCALCLUSTER) up

.PHONY: cluster-down
cluster-down: localcluster ## Stop the local cluster and the operator, and remove their state.
	$(LOCALCLUSTER) down

.PHONY: cluster-status
cluster-status: localcluster ## Report every local cluster component; fails if one has crashed.
	$(LOCALCLUSTER) status

# What the demo builds, and nothing else: the CRD is committed, so no code generator; kubectl's
# own kustomize applies it. First the cluster's binaries (-j: the control plane's single go
# build beside any real-node packages), then the demo's own programs, localcluster and then the
# manager, one go build after the other. The root module's dependencies are the control plane's
# versions (hack/check-deps-aligned.sh), so these builds find client-go and the rest already
# compiled, and the manager finds what localcluster added; built side by side, each build
# would compile them again.
.PHONY: demo-programs
demo-programs: localcluster
	@$(MAKE) --no-print-directory manager

.PHONY: manager
manager: | $(LOCALBIN) ## Build the manager binary alone (no generation, fmt or vet; make build does those).
	go build -o bin/manager ./cmd

.PHONY: demo
demo: ## The main job: local cluster, CRD, operator, a Ready sample MyApp.
	@$(MAKE) --no-print-directory -j4 $(CLUSTER_DEPS)
	@$(MAKE) --no-print-directory demo-programs
	$(LOCALCLUSTER) up
	$(KUBECTL_LOCAL) apply --server-side -k config/crd
	$(call wait-established,crd/myapps.example.com)
	$(LOCALCLUSTER) --operator bin/manager start-operator -- $(OPERATOR_ARGS)
	$(KUBECTL_LOCAL) apply --server-side -f config/samples/example_v1_myapp.yaml
	$(KUBECTL_LOCAL) wait --for=condition=Ready myapp/myapp-sample --timeout=120s
	$(KUBECTL_LOCAL) get myapps,deployments,services,hpa,poddisruptionbudgets,pods
	@echo
	@echo "The operator runs against the local cluster; it stays up until 'make cluster-down'."
	@echo "  export KUBECONFIG=$(CLUSTER_KUBECONFIG)"
	@echo "  $(KUBECTL) get myapps          # kubectl built for this cluster (any kubectl works)"
	@echo "  logs of every component:  $(CLUSTER_STATE)/logs/"

# on-own-cluster runs a target against a local cluster kept in the given state folder and
# tears that cluster down afterwards, whatever the target's outcome, which it returns:
# $(call on-own-cluster,state-dir,target). When the target fails, the logs of every component
# are first copied to $(TEST_LOGS)/<make target>-<UTC time>/ (hack/keep-logs.sh prints where,
# and the end of the operator's log). E2E_KEEP=1 keeps the cluster and its logs in place.
TEST_LOGS ?= $(CURDIR)/test-logs
# wait-established waits until the CRDs named are Established. kubectl wait fails at once on a
# CRD created a moment ago whose status has no conditions yet, so it is asked again.
define wait-established
(for i in $$(seq 30); do $(KUBECTL_LOCAL) wait --for=condition=Established $(1) --timeout=60s 2>/dev/null && exit 0; sleep 1; done; \
	$(KUBECTL_LOCAL) wait --for=condition=Established $(1) --timeout=60s)
endef

define on-own-cluster
rc=0; $(MAKE) --no-print-directory CLUSTER_STATE=$(1) $(2) || rc=$$?; \
if [ $$rc != 0 ]; then hack/keep-logs.sh $(1) $(TEST_LOGS)/$@-$$(date -u +%Y%m%dT%H%M%SZ) $(KUBECTL) || true; fi; \
if [ "$(E2E_KEEP)" != 1 ]; then $(LOCALBIN)/localcluster --state $(1) down; fi; exit $$rc
endef

# The end-to-end tests get a cluster of their own, so that they can run beside `make demo`,
# and tear it down afterwards (E2E_KEEP=1 keeps it, with its logs, for a look).
E2E_STATE ?= $(CURDIR)/.localcluster-e2e
E2E_FLAGS ?=
# The manager binary the end-to-end suite runs (make mutation-check passes broken ones).
E2E_MANAGER ?= $(CURDIR)/bin/manager
.PHONY: test-e2e
TEST_E2E_TOOLS = $(CLUSTER_DEPS) $(KUSTOMIZE) $(PROMETHEUS_BIN)/prometheus
test-e2e: $(call unprepared,manifests build localcluster) $(TEST_E2E_TOOLS) ## End-to-end tests on a fresh local cluster, the operator run as a separate process, a real Prometheus on its metrics.
	$(call on-own-cluster,$(E2E_STATE),e2e-run)

.PHONY: e2e-run
e2e-run:
	$(LOCALCLUSTER) up
	$(KUSTOMIZE) build config/crd | $(KUBECTL_LOCAL) apply --server-side -f -
	$(call wait-established,crd/myapps.example.com)
	E2E_KUBECONFIG=$(CLUSTER_KUBECONFIG) E2E_MANAGER=$(E2E_MANAGER) E2E_KUBECTL=$(KUBECTL) E2E_LOCALCLUSTER=$(LOCALBIN)/localcluster \
		E2E_PROMETHEUS=$(PROMETHEUS_BIN)/prometheus \
		go -C test test ./e2e/ -v -count=1 -timeout 16m -ginkgo.v $(E2E_FLAGS)
	$(LOCALCLUSTER) status

# make mutation-check (not in CI; see hack/mutation-check.sh): builds deliberately broken
# managers (the patches of hack/mutants/, applied to scratch copies through go build -overlay,
# never to the source) and runs the suites that must catch each one, the envtest suite and a
# focused end-to-end story, on a cluster of its own. It fails if a broken manager passes, or if
# the release binary holds anything of a mutant. MUTANTS="no-status hot-loop" runs some;
# SKIP_E2E=1 only envtest.
MUTATION_STATE ?= $(CURDIR)/.localcluster-mutation
.PHONY: mutation-check
mutation-check: manifests $(ENVTEST_DEPS) $(CLUSTER_DEPS) localcluster $(KUSTOMIZE) $(PROMETHEUS_BIN)/prometheus ## Show that the suites fail against deliberately broken managers (not in CI, about 28 min).
	hack/mutation-check.sh

.PHONY: mutation-e2e
mutation-e2e:
	$(call on-own-cluster,$(MUTATION_STATE),e2e-run)

# The OLM install test: OLM's operators and `opm serve` of the catalog (catalog-from-dirs) on a
# local cluster of its own.
OLM_STATE ?= $(CURDIR)/.localcluster-olm
OLM_FLAGS ?=
# The managers of the releases the upgrade tests start from, built from git history at the
# commit each was released from (their bundles are releases/<version>'s, byte for byte), once
# per commit: the upgrade tests run them under their own CSVs, so that MyApps are served
# before, through and after OLM's upgrade to this version.
RELEASE_COMMIT_0.2.0 := fc1f2f4b97763ff09805f4ec32b4e81ff0fac2f5
RELEASE_COMMIT_0.3.0 := 8f90101d93453dc219c2262ca6c136f2ef048c99
RELEASE_COMMIT_0.3.1 := 1aefbf2bf8cc520b00e888e547f1e4ae6d90ee5d
RELEASE_COMMIT_0.3.2 := 0e8f950c2e2900eef2fa26867ccab611a3662b5d
RELEASE_COMMIT_0.4.0 := 2dcffe4396b8b3c30ec0b9098a4f99bc7bb2a91c
RELEASE_COMMIT_0.4.1 := 2ebe9f420e27af826d1ecd43e794f52149b37047
# A release whose dependencies are not the control plane's is built with the go.mod and go.sum
# of hack/released/manager-<version>/ in place of its own: its source as released, on the
# control plane's libraries (hack/tools/align.sh), so that a cold run compiles them once
# (docs/performance/build-times.md).
released-modfile = $(wildcard hack/released/manager-$(1)/go.mod)
# In the tool cache, keyed by the commit, that go.mod and go.sum, and the build's flags and Go
# release.
released-key = $(shell { echo '$(GO_RELEASE) CGO_ENABLED=$(CGO_ENABLED) $(GOFLAGS)'; cat $(wildcard hack/released/manager-$(1)/go.*) /dev/null; } | sha256sum | cut -c1-12)
released-manager = $(TOOLS_CACHE)/manager-v$(1)-$(RELEASE_COMMIT_$(1))-$(call released-key,$(1))/manager
MANAGER_0_2_0 := $(call released-manager,0.2.0)
MANAGER_0_3_0 := $(call released-manager,0.3.0)
MANAGER_0_3_1 := $(call released-manager,0.3.1)
MANAGER_0_3_2 := $(call released-manager,0.3.2)
MANAGER_0_4_0 := $(call released-manager,0.4.0)
MANAGER_0_4_1 := $(call released-manager,0.4.1)
# Those whose images make test-catalog pushes (every build is static: the same binaries).
RELEASED_VERSIONS := 0.2.0 0.3.0
RELEASED_MANAGER_IMAGES := $(foreach v,$(RELEASED_VERSIONS),$(call released-manager,$(v)))
# One release's build after the other's: at once, both would compile the dependencies they share.
# The newest first: the Helm stage, which a run starts first, upgrades from it; the OLM stages,
# which need the others, start later.
$(MANAGER_0_4_0): | $(MANAGER_0_4_1)
$(MANAGER_0_3_2): | $(MANAGER_0_4_0)
$(MANAGER_0_3_1): | $(MANAGER_0_3_2)
$(MANAGER_0_3_0): | $(MANAGER_0_3_1)
$(MANAGER_0_2_0): | $(MANAGER_0_3_0)
$(TOOLS_CACHE)/manager-v%/manager:
	@echo "Building the manager of release $(word 1,$(subst -, ,$*)) from commit $(word 2,$(subst -, ,$*)) (once, into $(TOOLS_CACHE))"
	mkdir -p $(TOOLS_CACHE)
	tmp=$$(mktemp -d $(@D).building-XXXXXX) && src=$$(mktemp -d) && trap 'rm -rf "$$tmp" "$$src"' EXIT && \
		git archive $(word 2,$(subst -, ,$*)) | tar -x -C "$$src" && \
		$(foreach v,$(word 1,$(subst -, ,$*)),$(if $(call released-modfile,$(v:v%=%)),cp hack/released/manager-$(v:v%=%)/go.mod hack/released/manager-$(v:v%=%)/go.sum "$$src"/ &&)) \
		(cd "$$src" && $(GO_TOOL_BUILD) -o $$tmp/manager ./cmd/main.go) && \
		chmod 755 "$$tmp" && { mv -T "$$tmp" $(@D) 2>/dev/null || test -d $(@D); }
.PHONY: test-olm
TEST_OLM_TOOLS = $(CLUSTER_DEPS) $(OLM_BIN)/olm $(OLM_BIN)/catalog $(OPM) $(MANAGER_0_2_0) $(MANAGER_0_3_0) $(MANAGER_0_3_1) $(MANAGER_0_3_2) $(MANAGER_0_4_0) $(MANAGER_0_4_1)
test-olm: $(call unprepared,build localcluster) $(TEST_OLM_TOOLS) ## Install the operator from catalog/ through OLM on a local cluster in each install mode, and upgrade it from 0.2.0, 0.3.0, 0.3.1, 0.3.2, 0.4.0 and 0.4.1.
	$(call on-own-cluster,$(OLM_STATE),olm-run)

.PHONY: olm-run
olm-run:
	$(LOCALCLUSTER) up
	$(KUBECTL_LOCAL) apply --server-side -f "$$(cd hack/tools/olm && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)/deploy/chart/crds"
	$(call wait-established,crd --all)
	$(MAKE) --no-print-directory catalog-from-dirs CATALOG_DIRS_OUT=$(CLUSTER_STATE)/catalog-from-dirs
	E2E_KUBECONFIG=$(CLUSTER_KUBECONFIG) E2E_OLM_BIN=$(OLM_BIN) E2E_OPM=$(OPM) E2E_MANAGER=$(CURDIR)/bin/manager \
		E2E_CATALOG_DIR=$(CLUSTER_STATE)/catalog-from-dirs E2E_MANAGER_0_2_0=$(MANAGER_0_2_0) E2E_MANAGER_0_3_0=$(MANAGER_0_3_0) \
		E2E_MANAGER_0_3_1=$(MANAGER_0_3_1) E2E_MANAGER_0_3_2=$(MANAGER_0_3_2) E2E_MANAGER_0_4_0=$(MANAGER_0_4_0) E2E_MANAGER_0_4_1=$(MANAGER_0_4_1) \
		go -C test test ./olm/ -v -count=1 -timeout 12m -ginkgo.v $(OLM_FLAGS)
	$(LOCALCLUSTER) status

# The OLM v1 test: operator-controller and catalogd v1.2.0 (built from their module) run out of
# cluster against a local cluster of its own; the image tool's registry serves the catalog
# image and the bundle images; a ClusterCatalog and a ClusterExtension (config/olmv1) install
# 0.2.0 and upgrade it through 0.3.0, 0.3.1, 0.3.2, 0.4.0 and 0.4.1 to this version, each release's manager serving.
OLMV1_STATE ?= $(CURDIR)/.localcluster-olmv1
OLMV1_VERSION := $(call tool-version,olmv1,github.com/operator-framework/operator-controller)
OLMV1_BIN ?= $(call tool-dir,olmv1,$(OLMV1_VERSION),$(call tool-key,olmv1,$(OPENPGP_TAGS)))
.PHONY: test-olmv1
TEST_OLMV1_TOOLS = $(CLUSTER_DEPS) $(OLMV1_BIN)/operator-controller $(IMAGE_TOOL) $(MANAGER_0_2_0) $(MANAGER_0_3_0) $(MANAGER_0_3_1) $(MANAGER_0_3_2) $(MANAGER_0_4_0) $(MANAGER_0_4_1)
test-olmv1: $(call unprepared,build localcluster) $(TEST_OLMV1_TOOLS) ## Install the operator from catalog/ with OLM v1 (ClusterCatalog, ClusterExtension), then upgrade it past the CRD preflight.
	$(call on-own-cluster,$(OLMV1_STATE),olmv1-run)

.PHONY: olmv1-run
olmv1-run:
	$(LOCALCLUSTER) up
	E2E_KUBECONFIG=$(CLUSTER_KUBECONFIG) E2E_OLMV1_BIN=$(OLMV1_BIN) E2E_IMAGE_TOOL=$(IMAGE_TOOL) \
		E2E_MANAGER=$(CURDIR)/bin/manager E2E_MANAGER_0_2_0=$(MANAGER_0_2_0) E2E_MANAGER_0_3_0=$(MANAGER_0_3_0) \
		E2E_MANAGER_0_3_1=$(MANAGER_0_3_1) E2E_MANAGER_0_3_2=$(MANAGER_0_3_2) E2E_MANAGER_0_4_0=$(MANAGER_0_4_0) E2E_MANAGER_0_4_1=$(MANAGER_0_4_1) \
		E2E_OLMV1_CRDS="$$(cd hack/tools/olmv1 && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-controller)/config/base" \
		go -C test test ./olmv1/ -v -count=1 -timeout 8m -ginkgo.v
	$(LOCALCLUSTER) status

# The real-node test: the manager image built without Docker and pushed to the cluster's
# registry, deployed with kustomize onto the real node of a local cluster of its own, and a
# MyApp of the test app (test/app, one image per version) that really runs.
REALNODE_STATE ?= $(CURDIR)/.localcluster-realnode
# e.g. REALNODE_FLAGS='-ginkgo.label-filter=pod-problems' runs one story (the images are built all the same).
# The test app (test/app), one binary per version, each in an image of its own that every
# real-node test pushes to its cluster's registry: $(call push-test-apps,registry).
TEST_APP_VERSIONS := v1 v2
.PHONY: test-app-bins
test-app-bins:
	mkdir -p $(IMAGES_DIR)
	for v in $(TEST_APP_VERSIONS); do go -C test build -ldflags "-X main.version=$$v" -o $(abspath $(IMAGES_DIR))/test-app-$$v ./app || exit 1; done
define push-test-apps
for v in $(TEST_APP_VERSIONS); do $(IMAGE_TOOL) build --tag $(1)/myapp-test-app:$$v --add $(IMAGES_DIR)/test-app-$$v:/app --entrypoint /app --push || exit 1; done
endef
REALNODE_FLAGS ?=
.PHONY: test-realnode
TEST_REALNODE_TOOLS = $(CONTROL_PLANE_DEPS) $(REALNODE_DEPS) $(KUSTOMIZE) $(OPERATOR_SDK) $(OLM_BIN)/olm $(OLM_BIN)/catalog $(OLM_BIN)/cpb \
	$(OPM) $(TRAEFIK) $(UNTAR) $(PROMETHEUS_BIN)/prometheus $(NETPOL) $(CERT_MANAGER)
test-realnode: $(call unprepared,manifests localcluster manager-image-bin test-app-bins) $(TEST_REALNODE_TOOLS) ## The operator as a pod on a real node: restricted namespace, real pods and probes, Service routing, image rollout, canary releases through Traefik judged by Prometheus, operator-sdk scorecard and run bundle.
	$(call on-own-cluster,$(REALNODE_STATE),realnode-run NODE=real)

.PHONY: realnode-run
realnode-run:
	$(LOCALCLUSTER) --network-policy $(NETPOL) up
	reg=$$($(LOCALCLUSTER) registry); \
	$(MAKE) --no-print-directory image-build IMG=$$reg/myapp-operator:v$(VERSION) PUSH=1 PREPARED=1; \
	$(call push-test-apps,$$reg); \
	$(IMAGE_TOOL) build --tag $$reg/scorecard-test:$(OPERATOR_SDK_VERSION) --add $(SCORECARD_TEST):/usr/local/bin/scorecard-test \
		--entrypoint /usr/local/bin/scorecard-test --push; \
	$(IMAGE_TOOL) build --tag $$reg/scorecard-untar:local --add $(UNTAR):/untar --entrypoint /untar --push; \
	$(MAKE) --no-print-directory run-bundle-images REGISTRY=$$reg; \
	$(IMAGE_TOOL) build --tag $$reg/traefik:$(TRAEFIK_VERSION) --add $(TRAEFIK):/traefik --entrypoint /traefik --push; \
	go mod download sigs.k8s.io/gateway-api; \
	tls=$$($(LOCALCLUSTER) registry-tls); \
	E2E_KUBECONFIG=$(CLUSTER_KUBECONFIG) E2E_KUSTOMIZE=$(KUSTOMIZE) E2E_KUBECTL=$(KUBECTL) \
		E2E_MANAGER_IMAGE=$$reg/myapp-operator:v$(VERSION) E2E_APP_IMAGE=$$reg/myapp-test-app \
		E2E_TRAEFIK_IMAGE=$$reg/traefik:$(TRAEFIK_VERSION) E2E_PROMETHEUS=$(PROMETHEUS_BIN)/prometheus \
		E2E_CERT_MANAGER=$(CERT_MANAGER) \
		E2E_GATEWAY_API_CRDS="$$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd/standard" \
		E2E_OPERATOR_SDK=$(OPERATOR_SDK) E2E_SCORECARD_IMAGE=$$reg/scorecard-test:$(OPERATOR_SDK_VERSION) \
		E2E_UNTAR_IMAGE=$$reg/scorecard-untar:local \
		E2E_OLM_BIN=$(OLM_BIN) E2E_OLM_CRDS="$$(cd hack/tools/olm && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)/deploy/chart/crds" \
		E2E_REGISTRY_CA=$(CLUSTER_STATE)/pki/ca.crt E2E_BUNDLE_IMAGE=$$tls/myapp-operator-bundle:v$(VERSION) \
		E2E_INDEX_IMAGE=$$tls/opm:local E2E_DECOMPRESSION_IMAGE=$$tls/busybox:local E2E_OLM_UTIL_IMAGE=$$tls/olm-util:local \
		go -C test test ./realnode/ -v -count=1 -timeout 16m -ginkgo.v $(REALNODE_FLAGS)
	$(LOCALCLUSTER) status

# The catalog test: the operator installed from the catalog image, as a user installs it from
# OperatorHub, on the real node of a local cluster of its own, with OLM v0 and then OLM v1 (both
# out of cluster; their registry pod, unpack Jobs and the manager's pods run on the node). Every
# image is pushed to the cluster's registry under example.com/, which the node's containerd and
# OLM v1's catalogd take as the mirror of example.com: catalog/, the bundles and config/olm* are
# used unchanged. Two MyApps of the test app serve a steady stream of requests through each
# upgrade, from 0.2.0 to this version.
CATALOG_TEST_STATE ?= $(CURDIR)/.localcluster-catalog
CATALOG_TEST_FLAGS ?=
.PHONY: test-catalog
TEST_CATALOG_TOOLS = $(CONTROL_PLANE_DEPS) $(REALNODE_DEPS) $(OLM_BIN)/olm $(OLM_BIN)/catalog $(OLMV1_BIN)/operator-controller \
	$(OPM) $(GRPC_HEALTH_PROBE) $(RELEASED_MANAGER_IMAGES) $(OPM)
test-catalog: $(call unprepared,manifests localcluster manager-image-bin test-app-bins) $(TEST_CATALOG_TOOLS) ## Install from the catalog image with OLM v0 and v1 on a real node, upgrade 0.2.0 to this version under traffic, uninstall and reinstall keeping the apps; install the pinned bundle from a digest-only mirror.
	$(call on-own-cluster,$(CATALOG_TEST_STATE),catalog-run NODE=real)

.PHONY: catalog-run
catalog-run:
	$(LOCALCLUSTER) up
	reg=$$($(LOCALCLUSTER) registry); pub=$$reg/example.com; \
	$(MAKE) --no-print-directory image-build IMG=$$pub/myapp-operator:v$(VERSION) PUSH=1 PREPARED=1; \
	$(MAKE) --no-print-directory bundle-pinned PINNED_IMAGE_REPO=example.com/disconnected/myapp-operator \
		PINNED_BUNDLE=$(LOCALBIN)/bundle-disconnected || exit 1; \
	mirror=$$(hack/catalog/disconnected.sh $(IMAGE_TOOL) $(OPM) $(OPM) $(GRPC_HEALTH_PROBE) $$reg \
		$(LOCALBIN)/bundle-disconnected $(PINNED_MANAGER) $(PINNED_ARCH)) || exit 1; \
	$(MAKE) --no-print-directory released-manager-images REGISTRY=$$pub; \
	hack/catalog/push-bundles.sh $(IMAGE_TOOL) $$reg $(BUNDLE_REPO) $(RELEASED_BUNDLES) $(BUNDLE_DIR) >/dev/null; \
	$(MAKE) --no-print-directory catalog-build CATALOG_IMG=$$pub/myapp-operator-catalog:latest PUSH=1; \
	$(MAKE) --no-print-directory olm-images REGISTRY=$$reg; \
	$(call push-test-apps,$$reg); \
	E2E_KUBECONFIG=$(CLUSTER_KUBECONFIG) E2E_REGISTRY=$$reg E2E_APP_IMAGE=$$reg/myapp-test-app E2E_MIRROR_CATALOG=$$mirror \
		E2E_OLM_BIN=$(OLM_BIN) E2E_OLM_CRDS="$$(cd hack/tools/olm && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)/deploy/chart/crds" \
		E2E_OPM_IMAGE=$$reg/opm:local E2E_OLM_UTIL_IMAGE=$$reg/olm-util:local \
		E2E_OLMV1_BIN=$(OLMV1_BIN) E2E_OLMV1_CRDS="$$(cd hack/tools/olmv1 && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-controller)/config/base" \
		go -C test test ./catalog/ -v -count=1 -timeout 16m -ginkgo.v $(CATALOG_TEST_FLAGS)
	$(LOCALCLUSTER) status

# The images operator-sdk run bundle and OLM need, built here because the upstream ones cannot
# be pulled offline, pushed to REGISTRY: the bundle (bundle/, its CSV naming the manager image
# in REGISTRY), an index image (opm and a shell, an empty file-based catalog), the registry
# pod's decompression image and OLM's util image (busybox's shell, cat, gzip and cp; OLM's
# cpb). opm and cpb are linked statically from their cgo builds, as scorecard-test is.
RUN_BUNDLE_DIR = $(IMAGES_DIR)/run-bundle
.PHONY: run-bundle-images
run-bundle-images: olm-images
	rm -rf $(RUN_BUNDLE_DIR) && mkdir -p $(RUN_BUNDLE_DIR)
	cp -r $(BUNDLE_DIR) $(RUN_BUNDLE_DIR)/bundle
	sed -i 's|$(IMG)|$(REGISTRY)/myapp-operator:v$(VERSION)|g' $(RUN_BUNDLE_DIR)/bundle/manifests/*.clusterserviceversion.yaml
	$(IMAGE_TOOL) build --tag $(REGISTRY)/myapp-operator-bundle:v$(VERSION) --push \
		$(foreach d,manifests metadata tests,--add $(RUN_BUNDLE_DIR)/bundle/$(d):/$(d)) \
		$$(awk '/^annotations:/ {a=1; next} a && /^  [^ #]/ {sub(/^  /, ""); k=$$0; sub(/:.*/, "", k); v=$$0; sub(/^[^:]*: */, "", v); print "--label " k "=" v}' \
			$(BUNDLE_DIR)/metadata/annotations.yaml)

# The images OLM v0 runs on a node and that cannot be pulled offline, pushed to REGISTRY: an
# index image (opm and a shell, an empty file-based catalog; also OLM's opm image for unpacking
# bundles), the registry pod's decompression image and OLM's util image (busybox's shell, cat,
# gzip and cp; OLM's cpb).
OLM_IMAGES_DIR = $(IMAGES_DIR)/olm
.PHONY: olm-images
olm-images: $(IMAGE_TOOL) $(OPM) $(OLM_BIN)/cpb
	rm -rf $(OLM_IMAGES_DIR) && mkdir -p $(OLM_IMAGES_DIR)/configs && touch $(OLM_IMAGES_DIR)/configs/.indexignore
	$(IMAGE_TOOL) build --tag $(REGISTRY)/busybox:local --push --add /bin/busybox:/bin/busybox \
		$(foreach t,sh cat gzip cp,--link /bin/$(t)=busybox)
	$(IMAGE_TOOL) build --tag $(REGISTRY)/opm:local --push --entrypoint /bin/opm --add $(OPM):/bin/opm \
		--add /bin/busybox:/bin/busybox --link /bin/sh=busybox --add $(OLM_IMAGES_DIR)/configs:/configs \
		--label operators.operatorframework.io.index.configs.v1=/configs
	$(IMAGE_TOOL) build --tag $(REGISTRY)/olm-util:local --push --add $(OLM_BIN)/cpb:/bin/cpb \
		--add /bin/busybox:/bin/busybox --link /bin/cp=busybox

$(GRPC_HEALTH_PROBE):
	$(call go-build-tool,grpc-health-probe,$(@D),github.com/grpc-ecosystem/grpc-health-probe)

# The manager images of the releases the upgrade tests start from, pushed to REGISTRY as the
# bundles of releases/ name them (example.com/myapp-operator:v<version>, under REGISTRY):
# static builds of the commit each was released from, in the image image-build makes.
.PHONY: released-manager-images
released-manager-images: $(IMAGE_TOOL) $(RELEASED_MANAGER_IMAGES)
	$(foreach v,$(RELEASED_VERSIONS),$(IMAGE_TOOL) build --tag $(REGISTRY)/myapp-operator:v$(v) \
		--add $(call released-manager,$(v)):/manager --entrypoint /manager --user 65532:65532 --push;)

##@ Tools (built from source into the tool cache)

.PHONY: tools
tools: $(filter-out realnode-packages,$(VERIFY_TOOLS) $(TEST_TOOLS) $(TEST_E2E_TOOLS) $(TEST_OLM_TOOLS) $(TEST_OLMV1_TOOLS) $(TEST_REALNODE_TOOLS) $(TEST_CATALOG_TOOLS)) ## Build every tool the tests need (make -j3 tools builds three at a time).

$(CONTROLLER_GEN):
	$(call go-build-tool,controller-gen,$(@D),sigs.k8s.io/controller-tools/cmd/controller-gen)
$(KUSTOMIZE):
	$(call go-build-tool,kustomize,$(@D),sigs.k8s.io/kustomize/kustomize/v5)
$(GOLANGCI_LINT):
	$(call go-build-tool,golangci-lint,$(@D),github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
$(KUBE_SCORE):
	$(call go-build-tool,kube-score,$(@D),github.com/zegl/kube-score/cmd/kube-score)
$(KUBECONFORM):
	$(call go-build-tool,kubeconform,$(@D),github.com/yannh/kubeconform/cmd/kubeconform)
$(GINKGO):
	$(call go-build-tool,ginkgo,$(@D),github.com/onsi/ginkgo/v2/ginkgo)
$(CRD_REF_DOCS):
	$(call go-build-tool,crd-ref-docs,$(@D),github.com/elastic/crd-ref-docs)
$(TRAEFIK):
	@echo "Building traefik from the Go module proxy, trimmed (once per version, into $(TOOLS_CACHE))"
	mkdir -p $(TOOLS_CACHE)
	tmp=$$(mktemp -d $(@D).building-XXXXXX) && trap 'rm -rf "$$tmp"' EXIT && cd hack/tools/traefik && \
		trim/trim.sh $$tmp/src && $(GO_TOOL_BUILD) -modfile $$tmp/src/go.mod $(TRAEFIK_FLAGS) -o $$tmp/bin/ github.com/traefik/traefik/v3/cmd/traefik && \
		chmod 755 "$$tmp/bin" && { mv -T "$$tmp/bin" $(@D) 2>/dev/null || test -d $(@D); }
$(PROMTOOL) $(PROMETHEUS_BIN)/prometheus &:
	$(call go-build-tool,prometheus,$(PROMETHEUS_BIN),github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool,$(PROMETHEUS_FLAGS))
# OLM v1: operator-controller and catalogd.
$(OLMV1_BIN)/operator-controller $(OLMV1_BIN)/catalogd &:
	$(call go-build-tool,olmv1,$(OLMV1_BIN),github.com/operator-framework/operator-controller/cmd/operator-controller \
		github.com/operator-framework/operator-controller/cmd/catalogd,$(OPENPGP_TAGS))
# OLM's two operators, run out of cluster by the OLM end-to-end test, its cpb, which the util
# image of the real-node stories holds, opm, operator-sdk and scorecard-test: one go build, as
# they share most of their packages (operator-registry, OLM's API, controller-runtime and the
# Kubernetes libraries).
$(OLM_BIN)/olm $(OLM_BIN)/catalog $(OLM_BIN)/cpb $(OPM) $(OPERATOR_SDK) $(SCORECARD_TEST) &:
	$(call go-build-tool,olm,$(OLM_BIN),$(addprefix github.com/operator-framework/operator-lifecycle-manager/,cmd/olm cmd/catalog util/cpb) \
		github.com/operator-framework/operator-registry/cmd/opm github.com/operator-framework/operator-sdk/cmd/operator-sdk \
		github.com/operator-framework/operator-sdk/images/scorecard-test,$(OLM_BUILD_FLAGS))
# One go build for the control plane: Kubernetes, etcd and kwok share most of their packages
# (hack/tools/kubernetes keeps them on the same versions), and it links them side by side.
# kubelet and kube-proxy run only the real node (NODE=real), so they are a second go build,
# which reuses every package the first compiled.
K8S_BINARIES := kube-apiserver kube-controller-manager kube-scheduler kubectl
K8S_NODE_BINARIES := kubelet kube-proxy
$(addprefix $(K8S_BIN)/,$(K8S_BINARIES) etcd kwok) &:
	$(call go-build-tool,kubernetes,$(K8S_BIN),$(addprefix k8s.io/kubernetes/cmd/,$(K8S_BINARIES)) ./etcd sigs.k8s.io/kwok/cmd/kwok,$(K8S_BUILD_FLAGS))
$(addprefix $(K8S_NODE_BIN)/,$(K8S_NODE_BINARIES)) &: | $(K8S_BIN)/kube-apiserver
	$(call go-build-tool,kubernetes,$(K8S_NODE_BIN),$(addprefix k8s.io/kubernetes/cmd/,$(K8S_NODE_BINARIES)),$(K8S_BUILD_FLAGS))
# The image tool (hack/tools/image: images from static binaries, and the registry), the
# sandbox image's program and the scorecard's untar; all ours, so they live in bin/ and
# rebuild when their source changes.
$(NETPOL): hack/tools/netpol/go.mod hack/tools/netpol/go.sum hack/tools/netpol/main.go | $(LOCALBIN)
	cd hack/tools/netpol && $(GO_TOOL_BUILD) -o $@ .
$(CERT_MANAGER): hack/tools/certmanager/go.mod hack/tools/certmanager/go.sum hack/tools/certmanager/main.go | $(LOCALBIN)
	cd hack/tools/certmanager && $(GO_TOOL_BUILD) -o $@ .
$(IMAGE_TOOL): hack/tools/image/go.mod $(wildcard hack/tools/image/*.go) | $(LOCALBIN)
	cd hack/tools/image && $(GO_TOOL_BUILD) -o $@ .
$(PAUSE): hack/tools/image/pause/main.go | $(LOCALBIN)
	cd hack/tools/image && $(GO_TOOL_BUILD) -o $@ ./pause
$(UNTAR): hack/tools/image/untar/main.go | $(LOCALBIN)
	cd hack/tools/image && $(GO_TOOL_BUILD) -o $@ ./untar

##@ Benchmarks

BENCH_SCALE_FLAGS ?= -n 100,1000 -churn 100,1000
.PHONY: bench-scale
bench-scale: manifests $(ENVTEST_DEPS) $(CONTROL_PLANE_DEPS) $(KWOK) localcluster ## Scale benchmark: N MyApps on envtest against the raw write speed, and a churn run on the local cluster; writes docs/performance/benchmarks.md and its chart, benchmarks.png.
	go -C test build -o $(abspath $(LOCALBIN))/bench-scale ./scale
	$(LOCALBIN)/bench-scale $(BENCH_SCALE_FLAGS) -localcluster $(LOCALBIN)/localcluster -k8s-bin $(K8S_BIN) -kwok $(KWOK)

# The tools of test-all's prepare step and of each stage, for its tool make (hack/test-all.sh).
.PHONY: test-all-tools-prepare $(addprefix test-all-tools-,$(TEST_ALL_STAGES))
test-all-tools-prepare: $(CONTROLLER_GEN)
test-all-tools-verify-copy: $(VERIFY_TOOLS)
test-all-tools-test: $(TEST_TOOLS)
test-all-tools-test-e2e: $(TEST_E2E_TOOLS)
test-all-tools-test-olm: $(TEST_OLM_TOOLS)
test-all-tools-test-olmv1: $(TEST_OLMV1_TOOLS)
test-all-tools-test-realnode: $(TEST_REALNODE_TOOLS)
test-all-tools-test-catalog: $(TEST_CATALOG_TOOLS)

##@ Helm chart

# The chart (charts/myapp-operator) is generated from kustomize build config/default and
# config/monitoring by hack/helmchart, which puts the release's names and the values into
# those objects: it says nothing config/ does not. make verify regenerates it and fails when
# the committed chart differs (docs/operations/helm.md).
HELM_VERSION := $(call tool-version,helm,helm.sh/helm/v3)
HELM_CHART := charts/myapp-operator
HELM_CHART_WORK := $(LOCALBIN)/helmchart
# Helm's version, and the Kubernetes version helm template and helm lint assume (Helm's own
# build stamps both; unstamped, they assume 1.20, which the chart's kubeVersion refuses): the
# minor version of the client-go its module builds with.
HELM_K8S_MINOR = $(word 2,$(subst ., ,$(call tool-version,helm,k8s.io/client-go)))
HELM_LDFLAGS = -s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	$(foreach p,chartutil lint/rules,-X helm.sh/helm/v3/pkg/$(p).k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/$(p).k8sVersionMinor=$(HELM_K8S_MINOR))
HELM_KEY := $(call tool-key,helm,$(HELM_LDFLAGS))
HELM ?= $(call tool-dir,helm,$(HELM_VERSION),$(HELM_KEY))/helm

.PHONY: helm-chart
helm-chart: manifests $(KUSTOMIZE) ## Generate the Helm chart (charts/myapp-operator) from kustomize build config/default and config/monitoring.
	mkdir -p $(HELM_CHART_WORK)
	$(KUSTOMIZE) build config/default > $(HELM_CHART_WORK)/default.yaml
	$(KUSTOMIZE) build config/monitoring > $(HELM_CHART_WORK)/monitoring.yaml
	cd hack/helmchart && go run . -default $(HELM_CHART_WORK)/default.yaml -monitoring $(HELM_CHART_WORK)/monitoring.yaml \
		-kustomization $(CURDIR)/config/default/kustomization.yaml -version $(VERSION) -kube-version $(MIN_KUBE_VERSION) \
		-out $(CURDIR)/$(HELM_CHART)

# helm lint with the defaults and with every option on; the generator's tests render the chart
# with helm template and check it makes config/default's objects (config/monitoring's with the
# monitoring values), modulo Helm's labels, and what each value changes.
HELM_ALL_ON := --set monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true \
	--set 'watchNamespaces={team-a,team-b}' --set kubeAPI.qps=50,kubeAPI.burst=100
.PHONY: helm-chart-check
helm-chart-check: helm-chart $(HELM) $(KUSTOMIZE) ## Regenerate the Helm chart, helm lint it, and check what helm template renders against config/default and config/monitoring.
	$(HELM) lint --strict $(HELM_CHART)
	$(HELM) lint --strict $(HELM_CHART) $(HELM_ALL_ON)
	cd hack/helmchart && HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) go test ./... -count=1

$(HELM):
	$(call go-build-tool,helm,$(@D),helm.sh/helm/v3/cmd/helm,-ldflags "$(HELM_LDFLAGS)")

LINT_MODULES += hack/helmchart
lint-manifests: $(HELM)
test-all-tools-verify-copy: $(HELM)
tools: $(HELM)

# make test-helm: the chart as a platform team without OLM uses it, on the real node of a local
# cluster of its own: helm install with the manager image pushed to the cluster's registry, a
# MyApp of the test app serving, helm upgrade to a changed value, helm uninstall (the CRD and
# the MyApp stay) and helm install again, with the app answering every request and none of its
# pods replaced (test/helm).
HELM_TEST_STATE ?= $(CURDIR)/.localcluster-helm
HELM_TEST_FLAGS ?=
# The chart of the previous release as its release commit holds it (charts/ in git history),
# with that release's manager image: make test-helm upgrades from it to this chart, the CRD
# included.
HELM_PREVIOUS := 0.4.1
HELM_PREVIOUS_CHART := $(LOCALBIN)/chart-$(HELM_PREVIOUS)
HELM_PREVIOUS_MANAGER := $(call released-manager,$(HELM_PREVIOUS))
.PHONY: helm-chart-previous
helm-chart-previous: | $(LOCALBIN) ## Extract the chart of release HELM_PREVIOUS from its release commit into bin/chart-<version>.
	rm -rf $(HELM_PREVIOUS_CHART) && mkdir -p $(HELM_PREVIOUS_CHART) && \
	git archive $(RELEASE_COMMIT_$(HELM_PREVIOUS)) $(HELM_CHART) | tar -x --strip-components=2 -C $(HELM_PREVIOUS_CHART)

TEST_HELM_TOOLS = $(CONTROL_PLANE_DEPS) $(REALNODE_DEPS) $(HELM) $(HELM_PREVIOUS_MANAGER)
.PHONY: test-helm
test-helm: $(call unprepared,manifests localcluster manager-image-bin test-app-bins) helm-chart-previous $(TEST_HELM_TOOLS) ## Install the previous release's chart on a real node, upgrade to this chart and to a changed value, uninstall and install again; a MyApp serves every request throughout and keeps its pods.
	$(call on-own-cluster,$(HELM_TEST_STATE),helm-run NODE=real)

.PHONY: helm-run
helm-run:
	$(LOCALCLUSTER) up
	reg=$$($(LOCALCLUSTER) registry); \
	$(MAKE) --no-print-directory image-build IMG=$$reg/myapp-operator:v$(VERSION) PUSH=1 PREPARED=1; \
	$(IMAGE_TOOL) build --tag $$reg/myapp-operator:v$(HELM_PREVIOUS) --add $(HELM_PREVIOUS_MANAGER):/manager --entrypoint /manager \
		--user 65532:65532 --push || exit 1; \
	$(call push-test-apps,$$reg); \
	E2E_KUBECONFIG=$(CLUSTER_KUBECONFIG) E2E_HELM=$(HELM) E2E_CHART=$(CURDIR)/$(HELM_CHART) \
		E2E_PREVIOUS_CHART=$(HELM_PREVIOUS_CHART) E2E_PREVIOUS_TAG=v$(HELM_PREVIOUS) \
		E2E_MANAGER_IMAGE=$$reg/myapp-operator E2E_MANAGER_TAG=v$(VERSION) E2E_APP_IMAGE=$$reg/myapp-test-app:v1 \
		go -C test test ./helm/ -v -count=1 -timeout 10m -ginkgo.v $(HELM_TEST_FLAGS)
	$(LOCALCLUSTER) status
test-all-tools-test-helm: $(TEST_HELM_TOOLS)

# test-all-rescue-<stage>: test-all stopped the stage at its deadline, which its recipe could
# not survive to keep its cluster's logs and stop its cluster: this does both, and stops what
# else of the stage runs (its run marker, which test-all gives each stage: envtest's servers,
# the processes a suite started).
STAGE_STATE_test-e2e = $(E2E_STATE)
STAGE_STATE_test-olm = $(OLM_STATE)
STAGE_STATE_test-olmv1 = $(OLMV1_STATE)
STAGE_STATE_test-realnode = $(REALNODE_STATE)
STAGE_STATE_test-catalog = $(CATALOG_TEST_STATE)
STAGE_STATE_test-helm = $(HELM_TEST_STATE)
test-all-rescue-%:
	@state='$(STAGE_STATE_$*)'; if [ -n "$$state" ] && [ -d "$$state" ]; then \
		hack/keep-logs.sh $$state $(TEST_LOGS)/$*-$$(date -u +%Y%m%dT%H%M%SZ) $(KUBECTL) || true; \
		$(LOCALBIN)/localcluster --state $$state down || true; fi; \
	$(LOCALBIN)/localcluster sweep --run "$(MYAPP_OPERATOR_RUN)/$*" || true

# make compile-volume counts what a cold run compiles: every build of hack/compilevolume/builds.txt,
# its packages keyed as the go command keys its compiles (module versions, build flags), so
# that a package two builds import at one version and with one set of flags counts once
# (docs/performance/build-times.md has the figures).
.PHONY: compile-volume
compile-volume: | $(LOCALBIN) ## Count the Go source a cold test-all compiles, and what it compiles more than once (hack/compilevolume).
	rm -rf $(LOCALBIN)/compile-volume && mkdir -p $(LOCALBIN)/compile-volume
	cd hack/tools/traefik && trim/trim.sh $(LOCALBIN)/compile-volume/traefik
	$(foreach v,0.2.0 0.3.0 0.3.1 0.3.2 0.4.0 0.4.1,mkdir -p $(LOCALBIN)/compile-volume/manager-$(v) && \
		git archive $(RELEASE_COMMIT_$(v)) | tar -x -C $(LOCALBIN)/compile-volume/manager-$(v) && \
		$(if $(call released-modfile,$(v)),cp hack/released/manager-$(v)/go.mod hack/released/manager-$(v)/go.sum $(LOCALBIN)/compile-volume/manager-$(v)/ &&)) true
	go run ./hack/compilevolume -builds hack/compilevolume/builds.txt

.PHONY: sweep
sweep: localcluster ## Stop what earlier runs left running (any clone) and, as root, remove what their real nodes left on this machine. SWEEP_FLAGS=--dry-run lists it.
	$(LOCALBIN)/localcluster sweep --keep-run "$(MYAPP_OPERATOR_RUN)" $(SWEEP_FLAGS)

.PHONY: print-tools
print-tools: ## Print where each tool is (the tool cache) and whether it is built.
	@$(foreach t,CONTROLLER_GEN KUSTOMIZE OPERATOR_SDK SCORECARD_TEST OPM OLM_BIN OLMV1_BIN GINKGO GOLANGCI_LINT CRD_REF_DOCS KUBE_SCORE KUBECONFORM \
		TRAEFIK PROMETHEUS_BIN HELM GRPC_HEALTH_PROBE K8S_BIN K8S_NODE_BIN KUBECTL KWOK,\
		printf '%-18s %s%s\n' $(t) $($(t)) "$$(test -e $($(t)) || echo '  (not built)')";)
