package webhooks

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // names a delivery; no secret rests on it
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

// Delivery: an event is published with one queue message (Publish, no store call on the
// publisher's path); the delivery function fans it out (Fan: one Query of the company's
// webhooks, one delivery record and one queue message per subscribed webhook) and makes each
// attempt (Attempt), which a retryable error gives back to the queue for a later try.

// The retry schedule: the queue redelivers a failed attempt after RetryFloor of its attempt
// (plus up to a quarter more, platform.Backoff's spread), for MaxAttempts attempts in all, then
// the dead-letter queue. The floors of 11 attempts add up to 25.6 hours.
const (
	RetryBase   = 90 * time.Second
	RetryMax    = 12 * time.Hour // SQS's longest visibility timeout
	MaxAttempts = 11
	// AttemptTimeout bounds one POST, from dialling to the end of the answer's headers.
	AttemptTimeout = 10 * time.Second
	maxErrorLength = 300
)

// RetryFloor is the wait after the n-th failed attempt (1 for the first) before the next,
// without the spread: RetryBase doubling with each attempt, at most RetryMax.
func RetryFloor(n int) time.Duration {
	d := RetryBase << min(max(n-1, 0), 30)
	if d <= 0 || d > RetryMax {
		d = RetryMax
	}
	return d
}

// Queue sends messages to the delivery queue (sqs.Queue).
type Queue interface {
	Send(ctx context.Context, body, group string) error
}

// DeliveryStore records deliveries and their attempts.
type DeliveryStore interface {
	// CreateDelivery stores a new delivery (no attempts yet); a taken id is a conflict.
	CreateDelivery(ctx context.Context, d *domain.WebhookDelivery) error
	// GetDelivery reads one delivery of a company's webhook; another's is not found.
	GetDelivery(ctx context.Context, company, webhookID, id string) (*domain.WebhookDelivery, error)
	// AddAttempt appends a to the delivery's attempts and sets its status.
	AddAttempt(ctx context.Context, company, webhookID, id string, a domain.WebhookAttempt, status string) error
	// ListDeliveries is a page of a webhook's deliveries, newest first, and whether more follow.
	ListDeliveries(ctx context.Context, company, webhookID string, offset, limit int) ([]*domain.WebhookDelivery, bool, error)
}

// Doer sends one request: an HTTP client under the address guard that follows no redirect.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// job is a delivery queue message: an event to fan out (Event set), an attempt of one
// delivery (Delivery set) or of one A2A push notification (Push set).
type job struct {
	Event    *eventJob    `json:"event,omitempty"`
	Delivery *deliveryJob `json:"delivery,omitempty"`
	Push     *pushJob     `json:"push,omitempty"`
}

type eventJob struct {
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	Company   string            `json:"company"`
	CreatedAt time.Time         `json:"created_at"`
	Data      map[string]string `json:"data"`
	// Trace is the W3C trace context (traceparent, tracestate) the event was published under,
	// passed on to each delivery's POST; absent when there was none.
	Trace map[string]string `json:"trace,omitempty"`
}

type deliveryJob struct {
	Company   string            `json:"company"`
	WebhookID string            `json:"webhook_id"`
	ID        string            `json:"id"`
	Trace     map[string]string `json:"trace,omitempty"`
}

// traceOf is the W3C trace context of ctx, nil when it carries none.
func traceOf(ctx context.Context) map[string]string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// withTrace is ctx carrying the trace context t (traceOf's) as its remote parent.
func withTrace(ctx context.Context, t map[string]string) context.Context {
	if len(t) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(t))
}

// payload is the body of every attempt: {id, type, created_at, data}.
type payload struct {
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	CreatedAt time.Time         `json:"created_at"`
	Data      map[string]string `json:"data"`
}

// Deliverer publishes events and makes deliveries.
type Deliverer struct {
	hooks  Store
	store  DeliveryStore
	queue  Queue
	client Doer
	svc    *Service
	now    func() time.Time
	pushes PushStore // nil: no A2A push notifications (WithPushes)
	tasks  Tasks
}

