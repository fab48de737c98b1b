package service

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// ServiceName is the DNS name every server certificate carries, and the
// name clients verify the server against. Each voter's certificate also
// carries the voter's own name.
const ServiceName = "ownerd"

// Authority is a certificate authority generated in memory at start-up: an
// ECDSA P-256 key and a self-signed CA certificate. It issues node
// certificates and is the only root that servers and clients trust. Nothing
// is written to disk; tests and examples make a fresh one each run.
type Authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

// NewAuthority generates a CA named name (e.g. "ownership-ca"), valid for
// 24 hours from now. It fails only if the system's random source does.
func NewAuthority(name string) (*Authority, error) { return NewAuthorityValid(name, 24*time.Hour) }

// NewAuthorityValid is NewAuthority with a CA valid for validity from now
// (ownerd -init-ca makes a CA for voters on several hosts, which load it with
// LoadAuthority). Certificates it issues expire with it.
func NewAuthorityValid(name string, validity time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &Authority{cert: cert, key: key, pool: pool}, nil
}

// Pool returns the pool holding only this authority's CA certificate.
func (a *Authority) Pool() *x509.CertPool { return a.pool }

// ANCHOR: issue

// Issue returns a node's certificate and key for the node called name,
// signed by a. The name is the subject's common name and the certificate's
// only DNS name, and it is the only identity a server reads from the
// connection. The certificate is for client authentication only: a node
// proves who it is to the service with it, and cannot pose as the service
// (a client refuses it as a server certificate).
//
// Errors: *InvalidNameError if name is not 1 to 64 of [A-Za-z0-9._-].
func (a *Authority) Issue(name ownership.NodeID) (tls.Certificate, error) {
	return a.issue(name, []string{string(name)}, nil, x509.ExtKeyUsageClientAuth)
}

// ANCHOR_END: issue

// IssueServer returns a voter's certificate and key: the common name is the
// voter's name, the DNS names are that name and ServiceName, the IP address
// is 127.0.0.1, and the certificate is for server authentication only, so a
// voter's certificate cannot call the service as a node.
//
// Errors: *InvalidNameError if name is not 1 to 64 of [A-Za-z0-9._-].
func (a *Authority) IssueServer(name ownership.NodeID) (tls.Certificate, error) {
	return a.issue(name, []string{string(name), ServiceName}, []net.IP{net.IPv4(127, 0, 0, 1)}, x509.ExtKeyUsageServerAuth)
}

func (a *Authority) issue(name ownership.NodeID, dns []string, ips []net.IP, usage ...x509.ExtKeyUsage) (tls.Certificate, error) {
	if err := checkName(name); err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	notAfter := a.cert.NotAfter // a voter's certificates live as long as its CA
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: string(name)},
		DNSNames:     dns,
		IPAddresses:  ips,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

// InvalidNameError reports a node name that cannot go in a certificate or a
// roster. It matches ErrMalformed.
type InvalidNameError struct{ Name ownership.NodeID }

func (e *InvalidNameError) Error() string {
	return fmt.Sprintf("node name %q: must be 1 to 64 of A-Z a-z 0-9 . _ -", string(e.Name))
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *InvalidNameError) Is(target error) bool { return target == ErrMalformed }

func checkName(name ownership.NodeID) error {
	if len(name) == 0 || len(name) > 64 {
		return &InvalidNameError{Name: name}
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return &InvalidNameError{Name: name}
		}
	}
	return nil
}

// ErrNotOnRoster is returned (inside the TLS handshake) for a client
// certificate that chains to the Authority but names a node outside the
// roster. The client sees a TLS alert, never an HTTP response.
var ErrNotOnRoster = errors.New("certificate names a node that is not on the roster")

// Roster is the fixed set of node names that may call the service. It is
// fixed at construction: NewRoster copies its input.
type Roster struct{ names []ownership.NodeID }

// NewRoster returns the roster of the given names, sorted and without
// duplicates. Errors: *InvalidNameError for a name that cannot be a node
// name.
func NewRoster(names ...ownership.NodeID) (Roster, error) {
	for _, n := range names {
		if err := checkName(n); err != nil {
			return Roster{}, err
		}
	}
	s := slices.Clone(names)
	slices.Sort(s)
	return Roster{names: slices.Compact(s)}, nil
}

// Contains reports whether name is on the roster.
func (r Roster) Contains(name ownership.NodeID) bool {
	_, ok := slices.BinarySearch(r.names, name)
	return ok
}

// Names returns the roster's names in sorted order.
func (r Roster) Names() []ownership.NodeID { return slices.Clone(r.names) }

