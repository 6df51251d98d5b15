package desired

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// AnnotationSecretHash names, on the pod template of a MyApp with spec.rolloutOnConfigChange
// in a namespace where the operator may watch Secrets (docs/operations/secrets.md), a digest
// of the versions of the Secrets it references: a new version of one of them (its data, or
// anything else of it, changed) is a change of the template, which the Deployment rolls out.
// The operator sees only the Secrets' metadata, never their data: it hashes what identifies
// a version, the UID and the resourceVersion.
const AnnotationSecretHash = "myapp.example.com/secret-hash"

// SecretAbsent is the version of a referenced Secret that does not exist and that the pods
// may start without (RequiredSecrets).
const SecretAbsent = "absent"

// ReferencedSecrets are the names, sorted and each once, of the Secrets the MyApp's pod
// template takes values or files from: env[].valueFrom.secretKeyRef, envFrom[].secretRef and
// volumes[].secret, a projected volume's included. imagePullSecrets are not among them: the
// kubelet reads them to pull, and a new one changes nothing in a running pod.
func ReferencedSecrets(app *examplev1.MyApp) []string {
	return slices.Sorted(maps.Keys(secretReferences(app)))
}

// RequiredSecrets are the referenced Secrets a pod cannot start without: those referenced at
// least once without optional: true (a key of env[].valueFrom always is).
func RequiredSecrets(app *examplev1.MyApp) map[string]bool {
	required := map[string]bool{}
	for name, req := range secretReferences(app) {
		if req {
			required[name] = true
		}
	}
	return required
}

// secretReferences maps each referenced Secret to whether some reference to it is required.
func secretReferences(app *examplev1.MyApp) map[string]bool {
	refs := map[string]bool{}
	add := func(name string, optional *bool) {
		refs[name] = refs[name] || optional == nil || !*optional
	}
	for _, e := range app.Spec.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			add(e.ValueFrom.SecretKeyRef.Name, nil)
		}
	}
	for _, from := range app.Spec.EnvFrom {
		if ref := from.SecretRef; ref != nil {
			add(string(ref.Name), ref.Optional)
		}
	}
	for _, v := range app.Spec.Volumes {
		if s := v.Secret; s != nil {
			add(string(s.SecretName), s.Optional)
		}
		for _, src := range projectedSources(v) {
			if s := src.Secret; s != nil {
				add(string(s.Name), s.Optional)
			}
		}
	}
	return refs
}

// SecretVersion is what identifies one version of a Secret: a Secret deleted and created
// again is another, even at the same resourceVersion.
func SecretVersion(uid, resourceVersion string) string {
	return uid + "/" + resourceVersion
}

// SecretHash is the pod template's AnnotationSecretHash for the versions of the referenced
// Secrets, by name (SecretVersion, or SecretAbsent): 16 hex digits of a SHA-256.
func SecretHash(versions map[string]string) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(versions)) {
		writeSized(h, "secret", name, versions[name])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