// NewDeliverer builds the delivery side; client must be guarded and follow no redirect
// (Client).
func NewDeliverer(hooks Store, store DeliveryStore, queue Queue, client Doer) *Deliverer {
	return &Deliverer{hooks: hooks, store: store, queue: queue, client: client, svc: &Service{store: hooks, now: time.Now}, now: time.Now}
}

// Publish queues ev for the company's webhooks: one queue message, no store call, so an
// execution's end pays one SQS send whether or not the company has webhooks.
func (d *Deliverer) Publish(ctx context.Context, ev domain.WebhookEvent) error {
	if ev.ID == "" {
		ev.ID = "evt_" + uuid.Must(uuid.NewV7()).String()
	}
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = d.now().UTC()
	}
	b, err := json.Marshal(job{Event: &eventJob{ID: ev.ID, Type: ev.Type, Company: ev.Company, CreatedAt: ev.CreatedAt, Data: ev.Data, Trace: traceOf(ctx)}})
	if err != nil {
		return err
	}
	if err := d.queue.Send(ctx, string(b), ""); err != nil {
		return fmt.Errorf("publish %s: %w", ev.Type, err)
	}
	return nil
}

// Process handles one delivery queue message. A retryable error (the endpoint failed, a
// dependency is down) gives the message back for a later try.
func (d *Deliverer) Process(ctx context.Context, body string) error {
	var j job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return fmt.Errorf("webhook job: %w", err) // not retryable: the dead-letter queue keeps it
	}
	switch {
	case j.Event != nil:
		return d.fan(withTrace(ctx, j.Event.Trace), j.Event)
	case j.Delivery != nil:
		return d.attempt(withTrace(ctx, j.Delivery.Trace), j.Delivery)
	case j.Push != nil:
		return d.attemptPush(withTrace(ctx, j.Push.Trace), j.Push)
	}
	return errors.New("webhook job: neither an event nor a delivery")
}

// fan makes one delivery per enabled webhook of the company that subscribes to the event.
// Each delivery's id is derived from the event and the webhook, so a fan-out run twice (the
// queue's at-least-once) makes the same deliveries, and a taken id is skipped.
func (d *Deliverer) fan(ctx context.Context, ev *eventJob) error {
	// The task's A2A push notifications first: a repeat of the fan-out (a webhook's failure
	// below) queues them again, which their receivers tell apart by the task's state.
	if err := d.fanPushes(ctx, ev); err != nil || ev.Type == domain.EventTaskPush {
		return err
	}
	hooks, err := d.hooks.ListWebhooks(ctx, ev.Company)
	if err != nil {
		return retryable(fmt.Errorf("list webhooks of %s: %w", ev.Company, err))
	}
	body, err := json.Marshal(payload{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt, Data: ev.Data})
	if err != nil {
		return err
	}
	for _, w := range hooks {
		if !w.Subscribes(ev.Type) {
			continue
		}
		del := &domain.WebhookDelivery{ID: messageID(ev.ID, ev.CreatedAt, w.ID), WebhookID: w.ID, Company: w.Company, EventType: ev.Type,
			Payload: body, Status: domain.DeliveryPending, Attempts: []domain.WebhookAttempt{}, CreatedAt: d.now().UTC()}
		if err := d.store.CreateDelivery(ctx, del); err != nil && domain.KindOf(err) != domain.KindConflict {
			return retryable(fmt.Errorf("record delivery to %s: %w", w.ID, err))
		}
		if err := d.enqueue(ctx, del); err != nil {
			return retryable(err)
		}
	}
	return nil
}

// messageID is the webhook-id of the delivery of an event to a webhook, the same whenever the
// fan-out runs: msg_, the event's time in milliseconds as 12 hex digits (so ids sort by time,
// newest last) and 20 hex digits of a SHA-1 of the event and the webhook.
func messageID(eventID string, at time.Time, webhookID string) string {
	sum := sha1.Sum([]byte(eventID + "/" + webhookID))
	return fmt.Sprintf("msg_%012x%s", at.UnixMilli(), hex.EncodeToString(sum[:10]))
}

