package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/oltplab/oltplab/internal/claim"
)

// The agent's trust: every connection is TLS, with a certificate the
// agent generates once and keeps in its state directory; a client pins
// its SHA-256 fingerprint (printed when the agent starts). Every request
// but the metrics stream of an agent on loopback carries the agent's
// token (Authorization: Bearer), compared in constant time. An agent
// listens off loopback only with a token; one without a token serves
// host metrics only.

// Certificate and key files in the state directory.
const (
	certFile = "agent-cert.pem"
	keyFile  = "agent-key.pem"
)

// MinTokenLen is the shortest token an agent accepts: guessing it must
// be out of reach.
const MinTokenLen = 16

// Identity is the agent's TLS certificate and its fingerprint.
type Identity struct {
	Cert        tls.Certificate
	Fingerprint string // "sha256:" and 64 hex digits
}

// Fingerprint is how a certificate is pinned: "sha256:" and the hex of
// the SHA-256 of its DER bytes.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// normalFingerprint accepts a fingerprint with or without the "sha256:"
// prefix, in either case, with or without colons between the bytes.
func normalFingerprint(s string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	h = strings.TrimPrefix(h, "sha256:")
	h = strings.ReplaceAll(h, ":", "")
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("fingerprint %q: want sha256: and 64 hex digits, as the agent prints when it starts", s)
	}
	return "sha256:" + h, nil
}

// LoadIdentity reads the agent's certificate from dir, generating it
// (and dir, mode 0700) on first use. dir is taken as claim.Within takes a
// directory to write in: no system directory, no path through a link or
// directory another user could change. An existing key must be a regular
// file of oltplab's user that nobody else may read.
func LoadIdentity(dir string) (Identity, error) {
	d, err := claim.Within(dir, nil, true)
	if err != nil {
		return Identity{}, fmt.Errorf("agent state directory: %w", err)
	}
	defer d.Close()
	if err := os.Chmod(d.Path(), 0o700); err != nil {
		return Identity{}, fmt.Errorf("agent state directory: %w", err)
	}
	certPath, keyPath := filepath.Join(d.Path(), certFile), filepath.Join(d.Path(), keyFile)
	certPEM, cerr := readPrivate(certPath)
	keyPEM, kerr := readPrivate(keyPath)
	switch {
	case errors.Is(cerr, fs.ErrNotExist) && errors.Is(kerr, fs.ErrNotExist):
		certPEM, keyPEM, err = newCertificate()
		if err != nil {
			return Identity{}, err
		}
		if err := writeNew(d, keyFile, keyPEM); err != nil {
			return Identity{}, err
		}
		if err := writeNew(d, certFile, certPEM); err != nil {
			return Identity{}, err
		}
	case cerr != nil:
		return Identity{}, cerr
	case kerr != nil:
		return Identity{}, kerr
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return Identity{}, fmt.Errorf("agent certificate in %s: %w", d.Path(), err)
	}
	return Identity{Cert: cert, Fingerprint: Fingerprint(cert.Certificate[0])}, nil
}

// EphemeralIdentity is a certificate kept in memory only (tests, and an
// agent on loopback that was given no state directory).
func EphemeralIdentity() (Identity, error) {
	certPEM, keyPEM, err := newCertificate()
	if err != nil {
		return Identity{}, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Cert: cert, Fingerprint: Fingerprint(cert.Certificate[0])}, nil
}

func newCertificate() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("agent key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, fmt.Errorf("agent certificate: %w", err)
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "oltplab agent " + host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"oltplab-agent"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("agent certificate: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("agent key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// readPrivate reads a file of oltplab's user that no one else may read
// or write, through no link.
func readPrivate(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || sys == nil || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: want a regular file of this user that nobody else may read or write (mode 0600)", path)
	}
	b := make([]byte, 0, st.Size())
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil || n == 0 {
			break
		}
		if len(b) > 1<<20 {
			return nil, fmt.Errorf("%s: larger than 1 MiB", path)
		}
	}
	return b, nil
}

