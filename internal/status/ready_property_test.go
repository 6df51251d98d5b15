package status

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// deploymentState is one state the deployment controller can report for a Deployment: counts
// with the controller's invariants (available <= ready <= replicas, updated <= replicas), the
// Available condition as the controller computes it from maxUnavailable, and the conditions
// it may add.
type deploymentState struct {
	generation, observed                     int64
	want, maxUnavailable                     int32
	replicas, updated, ready, available      int32
	progressDeadlineExceeded, replicaFailure bool
}

func (s deploymentState) deployment() *appsv1.Deployment {
	d := deployment(s.generation, s.observed, s.want, s.replicas, s.updated, s.ready, s.available,
		s.available >= s.want-s.maxUnavailable)
	if s.progressDeadlineExceeded {
		d = withCondition(d, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})
	}
	if s.replicaFailure {
		d = withCondition(d, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "forbidden"})
	}
	return d
}

// kubectlRolloutDone is what `kubectl rollout status deployment` calls success, written
// from its rules: the latest generation observed, no deadline exceeded, spec.replicas pods
// updated, no old pods, every updated pod available.
func kubectlRolloutDone(d *appsv1.Deployment) bool {
	if d.Generation > d.Status.ObservedGeneration {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false
		}
	}
	s := d.Status
	return (d.Spec.Replicas == nil || s.UpdatedReplicas >= *d.Spec.Replicas) &&
		s.Replicas <= s.UpdatedReplicas && s.AvailableReplicas >= s.UpdatedReplicas
}

// checkReadyMeansServing checks, for one state, what Ready promises:
//   - Ready only when `kubectl rollout status` succeeds, or, when the Deployment cannot
//     create every pod it wants (ReplicaFailure), when every pod it runs is of the current
//     template and available; in both cases at least one pod is available when one is wanted,
//     and never for a Deployment that does not take the current spec;
//   - Ready whenever `kubectl rollout status` succeeds on a Deployment that takes the spec.
func checkReadyMeansServing(t *testing.T, s deploymentState, stale bool) {
	t.Helper()
	d := s.deployment()
	c := conditionsOf(Observed{Deployment: d, DeploymentStale: stale}, t0)
	ready := isTrue(c[examplev1.ConditionReady])
	done := kubectlRolloutDone(d)
	if !ready {
		if done && !stale {
			t.Fatalf("%+v: kubectl rollout status succeeds, Ready is False (%s: %s)", s, c[examplev1.ConditionReady].Reason, c[examplev1.ConditionReady].Message)
		}
		return
	}
	servesAll := s.observed >= s.generation && s.replicas <= s.updated && s.available >= s.updated
	switch {
	case stale:
		t.Fatalf("%+v: Ready for a Deployment that does not take the current spec", s)
	case !done && (!s.replicaFailure || !servesAll):
		t.Fatalf("%+v: Ready while kubectl rollout status waits", s)
	case s.want > 0 && s.available < 1:
		t.Fatalf("%+v: Ready with no pod available", s)
	case isTrue(c[examplev1.ConditionStalled]) || isTrue(c[examplev1.ConditionReconciling]):
		t.Fatalf("%+v: Ready yet Stalled or Reconciling", s)
	}
}

// TestReadyMeansServingEveryDeploymentState walks every state the deployment controller can
// report for up to 4 wanted pods (any maxUnavailable, surge up to 2), with and without the
// latest generation observed, a passed deadline or refused pods, and checks Ready's promise
// on each.
func TestReadyMeansServingEveryDeploymentState(t *testing.T) {
	states := 0
	for want := int32(0); want <= 4; want++ {
		for maxUnavailable := int32(0); maxUnavailable <= want+1; maxUnavailable++ {
			for replicas := int32(0); replicas <= want+2; replicas++ {
				for updated := int32(0); updated <= replicas; updated++ {
					for ready := int32(0); ready <= replicas; ready++ {
						for available := int32(0); available <= ready; available++ {
							for flags := 0; flags < 16; flags++ {
								s := deploymentState{generation: 2, observed: 2, want: want, maxUnavailable: maxUnavailable,
									replicas: replicas, updated: updated, ready: ready, available: available,
									progressDeadlineExceeded: flags&1 != 0, replicaFailure: flags&2 != 0}
								if flags&4 != 0 {
									s.observed = 1
								}
								checkReadyMeansServing(t, s, flags&8 != 0)
								states++
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d Deployment states checked", states)
}

// FuzzReadyMeansServing checks Ready's promise on Deployment states of any size.
func FuzzReadyMeansServing(f *testing.F) {
	f.Add(uint16(1), uint16(1), uint16(1), uint16(1), uint16(0), uint16(0), uint8(0))
	f.Add(uint16(10), uint16(3), uint16(12), uint16(10), uint16(9), uint16(9), uint8(2))
	f.Fuzz(func(t *testing.T, want, maxUnavailable, replicas, updated, ready, available uint16, flags uint8) {
		s := deploymentState{generation: 2, observed: 2, want: int32(want), maxUnavailable: int32(maxUnavailable),
			replicas: int32(replicas), updated: int32(min(updated, replicas)), ready: int32(min(ready, replicas)),
			progressDeadlineExceeded: flags&1 != 0, replicaFailure: flags&2 != 0}
		s.available = min(int32(available), s.ready)
		if flags&4 != 0 {
			s.observed = 1
		}
		checkReadyMeansServing(t, s, flags&8 != 0)
	})
}

// TestReadyCheckCanFail: the property's oracle is not vacuous; a Ready that followed the
// Deployment's Available condition (the rule before 0.3.2) breaks it on the no-surge case.
func TestReadyCheckCanFail(t *testing.T) {
	s := deploymentState{generation: 2, observed: 2, want: 1, maxUnavailable: 1, replicas: 1, updated: 1}
	d := s.deployment()
	if deploymentCondition(d, appsv1.DeploymentAvailable) != corev1.ConditionTrue {
		t.Fatal("the deployment controller reports Available for 0 of 1 pods with maxUnavailable 1")
	}
	if kubectlRolloutDone(d) {
		t.Fatal("kubectl rollout status succeeds with no pod available")
	}
	c := conditionsOf(Observed{Deployment: d}, t0)
	if meta.IsStatusConditionTrue([]metav1.Condition{c[examplev1.ConditionReady]}, examplev1.ConditionReady) {
		t.Fatalf("Ready with no pod available: %+v", c[examplev1.ConditionReady])
	}
}