func (d *Deliverer) enqueue(ctx context.Context, del *domain.WebhookDelivery) error {
	b, _ := json.Marshal(job{Delivery: &deliveryJob{Company: del.Company, WebhookID: del.WebhookID, ID: del.ID, Trace: traceOf(ctx)}})
	if err := d.queue.Send(ctx, string(b), ""); err != nil {
		return fmt.Errorf("queue delivery %s: %w", del.ID, err)
	}
	return nil
}

// attempt POSTs a delivery once and records the attempt: 2xx ends it, 410 disables the
// webhook and ends it, anything else is retried until MaxAttempts (a retryable error) and then
// recorded as failed. A webhook deleted or turned off ends it unattempted.
func (d *Deliverer) attempt(ctx context.Context, j *deliveryJob) error {
	del, err := d.store.GetDelivery(ctx, j.Company, j.WebhookID, j.ID)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil // gone with its webhook
	}
	if err != nil {
		return retryable(fmt.Errorf("get delivery %s: %w", j.ID, err))
	}
	if del.Status != domain.DeliveryPending {
		return nil // a repeat of a message whose delivery ended
	}
	w, err := d.hooks.GetWebhook(ctx, j.Company, j.WebhookID)
	if domain.KindOf(err) == domain.KindNotFound || err == nil && !w.Enabled {
		return d.record(ctx, del, domain.WebhookAttempt{At: d.now().UTC(), Error: "the webhook was deleted or turned off"}, domain.DeliveryFailed)
	}
	if err != nil {
		return retryable(fmt.Errorf("get webhook %s: %w", j.WebhookID, err))
	}
	a, code := d.post(ctx, w, del)
	n := len(del.Attempts) + 1
	switch {
	case code >= 200 && code < 300:
		return d.record(ctx, del, a, domain.DeliverySucceeded)
	case code == http.StatusGone:
		if err := d.svc.Disable(ctx, w.Company, w.ID, "the endpoint answered 410 Gone"); err != nil {
			return retryable(err)
		}
		return d.record(ctx, del, a, domain.DeliveryFailed)
	case n >= MaxAttempts:
		return d.record(ctx, del, a, domain.DeliveryFailed)
	}
	next := a.At.Add(RetryFloor(n))
	a.NextRetryAt = &next
	if err := d.record(ctx, del, a, domain.DeliveryPending); err != nil {
		return err
	}
	return retryable(fmt.Errorf("delivery %s attempt %d: %s", del.ID, n, a.Error))
}

// post makes the request and describes it; code is 0 when no answer came.
func (d *Deliverer) post(ctx context.Context, w *domain.Webhook, del *domain.WebhookDelivery) (domain.WebhookAttempt, int) {
	start := d.now().UTC()
	a := domain.WebhookAttempt{At: start}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(del.Payload))
	if err != nil {
		a.Error = "the URL cannot be requested"
		return a, 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentorch-webhooks/1")
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header)) // the run's trace, when it had one
	if err := SetHeaders(req.Header, w.Secrets(start), del.ID, start, del.Payload); err != nil {
		a.Error = "the webhook's secret cannot sign"
		return a, 0
	}
	resp, err := d.client.Do(req)
	a.DurationMS = d.now().Sub(start).Milliseconds()
	if err != nil {
		a.Error = domain.Clip(attemptError(err), maxErrorLength)
		return a, 0
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	_ = resp.Body.Close()
	a.StatusCode = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.Error = "the endpoint answered " + strconv.Itoa(resp.StatusCode)
	}
	return a, resp.StatusCode
}