// ANCHOR: server_tls

// ServerTLS returns the TLS configuration of a server that presents cert and
// accepts only clients whose certificate chains to a, is valid now and is
// meant for client authentication (RequireAndVerifyClientCert), and names
// exactly one node, on roster. The roster check runs in VerifyConnection,
// inside the handshake: a stranger's connection fails before an HTTP
// request is read, so no method runs for it.
func ServerTLS(a *Authority, cert tls.Certificate, roster Roster) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    a.pool,
		VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := callerOf(cs, roster)
			return err
		},
	}
}

// callerOf returns the node named by the verified client certificate of cs.
// A node certificate names one node: its common name, which is also its
// only DNS name, and no other subject alternative name. A certificate that
// names two (say A and B) would let one key speak for both, so it is
// refused rather than read as either.
func callerOf(cs tls.ConnectionState, roster Roster) (ownership.NodeID, error) {
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return "", fmt.Errorf("no verified client certificate: %w", ErrNotOnRoster)
	}
	leaf := cs.VerifiedChains[0][0]
	name := ownership.NodeID(leaf.Subject.CommonName)
	if err := namesOne(leaf); err != nil {
		return "", fmt.Errorf("%v: %w", err, ErrNotOnRoster)
	}
	if slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		return "", fmt.Errorf("certificate for %q is also for servers "+
			"(a voter's), not a node's: %w", name, ErrNotOnRoster)
	}
	if !roster.Contains(name) {
		return "", fmt.Errorf("node %q: %w", name, ErrNotOnRoster)
	}
	return name, nil
}

// ANCHOR_END: server_tls

// namesOne checks that leaf names exactly one party: its common name, which
// is also its only DNS name, and no other subject alternative name.
func namesOne(leaf *x509.Certificate) error {
	name := leaf.Subject.CommonName
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != name ||
		len(leaf.IPAddresses)+len(leaf.URIs)+len(leaf.EmailAddresses) != 0 {
		return fmt.Errorf("certificate for %q names %v, want exactly its common name", name, leaf.DNSNames)
	}
	return nil
}

// ClientTLS returns the TLS configuration of a node that presents cert and
// trusts only servers whose certificate chains to a and names ServiceName.
func ClientTLS(a *Authority, cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      a.pool,
		ServerName:   ServiceName,
	}
}

// ANCHOR: caller

// Caller returns the node that sent r: the name in the client certificate
// verified during r's TLS handshake, checked again against roster. It is the
// only way a handler learns who is calling; no request field can say it.
//
// Errors: ErrNotOnRoster (wrapped) if r did not arrive over a verified TLS
// connection whose certificate names a node on roster.
func Caller(r *http.Request, roster Roster) (ownership.NodeID, error) {
	if r.TLS == nil {
		return "", fmt.Errorf("request without TLS: %w", ErrNotOnRoster)
	}
	return callerOf(*r.TLS, roster)
}

// ANCHOR_END: caller

// CertPEM returns the authority's CA certificate in PEM form, for a client
// outside this process (ownerd -serve writes it to a file).
func (a *Authority) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.cert.Raw})
}

// KeyPEM returns the authority's private key in PEM form. Whoever holds it
// can issue certificates that every voter trusts: keep it as secret as the
// voters' own keys.
func (a *Authority) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(a.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// LoadAuthority returns the authority whose CA certificate and key CertPEM
// and KeyPEM wrote. Certificates it issues expire with the CA. Errors: PEM that holds no certificate or no EC key, a
// certificate that is not a CA, a key that does not match it, an expired CA.
func LoadAuthority(certPEM, keyPEM []byte) (*Authority, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, errors.New("CA certificate: no PEM CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("CA certificate: not a CA certificate")
	}
	if time.Now().After(cert.NotAfter) {
		return nil, fmt.Errorf("CA certificate: expired at %s", cert.NotAfter.UTC().Format(time.RFC3339))
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil || kb.Type != "EC PRIVATE KEY" {
		return nil, errors.New("CA key: no PEM EC PRIVATE KEY block")
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, errors.New("CA key: does not match the CA certificate")
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &Authority{cert: cert, key: key, pool: pool}, nil
}

// EncodePEM returns cert's leaf certificate and its ECDSA private key in PEM
// form (a certificate from Issue).
func EncodePEM(cert tls.Certificate) (certPEM, keyPEM []byte, err error) {
	key, ok := cert.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || len(cert.Certificate) == 0 {
		return nil, nil, errors.New("EncodePEM: not a certificate from Authority.Issue")
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
