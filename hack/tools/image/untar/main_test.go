package main

import "testing"

func TestParseArgs(t *testing.T) {
	cases := map[string]struct {
		args      []string
		file, dir string
		fails     bool
	}{
		"as scorecard passes them": {[]string{"tar", "xvzf", "/scorecard/bundle.tar.gz", "-C", "/scorecard-bundle"}, "/scorecard/bundle.tar.gz", "/scorecard-bundle", false},
		"dashed flags":             {[]string{"-xzf", "b.tgz", "-C", "/out"}, "b.tgz", "/out", false},
		"no folder":                {[]string{"tar", "xzf", "b.tgz"}, "", "", true},
		"no file":                  {[]string{"tar", "xzf", "-C", "/out"}, "", "", true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			file, dir, err := parseArgs(c.args)
			if (err != nil) != c.fails || file != c.file || dir != c.dir {
				t.Errorf("parseArgs(%q) = %q, %q, %v", c.args, file, dir, err)
			}
		})
	}
}