// attemptError says why no answer came, without the URL's query (which may hold a token).
func attemptError(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", AttemptTimeout)
	case errors.Is(err, errNoRedirect):
		return "the endpoint answered a redirect, which is not followed"
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

func (d *Deliverer) record(ctx context.Context, del *domain.WebhookDelivery, a domain.WebhookAttempt, status string) error {
	if err := d.store.AddAttempt(ctx, del.Company, del.WebhookID, del.ID, a, status); err != nil {
		return retryable(fmt.Errorf("record attempt of %s: %w", del.ID, err))
	}
	return nil
}

// retryable marks err as one the queue should try again.
func retryable(err error) error {
	if domain.KindOf(err).Retryable() {
		return err
	}
	return &domain.Error{Kind: domain.KindOverloaded, Message: "webhook delivery failed; retrying", Err: err}
}

// errNoRedirect is what the delivery client answers a redirect with.
var errNoRedirect = errors.New("redirect not followed")

// NoRedirect is an http.Client's CheckRedirect that follows none: a webhook's endpoint answers
// where it was registered, or the attempt fails.
func NoRedirect(*http.Request, []*http.Request) error { return errNoRedirect }

// Deliveries is a page of the deliveries of one of p's company's webhooks, newest first.
func (d *Deliverer) Deliveries(ctx context.Context, p domain.Principal, webhookID string, offset, limit int) ([]*domain.WebhookDelivery, bool, error) {
	if _, err := d.svc.Get(ctx, p, webhookID); err != nil {
		return nil, false, err
	}
	list, more, err := d.store.ListDeliveries(ctx, p.Company, webhookID, offset, limit)
	if err != nil {
		return nil, false, fmt.Errorf("list deliveries of %s: %w", webhookID, err)
	}
	return list, more, nil
}

// Redeliver queues one more attempt of a delivery, with the same webhook-id; a delivery that
// ended (succeeded or failed) is pending again.
func (d *Deliverer) Redeliver(ctx context.Context, p domain.Principal, webhookID, id string) (*domain.WebhookDelivery, error) {
	if _, err := d.svc.Get(ctx, p, webhookID); err != nil {
		return nil, err
	}
	del, err := d.store.GetDelivery(ctx, p.Company, webhookID, id)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, domain.Errorf(domain.KindNotFound, "Delivery %s not found", domain.Clip(id, 80))
	}
	if err != nil {
		return nil, fmt.Errorf("get delivery %s: %w", id, err)
	}
	if del.Status != domain.DeliveryPending {
		now := d.now().UTC()
		a := domain.WebhookAttempt{At: now, Error: "redelivery requested", NextRetryAt: &now}
		if err := d.store.AddAttempt(ctx, del.Company, del.WebhookID, del.ID, a, domain.DeliveryPending); err != nil {
			return nil, fmt.Errorf("redeliver %s: %w", id, err)
		}
		del.Status, del.Attempts = domain.DeliveryPending, append(del.Attempts, a)
	}
	if err := d.enqueue(ctx, del); err != nil {
		return nil, err
	}
	return del, nil
}

// Client is the HTTP client of deliveries: every address dialled held to guard (at dial time,
// so DNS rebinding is refused too), no proxy, no redirect followed. Each attempt's context
// bounds it to AttemptTimeout.
func Client(guard netguard.Policy) *http.Client {
	c := guard.Client(AttemptTimeout)
	c.CheckRedirect = NoRedirect
	return c
}

// CheckJob reports whether body is a delivery queue message Process can act on (the sample
// events' test).
func CheckJob(body string) error {
	var j job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return err
	}
	switch {
	case j.Event != nil && j.Event.Company != "" && j.Event.Type != "":
		return nil
	case j.Delivery != nil && j.Delivery.Company != "" && j.Delivery.WebhookID != "" && j.Delivery.ID != "":
		return nil
	case j.Push != nil && j.Push.Company != "" && j.Push.SessionID != "" && j.Push.ExecutionID != "" && j.Push.ID != "":
		return nil
	}
	return errors.New("webhook job: neither an event nor a delivery")
}
