package procstat

import (
	"os"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	// proc(5): pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime ...
	tail := " 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 987654 1000 200"
	cases := map[string]struct {
		stat      string
		wantState string
	}{
		"plain":                           {"4242 (sleep) S" + tail, "S"},
		"spaces and parentheses in comm":  {"4242 (a) b (c)) Z" + tail, "Z"},
		"a comm that looks like a number": {"4242 (1 2 3) R" + tail, "R"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := Parse(4242, c.stat)
			if err != nil {
				t.Fatal(err)
			}
			// utime 250 and stime 50 clock ticks of 10 ms.
			if st.State != c.wantState || st.PGrp != 4242 || st.Start != 987654 || st.CPU != 3*time.Second {
				t.Fatalf("got %+v, want state %s, pgrp 4242, CPU 3s, start 987654", st, c.wantState)
			}
		})
	}
	for _, bad := range []string{
		"1 (short) S 0 1",
		"4242 no name here",
		"4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 x 50 0 0 20 0 1 0 987654 1000 200",
	} {
		if _, err := Parse(4242, bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Read reads a live process: this one, whose CPU time grows while it works.
func TestReadGrows(t *testing.T) {
	before, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.PID != os.Getpid() || before.State == "" || before.Start == 0 {
		t.Fatalf("read %+v of this process", before)
	}
	deadline := time.Now().Add(time.Minute)
	x := 0
	for {
		for i := range 10_000_000 {
			x += i
		}
		now, err := Read(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now.CPU > before.CPU {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed %s for a minute of work (%d)", now.CPU, x)
		}
	}
}
