package seal_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/agentorch/agentorch/shared/seal"
)

const (
	secretA = "0123456789abcdef0123456789abcdef-first"
	secretB = "0123456789abcdef0123456789abcdef-second"
)

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	box := seal.New(seal.Static(secretA))
	plain := []byte(`{"Authorization":"Bearer s3cret"}`)
	sealed, err := box.Seal(ctx, plain, []byte("co/1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("s3cret")) {
		t.Fatalf("sealed value holds the plain text: %q", sealed)
	}
	again, err := box.Seal(ctx, plain, []byte("co/1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(sealed, again) {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	// Another Box on the same secret (another Lambda instance) opens it.
	got, err := seal.New(seal.Static(secretA)).Open(ctx, sealed, []byte("co/1"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Errorf("Open = %q, want %q", got, plain)
	}
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	box := seal.New(seal.Static(secretA))
	sealed, err := box.Seal(ctx, []byte("value"), []byte("co/1"))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 1
		return b
	}
	for name, tc := range map[string]struct {
		box    *seal.Box
		sealed []byte
		aad    string
	}{
		"tampered ciphertext": {box, flip(len(sealed) - 20), "co/1"},
		"tampered tag":        {box, flip(len(sealed) - 1), "co/1"},
		"tampered nonce":      {box, flip(3), "co/1"},
		"unknown version":     {box, flip(0), "co/1"},
		"cut":                 {box, sealed[:10], "co/1"},
		"empty":               {box, nil, "co/1"},
		"another record":      {box, sealed, "co/2"},
		"wrong key":           {seal.New(seal.Static(secretB)), sealed, "co/1"},
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := tc.box.Open(ctx, tc.sealed, []byte(tc.aad)); !errors.Is(err, seal.ErrOpen) {
				t.Errorf("Open = %q, %v; want ErrOpen", got, err)
			}
		})
	}
}

// TestKeySource: the secret is read once it is needed and kept once read; a failed read is not
// kept, and a secret too short to derive a strong key is refused.
func TestKeySource(t *testing.T) {
	ctx := context.Background()
	reads, fail := 0, true
	box := seal.New(func(context.Context) ([]byte, error) {
		reads++
		if fail {
			return nil, errors.New("secrets manager down")
		}
		return []byte(secretA), nil
	})
	if reads != 0 {
		t.Fatal("New read the secret")
	}
	if _, err := box.Seal(ctx, []byte("x"), nil); err == nil {
		t.Fatal("Seal worked without a key")
	}
	fail = false
	for range 3 {
		if _, err := box.Seal(ctx, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if reads != 2 {
		t.Errorf("secret read %d times, want 2 (one failed, one kept)", reads)
	}
	if _, err := seal.New(seal.Static("short")).Seal(ctx, []byte("x"), nil); err == nil {
		t.Error("a 5-byte secret was accepted")
	}
}
