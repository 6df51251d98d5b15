// Package promserver runs a real Prometheus, built from its Go module, for a suite's stories,
// and reads its HTTP API. Every reader fails the assertion it is given when Prometheus cannot
// answer, so that a story that cannot measure never reads an empty answer as a measurement.
package promserver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive,staticcheck // Ginkgo's DSL, as in the suites
	. "github.com/onsi/gomega"    //nolint:revive,staticcheck // Gomega's DSL, as in the suites

	"github.com/example/myapp-operator/internal/testutil"
)

// Server is a Prometheus a story started, and its HTTP API.
type Server struct {
	*testutil.Process
	// Address is where it listens, host:port.
	Address string
	api     string
}

// Start runs the Prometheus at bin with config (prometheus.yml) and the files beside it
// (name → content), listening on listen, its log at logPath, and stops it when the spec (or
// container) ends.
func Start(bin, logPath, listen, config string, files map[string]string) *Server {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for name, content := range files {
		Expect(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)).To(Succeed())
	}
	Expect(os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600)).To(Succeed())
	p, err := testutil.StartProcess("prometheus", logPath, bin, nil,
		"--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen, "--log.level=warn")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		p.Signal(syscall.SIGTERM)
		Eventually(p.Exited()).WithTimeout(30 * time.Second).Should(BeClosed())
	})
	GinkgoWriter.Printf("started prometheus (pid %d) on %s, log %s\n", p.Pid(), listen, p.Log)
	return &Server{Process: p, Address: listen, api: "http://" + listen + "/api/v1/"}
}

// Get decodes the data of an API answer into out; it fails on any error.
func (p *Server) Get(g Gomega, path string, params url.Values, out any) {
	resp, err := http.Get(p.api + path + "?" + params.Encode()) //nolint:gosec,noctx // the story's own server
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	var answer struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	g.Expect(json.NewDecoder(resp.Body).Decode(&answer)).To(Succeed())
	g.Expect(answer.Status).To(Equal("success"), "%s: %s", path, answer.Error)
	g.Expect(json.Unmarshal(answer.Data, out)).To(Succeed())
}

// Targets lists the scrape targets of a job: health and last error. A job without a target
// fails.
func (p *Server) Targets(g Gomega, job string) []map[string]any {
	var data struct {
		Active []map[string]any `json:"activeTargets"`
	}
	p.Get(g, "targets", url.Values{"state": {"active"}}, &data)
	var out []map[string]any
	for _, t := range data.Active {
		if t["scrapePool"] == job {
			out = append(out, t)
		}
	}
	g.Expect(out).NotTo(BeEmpty(), "Prometheus has no target for job %s", job)
	return out
}

// TargetUp tells whether every target of the job was up at its last scrape.
func (p *Server) TargetUp(g Gomega, job string) bool {
	for _, t := range p.Targets(g, job) {
		if t["health"] != "up" {
			return false
		}
	}
	return true
}

// LastError joins the last scrape errors of the job's targets.
func (p *Server) LastError(g Gomega, job string) string {
	targets := p.Targets(g, job)
	errs := make([]string, 0, len(targets))
	for _, t := range targets {
		s, _ := t["lastError"].(string)
		errs = append(errs, s)
	}
	return strings.Join(errs, "; ")
}

// Query runs an instant query and returns the label sets of its result.
func (p *Server) Query(g Gomega, q string) []map[string]string {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
		} `json:"result"`
	}
	p.Get(g, "query", url.Values{"query": {q}}, &data)
	out := []map[string]string{}
	for _, r := range data.Result {
		out = append(out, r.Metric)
	}
	return out
}

// Value runs an instant query that must return one sample and returns its value; a query
// that returns none or several fails.
func (p *Server) Value(g Gomega, q string) float64 {
	var data struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	p.Get(g, "query", url.Values{"query": {q}}, &data)
	g.Expect(data.Result).To(HaveLen(1), "query %s", q)
	s, ok := data.Result[0].Value[1].(string)
	g.Expect(ok).To(BeTrue(), "query %s: value %v", q, data.Result[0].Value)
	v, err := strconv.ParseFloat(s, 64)
	g.Expect(err).NotTo(HaveOccurred())
	return v
}
