package main

import "testing"

func TestParseSweepFlags(t *testing.T) {
	t.Setenv(runMarker, "run-of-this-process")
	cases := map[string]struct {
		args    []string
		want    sweepOptions
		wantErr bool
	}{
		"the run of this process stays by default": {nil, sweepOptions{keepRun: "run-of-this-process"}, false},
		"the caller names its run":                 {[]string{"--keep-run", "ci-42"}, sweepOptions{keepRun: "ci-42"}, false},
		"no run stays":                             {[]string{"--keep-run="}, sweepOptions{}, false},
		"a dry run":                                {[]string{"--dry-run"}, sweepOptions{keepRun: "run-of-this-process", dryRun: true}, false},
		"an argument":                              {[]string{"now"}, sweepOptions{}, true},
		"an unknown flag":                          {[]string{"--state", "x"}, sweepOptions{}, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseSweepFlags(c.args)
			if (err != nil) != c.wantErr || !c.wantErr && got != c.want {
				t.Errorf("parseSweepFlags(%q) = %+v, %v; want %+v, error %v", c.args, got, err, c.want, c.wantErr)
			}
		})
	}
}
