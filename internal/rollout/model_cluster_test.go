package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// The cluster's actors: the deployment controller, the replicaset controller, the garbage
// collector, the kubelet and the HPA. Each returns what it did for the trace ("" for nothing).

// The Deployment's strategy and limits in the model.
const (
	maxSurge             = 1 // maxUnavailable is 0
	progressDeadline     = 120 * time.Second
	revisionHistoryLimit = 2
)

// syncDeployment is one sync of the deployment controller (syncDeployment, rolloutRolling),
// writing what the real one writes, in its order. Faithful where the decision reads:
//
//   - a new template's ReplicaSet is created with revision max+1, and the Deployment's
//     revision annotation and Progressing=NewReplicaSetCreated are written before any
//     observedGeneration (the sync's later status write conflicts and the next sync goes on);
//   - a return to an existing ReplicaSet bumps that ReplicaSet's revision, and getNewReplicaSet
//     returns at once: the same sync scales and writes observedGeneration while the
//     Deployment's revision annotation still names the template it left; the next sync moves it;
//   - a sync scales the new ReplicaSet up or the old ones down (maxSurge 1, maxUnavailable 0),
//     then syncRolloutStatus keeps NewReplicaSetAvailable while status.replicas equals
//     status.updatedReplicas, and otherwise sets it, ReplicaSetUpdated on progress, or
//     ProgressDeadlineExceeded, which sticks until progress;
//   - a paused Deployment gets Progressing=Unknown/DeploymentPaused and a status with its
//     observedGeneration, without a new ReplicaSet;
//   - a scaling event (an active ReplicaSet's desired-replicas annotation differs from
//     spec.replicas) whose template has no ReplicaSet yet only scales the active ReplicaSets and
//     writes a status with observedGeneration, no ReplicaSet made and the revision unchanged;
//     the next sync rolls out (isScalingEvent, then sync).
//
// Not modelled: the exact proportions of scaling several active ReplicaSets (the newest takes a
// scale-up, the oldest give up a scale-down first), a scaling event of a template whose
// ReplicaSet exists (it takes the rolling path), minReadySeconds, and hash collisions
// (ReplicaSet names carry the Deployment's uid).
func (w *world) syncDeployment() string {
	d := w.dep
	if d == nil {
		return ""
	}
	if s := w.checkPausedConditions(); s != "" {
		return s
	}
	h := d.tmpl.hash()
	n := w.setOf(d.uid, h)
	var maxOld int64
	for _, rs := range w.sets {
		if rs.owner == d.uid && rs.hash != h {
			maxOld = max(maxOld, rs.revision)
		}
	}
	if n < 0 && d.paused {
		return w.syncStatus(-1)
	}
	if n < 0 && w.scalingEvent() {
		return w.scale()
	}
	if n < 0 {
		w.seq++
		rs := replicaSet{name: fmt.Sprintf("rs%d-%s", d.uid, h), hash: h, owner: d.uid, tmpl: d.tmpl, revision: maxOld + 1, seq: w.seq}
		rs.replicas, rs.desired = w.scaleUpTo(rs), d.replicas
		w.sets = append(w.sets, rs)
		w.saveSets()
		d.revision = rs.revision
		d.status.progressing = condition{status: "True", reason: reasonNewRSCreated, rs: h, lastUpdate: w.now, lastTransition: w.now}
		w.saveDeployment()
		return fmt.Sprintf("created ReplicaSet %s (revision %d, %d replicas)", h, rs.revision, rs.replicas)
	}
	what := ""
	switch rs := &w.sets[n]; {
	case rs.revision < maxOld+1:
		rs.revision = maxOld + 1
		w.saveSets()
		what = fmt.Sprintf("bumped ReplicaSet %s to revision %d; ", h, rs.revision)
	case d.revision != rs.revision || d.status.progressing.reason == "":
		d.revision = rs.revision
		if d.status.progressing.reason == "" {
			d.status.progressing = condition{status: "True", reason: reasonFoundNewRS, rs: h, lastUpdate: w.now, lastTransition: w.now}
		}
		w.saveDeployment()
		return fmt.Sprintf("moved the revision to %d (%s)", d.revision, h)
	}
	if d.paused {
		return what + w.syncStatus(n)
	}
	name := w.sets[n].name
	what += w.rollingUpdate(n) // may prune ReplicaSets: n moves
	return what + w.syncRolloutStatus(slices.IndexFunc(w.sets, func(rs replicaSet) bool { return rs.name == name }))
}

