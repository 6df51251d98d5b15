package main

import "testing"

// The app fails the share of requests it is asked to, spread evenly, and nothing on a value
// that is not a share.
func TestErrorShare(t *testing.T) {
	for _, tc := range []struct {
		value  string
		failed int // of 100 requests
	}{{"0.25", 25}, {"0.5", 50}, {"1", 100}, {"0", 0}, {"", 0}, {"half", 0}, {"-1", 0}, {"2", 0}, {"NaN", 0}} {
		e := newErrorShare(tc.value)
		failed, run := 0, 0
		for range 100 {
			if e.next() {
				failed++
				run++
			} else {
				run = 0
			}
			if run > 1 && tc.failed < 100 {
				t.Errorf("ERROR_SHARE=%q fails two requests in a row", tc.value)
			}
		}
		if failed != tc.failed {
			t.Errorf("ERROR_SHARE=%q failed %d of 100 requests, want %d", tc.value, failed, tc.failed)
		}
	}
}