func writeNew(d *claim.Dir, name string, data []byte) error {
	f, err := d.CreateFile(name, 0o600)
	if err != nil {
		return fmt.Errorf("agent state: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("agent state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("agent state: %w", err)
	}
	return f.Close()
}

// ReadToken reads a token from the first line of file (which nobody but
// its owner may read). The token itself never appears in an error.
func ReadToken(file string) (string, error) {
	b, err := readPrivate(file)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	return CheckToken(strings.TrimSpace(tok), "token file "+file)
}

// CheckToken refuses a token too short to be secret; from says where it
// came from.
func CheckToken(tok, from string) (string, error) {
	if len(tok) < MinTokenLen {
		return "", fmt.Errorf("%s: the token has %d characters, want at least %d (for example: head -c 32 /dev/urandom | base64)", from, len(tok), MinTokenLen)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s: the token holds white space", from)
	}
	return tok, nil
}

// ErrListen is wrapped by CheckListen's refusals.
var ErrListen = errors.New("the agent refuses to listen")

// CheckListen refuses an address off loopback for an agent without a
// token: anyone who can reach the port could use it.
func CheckListen(addr string, hasToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: want HOST:PORT (e.g. 127.0.0.1:7300): %w", addr, err)
	}
	if hasToken || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%w on %s without a token: give --token-file (or OLTPLAB_AGENT_TOKEN), or listen on 127.0.0.1", ErrListen, addr)
}

// isLoopback reports whether host (an address or "localhost") is this
// machine's loopback; "" and 0.0.0.0 are every interface, not loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Client is how an oltplab reaches an agent: its address, the pinned
// fingerprint of its certificate, and the token (or an instance's
// ticket) it presents.
type Client struct {
	Addr        string
	Fingerprint string
	Token       string
}

// ErrTrust is wrapped by the errors of a client that cannot trust the
// agent: no fingerprint for an agent off loopback, or a certificate that
// does not match it.
var ErrTrust = errors.New("the agent is not trusted")

// tlsConfig pins the agent's certificate. Without a fingerprint, only an
// agent on loopback is accepted (this machine's).
func (c Client) tlsConfig() (*tls.Config, error) {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return nil, fmt.Errorf("agent address %q: want HOST:PORT: %w", c.Addr, err)
	}
	want := ""
	if c.Fingerprint != "" {
		if want, err = normalFingerprint(c.Fingerprint); err != nil {
			return nil, err
		}
	} else if !isLoopback(host) {
		return nil, fmt.Errorf("%w: the agent at %s is not on loopback: give its fingerprint (the agent prints it when it starts)", ErrTrust, c.Addr)
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The chain is the agent's own self-signed certificate, checked
		// against the pinned fingerprint below instead of a CA.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return fmt.Errorf("%w: no certificate", ErrTrust)
			}
			if got := Fingerprint(raw[0]); want != "" && got != want {
				return fmt.Errorf("%w: its certificate's fingerprint is %s, the plan pins %s", ErrTrust, got, want)
			}
			return nil
		},
	}, nil
}

// httpClient is a client of the agent; timeout bounds connecting and
// the response's header (0: none).
func (c Client) httpClient(timeout time.Duration) (*http.Client, error) {
	cfg, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: dialTimeout}).DialContext,
		TLSClientConfig:       cfg,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: timeout,
		ForceAttemptHTTP2:     false,
	}}, nil
}

// authorize adds the client's token to a request.
func (c Client) authorize(r *http.Request) {
	if c.Token != "" {
		r.Header.Set("Authorization", "Bearer "+c.Token)
	}
}

// bearer is the token a request presents ("" when none).
func bearer(r *http.Request) string {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return v
}

// sameSecret compares in constant time.
func sameSecret(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// dialTLS opens a TLS connection to the agent (the tunnels' transport).
func (c Client) dialTLS(ctx context.Context) (*tls.Conn, error) {
	cfg, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: dialTimeout}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	return conn.(*tls.Conn), nil
}