// scalingEvent is isScalingEvent: an active ReplicaSet of the Deployment was last scaled for
// other replicas than the Deployment's.
func (w *world) scalingEvent() bool {
	for _, rs := range w.sets {
		if rs.owner == w.dep.uid && rs.replicas > 0 && rs.desired != w.dep.replicas {
			return true
		}
	}
	return false
}

// scale is sync on a scaling event: the active ReplicaSets take the Deployment's replicas (the
// newest takes a scale-up, the oldest give up a scale-down first), then the status is written
// with observedGeneration and no new ReplicaSet; the template waits for the next sync.
func (w *world) scale() string {
	d := w.dep
	var active []int
	var total int32
	for i, rs := range w.sets {
		if rs.owner == d.uid && rs.replicas > 0 {
			active = append(active, i)
			total += rs.replicas
		}
	}
	slices.SortFunc(active, func(a, b int) int { return cmp.Compare(w.sets[a].seq, w.sets[b].seq) })
	if diff := d.replicas - total; diff > 0 {
		w.sets[active[len(active)-1]].replicas += diff
	} else {
		for _, i := range active {
			down := min(w.sets[i].replicas, -diff)
			w.sets[i].replicas, diff = w.sets[i].replicas-down, diff+down
		}
	}
	for _, i := range active {
		w.sets[i].desired = d.replicas
	}
	w.saveSets()
	w.truth.stats.scalingEvents++
	w.dep.status = w.calculateStatus(-1)
	w.saveDeployment()
	return fmt.Sprintf("scaling event: the active ReplicaSets scaled to %d, observedGeneration %d, no ReplicaSet of the new template yet", d.replicas, d.generation)
}

// checkPausedConditions sets Progressing to DeploymentPaused or DeploymentResumed, unless the
// deadline passed.
func (w *world) checkPausedConditions() string {
	d := w.dep
	c := d.status.progressing
	if c.reason == reasonDeadlineExceeded {
		return ""
	}
	switch {
	case d.paused && c.reason != reasonPaused:
		d.status.progressing = condition{status: "Unknown", reason: reasonPaused, lastUpdate: w.now, lastTransition: w.now}
	case !d.paused && c.reason == reasonPaused:
		d.status.progressing = condition{status: "Unknown", reason: reasonResumed, lastUpdate: w.now, lastTransition: w.now}
	default:
		return ""
	}
	w.saveDeployment()
	return "Progressing: " + d.status.progressing.reason
}

// scaleUpTo is how far the rolling update scales the new ReplicaSet up (NewRSNewReplicas).
func (w *world) scaleUpTo(newRS replicaSet) int32 {
	d := w.dep
	if newRS.replicas >= d.replicas {
		return d.replicas
	}
	var total int32
	for _, rs := range w.sets {
		if rs.owner == d.uid && rs.name != newRS.name {
			total += rs.replicas
		}
	}
	total += newRS.replicas
	if total >= d.replicas+maxSurge {
		return newRS.replicas
	}
	return newRS.replicas + min(d.replicas+maxSurge-total, d.replicas-newRS.replicas)
}

