package rollout

import "testing"

func TestCurrentTemplate(t *testing.T) {
	cases := map[string]struct {
		revision string
		sets     []ReplicaSet
		want     string
	}{
		"the ReplicaSet at the revision":  {"3", []ReplicaSet{{Hash: "h1", Revision: "1", Other: false}, {Hash: "h2", Revision: "2", Other: false}, {Hash: "h3", Revision: "3", Other: false}}, "h3"},
		"no revision yet":                 {"", []ReplicaSet{{Hash: "h1", Revision: "1", Other: false}}, ""},
		"its ReplicaSet not in the cache": {"3", []ReplicaSet{{Hash: "h1", Revision: "1", Other: false}, {Hash: "h2", Revision: "2", Other: false}}, ""},
		// A return to h1: the deployment controller moved h1 to revision 4 and wrote
		// observedGeneration; the Deployment's revision still names h3, which it left.
		"a ReplicaSet moved past the Deployment's revision": {"3", []ReplicaSet{{Hash: "h1", Revision: "4", Other: false}, {Hash: "h2", Revision: "2", Other: false}, {Hash: "h3", Revision: "3", Other: false}}, ""},
		"then the Deployment's revision follows":            {"4", []ReplicaSet{{Hash: "h1", Revision: "4", Other: false}, {Hash: "h2", Revision: "2", Other: false}, {Hash: "h3", Revision: "3", Other: false}}, "h1"},
		"a ReplicaSet without a revision is ignored":        {"2", []ReplicaSet{{Hash: "h0", Revision: "", Other: false}, {Hash: "h2", Revision: "2", Other: false}}, "h2"},
		"a revision that is no number":                      {"x", []ReplicaSet{{Hash: "h1", Revision: "x", Other: false}}, ""},
		// A scaling event, or Recreate while the old pods stop: observedGeneration is written
		// before the ReplicaSet of the Deployment's new template exists.
		"the ReplicaSet at the revision carries another template": {"3", []ReplicaSet{{Hash: "h2", Revision: "2", Other: false}, {Hash: "h3", Revision: "3", Other: true}}, ""},
		"another template on an older ReplicaSet does not matter": {"3", []ReplicaSet{{Hash: "h2", Revision: "2", Other: true}, {Hash: "h3", Revision: "3", Other: false}}, "h3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := CurrentTemplate(tc.revision, tc.sets); got != tc.want {
				t.Fatalf("CurrentTemplate(%q) = %q, want %q", tc.revision, got, tc.want)
			}
		})
	}
}

func TestDeadlineExceeded(t *testing.T) {
	cases := map[string]struct {
		status, reason, message string
		want                    bool
	}{
		"the current ReplicaSet timed out":   {"False", "ProgressDeadlineExceeded", `ReplicaSet "web-h3" has timed out progressing.`, true},
		"the ReplicaSet the Deployment left": {"False", "ProgressDeadlineExceeded", `ReplicaSet "web-h2" has timed out progressing.`, false},
		"a name that only begins the same":   {"False", "ProgressDeadlineExceeded", `ReplicaSet "web-h3x" has timed out progressing.`, false},
		"progressing":                        {"True", "ReplicaSetUpdated", `ReplicaSet "web-h3" is progressing.`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DeadlineExceeded(tc.status, tc.reason, tc.message, "web-h3"); got != tc.want {
				t.Fatalf("DeadlineExceeded = %v, want %v", got, tc.want)
			}
		})
	}
}
