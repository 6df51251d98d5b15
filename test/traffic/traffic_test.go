package traffic

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A stream records every answer's first line and the failures, and Between counts them by
// the version they name, within a window.
func TestStreamRecordsWhoAnswered(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			http.Error(w, "failed", http.StatusInternalServerError)
		case 1:
			_, _ = fmt.Fprint(w, "app v2 on a\nmore\n")
		default:
			_, _ = fmt.Fprint(w, "app v1 on b\n")
		}
	}))
	defer srv.Close()
	start := time.Now()
	s := Start(srv.URL, 50, time.Minute)
	for n.Load() < 40 {
		time.Sleep(10 * time.Millisecond)
	}
	r := s.Stop()
	v2, other, failed := r.Between(start, time.Now(), "app v2 ")
	if v2+other+failed != r.Sent || failed != r.Failed {
		t.Fatalf("Between counted %d+%d+%d answers of a report of %d sent, %d failed", v2, other, failed, r.Sent, r.Failed)
	}
	if v2 < r.Sent/4-1 || failed < r.Sent/4-1 || other < r.Sent/2-1 {
		t.Errorf("Between counted v2 %d, others %d, failed %d of %d: want a quarter, a half and a quarter", v2, other, failed, r.Sent)
	}
	if m, o, f := r.Between(time.Now().Add(time.Hour), time.Now().Add(2*time.Hour), "app v2 "); m+o+f != 0 {
		t.Errorf("Between counted %d answers in a window after the stream", m+o+f)
	}
	for _, a := range r.Answers {
		if !a.Failed && a.Line != "app v2 on a" && a.Line != "app v1 on b" {
			t.Errorf("recorded line %q, want the body's first line", a.Line)
		}
	}
}