// rollingUpdate scales the new ReplicaSet up, or else the old ones down, or else cleans up.
func (w *world) rollingUpdate(n int) string {
	d := w.dep
	newRS := &w.sets[n]
	if up := w.scaleUpTo(*newRS); up != newRS.replicas {
		from := newRS.replicas
		newRS.replicas, newRS.desired = up, d.replicas
		w.saveSets()
		return fmt.Sprintf("scaled %s %d→%d; ", newRS.hash, from, up)
	}
	var old []int
	var all int32
	for i, rs := range w.sets {
		if rs.owner == d.uid {
			all += rs.replicas
			if i != n && rs.replicas > 0 {
				old = append(old, i)
			}
		}
	}
	if len(old) > 0 {
		slices.SortFunc(old, func(a, b int) int { return cmp.Compare(w.sets[a].seq, w.sets[b].seq) })
		// cleanupUnhealthyReplicas, then scaleDownOldReplicaSetsForRollingUpdate, with
		// minAvailable = replicas (maxUnavailable 0).
		var scaled, available int32
		budget := all - d.replicas - (newRS.replicas - newRS.statusAvailable)
		for _, i := range old {
			rs := &w.sets[i]
			if unhealthy := rs.replicas - rs.statusAvailable; budget > 0 && unhealthy > 0 {
				down := min(budget, unhealthy)
				rs.replicas, rs.desired, budget, scaled = rs.replicas-down, d.replicas, budget-down, scaled+down
			}
		}
		for _, rs := range w.sets {
			if rs.owner == d.uid {
				available += rs.statusAvailable
			}
		}
		for _, i := range old {
			rs := &w.sets[i]
			if excess := available - d.replicas; excess > 0 && rs.replicas > 0 {
				down := min(rs.replicas, excess)
				rs.replicas, rs.desired, available, scaled = rs.replicas-down, d.replicas, available-down, scaled+down
			}
		}
		if scaled > 0 {
			w.saveSets()
			return fmt.Sprintf("scaled old ReplicaSets down by %d; ", scaled)
		}
	}
	if s := d.status; s.observedGeneration >= d.generation && s.updated == d.replicas && s.replicas == d.replicas && s.available == d.replicas {
		return w.cleanup(n)
	}
	return ""
}

// cleanup deletes old ReplicaSets without pods beyond the revision history limit.
func (w *world) cleanup(n int) string {
	d := w.dep
	newName := w.sets[n].name
	var idle []replicaSet
	for _, rs := range w.sets {
		if rs.owner == d.uid && rs.name != newName && rs.replicas == 0 && rs.statusReplicas == 0 {
			idle = append(idle, rs)
		}
	}
	if len(idle) <= revisionHistoryLimit {
		return ""
	}
	slices.SortFunc(idle, func(a, b replicaSet) int { return cmp.Compare(a.revision, b.revision) })
	gone := idle[0].name
	w.sets = slices.DeleteFunc(w.sets, func(rs replicaSet) bool { return rs.name == gone })
	w.saveSets()
	return "pruned ReplicaSet " + idle[0].hash + "; "
}

// calculateStatus counts from the ReplicaSets' statuses, for the new ReplicaSet n (-1: none).
func (w *world) calculateStatus(n int) deploymentStatus {
	d := w.dep
	s := deploymentStatus{observedGeneration: d.generation, progressing: d.status.progressing}
	for _, rs := range w.sets {
		if rs.owner == d.uid {
			s.replicas += rs.statusReplicas
			s.available += rs.statusAvailable
		}
	}
	if n >= 0 {
		s.updated = w.sets[n].statusReplicas
	}
	return s
}

// syncStatus is syncDeploymentStatus: counts and observedGeneration, conditions untouched.
func (w *world) syncStatus(n int) string {
	if s := w.calculateStatus(n); s != w.dep.status {
		w.dep.status = s
		w.saveDeployment()
		return "synced the paused Deployment's status"
	}
	return ""
}

