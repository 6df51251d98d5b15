package rollout

import (
	"cmp"
	"slices"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// families maps each reason that keeps a new template from rolling out to its family, the
// reason a Failure and a RollbackStatus carry. ErrImagePull alternates with ImagePullBackOff
// while the kubelet retries a pull: one problem, one family, one first sighting.
var families = map[string]string{
	"CreateContainerConfigError": examplev1.ReasonCreateContainerConfigError,
	ReasonVolumeSourceMissing:    ReasonVolumeSourceMissing,
	"InvalidImageName":           examplev1.ReasonInvalidImageName,
	"ErrImagePull":               examplev1.ReasonImagePullBackOff,
	"ImagePullBackOff":           examplev1.ReasonImagePullBackOff,
	"CrashLoopBackOff":           ReasonCrashLoopBackOff,
}

// familyOrder ranks the families from the most specific to the least: a configuration the
// user names in the spec, then the image, then a crash, which may come from anything.
var familyOrder = []string{
	examplev1.ReasonCreateContainerConfigError,
	ReasonVolumeSourceMissing,
	examplev1.ReasonInvalidImageName,
	examplev1.ReasonImagePullBackOff,
	ReasonCrashLoopBackOff,
}

// Family is the family of a container's problem reason (the kubelet's waiting reason, or
// ReasonVolumeSourceMissing), or "" when the reason does not keep a template from rolling out
// (ContainerCreating, PodInitializing, or no reason). A manager keeps one first sighting per
// container and family.
func Family(reason string) string {
	return families[reason]
}

// before orders problems the way a Failure picks one: the most specific family first, then
// by pod and container, so that the chosen problem does not move between looks.
func before(a, b *Problem) bool {
	rank := func(p *Problem) int { return slices.Index(familyOrder, Family(p.Reason)) }
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Container, b.Container)) < 0
}
