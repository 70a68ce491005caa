// Package sessionstest holds the one in-memory fake of sessions.Store, for the tests of the
// feature and of what is built on it, and StoreSuite, the contract both the fake and the DynamoDB
// adapter pass (shared/dynamo runs it against DynamoDB Local), so that the fake cannot drift.
package sessionstest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// Store keeps sessions and their partitions (messages by number, executions by id, feedback by
// message and user) in memory, with the DynamoDB adapter's conditions: a session id is created
// once; a lease is taken only by the session's owner while no unexpired lease (by the
// millisecond) is held; a commit needs the lease it names and writes nothing when a message
// number is taken. Records are copied in and out through JSON as the adapter's are, so numbers
// in maps read back as json.Number and empty optional lists as none.
type Store struct {
	mu       sync.Mutex
	sessions map[string]*domain.Session
	leases   map[string]lease                        // by session id
	msgs     map[string]map[int]domain.Message       // session id → seq → message
	msgIndex map[string]string                       // message id → session id
	execs    map[string]map[string]*domain.Execution // session id → execution id → execution
	feedback map[string]map[string]*domain.Feedback  // session id → message id + "#" + user → feedback
	watch    map[string]watchEntry                   // session id + "/" + execution id → on the watchdog's list (watch.go)
	keys     map[string]*domain.IdempotencyRecord    // company + "/" + Idempotency-Key (keys.go)
}

type lease struct {
	id     string
	until  int64  // Unix milliseconds, as the adapter stores it
	exec   string // the execution the lease runs (AcquireRun, ExtendLease)
	cancel bool   // a cancel of the run under this lease was asked for (RequestCancel)
}

var _ sessions.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{sessions: map[string]*domain.Session{}, leases: map[string]lease{}, msgs: map[string]map[int]domain.Message{},
		msgIndex: map[string]string{}, execs: map[string]map[string]*domain.Execution{}, feedback: map[string]map[string]*domain.Feedback{},
		watch: map[string]watchEntry{}, keys: map[string]*domain.IdempotencyRecord{}}
}

// maxLeaseID is the adapter's bound on lease ids.
const maxLeaseID = 64

// CreateSession implements sessions.Store.
func (s *Store) CreateSession(_ context.Context, sess *domain.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[sess.ID]; ok {
		return fmt.Errorf("create session %s: %w", sess.ID, domain.ErrConflict)
	}
	c, err := roundTrip(sess)
	if err != nil {
		return err
	}
	s.sessions[sess.ID] = c
	return nil
}

// GetSession implements sessions.Store.
func (s *Store) GetSession(_ context.Context, id string) (*domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	c := copyOf(sess)
	if l, held := s.leases[id]; held && l.exec != "" && l.until >= time.Now().UnixMilli() {
		c.ActiveExecutionID = l.exec
	}
	return c, nil
}

