package rollout

import "testing"

func TestCurrentTemplate(t *testing.T) {
	cases := map[string]struct {
		revision, template string
		sets               []ReplicaSet
		want               string
	}{
		"the ReplicaSet at the revision":  {"3", "", []ReplicaSet{{"h1", "1", ""}, {"h2", "2", ""}, {"h3", "3", ""}}, "h3"},
		"no revision yet":                 {"", "", []ReplicaSet{{"h1", "1", ""}}, ""},
		"its ReplicaSet not in the cache": {"3", "", []ReplicaSet{{"h1", "1", ""}, {"h2", "2", ""}}, ""},
		// A return to h1: the deployment controller moved h1 to revision 4 and wrote
		// observedGeneration; the Deployment's revision still names h3, which it left.
		"a ReplicaSet moved past the Deployment's revision":                {"3", "", []ReplicaSet{{"h1", "4", ""}, {"h2", "2", ""}, {"h3", "3", ""}}, ""},
		"then the Deployment's revision follows":                           {"4", "", []ReplicaSet{{"h1", "4", ""}, {"h2", "2", ""}, {"h3", "3", ""}}, "h1"},
		"a ReplicaSet without a revision is ignored":                       {"2", "", []ReplicaSet{{"h0", "", ""}, {"h2", "2", ""}}, "h2"},
		"a revision that is no number":                                     {"x", "", []ReplicaSet{{"h1", "x", ""}}, ""},
		"the ReplicaSet at the revision carries the Deployment's template": {"3", "t3", []ReplicaSet{{"h2", "2", "t2"}, {"h3", "3", "t3"}}, "h3"},
		// A scaling event, or Recreate while the old pods stop: observedGeneration is written
		// before the ReplicaSet of the Deployment's new template exists.
		"the ReplicaSet at the revision carries another template": {"3", "t4", []ReplicaSet{{"h2", "2", "t2"}, {"h3", "3", "t3"}}, ""},
		"a template not read is not compared":                     {"3", "t4", []ReplicaSet{{"h3", "3", ""}}, "h3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := CurrentTemplate(tc.revision, tc.template, tc.sets); got != tc.want {
				t.Fatalf("CurrentTemplate(%q, %q) = %q, want %q", tc.revision, tc.template, got, tc.want)
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
