package controller

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Mutants: deliberately broken managers, for `make mutation-check` only (hack/mutation-check.sh).
// Each test suite is run once against each of them and must fail, which shows that the
// suite can notice the bug. A mutant is chosen at link time:
//
//	go build  -ldflags "-X github.com/example/myapp-operator/internal/controller.mutant=no-status" ...
//	go test   -ldflags "-X github.com/example/myapp-operator/internal/controller.mutant=no-status" ./internal/controller/
//
// In every other build mutant is empty and each hook below is one comparison of a string
// with a constant; the call sites are one line each:
//
//	myapp_controller.go  patchStatus:     if mutantSkipsStatus() { return nil }
//	myapp_controller.go  outcome.result:  return mutantResult(...)
//	children.go          apply, create:   client.FieldOwner(mutantFieldOwner(FieldOwner))
//	children.go          applyChild:      if !inCache && mutantSkipsCreate(app) { return existing, nil }
var mutant string

// The mutants make mutation-check builds.
const (
	// mutantNoStatus never writes the MyApp's status.
	mutantNoStatus = "no-status"
	// mutantForeignOwner applies the children with another field manager.
	mutantForeignOwner = "foreign-owner"
	// mutantHotLoop requeues every reconcile at once, whatever its outcome.
	mutantHotLoop = "hot-loop"
	// mutantNoRecreate creates each child only on the MyApp's first reconcile (before its
	// status is first written): a child deleted later is never recreated.
	mutantNoRecreate = "no-recreate"
)

// mutantSkipsStatus tells patchStatus to write nothing.
func mutantSkipsStatus() bool { return mutant == mutantNoStatus }

// mutantFieldOwner is the field manager apply uses: owner, except in the foreign-owner mutant.
func mutantFieldOwner(owner string) string {
	if mutant == mutantForeignOwner {
		return "someone-else"
	}
	return owner
}

// mutantResult is the result of a reconcile: res, except in the hot-loop mutant.
func mutantResult(res ctrl.Result, err error) (ctrl.Result, error) {
	if mutant == mutantHotLoop {
		return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, err
	}
	return res, err
}

// mutantSkipsCreate tells applyChild not to create a missing child of a MyApp that already
// has a status, in the no-recreate mutant.
func mutantSkipsCreate(app *examplev1.MyApp) bool {
	return mutant == mutantNoRecreate && len(app.Status.Conditions) > 0
}
