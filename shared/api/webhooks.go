package api

import (
	"context"
	"net/http"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// WebhookService is what the webhooks endpoints call; webhooks.Service is the implementation.
type WebhookService interface {
	Create(ctx context.Context, p domain.Principal, in webhooks.CreateInput) (*domain.Webhook, error)
	Get(ctx context.Context, p domain.Principal, id string) (*domain.Webhook, error)
	List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Webhook, bool, error)
	Update(ctx context.Context, p domain.Principal, id string, in webhooks.UpdateInput) (*domain.Webhook, error)
	Delete(ctx context.Context, p domain.Principal, id string) error
	RotateSecret(ctx context.Context, p domain.Principal, id string) (*domain.Webhook, error)
}

// WebhookDeliveries is what the deliveries endpoints call; webhooks.Deliverer is the
// implementation.
type WebhookDeliveries interface {
	Deliveries(ctx context.Context, p domain.Principal, webhookID string, offset, limit int) ([]*domain.WebhookDelivery, bool, error)
	Redeliver(ctx context.Context, p domain.Principal, webhookID, id string) (*domain.WebhookDelivery, error)
}

// NewWebhooks is the handler of the webhooks endpoint group alone.
func NewWebhooks(svc WebhookService, dels WebhookDeliveries, opts Options) *Group {
	return newGroup(opts).WithWebhooks(svc, dels)
}

// WithWebhooks adds the webhooks routes to g and returns it. The signing secret is shown by
// create and rotate-secret only.
func (g *Group) WithWebhooks(svc WebhookService, dels WebhookDeliveries) *Group {
	h := &webhookHandlers{svc: svc, g: g}
	// Closures rather than method values, so a group is built (its routes listed) without a service.
	get := func(ctx context.Context, p domain.Principal, id string) (*domain.Webhook, error) {
		return svc.Get(ctx, p, id)
	}
	del := func(ctx context.Context, p domain.Principal, id string) error { return svc.Delete(ctx, p, id) }
	g.handle(http.MethodPost, "/api/v1/webhooks/", false, h.create)
	g.handle(http.MethodGet, "/api/v1/webhooks/", false, listPage(domain.ScopeWebhooksRead, viewedList(
		func(r *http.Request, offset, limit int) ([]*domain.Webhook, bool, error) {
			return svc.List(r.Context(), principal(r), offset, limit)
		}, webhookView)))
	g.handle(http.MethodGet, "/api/v1/webhooks/{id}/", false, getByID(domain.ScopeWebhooksRead, "id", viewed(get, webhookView)))
	g.handle(http.MethodPatch, "/api/v1/webhooks/{id}/", false, h.update)
	g.handle(http.MethodDelete, "/api/v1/webhooks/{id}/", false, deleteByID(domain.ScopeWebhooksWrite, "id", del))
	g.handle(http.MethodPost, "/api/v1/webhooks/{id}/rotate-secret/", false, h.rotate)
	g.handle(http.MethodGet, "/api/v1/webhooks/{id}/deliveries/", false, listPage(domain.ScopeWebhooksRead, viewedList(
		func(r *http.Request, offset, limit int) ([]*domain.WebhookDelivery, bool, error) {
			return dels.Deliveries(r.Context(), principal(r), r.PathValue("id"), offset, limit)
		}, deliveryView)))
	g.handle(http.MethodPost, "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver/", false, func(w http.ResponseWriter, r *http.Request) error {
		if err := require(r, domain.ScopeWebhooksWrite); err != nil {
			return err
		}
		d, err := dels.Redeliver(r.Context(), principal(r), r.PathValue("id"), r.PathValue("delivery_id"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, deliveryView(d))
		return nil
	})
	return g
}

type webhookHandlers struct {
	svc WebhookService
	g   *Group
}

func (h *webhookHandlers) create(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeWebhooksWrite); err != nil {
		return err
	}
	var in webhooks.CreateInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	hook, err := h.svc.Create(r.Context(), principal(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, webhookSecretView(hook))
	return nil
}

func (h *webhookHandlers) update(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeWebhooksWrite); err != nil {
		return err
	}
	var in webhooks.UpdateInput
	if err := decode(w, r, h.g.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	hook, err := h.svc.Update(r.Context(), principal(r), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, webhookView(hook))
	return nil
}

// rotate reads no body: the answer is the webhook with its new secret, shown this once.
func (h *webhookHandlers) rotate(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeWebhooksWrite); err != nil {
		return err
	}
	hook, err := h.svc.RotateSecret(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, webhookSecretView(hook))
	return nil
}

// webhookJSON is a webhook as the API shows it after its creation: never a secret.
type webhookJSON struct {
	ID             string    `json:"id"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Description    string    `json:"description"`
	Enabled        bool      `json:"enabled"`
	DisabledReason *string   `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// webhookSecretJSON is a webhook with its signing secret: the answer of create and
// rotate-secret, the only ones that show it.
type webhookSecretJSON struct {
	ID             string    `json:"id"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Description    string    `json:"description"`
	Enabled        bool      `json:"enabled"`
	DisabledReason *string   `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	Secret         string    `json:"secret"`
}

func webhookView(w *domain.Webhook) webhookJSON {
	v := webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, Description: w.Description, Enabled: w.Enabled,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	if v.Events == nil {
		v.Events = []string{}
	}
	if w.DisabledReason != "" {
		v.DisabledReason = &w.DisabledReason
	}
	return v
}

func webhookSecretView(w *domain.Webhook) webhookSecretJSON {
	v := webhookView(w)
	return webhookSecretJSON{ID: v.ID, URL: v.URL, Events: v.Events, Description: v.Description, Enabled: v.Enabled,
		DisabledReason: v.DisabledReason, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, Secret: w.Secret}
}

// deliveryJSON is one delivery of a webhook and its attempts; the id is the webhook-id header of
// every attempt.
type deliveryJSON struct {
	ID        string        `json:"id"`
	EventType string        `json:"event_type"`
	Status    string        `json:"status"`
	Attempts  []attemptJSON `json:"attempts"`
	CreatedAt time.Time     `json:"created_at"`
}

// attemptJSON is one attempt of a delivery.
type attemptJSON struct {
	At          time.Time  `json:"at"`
	StatusCode  *int       `json:"status_code"`
	DurationMS  int64      `json:"duration_ms"`
	Error       *string    `json:"error"`
	NextRetryAt *time.Time `json:"next_retry_at"`
}

func deliveryView(d *domain.WebhookDelivery) deliveryJSON {
	v := deliveryJSON{ID: d.ID, EventType: d.EventType, Status: d.Status, Attempts: make([]attemptJSON, len(d.Attempts)), CreatedAt: d.CreatedAt}
	for i, a := range d.Attempts {
		v.Attempts[i] = attemptJSON{At: a.At, DurationMS: a.DurationMS, NextRetryAt: a.NextRetryAt}
		if a.StatusCode != 0 {
			v.Attempts[i].StatusCode = &a.StatusCode
		}
		if a.Error != "" {
			v.Attempts[i].Error = &a.Error
		}
	}
	return v
}
