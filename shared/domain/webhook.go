package domain

import (
	"errors"
	"time"
)

// Webhook events: what a company's systems may be told of. Payloads name resource ids and the
// status, never message content.
const (
	EventExecutionCompleted      = "execution.completed"
	EventExecutionFailed         = "execution.failed"
	EventExecutionRequiresAction = "execution.requires_action"
	EventExecutionCancelled      = "execution.cancelled"
	EventIngestionCompleted      = "knowledge_base.ingestion.completed"
	EventIngestionFailed         = "knowledge_base.ingestion.failed"
)

// WebhookEvents lists every event a webhook may subscribe to, in the order the API documents.
var WebhookEvents = []string{EventExecutionCompleted, EventExecutionFailed, EventExecutionRequiresAction,
	EventExecutionCancelled, EventIngestionCompleted, EventIngestionFailed}

// Webhook is a company's endpoint that is told of events, signed per the Standard Webhooks
// specification. Secret is shown once, at creation and at a rotation; the previous secret keeps
// signing beside it until PreviousUntil, so a receiver can roll its own copy over.
type Webhook struct {
	ID          string
	Company     string
	CreatedBy   string // the key that created it
	URL         string
	Events      []string
	Description string
	Enabled     bool
	// DisabledReason says why the service turned the webhook off (its endpoint answered 410);
	// empty when enabled or turned off by the company.
	DisabledReason string
	Secret         string // whsec_ and the base64 of the key
	PreviousSecret string // the secret before the last rotation; empty when none
	PreviousUntil  time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Secrets are the secrets that sign a delivery at now: the current one, and the previous one
// while it is still valid.
func (w *Webhook) Secrets(now time.Time) []string {
	out := []string{w.Secret}
	if w.PreviousSecret != "" && now.Before(w.PreviousUntil) {
		out = append(out, w.PreviousSecret)
	}
	return out
}

// Subscribes reports whether the webhook is enabled and wants event.
func (w *Webhook) Subscribes(event string) bool {
	if !w.Enabled {
		return false
	}
	for _, e := range w.Events {
		if e == event {
			return true
		}
	}
	return false
}

// ErrWebhookLimit is what a store reports (wrapped) when a company has as many webhooks as it
// may; the webhooks feature answers it with a 409 naming the limit.
var ErrWebhookLimit = errors.New("webhook limit reached")

// Delivery statuses.
const (
	DeliveryPending   = "pending"   // attempted or queued, will be tried again
	DeliverySucceeded = "succeeded" // the endpoint answered 2xx
	DeliveryFailed    = "failed"    // given up: out of attempts, the endpoint answered 410, or the webhook is gone or off
)

// WebhookEvent is one thing that happened that webhooks may be told of: its Data names the
// company's resource ids and the status, never content.
type WebhookEvent struct {
	ID        string // evt_…, unique
	Type      string // one of WebhookEvents
	Company   string
	CreatedAt time.Time
	Data      map[string]string
}

// WebhookDelivery is one message to one webhook and its attempts. ID is the webhook-id header of
// every attempt (msg_…, time-ordered), so a receiver can drop a repeat.
type WebhookDelivery struct {
	ID        string
	WebhookID string
	Company   string
	EventType string
	Payload   []byte // the body every attempt sends
	Status    string // DeliveryPending, DeliverySucceeded or DeliveryFailed
	Attempts  []WebhookAttempt
	CreatedAt time.Time
}

// WebhookAttempt is one POST of a delivery.
type WebhookAttempt struct {
	At          time.Time
	StatusCode  int // 0 when no answer came
	DurationMS  int64
	Error       string     // why it failed, when it did; never a response body
	NextRetryAt *time.Time // when the next attempt is due; nil when none will be
}
