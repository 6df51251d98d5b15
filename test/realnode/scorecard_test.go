package realnode

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/myapp-operator/internal/testutil"
)

// scorecardResults is the part of `operator-sdk scorecard -o json` the test reads.
type scorecardResults struct {
	Items []struct {
		Status struct {
			Results []struct {
				Name   string   `json:"name"`
				State  string   `json:"state"`
				Errors []string `json:"errors"`
			} `json:"results"`
		} `json:"status"`
	} `json:"items"`
}

var _ = Describe("operator-sdk scorecard on a real node", Label("realnode"), func() {
	It("runs the bundle's six tests as pods under the restricted level, and all pass", func() {
		operatorSDK, scorecardImage, untarImage := os.Getenv("E2E_OPERATOR_SDK"), os.Getenv("E2E_SCORECARD_IMAGE"), os.Getenv("E2E_UNTAR_IMAGE")
		Expect(operatorSDK).NotTo(BeEmpty(), "E2E_OPERATOR_SDK is not set")
		Expect(scorecardImage).NotTo(BeEmpty(), "E2E_SCORECARD_IMAGE is not set")
		Expect(untarImage).NotTo(BeEmpty(), "E2E_UNTAR_IMAGE is not set")

		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "scorecard-",
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, ns) })

		By("pointing a test-time copy of the bundle's scorecard config at the locally built image")
		bundle := filepath.Join("..", "..", "bundle")
		published, err := os.ReadFile(filepath.Join(bundle, "tests", "scorecard", "config.yaml"))
		Expect(err).NotTo(HaveOccurred())
		upstream := regexp.MustCompile(`image: \S+/scorecard-test:\S+`)
		Expect(upstream.FindAll(published, -1)).To(HaveLen(6), "the published config names the upstream image for each test")
		config := filepath.Join(GinkgoT().TempDir(), "config.yaml")
		Expect(os.WriteFile(config, upstream.ReplaceAll(published, []byte("image: "+scorecardImage)), 0o644)).To(Succeed())

		By("running operator-sdk scorecard ./bundle against the cluster")
		cmd := exec.Command(operatorSDK, "scorecard", bundle, "--config", config, "--kubeconfig", kubeconfig,
			"--namespace", ns.Name, "--pod-security", "restricted", "--untar-image", untarImage,
			"--wait-time", "180s", "-o", "json")
		// It waits on the cluster for minutes: it dies with the suite.
		var stdout, stderrBuf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderrBuf
		err = testutil.RunWithParent(cmd)
		out, stderr := stdout.Bytes(), stderrBuf.String()
		var results scorecardResults
		Expect(json.Unmarshal(out, &results)).To(Succeed(), "scorecard output: %s\n%s", out, stderr)
		states := map[string]string{}
		for _, item := range results.Items {
			for _, r := range item.Status.Results {
				states[r.Name] = r.State
				Expect(r.Errors).To(BeEmpty(), "test %s", r.Name)
			}
		}
		Expect(states).To(Equal(map[string]string{
			"basic-check-spec": "pass", "olm-bundle-validation": "pass", "olm-crds-have-validation": "pass",
			"olm-crds-have-resources": "pass", "olm-spec-descriptors": "pass", "olm-status-descriptors": "pass",
		}), "scorecard output: %s\n%s", out, stderr)
		Expect(err).NotTo(HaveOccurred(), "operator-sdk scorecard: %s", stderr)
	})
})
