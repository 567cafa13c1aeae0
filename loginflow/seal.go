package loginflow

import (
	"crypto/ecdh"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
)

// tokenEncoding writes tokens in lower-case letters and digits, as app
// passwords are: nothing a URL or a form quotes.
var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// tokenBytes is the randomness of a token: 256 bits, twice what a guess
// has to beat, written in TokenLen characters.
const (
	tokenBytes = 32
	// TokenLen is the length of a login or poll token.
	TokenLen = (tokenBytes*8 + 4) / 5
)

// newToken returns a token of tokenBytes from crypto/rand.
func newToken() string {
	b := make([]byte, tokenBytes)
	rand.Read(b)
	return tokenEncoding.EncodeToString(b)
}

// validToken reports whether s can be a token, so that nothing else is
// hashed and looked up.
func validToken(s string) bool {
	if len(s) != TokenLen {
		return false
	}
	_, err := tokenEncoding.DecodeString(s)
	return err == nil
}

// The grant's app password is sealed to the poll token (HPKE, RFC 9180:
// X25519, HKDF-SHA256, AES-256-GCM), so that the store holds nothing a
// reader of the database could sign in with: the poll token, which only
// the client has, derives the private key; the store keeps the public
// one.
var (
	sealKDF  = hpke.HKDFSHA256()
	sealAEAD = hpke.AES256GCM()
	sealInfo = []byte("davspaces login flow v2 app password")
)

// pollKey derives the X25519 key of a poll token.
func pollKey(pollToken string) (*ecdh.PrivateKey, error) {
	seed := sha256.Sum256([]byte("davspaces login flow seal\x00" + pollToken))
	k, err := ecdh.X25519().NewPrivateKey(seed[:])
	if err != nil {
		return nil, fmt.Errorf("poll token key: %w", err)
	}
	return k, nil
}

// publicOf is the public key a grant seals to, as the store keeps it.
func publicOf(pollToken string) ([]byte, error) {
	k, err := pollKey(pollToken)
	if err != nil {
		return nil, err
	}
	return k.PublicKey().Bytes(), nil
}

// seal seals password to public (publicOf a poll token).
func seal(public []byte, password string) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(public)
	if err != nil {
		return nil, fmt.Errorf("sealing to a login flow: %w", err)
	}
	pk, err := hpke.NewDHKEMPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("sealing to a login flow: %w", err)
	}
	return hpke.Seal(pk, sealKDF, sealAEAD, sealInfo, []byte(password))
}

// open opens what seal sealed to the public key of pollToken.
func open(pollToken string, sealed []byte) (string, error) {
	k, err := pollKey(pollToken)
	if err != nil {
		return "", err
	}
	sk, err := hpke.NewDHKEMPrivateKey(k)
	if err != nil {
		return "", fmt.Errorf("opening a login flow's password: %w", err)
	}
	plain, err := hpke.Open(sk, sealKDF, sealAEAD, sealInfo, sealed)
	if err != nil {
		return "", fmt.Errorf("opening a login flow's password: %w", err)
	}
	return string(plain), nil
}
