package a2aserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// Push notifications (tasks/pushNotificationConfig/*, and configuration.pushNotificationConfig
// on message/send): a task's configs are stored under its company (Pushes, their token and
// credentials sealed), and the webhooks' delivery function pushes the task to each when its
// execution ends or pauses (webhooks.Deliverer.WithPushes, with TaskBodies as the body).

// Pushes keeps the push configs of tasks (webhooks.SealedPushes over dynamo.Store): the port the
// delivery function reads them through.
type Pushes = webhooks.PushStore

// Events queues an event for the delivery function (webhooks.Deliverer.Publish).
type Events interface {
	Publish(ctx context.Context, ev domain.WebhookEvent) error
}

// Option adds to what Serve offers.
type Option func(*server)

// WithPushes offers push notifications: configs kept in pushes, a task that had already ended
// when its config was set pushed through events, every URL held to check (the address guard's,
// which the delivery's client holds every dial to as well).
func WithPushes(pushes Pushes, events Events, check func(*url.URL) error) Option {
	return func(s *server) { s.pushes, s.events, s.checkURL = pushes, events, check }
}

const maxPushID = 128

// errNoPush answers the push methods when push notifications are not offered.
var errNoPush = &rpcError{msg: "Push notifications are not offered", kind: a2a.ErrPushNotificationNotSupported}

// pushOf is a client's push config as ours, checked: an absolute http(s) URL the guard allows,
// an id of at most 128 printable characters.
func (h *handler) pushOf(c *call, cfg *a2a.PushConfig) (*domain.TaskPush, error) {
	if h.s.pushes == nil {
		return nil, errNoPush
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, invalidParams("pushNotificationConfig.url must be an absolute http or https URL")
	}
	if h.s.checkURL != nil {
		if err := h.s.checkURL(u); err != nil {
			return nil, invalidParams("pushNotificationConfig.url is not allowed: " + domain.Clip(err.Error(), 200))
		}
	}
	if len(cfg.ID) > maxPushID || strings.IndexFunc(cfg.ID, func(r rune) bool { return r < 0x21 || r == 0x7f }) >= 0 {
		return nil, invalidParams("pushNotificationConfig.id must be at most 128 printable characters")
	}
	p := &domain.TaskPush{ID: cfg.ID, Company: c.p.Company, Owner: c.p.Owner, URL: cfg.URL, Token: cfg.Token}
	if cfg.Auth != nil {
		p.Schemes, p.Credentials = cfg.Auth.Schemes, cfg.Auth.Credentials
	}
	return p, nil
}

// setPush stores p for the task (sessionID, execID), once the task is known to be the caller's
// and its agent's; a task already ended or paused is pushed at once (its event may have been
// fanned out before the config was stored).
func (h *handler) setPush(ctx context.Context, c *call, sessionID, execID string, p *domain.TaskPush) (*a2a.TaskPushConfig, error) {
	id := taskID(sessionID, execID)
	p.SessionID, p.ExecutionID, p.CreatedAt = sessionID, execID, time.Now().UTC()
	if p.ID == "" {
		p.ID = string(id)
	}
	if _, err := h.s.pushes.GetTaskPush(ctx, c.p.Company, sessionID, execID, p.ID); domain.KindOf(err) == domain.KindNotFound {
		list, err := h.s.pushes.ListTaskPushes(ctx, c.p.Company, sessionID, execID)
		if err != nil {
			return nil, err
		}
		if len(list) >= domain.MaxTaskPushes {
			return nil, invalidParams(fmt.Sprintf("A task has at most %d push notification configs", domain.MaxTaskPushes))
		}
	} else if err != nil {
		return nil, err
	}
	if err := h.s.pushes.PutTaskPush(ctx, p); err != nil {
		return nil, err
	}
	_, e, _, err := h.s.runs.GetExecution(ctx, c.p, sessionID, execID)
	if domain.KindOf(err) == domain.KindNotFound {
		// No such task (set names one in a session of the caller's): the config goes too.
		_ = h.s.pushes.DeleteTaskPush(ctx, c.p.Company, sessionID, execID, p.ID)
	}
	if err != nil {
		return nil, err
	}
	switch e.Status {
	case domain.ExecCompleted, domain.ExecFailed, domain.ExecCancelled, domain.ExecRequiresAction:
		if err := h.s.events.Publish(context.WithoutCancel(ctx), domain.WebhookEvent{Type: domain.EventTaskPush, Company: c.p.Company,
			Data: map[string]string{"session_id": sessionID, "execution_id": execID, "status": e.Status}}); err != nil {
			return nil, err
		}
	}
	return pushView(id, p, true), nil
}

