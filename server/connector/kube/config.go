// Package kube is the cluster side of `opsagent connector --kubernetes`: a
// small typed client over the Kubernetes REST API (net/http and JSON, not
// client-go: see BENCHMARKS.md "Binary size"), the read operations the
// agent's tools ask for, and the approved actions, each checked against the
// object as a person saw it. It runs no shell command.
package kube

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is how to reach one cluster and who to be there.
type Config struct {
	Server    string // https://host:port
	Cluster   string // the name the server shows
	Namespace string // the default namespace (the service account's own in a pod)
	Token     string
	TokenFile string // re-read on every request: projected tokens rotate
	TLS       *tls.Config
}

// inClusterDir is where Kubernetes mounts a pod's service account.
const inClusterDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster is the pod's own service account, as Kubernetes mounts it.
func InCluster() (*Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST/PORT unset): pass --kubeconfig PATH")
	}
	ca, err := os.ReadFile(filepath.Join(inClusterDir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("the service account's CA: %w (is automountServiceAccountToken off?)", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the service account's ca.crt holds no PEM certificate")
	}
	tokenFile := filepath.Join(inClusterDir, "token")
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, fmt.Errorf("the service account's token: %w", err)
	}
	ns, _ := os.ReadFile(filepath.Join(inClusterDir, "namespace"))
	return &Config{Server: "https://" + net.JoinHostPort(host, port), Namespace: strings.TrimSpace(string(ns)),
		TokenFile: tokenFile, TLS: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}}, nil
}

// kubeconfig is the part of the file format this client reads.
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
			TLSServerName            string `yaml:"tls-server-name"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster   string `yaml:"cluster"`
			User      string `yaml:"user"`
			Namespace string `yaml:"namespace"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token                 string    `yaml:"token"`
			TokenFile             string    `yaml:"tokenFile"`
			ClientCertificate     string    `yaml:"client-certificate"`
			ClientCertificateData string    `yaml:"client-certificate-data"`
			ClientKey             string    `yaml:"client-key"`
			ClientKeyData         string    `yaml:"client-key-data"`
			Exec                  *struct{} `yaml:"exec"`
			AuthProvider          *struct{} `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// LoadKubeconfig reads a kubeconfig file: the named context, or the
// current one. Tokens, token files and client certificates are supported;
// exec and auth-provider plugins are not (the connector runs no programs).
func LoadKubeconfig(path, contextName string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return nil, fmt.Errorf("kubeconfig %s is not valid YAML: %v", path, err)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if contextName == "" {
		contextName = kc.CurrentContext
	}
	if contextName == "" {
		return nil, fmt.Errorf("kubeconfig %s has no current-context: pass --context NAME", path)
	}
	var clusterName, userName, ns string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == contextName {
			clusterName, userName, ns, found = c.Context.Cluster, c.Context.User, c.Context.Namespace, true
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig %s has no context %q", path, contextName)
	}
	cfg := &Config{Cluster: clusterName, Namespace: ns}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		cfg.Server = strings.TrimSuffix(c.Cluster.Server, "/")
		tc.InsecureSkipVerify = c.Cluster.InsecureSkipTLSVerify
		tc.ServerName = c.Cluster.TLSServerName
		ca, err := fileOrData(rel(c.Cluster.CertificateAuthority), c.Cluster.CertificateAuthorityData)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig cluster %q certificate-authority: %v", clusterName, err)
		}
		if ca != nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return nil, fmt.Errorf("kubeconfig cluster %q: the certificate authority holds no PEM certificate", clusterName)
			}
			tc.RootCAs = pool
		}
	}
	if !found || cfg.Server == "" {
		return nil, fmt.Errorf("kubeconfig %s: context %q names cluster %q, which has no server", path, contextName, clusterName)
	}
	if !strings.HasPrefix(cfg.Server, "https://") && !strings.HasPrefix(cfg.Server, "http://") {
		return nil, fmt.Errorf("kubeconfig cluster %q: server %q is not an http(s) URL", clusterName, cfg.Server)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		if u.User.Exec != nil || u.User.AuthProvider != nil {
			return nil, fmt.Errorf("kubeconfig user %q uses an exec or auth-provider plugin, which the connector does not run: "+
				"give it a service account token (token or tokenFile) or a client certificate", userName)
		}
		cfg.Token, cfg.TokenFile = u.User.Token, rel(u.User.TokenFile)
		cert, err := fileOrData(rel(u.User.ClientCertificate), u.User.ClientCertificateData)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig user %q client-certificate: %v", userName, err)
		}
		key, err := fileOrData(rel(u.User.ClientKey), u.User.ClientKeyData)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig user %q client-key: %v", userName, err)
		}
		if cert != nil || key != nil {
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				return nil, fmt.Errorf("kubeconfig user %q: the client certificate and key do not load: %v", userName, err)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
	}
	cfg.TLS = tc
	return cfg, nil
}

func fileOrData(file, data string) ([]byte, error) {
	if data != "" {
		return base64.StdEncoding.DecodeString(data)
	}
	if file == "" {
		return nil, nil
	}
	return os.ReadFile(file)
}

// httpClient is the transport to the cluster: its TLS, no proxy surprises
// beyond the environment's, bounded waits.
func (c *Config) httpClient() *http.Client {
	tc := c.TLS
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tr := &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}
	return &http.Client{Transport: tr}
}

// bearer is the token to send now.
func (c *Config) bearer() (string, error) {
	if c.TokenFile != "" {
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return "", fmt.Errorf("the token file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return c.Token, nil
}
