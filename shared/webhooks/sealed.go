package webhooks

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// Sealer encrypts signing secrets at rest (seal.Box, the credentials key MCP servers' headers are
// sealed under); aad binds a sealed value to its webhook and its slot.
type Sealer interface {
	Seal(ctx context.Context, plain, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// sealedPrefix starts a sealed secret as stored: "sealed:" and the standard base64 of the sealed
// bytes. A stored secret starting with SecretPrefix is one written before secrets were sealed.
const sealedPrefix = "sealed:"

// Sealed is store with the webhooks' signing secrets sealed at rest: every write seals the
// current and the previous secret (so a record written before sealing is sealed on its next
// write), a read of one webhook opens them; a record whose secrets are still plaintext reads as
// it is. A list carries no secrets (its callers, the fan-out and the list view, name webhooks and
// never sign), so listing needs no key and opens nothing.
func Sealed(store Store, s Sealer) Store { return &sealedStore{Store: store, seal: s} }

type sealedStore struct {
	Store
	seal Sealer
}

// Slots of a webhook's secrets, bound into the additional data: a sealed current secret copied
// into the previous slot, or into another webhook, does not open.
const (
	slotSecret   = "secret"
	slotPrevious = "previous_secret"
)

func secretAAD(w *domain.Webhook, slot string) []byte {
	return []byte("webhook\x00" + w.Company + "\x00" + w.ID + "\x00" + slot)
}

// sealed is a copy of w with its secrets sealed; w itself keeps them in the clear for the caller.
func (s *sealedStore) sealed(ctx context.Context, w *domain.Webhook) (*domain.Webhook, error) {
	c := *w
	var err error
	if c.Secret, err = s.sealOne(ctx, w, slotSecret, w.Secret); err != nil {
		return nil, err
	}
	if c.PreviousSecret, err = s.sealOne(ctx, w, slotPrevious, w.PreviousSecret); err != nil {
		return nil, err
	}
	return &c, nil
}

func (s *sealedStore) sealOne(ctx context.Context, w *domain.Webhook, slot, plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	b, err := s.seal.Seal(ctx, []byte(plain), secretAAD(w, slot))
	if err != nil {
		return "", fmt.Errorf("seal the %s of webhook %s: %w", slot, w.ID, err)
	}
	return sealedPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// open fills w's secrets in the clear, in place (w was just decoded from the store).
func (s *sealedStore) open(ctx context.Context, w *domain.Webhook) error {
	var err error
	if w.Secret, err = s.openOne(ctx, w, slotSecret, w.Secret); err != nil {
		return err
	}
	w.PreviousSecret, err = s.openOne(ctx, w, slotPrevious, w.PreviousSecret)
	return err
}

func (s *sealedStore) openOne(ctx context.Context, w *domain.Webhook, slot, stored string) (string, error) {
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		if stored == "" || strings.HasPrefix(stored, SecretPrefix) {
			return stored, nil // none, or written before sealing
		}
		return "", fmt.Errorf("the %s of webhook %s is in no known form", slot, w.ID)
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return "", fmt.Errorf("the %s of webhook %s: %w", slot, w.ID, err)
	}
	plain, err := s.seal.Open(ctx, b, secretAAD(w, slot))
	if err != nil {
		return "", fmt.Errorf("open the %s of webhook %s: %w", slot, w.ID, err)
	}
	return string(plain), nil
}

func (s *sealedStore) CreateWebhook(ctx context.Context, w *domain.Webhook, max int) error {
	c, err := s.sealed(ctx, w)
	if err != nil {
		return err
	}
	return s.Store.CreateWebhook(ctx, c, max)
}

func (s *sealedStore) GetWebhook(ctx context.Context, company, id string) (*domain.Webhook, error) {
	w, err := s.Store.GetWebhook(ctx, company, id)
	if err != nil {
		return nil, err
	}
	if err := s.open(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

func (s *sealedStore) ListWebhooks(ctx context.Context, company string) ([]*domain.Webhook, error) {
	list, err := s.Store.ListWebhooks(ctx, company)
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		w.Secret, w.PreviousSecret = "", ""
	}
	return list, nil
}

func (s *sealedStore) UpdateWebhook(ctx context.Context, w, prev *domain.Webhook) error {
	c, err := s.sealed(ctx, w)
	if err != nil {
		return err
	}
	return s.Store.UpdateWebhook(ctx, c, prev)
}