// pushView is a stored config as A2A shows it: never its credentials, its token only to the
// caller that just set it.
func pushView(id a2a.TaskID, p *domain.TaskPush, withToken bool) *a2a.TaskPushConfig {
	v := &a2a.TaskPushConfig{TaskID: id, Config: a2a.PushConfig{ID: p.ID, URL: p.URL}}
	if withToken {
		v.Config.Token = p.Token
	}
	if len(p.Schemes) > 0 {
		v.Config.Auth = &a2a.PushAuthInfo{Schemes: p.Schemes}
	}
	return v
}

// pushTask is the session and execution of a task of the call's agent the caller may read (or
// write): not found otherwise.
func (h *handler) pushTask(ctx context.Context, c *call, id a2a.TaskID, scope string) (string, string, error) {
	if h.s.pushes == nil {
		return "", "", errNoPush
	}
	if !c.p.Can(scope) {
		return "", "", c.fail(h.s, domain.ErrPermission)
	}
	sid, eid, ok := splitTaskID(id)
	if !ok {
		return "", "", taskNotFound(id)
	}
	sess, err := h.s.runs.Get(ctx, c.p, sid)
	if domain.KindOf(err) == domain.KindNotFound || domain.KindOf(err) == domain.KindPermission || (err == nil && sess.AgentID != c.agent.ID) {
		return "", "", taskNotFound(id)
	}
	if err != nil {
		return "", "", c.fail(h.s, err)
	}
	return sid, eid, nil
}

// OnSetTaskPushConfig stores a push config of a task (tasks/pushNotificationConfig/set); one of
// the same id is replaced.
func (h *handler) OnSetTaskPushConfig(ctx context.Context, in *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	c := callOf(ctx)
	sid, eid, err := h.pushTask(ctx, c, in.TaskID, domain.ScopeSessionsWrite)
	if err != nil {
		return nil, err
	}
	p, err := h.pushOf(c, &in.Config)
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	v, err := h.setPush(ctx, c, sid, eid, p)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, taskNotFound(in.TaskID)
	}
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	return v, nil
}

// OnGetTaskPushConfig answers one push config of a task (tasks/pushNotificationConfig/get); with
// no id, the one set without an id.
func (h *handler) OnGetTaskPushConfig(ctx context.Context, in *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	c := callOf(ctx)
	sid, eid, err := h.pushTask(ctx, c, in.TaskID, domain.ScopeSessionRead)
	if err != nil {
		return nil, err
	}
	id := in.ConfigID
	if id == "" {
		id = string(in.TaskID)
	}
	p, err := h.s.pushes.GetTaskPush(ctx, c.p.Company, sid, eid, id)
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, invalidParams("Push notification config " + domain.Clip(id, 80) + " not found")
	}
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	return pushView(in.TaskID, p, false), nil
}

// OnListTaskPushConfig answers every push config of a task (tasks/pushNotificationConfig/list).
func (h *handler) OnListTaskPushConfig(ctx context.Context, in *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	c := callOf(ctx)
	sid, eid, err := h.pushTask(ctx, c, in.TaskID, domain.ScopeSessionRead)
	if err != nil {
		return nil, err
	}
	list, err := h.s.pushes.ListTaskPushes(ctx, c.p.Company, sid, eid)
	if err != nil {
		return nil, c.fail(h.s, err)
	}
	out := make([]*a2a.TaskPushConfig, len(list))
	for i, p := range list {
		out[i] = pushView(in.TaskID, p, false)
	}
	return out, nil
}

// OnDeleteTaskPushConfig removes a push config of a task (tasks/pushNotificationConfig/delete);
// an absent one is removed already.
func (h *handler) OnDeleteTaskPushConfig(ctx context.Context, in *a2a.DeleteTaskPushConfigParams) error {
	c := callOf(ctx)
	sid, eid, err := h.pushTask(ctx, c, in.TaskID, domain.ScopeSessionsWrite)
	if err != nil {
		return err
	}
	if err := h.s.pushes.DeleteTaskPush(ctx, c.p.Company, sid, eid, in.ConfigID); err != nil {
		return c.fail(h.s, err)
	}
	return nil
}

// TaskReader reads an execution and its messages (sessions.Service).
type TaskReader interface {
	GetExecution(ctx context.Context, p domain.Principal, sessionID, execID string) (*domain.Session, *domain.Execution, []domain.Message, error)
}

// TaskBodies renders a push notification's body (webhooks.Tasks): the task as tasks/get answers
// it, read as the key's owner that set the config.
type TaskBodies struct{ Runs TaskReader }

// TaskBody is the JSON of the task of p.
func (b TaskBodies) TaskBody(ctx context.Context, p *domain.TaskPush) ([]byte, error) {
	as := domain.Principal{Company: p.Company, Owner: p.Owner, Scopes: []string{domain.ScopeSessionRead}}
	_, e, msgs, err := b.Runs.GetExecution(ctx, as, p.SessionID, p.ExecutionID)
	if err != nil {
		return nil, err
	}
	return json.Marshal(task(p.SessionID, e, msgs, nil))
}
