package rollout

// Confirm is the verdict to act on, when Judge's verdict on facts from the caches would act
// (move readyTemplate, or roll back). Caches of the Deployment and of its ReplicaSets lag each
// by its own, so the Deployment's current template is confirmed by ReplicaSets read from the
// API server, which are at least as new as any Deployment read before them (CurrentTemplate),
// and the rollback by the Deployment as the API server has it now:
//
//   - judged is the Deployment the verdict was made on, with Current from those ReplicaSets:
//     readyTemplate moves only to its template, once confirmed completed, and only while the
//     Deployment still carries it (latest's Current). A completion a look saw stays known when
//     its pods are gone by the time of the confirmation (an HPA scaled them away), and an old
//     template does not become readyTemplate after the Deployment moved on. The caller stores
//     judged's intent for it (judged.Applied).
//   - latest is the Deployment read from the API server before those ReplicaSets, with Current
//     from them; nil when it is gone. A rollback is made only when it calls for one, and never
//     of a template judged showed completed: a completion a look saw is not undone by the pods
//     it has lost since.
func Confirm(f Facts, judged, latest *Deployment) Verdict {
	f.Deployment = judged
	seen := Judge(f)
	f.Deployment = latest
	v := Judge(f)
	v.ReadyTemplate = f.ReadyTemplate
	if seen.Completed && latest != nil && latest.Current == seen.Judged {
		v.ReadyTemplate, v.Failure, v.RollBack = seen.ReadyTemplate, nil, nil
	}
	return v
}