// ListSessions implements sessions.Store: newest first by CreatedAt, then by id (descending),
// as the adapter's index sorts them.
func (s *Store) ListSessions(_ context.Context, company, owner string, offset, limit int) ([]*domain.Session, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var list []*domain.Session
	for _, sess := range s.sessions {
		if sess.Company == company && sess.Owner == owner {
			list = append(list, sess)
		}
	}
	slices.SortFunc(list, func(a, b *domain.Session) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	out := make([]*domain.Session, 0, limit)
	for i, sess := range list {
		if i < offset {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, copyOf(sess))
	}
	return out, false, nil
}

// DeleteSession implements sessions.Store: the session and its whole partition.
func (s *Store) DeleteSession(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[id]; !ok {
		return domain.ErrNotFound
	}
	for _, m := range s.msgs[id] {
		delete(s.msgIndex, m.ID)
	}
	delete(s.sessions, id)
	delete(s.leases, id)
	delete(s.msgs, id)
	delete(s.execs, id)
	delete(s.feedback, id)
	return nil
}

// RenameSession implements sessions.Store.
func (s *Store) RenameSession(_ context.Context, p domain.Principal, id, title string) (*domain.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	switch {
	case !ok:
		return nil, domain.ErrNotFound
	case !sess.CanAccess(p):
		return nil, domain.ErrPermission
	case title != "" && !domain.ValidSessionTitle(title):
		return nil, fmt.Errorf("rename session %s: invalid title", id)
	}
	sess.Title = title
	c := copyOf(sess)
	if l, held := s.leases[id]; held && l.exec != "" && l.until >= time.Now().UnixMilli() {
		c.ActiveExecutionID = l.exec
	}
	return c, nil
}

// AcquireSession takes the lease as the adapter's does.
func (s *Store) AcquireSession(ctx context.Context, p domain.Principal, id, leaseID string, until, now time.Time) (*domain.Session, error) {
	return s.AcquireRun(ctx, p, id, leaseID, "", until, now)
}

// AcquireRun implements sessions.Store.
func (s *Store) AcquireRun(_ context.Context, p domain.Principal, id, leaseID, execID string, until, now time.Time) (*domain.Session, error) {
	if len(leaseID) > maxLeaseID {
		return nil, fmt.Errorf("lease id of %d bytes, more than %d", len(leaseID), maxLeaseID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	l, held := s.leases[id]
	switch {
	case !ok:
		return nil, domain.ErrNotFound
	case !sess.CanAccess(p):
		return nil, domain.ErrPermission
	case held && l.until >= now.UnixMilli() && l.id != leaseID:
		return nil, &domain.Error{Kind: domain.KindConflict, Message: "Another execution is running in this session; retry when it has finished"}
	}
	s.leases[id] = lease{id: leaseID, until: until.UnixMilli(), exec: execID}
	return copyOf(sess), nil
}

// ReleaseSession implements sessions.Store: only the lease named goes; any other is left alone.
func (s *Store) ReleaseSession(_ context.Context, id, leaseID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.leases[id]; ok && l.id == leaseID {
		delete(s.leases, id)
	}
	return nil
}

// History implements sessions.Store: every message, visible or not, newest first to take.
func (s *Store) History(_ context.Context, id string, take func(domain.Message) bool) ([]domain.Message, error) {
	s.mu.Lock()
	msgs := s.sorted(id)
	s.mu.Unlock()
	var out []domain.Message
	for _, m := range slices.Backward(msgs) {
		if !take(m) {
			break
		}
		out = append(out, m)
	}
	slices.Reverse(out)
	return out, nil
}

// sorted returns copies of a session's messages by number. s.mu is held.
func (s *Store) sorted(id string) []domain.Message {
	var out []domain.Message
	for _, seq := range slices.Sorted(maps.Keys(s.msgs[id])) {
		m := s.msgs[id][seq]
		out = append(out, *copyOf(&m))
	}
	return out
}

// Commit implements sessions.Store: all of it or, on a lost lease or a message number taken,
// nothing.
func (s *Store) Commit(_ context.Context, c domain.Commit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.Session.ID
	if l, ok := s.leases[id]; !ok || l.id != c.LeaseID {
		return fmt.Errorf("commit execution of session %s: %w", id, domain.ErrConflict)
	}
	if c.ExecutionFrom != "" && c.Execution != nil {
		if old, ok := s.execs[id][c.Execution.ID]; !ok || old.Status != c.ExecutionFrom {
			return fmt.Errorf("commit execution of session %s: execution no longer %s: %w", id, c.ExecutionFrom, domain.ErrConflict)
		}
	}
	for _, m := range c.Messages {
		if _, taken := s.msgs[id][m.Seq]; taken {
			return fmt.Errorf("commit execution of session %s: message %d: %w", id, m.Seq, domain.ErrConflict)
		}
	}
	msgs := make([]*domain.Message, len(c.Messages))
	for i := range c.Messages {
		m, err := roundTrip(&c.Messages[i])
		if err != nil {
			return err
		}
		msgs[i] = m
	}
	var exec *domain.Execution
	if c.Execution != nil {
		var err error
		if exec, err = roundTrip(c.Execution); err != nil {
			return err
		}
	}
	sess, err := roundTrip(c.Session)
	if err != nil {
		return err
	}
	sess.Title = s.sessions[id].Title // a commit keeps the title, which a rename may have set meanwhile
	if s.msgs[id] == nil {
		s.msgs[id] = map[int]domain.Message{}
	}
	for _, m := range msgs {
		s.msgs[id][m.Seq] = *m
		s.msgIndex[m.ID] = id
	}
	if exec != nil {
		s.putExecution(id, exec)
	}
	s.sessions[id] = sess
	delete(s.leases, id)
	return nil
}

// putExecution stores e, a copy already made, under sessionID. s.mu is held.
func (s *Store) putExecution(sessionID string, e *domain.Execution) {
	if s.execs[sessionID] == nil {
		s.execs[sessionID] = map[string]*domain.Execution{}
	}
	s.execs[sessionID][e.ID] = e
}

// PutExecution implements sessions.Store: it writes (or replaces) the record unconditionally.
func (s *Store) PutExecution(_ context.Context, e *domain.Execution) error {
	c, err := roundTrip(e)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putExecution(e.SessionID, c)
	return nil
}

// GetExecution implements sessions.Store: an execution is found within its session only.
func (s *Store) GetExecution(_ context.Context, sessionID, id string) (*domain.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.execs[sessionID][id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return copyOf(e), nil
}

// EachExecution implements sessions.Store: in id order, as the adapter's sort key has them.
// each runs without the lock held.
func (s *Store) EachExecution(_ context.Context, sessionID string, each func(*domain.Execution) bool) error {
	s.mu.Lock()
	var list []*domain.Execution
	for _, id := range slices.Sorted(maps.Keys(s.execs[sessionID])) {
		list = append(list, copyOf(s.execs[sessionID][id]))
	}
	s.mu.Unlock()
	for _, e := range list {
		if !each(e) {
			return nil
		}
	}
	return nil
}

// Messages implements sessions.Store: the visible messages by number, after skipping offset.
func (s *Store) Messages(_ context.Context, sessionID string, limit, offset int) ([]domain.Message, bool, error) {
	s.mu.Lock()
	msgs := s.sorted(sessionID)
	s.mu.Unlock()
	var out []domain.Message
	seen := 0
	for _, m := range msgs {
		if !m.Visible {
			continue
		}
		seen++
		if seen <= offset {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, m)
	}
	return out, false, nil
}

// FindMessage implements sessions.Store.
func (s *Store) FindMessage(_ context.Context, id string) (*domain.Message, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sid, ok := s.msgIndex[id]
	if !ok {
		return nil, "", domain.ErrNotFound
	}
	for _, m := range s.msgs[sid] {
		if m.ID == id {
			return copyOf(&m), sid, nil
		}
	}
	return nil, "", domain.ErrNotFound
}

// PutFeedback implements sessions.Store as the adapter does: a user's second feedback on a
// message keeps the first one's id and creation time, and its rating or comment when f has none.
// It fills in f and returns it.
func (s *Store) PutFeedback(_ context.Context, f *domain.Feedback) (*domain.Feedback, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := f.MessageID + "#" + f.User
	if old, ok := s.feedback[f.SessionID][key]; ok {
		f.ID, f.CreatedAt = old.ID, old.CreatedAt
		if f.Rating == nil {
			f.Rating = old.Rating
		}
		if f.Comment == nil {
			f.Comment = old.Comment
		}
	}
	if s.feedback[f.SessionID] == nil {
		s.feedback[f.SessionID] = map[string]*domain.Feedback{}
	}
	c, err := roundTrip(f)
	if err != nil {
		return nil, err
	}
	s.feedback[f.SessionID][key] = c
	return f, nil
}

// roundTrip copies v through JSON as the adapter stores and reads records: maps' numbers come
// back as json.Number; the lists the adapter's records omit when empty come back as none. The
// error is for a value JSON cannot hold, which the adapter refuses too.
func roundTrip[T any](v *T) (*T, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var c T
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode %T: %w", v, err)
	}
	switch r := any(&c).(type) {
	case *domain.Message:
		if len(r.ToolCalls) == 0 {
			r.ToolCalls = nil
		}
	case *domain.Execution:
		if len(r.Request) == 0 {
			r.Request = nil
		}
		if len(r.Scopes) == 0 {
			r.Scopes = nil
		}
		if len(r.Checkpoint) == 0 {
			r.Checkpoint = nil
		}
	}
	return &c, nil
}

// copyOf is roundTrip of a stored value, which went through roundTrip on its way in.
func copyOf[T any](v *T) *T {
	c, err := roundTrip(v)
	if err != nil {
		panic("sessionstest: a stored record no longer encodes: " + err.Error())
	}
	return c
}
