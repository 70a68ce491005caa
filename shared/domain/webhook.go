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