// syncRolloutStatus is the deployment controller's, with its sticky NewReplicaSetAvailable.
func (w *world) syncRolloutStatus(n int) string {
	d := w.dep
	s := w.calculateStatus(n)
	cur := d.status.progressing
	h := w.sets[n].hash
	if s.replicas != s.updated || cur.reason != reasonNewRSAvailable {
		old := d.status
		switch {
		case s.updated == d.replicas && s.replicas == d.replicas && s.available == d.replicas:
			if cur.status != "True" || cur.reason != reasonNewRSAvailable {
				s.progressing = condition{status: "True", reason: reasonNewRSAvailable, rs: h, lastUpdate: w.now, lastTransition: w.now}
			}
		case s.updated > old.updated || s.replicas-s.updated < old.replicas-old.updated || s.available > old.available:
			since := w.now
			if cur.status == "True" {
				since = cur.lastTransition
			}
			s.progressing = condition{status: "True", reason: reasonRSUpdated, rs: h, lastUpdate: w.now, lastTransition: since}
		case cur.reason == reasonDeadlineExceeded ||
			cur.reason != "" && cur.reason != reasonNewRSAvailable && cur.lastUpdate.Add(progressDeadline).Before(w.now):
			if cur.status != "False" || cur.reason != reasonDeadlineExceeded {
				s.progressing = condition{status: "False", reason: reasonDeadlineExceeded, rs: h, lastUpdate: w.now, lastTransition: w.now}
			}
		}
	}
	if s == d.status {
		return ""
	}
	d.status = s
	w.saveDeployment()
	return fmt.Sprintf("status %d/%d/%d of %d, %s", s.replicas, s.updated, s.available, d.replicas, s.progressing.reason)
}

// syncReplicaSets is the replicaset controller: it creates and deletes pods to match each
// ReplicaSet's replicas, then writes their statuses.
func (w *world) syncReplicaSets() string {
	podsChanged, setsChanged := 0, false
	for i := range w.sets {
		rs := &w.sets[i]
		var mine []int
		for j, p := range w.pods {
			if p.rs == rs.name {
				mine = append(mine, j)
			}
		}
		for range int(rs.replicas) - len(mine) {
			w.seq++
			p := pod{name: fmt.Sprintf("%s-%d", rs.name, w.seq), rs: rs.name, hash: rs.hash, intent: rs.tmpl.intent,
				created: w.now, phase: unscheduled, next: w.now.Add(w.between(0, 3*time.Second))}
			if f := w.fates[p.intent]; (f == good || f == slowStart) && w.chance(0.2) {
				p.flaky = true
			}
			if w.chance(0.2) {
				p.next = w.now.Add(w.between(20*time.Second, 2*time.Minute)) // no node yet
			}
			w.pods = append(w.pods, p)
			podsChanged++
		}
		if excess := len(mine) - int(rs.replicas); excess > 0 {
			// getPodsToDelete: unscheduled, then not running, then not ready, the newest first.
			slices.SortFunc(mine, func(a, b int) int {
				return cmp.Or(cmp.Compare(deletionRank(w.pods[a]), deletionRank(w.pods[b])), w.pods[b].created.Compare(w.pods[a].created))
			})
			gone := map[string]bool{}
			for _, j := range mine[:excess] {
				gone[w.pods[j].name] = true
			}
			w.pods = slices.DeleteFunc(w.pods, func(p pod) bool { return gone[p.name] })
			podsChanged += excess
		}
	}
	if podsChanged > 0 {
		w.savePods()
	}
	for i := range w.sets {
		rs := &w.sets[i]
		var n, avail int32
		for _, p := range w.pods {
			if p.rs == rs.name {
				n++
				if p.phase == available {
					avail++
				}
			}
		}
		if rs.statusReplicas != n || rs.statusAvailable != avail {
			rs.statusReplicas, rs.statusAvailable, setsChanged = n, avail, true
		}
	}
	if setsChanged {
		w.saveSets()
	}
	if podsChanged == 0 && !setsChanged {
		return ""
	}
	return fmt.Sprintf("%d pods created or deleted, statuses written", podsChanged)
}

func deletionRank(p pod) int {
	switch p.phase {
	case unscheduled:
		return 0
	case creating, waiting:
		return 1
	case running:
		return 2
	}
	return 3
}

// collectGarbage deletes the ReplicaSets of a Deployment that no longer exists, and the pods
// of ReplicaSets that no longer exist (background propagation: after the owner is gone).
func (w *world) collectGarbage() string {
	uid := -1
	if w.dep != nil {
		uid = w.dep.uid
	}
	nSets := len(w.sets)
	w.sets = slices.DeleteFunc(w.sets, func(rs replicaSet) bool { return rs.owner != uid })
	if len(w.sets) != nSets {
		w.saveSets()
		return fmt.Sprintf("deleted %d orphaned ReplicaSets", nSets-len(w.sets))
	}
	nPods := len(w.pods)
	w.pods = slices.DeleteFunc(w.pods, func(p pod) bool {
		return !slices.ContainsFunc(w.sets, func(rs replicaSet) bool { return rs.name == p.rs })
	})
	if len(w.pods) != nPods {
		w.savePods()
		return fmt.Sprintf("deleted %d orphaned pods", nPods-len(w.pods))
	}
	return ""
}

