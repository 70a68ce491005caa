package webhooks

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/agentorch/agentorch/shared/domain"
)

// A2A push notifications ride the same queue, retries and guarded client as the webhooks: an
// execution event's fan-out also reads the push configs of its task (one Query, in the delivery
// function, so the execute's path is unchanged) and queues one push job per config; the job's
// attempt POSTs the task as A2A shows it (Tasks) with the config's token and authorization
// instead of the Standard Webhooks envelope and signature. A failed attempt is given back to
// the queue as a webhook's is (DeliveryBackoff), until the queue's dead-letter queue takes it.

// PushStore keeps the push configs of A2A tasks (dynamo.Store).
type PushStore interface {
	PutTaskPush(ctx context.Context, p *domain.TaskPush) error
	GetTaskPush(ctx context.Context, company, sessionID, execID, id string) (*domain.TaskPush, error)
	ListTaskPushes(ctx context.Context, company, sessionID, execID string) ([]*domain.TaskPush, error)
	DeleteTaskPush(ctx context.Context, company, sessionID, execID, id string) error
}

// Tasks renders the body of a push: the task of p's execution as A2A's tasks/get answers it
// (a2aserve.TaskBodies).
type Tasks interface {
	TaskBody(ctx context.Context, p *domain.TaskPush) ([]byte, error)
}

// WithPushes is d delivering A2A push notifications too: the configs in pushes (sealed, so
// that their tokens open), their bodies rendered by tasks.
func (d *Deliverer) WithPushes(pushes PushStore, tasks Tasks) *Deliverer {
	c := *d
	c.pushes, c.tasks = pushes, tasks
	return &c
}

type pushJob struct {
	Company     string            `json:"company"`
	SessionID   string            `json:"session_id"`
	ExecutionID string            `json:"execution_id"`
	ID          string            `json:"id"`
	Type        string            `json:"type"` // the event's, which the state of the task pushed follows
	Trace       map[string]string `json:"trace,omitempty"`
}

// fanPushes queues one push job per push config of the execution ev tells of.
func (d *Deliverer) fanPushes(ctx context.Context, ev *eventJob) error {
	sid, eid := ev.Data["session_id"], ev.Data["execution_id"]
	if d.pushes == nil || sid == "" || eid == "" {
		return nil
	}
	list, err := d.pushes.ListTaskPushes(ctx, ev.Company, sid, eid)
	if err != nil {
		return retryable(fmt.Errorf("list push configs of %s.%s: %w", sid, eid, err))
	}
	for _, p := range list {
		b, _ := json.Marshal(job{Push: &pushJob{Company: ev.Company, SessionID: sid, ExecutionID: eid, ID: p.ID, Type: ev.Type, Trace: traceOf(ctx)}})
		if err := d.queue.Send(ctx, string(b), ""); err != nil {
			return retryable(fmt.Errorf("queue push %s: %w", p.ID, err))
		}
	}
	return nil
}

// attemptPush POSTs the task to a push config's URL once: 2xx ends it, so does a config
// deleted since; anything else is retried (a retryable error).
func (d *Deliverer) attemptPush(ctx context.Context, j *pushJob) error {
	if d.pushes == nil || d.tasks == nil {
		return errors.New("push job: this deliverer sends no push notifications") // the dead-letter queue keeps it
	}
	p, err := d.pushes.GetTaskPush(ctx, j.Company, j.SessionID, j.ExecutionID, j.ID)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil
	}
	if err != nil {
		return retryable(fmt.Errorf("get push config %s: %w", j.ID, err))
	}
	body, err := d.tasks.TaskBody(ctx, p)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil // the session went
	}
	if err != nil {
		return retryable(fmt.Errorf("render the task of push %s: %w", j.ID, err))
	}
	code, why := d.postPush(ctx, p, body)
	if code >= 200 && code < 300 {
		return nil
	}
	return retryable(fmt.Errorf("push %s to task %s.%s: %s", j.ID, j.SessionID, j.ExecutionID, why))
}

func (d *Deliverer) postPush(ctx context.Context, p *domain.TaskPush, body []byte) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "the URL cannot be requested"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentorch-webhooks/1")
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	SetPushHeaders(req.Header, p)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, domain.Clip(attemptError(err), maxErrorLength)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return resp.StatusCode, "the endpoint answered " + strconv.Itoa(resp.StatusCode)
}

// SetPushHeaders sets a push notification's headers of p: its token as
// X-A2A-Notification-Token, and Authorization: Bearer <credentials> when its authentication
// names the bearer scheme and carries credentials.
func SetPushHeaders(h http.Header, p *domain.TaskPush) {
	if p.Token != "" {
		h.Set("X-A2A-Notification-Token", p.Token)
	}
	if p.Credentials == "" {
		return
	}
	for _, s := range p.Schemes {
		if strings.EqualFold(s, "bearer") {
			h.Set("Authorization", "Bearer "+p.Credentials)
			return
		}
	}
}

// SealedPushes is store with the push configs' tokens and credentials sealed at rest, bound to
// their task and config; a read of one opens them, a list carries none.
func SealedPushes(store PushStore, s Sealer) PushStore {
	return &sealedPushes{PushStore: store, seal: s}
}

type sealedPushes struct {
	PushStore
	seal Sealer
}

func pushAAD(p *domain.TaskPush, slot string) []byte {
	return []byte("taskpush\x00" + p.Company + "\x00" + p.SessionID + "." + p.ExecutionID + "\x00" + p.ID + "\x00" + slot)
}

func (s *sealedPushes) PutTaskPush(ctx context.Context, p *domain.TaskPush) error {
	c := *p
	for slot, v := range map[string]*string{"token": &c.Token, "credentials": &c.Credentials} {
		if *v == "" {
			continue
		}
		b, err := s.seal.Seal(ctx, []byte(*v), pushAAD(p, slot))
		if err != nil {
			return fmt.Errorf("seal the %s of push config %s: %w", slot, p.ID, err)
		}
		*v = sealedPrefix + base64.StdEncoding.EncodeToString(b)
	}
	return s.PushStore.PutTaskPush(ctx, &c)
}

func (s *sealedPushes) GetTaskPush(ctx context.Context, company, sessionID, execID, id string) (*domain.TaskPush, error) {
	p, err := s.PushStore.GetTaskPush(ctx, company, sessionID, execID, id)
	if err != nil {
		return nil, err
	}
	for slot, v := range map[string]*string{"token": &p.Token, "credentials": &p.Credentials} {
		rest, ok := strings.CutPrefix(*v, sealedPrefix)
		if !ok {
			if *v != "" {
				return nil, fmt.Errorf("the %s of push config %s is not sealed", slot, id)
			}
			continue
		}
		b, err := base64.StdEncoding.DecodeString(rest)
		if err == nil {
			b, err = s.seal.Open(ctx, b, pushAAD(p, slot))
		}
		if err != nil {
			return nil, fmt.Errorf("open the %s of push config %s: %w", slot, id, err)
		}
		*v = string(b)
	}
	return p, nil
}

func (s *sealedPushes) ListTaskPushes(ctx context.Context, company, sessionID, execID string) ([]*domain.TaskPush, error) {
	list, err := s.PushStore.ListTaskPushes(ctx, company, sessionID, execID)
	if err != nil {
		return nil, err
	}
	for _, p := range list {
		p.Token, p.Credentials = "", ""
	}
	return list, nil
}
