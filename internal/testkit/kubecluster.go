package testkit

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// KubeCluster is a real kube-apiserver (built from k8s.io/kubernetes by
// .ci/run, see .ci/kube-apiserver/) on loopback, backed by a real etcd
// (Debian's etcd-server). No kubelet, scheduler or controller-manager run:
// tests create objects and set their status through the status
// subresource, as those would.
type KubeCluster struct {
	URL        string // https://127.0.0.1:port
	AdminToken string // a system:masters user (static token file)
	CAFile     string // the CA of the serving certificate
	CAPEM      []byte
	Dir        string
	Logs       *SyncBuffer
	http       *http.Client
}

// KubeAPIServerBinary is the kube-apiserver the tests use: $OPSAGENT_KUBE_APISERVER,
// else .ci/kube-apiserver/bin/kube-apiserver. Missing, a test skips, and fails under CI=true.
func KubeAPIServerBinary(tb testing.TB) string {
	return ciTool(tb, "OPSAGENT_KUBE_APISERVER", "kube-apiserver")
}

// KubectlBinary is the kubectl built from the same module ($OPSAGENT_KUBECTL).
func KubectlBinary(tb testing.TB) string { return ciTool(tb, "OPSAGENT_KUBECTL", "kubectl") }

func ciTool(tb testing.TB, env, name string) string {
	tb.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(Testdata(), "..", ".ci", "kube-apiserver", "bin", name)
	}
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p
	}
	msg := fmt.Sprintf("%s not found (set %s, or build it: .ci/kube-apiserver/build.sh)", name, env)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + "; CI must build it (.ci/run)")
	}
	tb.Skip(msg)
	return ""
}

func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartKubeCluster starts etcd and a kube-apiserver with RBAC on, and stops
// both when the test ends.
func StartKubeCluster(tb testing.TB) *KubeCluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts etcd and a kube-apiserver")
	}
	apiserver := KubeAPIServerBinary(tb)
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("etcd not found: CI must install Debian's etcd-server (.ci/run)")
		}
		tb.Skip("etcd not found (apt-get install etcd-server)")
	}
	dir := tb.TempDir()
	k := &KubeCluster{Dir: dir, Logs: &SyncBuffer{}, AdminToken: "admin-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	clientPort, peerPort, apiPort := freePort(tb), freePort(tb), freePort(tb)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	startProc(tb, k.Logs, "etcd", etcd, "--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", etcdURL,
		"--advertise-client-urls", etcdURL, "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL, "--log-level", "warn")
	k.writeCerts(tb)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(k.AdminToken+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	exited := startProc(tb, k.Logs, "kube-apiserver", apiserver,
		"--etcd-servers", etcdURL, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(apiPort), "--tls-cert-file", filepath.Join(dir, "serving.crt"),
		"--tls-private-key-file", filepath.Join(dir, "serving.key"), "--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"), "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"), "--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range", "10.96.0.0/16",
		// No controller-manager creates each namespace's default ServiceAccount.
		"--disable-admission-plugins", "ServiceAccount",
		"--kubelet-preferred-address-types", "InternalIP",
		// The kubernetes Service's endpoint would be 127.0.0.1, which the reconciler refuses.
		"--endpoint-reconciler-type", "none",
		"--enable-priority-and-fairness=false", "--profiling=false", "--v=1")
	k.URL = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(k.CAPEM)
	k.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(120 * time.Second)
	for {
		code, _ := k.Do("GET", "/readyz", nil)
		if code == 200 {
			break
		}
		select {
		case <-exited:
			tb.Fatalf("kube-apiserver exited:\n%s", tail(k.Logs.String(), 6000))
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("kube-apiserver not ready within 120 s (last %d):\n%s", code, tail(k.Logs.String(), 6000))
		}
		time.Sleep(250 * time.Millisecond)
	}
	return k
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// startProc runs a tool until the test ends; the channel closes if it exits first.
func startProc(tb testing.TB, logs io.Writer, name, bin string, args ...string) <-chan struct{} {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &prefixWriter{w: logs, p: name + ": "}, &prefixWriter{w: logs, p: name + ": "}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return done
}

type prefixWriter struct {
	w io.Writer
	p string
}

func (w *prefixWriter) Write(b []byte) (int, error) {
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) > 0 {
			_, _ = w.w.Write(append([]byte(w.p), line...))
		}
	}
	return len(b), nil
}

// writeCerts makes a CA, a serving certificate for 127.0.0.1 and the
// service-account signing key.
func (k *KubeCluster) writeCerts(tb testing.TB) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opsagent-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}, DNSNames: []string{"localhost", "kubernetes.default.svc"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	k.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	srvKeyDER, _ := x509.MarshalECPrivateKey(srvKey)
	saKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	saPub, _ := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	files := map[string][]byte{
		"ca.crt":      k.CAPEM,
		"serving.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		"serving.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: srvKeyDER}),
		"sa.key":      pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		"sa.pub":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(k.Dir, n), b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	k.CAFile = filepath.Join(k.Dir, "ca.crt")
}

// Do calls the apiserver as the admin; body is JSON-encoded unless []byte.
func (k *KubeCluster) Do(method, path string, body any) (int, []byte) {
	return k.DoAs(k.AdminToken, method, path, "application/json", body)
}

// DoAs calls the apiserver with a token and a body content type.
func (k *KubeCluster) DoAs(token, method, path, contentType string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			b, _ = json.Marshal(body)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, k.URL+path, rd)
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := k.http.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// Must calls as the admin and fails the test on another status than want.
func (k *KubeCluster) Must(tb testing.TB, want int, method, path string, body any) map[string]any {
	tb.Helper()
	code, b := k.Do(method, path, body)
	if code != want {
		tb.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, b)
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// Kubeconfig writes a kubeconfig for a bearer token and returns its path.
func (k *KubeCluster) Kubeconfig(tb testing.TB, name, token string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name+".kubeconfig")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: %[1]s
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority: %[3]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s-user
users:
- name: %[1]s-user
  user:
    token: %[4]s
`, name, k.URL, k.CAFile, token)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}
