// Package webhooks holds the use cases of a company's webhooks: create (with a generated signing
// secret, shown once), read, list, change, delete and rotate the secret (the previous one signs
// beside the new one for PreviousSecretTTL). Every URL is held to the address guard's rules when
// it is given, as the other URLs a user names are; deliveries are guarded again when they dial.
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/agentorch/agentorch/shared/audit"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

// Store keeps the webhooks of each company together, so that one Query reads them all (a
// delivery's fan-out reads them so).
type Store interface {
	// CreateWebhook stores a new webhook; a company with max webhooks already is an error
	// wrapping domain.ErrWebhookLimit, a taken id a conflict.
	CreateWebhook(ctx context.Context, w *domain.Webhook, max int) error
	// GetWebhook reads a company's webhook by id; another company's is not found.
	GetWebhook(ctx context.Context, company, id string) (*domain.Webhook, error)
	// ListWebhooks reads every webhook of a company (one Query per 1 MB), in any order.
	ListWebhooks(ctx context.Context, company string) ([]*domain.Webhook, error)
	// UpdateWebhook replaces prev by w if it is unchanged since read (its UpdatedAt): a changed
	// one is a conflict, a deleted one not found.
	UpdateWebhook(ctx context.Context, w, prev *domain.Webhook) error
	// DeleteWebhook removes the webhook if unchanged since read; a missing one is not found.
	DeleteWebhook(ctx context.Context, w *domain.Webhook) error
}

// MaxWebhooksPerCompany bounds the webhooks of a company: every event reads them all.
const MaxWebhooksPerCompany = 20

// PreviousSecretTTL is how long a rotated-out secret keeps signing beside the new one.
const PreviousSecretTTL = 24 * time.Hour

// SecretPrefix starts every signing secret, as the Standard Webhooks libraries expect.
const SecretPrefix = "whsec_"

// secretBytes is the size of a signing key (the specification asks for 24 to 64).
const secretBytes = 32

// Service implements the webhook use cases.
type Service struct {
	store Store
	guard netguard.Policy
	now   func() time.Time
	audit audit.Recorder // nil: webhooks cannot be created, changed, rotated or deleted (WithAudit)
}

// New builds the service; guard is the address policy a webhook's URL is held to (the
// operator's allowed hosts: loopback locally, none on AWS).
func New(store Store, guard netguard.Policy) *Service {
	return &Service{store: store, guard: guard, now: time.Now}
}

// WithAudit makes s record the webhooks callers create, change, rotate and delete (each one
// record after the store's write). Without it those calls are refused before anything changes.
func (s *Service) WithAudit(r audit.Recorder) *Service {
	s.audit = r
	return s
}

// errNoAudit refuses an audited action of a service built without its recorder.
var errNoAudit = errors.New("audit recorder not configured: refusing an unrecorded change")

// SetClock replaces the service's clock (tests of rotation).
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// NewSecret is a fresh signing secret: whsec_ and the base64 of 32 random bytes.
func NewSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Create stores a webhook for p's company with a new secret; the returned webhook carries the
// secret, which no other answer shows.
func (s *Service) Create(ctx context.Context, p domain.Principal, in CreateInput) (*domain.Webhook, error) {
	if s.audit == nil {
		return nil, errNoAudit
	}
	if errs := in.Validate(s.guard); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	now := s.now().UTC()
	w := &domain.Webhook{ID: uuid.NewString(), Company: p.Company, CreatedBy: p.KeyID, URL: *in.URL,
		Events: dedupe(*in.Events), Description: in.Description, Enabled: in.Enabled == nil || *in.Enabled,
		Secret: NewSecret(), CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateWebhook(ctx, w, MaxWebhooksPerCompany); err != nil {
		return nil, storeErr("create webhook", w.ID, err)
	}
	if err := s.audit.Record(ctx, p, audit.WebhookCreated, w.ID); err != nil {
		return nil, err
	}
	return w, nil
}

// Get reads one of p's company's webhooks.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (*domain.Webhook, error) {
	if uuid.Validate(id) != nil {
		return nil, notFound(id) // ids are UUIDs; anything else would only reach the store to miss
	}
	w, err := s.store.GetWebhook(ctx, p.Company, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("get webhook %s: %w", id, err)
	}
	return w, nil
}