// autoscale is the HPA (or KEDA, which scales to zero): while the MyApp asks for autoscaling,
// it writes the Deployment's replicas.
func (w *world) autoscale() string {
	d := w.dep
	if !w.app.spec.autoscale || d == nil {
		return ""
	}
	r := int32(w.rng.IntN(5))
	if r == d.replicas {
		return ""
	}
	d.replicas = r
	d.generation++
	w.saveDeployment()
	return fmt.Sprintf("HPA scaled the Deployment to %d", r)
}

// kubelet moves every pod whose time has come, by its template's fate: a good template's pods
// start (some after waiting for a node, some after a pull error that lasts a while) and become
// available, and may crash later for a while; a bad one's show their problem, for good; a crash
// loop alternates between running and CrashLoopBackOff.
func (w *world) kubelet() string {
	moved := 0
	for i := range w.pods {
		p := &w.pods[i]
		if p.next.IsZero() || p.next.After(w.now) {
			continue
		}
		w.movePod(p)
		moved++
	}
	if moved == 0 {
		return ""
	}
	w.savePods()
	return fmt.Sprintf("moved %d pods", moved)
}

func (w *world) movePod(p *pod) {
	f := w.fates[p.intent]
	never := time.Time{}
	in := func(lo, hi time.Duration) time.Time { return w.now.Add(w.between(lo, hi)) }
	start := func() time.Time {
		if f == slowStart {
			return in(90*time.Second, 5*time.Minute)
		}
		return in(3*time.Second, 20*time.Second)
	}
	switch p.phase {
	case unscheduled:
		p.phase, p.next = creating, in(time.Second, 5*time.Second)
	case creating:
		switch f {
		case good, slowStart:
			if p.flaky {
				w.wait(p, "ErrImagePull", in(20*time.Second, 60*time.Second))
			} else {
				p.phase, p.next = running, start()
			}
		case pullError:
			w.wait(p, "ErrImagePull", in(5*time.Second, 15*time.Second))
		case invalidImage:
			w.wait(p, "InvalidImageName", never)
		case volumeMissing:
			w.wait(p, ReasonVolumeSourceMissing, never)
		case configError:
			w.wait(p, "CreateContainerConfigError", never)
		case crashLoop:
			p.phase, p.next = running, in(time.Second, 5*time.Second)
		}
	case running:
		if f == crashLoop {
			w.wait(p, "CrashLoopBackOff", in(10*time.Second, 40*time.Second))
			break
		}
		p.phase, p.family, p.reason = available, "", ""
		p.next = never
		if w.chance(0.3) {
			p.next = in(20*time.Second, 5*time.Minute) // it will crash for a while
		}
	case waiting:
		switch {
		case p.reason == "ErrImagePull" && f == pullError:
			p.reason, p.next = "ImagePullBackOff", never
		case p.reason == "ErrImagePull":
			p.phase, p.reason, p.next = running, "", start()
		case p.reason == "CrashLoopBackOff" && f == crashLoop:
			p.phase, p.reason, p.next = running, "", in(time.Second, 5*time.Second)
		case p.reason == "CrashLoopBackOff":
			p.phase, p.reason, p.next = running, "", in(2*time.Second, 10*time.Second)
		}
	case available:
		w.wait(p, "CrashLoopBackOff", in(10*time.Second, time.Minute))
	}
}

// wait makes the pod's container wait with reason; a new family starts a new problem.
func (w *world) wait(p *pod, reason string, next time.Time) {
	p.phase, p.reason, p.next = waiting, reason, next
	if f := Family(reason); f != p.family {
		p.family, p.since = f, w.now
		w.truth.problemBegan(p)
	}
}
