package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

var _ = Describe("A service account named, then no longer named", func() {
	It("leaves the pod template with neither serviceAccountName nor the deprecated serviceAccount", func() {
		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.ServiceAccountName = "builder" })
		accounts := func(g Gomega) []string {
			spec := getDeployment(ns, "web")(g).Spec.Template.Spec
			return []string{spec.ServiceAccountName, spec.DeprecatedServiceAccount} //nolint:staticcheck // the deprecated field is the point
		}

		By("naming one: the API server mirrors it into serviceAccount, which the operator owns too")
		Eventually(accounts).Should(Equal([]string{"builder", "builder"}))
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			for _, field := range []string{"f:serviceAccountName", "f:serviceAccount"} {
				g.Expect(testutil.OwnsField(d, FieldOwner, "f:spec", "f:template", "f:spec", field)).To(BeTrue(), field)
			}
		}).Should(Succeed())
		By("the operator's intent and the stored template agree: reconciles with nothing to do send nothing")
		rollOut(ns, "web")
		expectQuietThroughResyncs(ns)

		By("no longer naming one: both go, and the pods run as the namespace's default account")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.ServiceAccountName = "" })
		Eventually(accounts).Should(Equal([]string{"", ""}))
		rollOut(ns, "web")
		expectQuietThroughResyncs(ns)
		Expect(accounts(Default)).To(Equal([]string{"", ""}))
	})
})