// List is a page of p's company's webhooks, newest first, and whether more follow.
func (s *Service) List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Webhook, bool, error) {
	all, err := s.store.ListWebhooks(ctx, p.Company)
	if err != nil {
		return nil, false, fmt.Errorf("list webhooks: %w", err)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID < all[j].ID
	})
	if offset >= len(all) {
		return []*domain.Webhook{}, false, nil
	}
	end := min(offset+limit, len(all))
	return all[offset:end], end < len(all), nil
}

// Update changes a webhook. Enabling it again clears the reason the service disabled it for.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, in UpdateInput) (*domain.Webhook, error) {
	if s.audit == nil {
		return nil, errNoAudit
	}
	if errs := in.Validate(s.guard); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	prev, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	w := *prev
	if in.URL.Set {
		w.URL = in.URL.Value
	}
	if in.Events.Set {
		w.Events = dedupe(in.Events.Value)
	}
	if in.Description.Set {
		w.Description = in.Description.Value
	}
	if in.Enabled.Set {
		w.Enabled = in.Enabled.Value
		if w.Enabled {
			w.DisabledReason = ""
		}
	}
	return s.recorded(ctx, p, audit.WebhookUpdated, &w, prev)
}

// RotateSecret gives the webhook a new secret, returned once; the old one signs beside it for
// PreviousSecretTTL.
func (s *Service) RotateSecret(ctx context.Context, p domain.Principal, id string) (*domain.Webhook, error) {
	if s.audit == nil {
		return nil, errNoAudit
	}
	prev, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	w := *prev
	w.PreviousSecret, w.PreviousUntil = prev.Secret, s.now().UTC().Add(PreviousSecretTTL)
	w.Secret = NewSecret()
	return s.recorded(ctx, p, audit.WebhookSecretRotated, &w, prev)
}

// Disable turns a webhook off for reason (its endpoint answered 410 Gone); one already off or
// gone is left as it is.
func (s *Service) Disable(ctx context.Context, company, id, reason string) error {
	prev, err := s.store.GetWebhook(ctx, company, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get webhook %s: %w", id, err)
	}
	if !prev.Enabled {
		return nil
	}
	w := *prev
	w.Enabled, w.DisabledReason = false, reason
	_, err = s.replace(ctx, &w, prev)
	return err
}

// Delete removes a webhook; deliveries already queued for it find it gone and stop.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	if s.audit == nil {
		return errNoAudit
	}
	w, err := s.Get(ctx, p, id)
	if err != nil {
		return err
	}
	if err := s.store.DeleteWebhook(ctx, w); err != nil {
		return storeErr("delete webhook", id, err)
	}
	return s.audit.Record(ctx, p, audit.WebhookDeleted, id)
}

// recorded replaces prev by w and records action on it.
func (s *Service) recorded(ctx context.Context, p domain.Principal, action string, w, prev *domain.Webhook) (*domain.Webhook, error) {
	w, err := s.replace(ctx, w, prev)
	if err != nil {
		return nil, err
	}
	if err := s.audit.Record(ctx, p, action, w.ID); err != nil {
		return nil, err
	}
	return w, nil
}

func (s *Service) replace(ctx context.Context, w, prev *domain.Webhook) (*domain.Webhook, error) {
	w.UpdatedAt = s.later(prev.UpdatedAt)
	if err := s.store.UpdateWebhook(ctx, w, prev); err != nil {
		return nil, storeErr("update webhook", w.ID, err)
	}
	return w, nil
}

// later is now, or just after prev when the clock has not moved past it, so that every write
// changes UpdatedAt (the store's optimistic lock).
func (s *Service) later(prev time.Time) time.Time {
	now := s.now().UTC()
	if !now.After(prev) {
		now = prev.Add(time.Microsecond)
	}
	return now
}

func notFound(ref string) error {
	return domain.Errorf(domain.KindNotFound, "Webhook %s not found", domain.Clip(ref, 80))
}

// storeErr wraps a store failure: the limit as the 409 that names it, a vanished webhook as not
// found, a concurrent change as the conflict it is.
func storeErr(op, id string, err error) error {
	switch {
	case errors.Is(err, domain.ErrWebhookLimit):
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf(
			"Your company has %d webhooks, the most it may have; delete one before creating another", MaxWebhooksPerCompany), Err: err}
	case domain.KindOf(err) == domain.KindNotFound:
		return notFound(id)
	case domain.KindOf(err) == domain.KindConflict:
		return &domain.Error{Kind: domain.KindConflict, Message: "The webhook was changed concurrently; retry", Err: err}
	}
	return fmt.Errorf("%s %s: %w", op, id, err)
}
