// Package seal encrypts small secrets at rest (an MCP server's headers) with AES-256-GCM under a
// key derived from one service secret, read on first use. A sealed value is bound to its record
// by additional data, so a sealed value copied into another record does not open there.
package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
)

// version is the first byte of every sealed value: the format (nonce, then ciphertext and tag)
// and the key derivation, so that a later format can be told apart.
const version byte = 1

// info separates this use of the service secret from any other key derived from it.
const info = "agentorch seal v1: AES-256-GCM"

// ErrOpen is a sealed value that does not open: tampered with, cut, sealed under another key or
// for another record. It says nothing more, on purpose.
var ErrOpen = errors.New("seal: the value does not open with this key")

// KeySource returns the service secret the key is derived from (the Secrets Manager value on
// AWS, a fixed development value locally).
type KeySource func(ctx context.Context) ([]byte, error)

// Static is a KeySource of a secret known up front.
func Static(secret string) KeySource {
	return func(context.Context) ([]byte, error) { return []byte(secret), nil }
}

// Box seals and opens values. The secret is read on the first Seal or Open; a failed read is
// tried again on the next call rather than remembered.
type Box struct {
	src  KeySource
	mu   sync.Mutex
	aead cipher.AEAD
}

// New is a Box whose key is derived from what src returns.
func New(src KeySource) *Box { return &Box{src: src} }

// MinSecretBytes is the shortest service secret accepted: the key is only as strong as it.
const MinSecretBytes = 32

func (b *Box) cipher(ctx context.Context) (cipher.AEAD, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aead != nil {
		return b.aead, nil
	}
	secret, err := b.src(ctx)
	if err != nil {
		return nil, fmt.Errorf("seal: read the key: %w", err)
	}
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("seal: the secret has %d bytes; at least %d are needed", len(secret), MinSecretBytes)
	}
	key, err := hkdf.Key(sha256.New, secret, nil, info, 32)
	if err != nil {
		return nil, fmt.Errorf("seal: derive the key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	b.aead = aead
	return aead, nil
}

// Seal encrypts plain, bound to aad (the record it belongs to), under a fresh random nonce.
func (b *Box) Seal(ctx context.Context, plain, aad []byte) ([]byte, error) {
	aead, err := b.cipher(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	return aead.Seal(out, out[1:], plain, aad), nil
}

// Open decrypts what Seal made with the same key and aad; anything else is ErrOpen.
func (b *Box) Open(ctx context.Context, sealed, aad []byte) ([]byte, error) {
	aead, err := b.cipher(ctx)
	if err != nil {
		return nil, err
	}
	n := aead.NonceSize()
	if len(sealed) < 1+n+aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
