package rollout

import (
	"fmt"
	"slices"
)

// user is what people do to the MyApp and its Deployment: push a new image (good or bad) or
// an earlier one, scale (to zero too), turn autoscaling or autoRollback on and off, request a
// reconcile, `kubectl rollout restart`, `kubectl rollout pause` and `resume`, delete the
// Deployment, and break or fix a ConfigMap the template is built from.
func (w *world) user() string {
	a := &w.app
	// Deleting the Deployment is how people "unstick" an app that was rolled back.
	if w.dep != nil && w.app.status.rolledBack != nil && w.chance(0.3) {
		return w.deleteDeployment()
	}
	// What stops the operator from judging (a pause, an unreadable input, opting out) does
	// not last: half of the user's next actions undo one.
	if w.chance(0.5) {
		switch {
		case w.dep != nil && w.dep.paused:
			w.dep.paused = false
			w.dep.generation++
			w.saveDeployment()
			return "kubectl rollout resume"
		case w.inputUnreadable:
			w.inputUnreadable = false
			w.bump() // a write of the ConfigMap
			w.op.queued = true
			return "fixed the template's ConfigMap"
		case !a.spec.autoRollback:
			a.spec.autoRollback = true
			a.generation++
			w.epoch++
			w.saveApp()
			return "set autoRollback true"
		}
	}
	switch w.rng.IntN(17) {
	case 0, 1, 2, 3, 4, 5:
		v := w.newVersion(w.drawFate())
		return w.push(v, "pushed "+string(v)+" ("+w.fates[v].String()+")")
	case 6:
		v := version(fmt.Sprintf("v%d", 1+w.rng.IntN(w.versions)))
		return w.push(v, "went back to "+string(v)+" ("+w.fates[v].String()+")")
	case 7:
		a.spec.replicas = int32(w.rng.IntN(6))
		a.generation++
		w.saveApp()
		return fmt.Sprintf("set replicas to %d", a.spec.replicas)
	case 8:
		a.spec.autoscale = !a.spec.autoscale
		a.generation++
		w.saveApp()
		return fmt.Sprintf("set autoscaling %v", a.spec.autoscale)
	case 9:
		a.spec.autoRollback = !a.spec.autoRollback
		a.generation++
		w.epoch++
		w.saveApp()
		return fmt.Sprintf("set autoRollback %v", a.spec.autoRollback)
	case 10:
		w.seq++
		a.request = fmt.Sprintf("req%d", w.seq)
		w.epoch++
		w.saveApp()
		return "requested a reconcile (" + a.request + ")"
	case 11:
		if w.dep == nil {
			return ""
		}
		w.dep.tmpl.restartedAt++
		w.dep.generation++
		w.saveDeployment()
		return "kubectl rollout restart"
	case 12, 13:
		if w.dep == nil {
			return ""
		}
		return w.deleteDeployment()
	case 14:
		if w.dep == nil {
			return ""
		}
		w.dep.paused = !w.dep.paused
		w.dep.generation++
		w.saveDeployment()
		return fmt.Sprintf("set the Deployment paused %v", w.dep.paused)
	case 15:
		// A fix in one edit, while the bad template runs: back to an earlier good version,
		// and autoRollback on (scenario 1 of issue 40); half the time with new replicas in the
		// same edit, which the deployment controller takes as a scaling event first.
		var fixes []version
		for v, f := range w.fates {
			if f == good && v != a.spec.version {
				fixes = append(fixes, v)
			}
		}
		if len(fixes) == 0 {
			return ""
		}
		slices.Sort(fixes)
		a.spec.autoRollback = true
		if w.chance(0.5) {
			a.spec.replicas = int32(1 + w.rng.IntN(5))
		}
		w.epoch++
		return w.push(fixes[w.rng.IntN(len(fixes))], "fixed: back to a good version, autoRollback on")
	default:
		w.inputUnreadable = !w.inputUnreadable
		w.bump()           // a write of the ConfigMap
		w.op.queued = true // the ConfigMap's watch
		return fmt.Sprintf("made the template's ConfigMap unreadable %v", w.inputUnreadable)
	}
}

// push makes the spec ask for version v: a new template, which ends any rollback's hold.
func (w *world) push(v version, what string) string {
	if v == w.app.spec.version {
		return ""
	}
	w.app.spec.version = v
	w.app.generation++
	w.epoch++
	w.saveApp()
	return what
}

// drawFate picks a new version's fate: mostly good, sometimes slow, and each of the
// problems that fail a rollout.
func (w *world) drawFate() fate {
	switch n := w.rng.IntN(20); {
	case n < 9:
		return good
	case n < 11:
		return slowStart
	default:
		return fate(2 + (n-11)%5)
	}
}

// deleteDeployment is `kubectl delete deployment`: the garbage collector removes its
// ReplicaSets and pods afterwards.
func (w *world) deleteDeployment() string {
	w.truth.stats.deletions++
	if w.dep.mark != nil || w.app.status.rolledBack != nil {
		w.truth.stats.deletionsHeld++
	}
	w.dep = nil
	w.saveDeployment()
	return "deleted the Deployment"
}
