package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the paths of the files writePKI makes.
type pki struct {
	caCert, apiserverCert, apiserverKey, adminCert, adminKey, serviceAccountKey string
	kubeletCert, kubeletKey, proxyCert, proxyKey                                string
	registryCert, registryKey                                                   string
}

// writePKI makes a throw-away certificate authority, a serving certificate for the API server
// (for loopback, the first service IP and apiserverIP), client certificates for an admin
// (group system:masters), for the kubelet of the node named nodeName and for kube-proxy, and
// the key that signs service account tokens. It lives only as long as the cluster's state.
func writePKI(dir, apiserverIP, nodeName string) (pki, error) {
	p := pki{
		caCert:            filepath.Join(dir, "ca.crt"),
		apiserverCert:     filepath.Join(dir, "apiserver.crt"),
		apiserverKey:      filepath.Join(dir, "apiserver.key"),
		adminCert:         filepath.Join(dir, "admin.crt"),
		adminKey:          filepath.Join(dir, "admin.key"),
		serviceAccountKey: filepath.Join(dir, "service-account.key"),
		kubeletCert:       filepath.Join(dir, "kubelet.crt"),
		kubeletKey:        filepath.Join(dir, "kubelet.key"),
		proxyCert:         filepath.Join(dir, "kube-proxy.crt"),
		proxyKey:          filepath.Join(dir, "kube-proxy.key"),
		registryCert:      filepath.Join(dir, "registry.crt"),
		registryKey:       filepath.Join(dir, "registry.key"),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return p, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	caTmpl := template("localcluster-ca", nil)
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return p, err
	}
	if err := writePEM(p.caCert, "CERTIFICATE", caDER); err != nil {
		return p, err
	}

	serving := template("kube-apiserver", nil)
	serving.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	serving.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	serving.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(firstServiceIP), net.ParseIP(apiserverIP)}
	if err := issue(serving, ca, caKey, p.apiserverCert, p.apiserverKey); err != nil {
		return p, err
	}
	// The image registry's HTTPS listener serves on the API server's address.
	registry := template("registry", nil)
	registry.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	registry.IPAddresses = []net.IP{net.ParseIP(apiserverIP)}
	if err := issue(registry, ca, caKey, p.registryCert, p.registryKey); err != nil {
		return p, err
	}
	// The kubelet's identity is what the Node authorizer expects; kube-proxy's is the user the
	// built-in system:node-proxier binding names.
	for _, c := range []struct{ cn, org, cert, key string }{
		{"admin", "system:masters", p.adminCert, p.adminKey},
		{"system:node:" + nodeName, "system:nodes", p.kubeletCert, p.kubeletKey},
		{"system:kube-proxy", "", p.proxyCert, p.proxyKey},
	} {
		var orgs []string
		if c.org != "" {
			orgs = []string{c.org}
		}
		client := template(c.cn, orgs)
		client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		if err := issue(client, ca, caKey, c.cert, c.key); err != nil {
			return p, err
		}
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	der, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return p, err
	}
	return p, writePEM(p.serviceAccountKey, "EC PRIVATE KEY", der)
}

func template(cn string, orgs []string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(keyPath, "EC PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
