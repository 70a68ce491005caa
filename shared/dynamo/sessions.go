package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// Session partition layout: the session record (sk "S") holds the configuration, the checkpoint
// and the lease; messages sort by sequence ("M#0000000001"), executions by id ("X#…"), feedback by
// message and user ("F#…"). One Query reads recent history; one transaction commits a run.
const (
	sessionSK  = "S"
	msgPrefix  = "M#"
	execPrefix = "X#"
	fbPrefix   = "F#"
)

func sessionPK(id string) string           { return "SESSION#" + id }
func ownerSessions(c, o string) string     { return "CO#" + c + "#OWNER#" + o + "#SESSIONS" }
func messageSK(seq int) string             { return fmt.Sprintf("%s%010d", msgPrefix, seq) }
func messageIndex(id string) string        { return "MSG#" + id }
func feedbackSK(msgID, user string) string { return fbPrefix + msgID + "#" + user }

func (st *Store) sessionItem(s *domain.Session) (map[string]types.AttributeValue, error) {
	it, err := item(sessionPK(s.ID), sessionSK, newSessionRecord(s))
	if err != nil {
		return nil, err
	}
	it["company"], it["owner"] = stringAttr(s.Company), stringAttr(s.Owner) // for the lease's ownership condition
	it[attrGSI1PK] = stringAttr(ownerSessions(s.Company, s.Owner))
	it[attrGSI1SK] = stringAttr(sortTime(s.CreatedAt) + "#" + s.ID)
	if err := checkItemRoom(it, leaseRoom+titleRoom); err != nil {
		return nil, err
	}
	if s.Title != "" {
		if !domain.ValidSessionTitle(s.Title) {
			return nil, fmt.Errorf("session %s: invalid title", s.ID)
		}
		it[attrTitle] = stringAttr(s.Title) // in the room kept for it
	}
	return it, nil
}

// A session's title is an attribute of its item beside data, so that RenameSession sets it
// with one UpdateItem and a run's Commit, which rewrites data, leaves it as it is: a rename
// while a run holds the session survives the run's commit. titleRoom is what the longest title
// takes (4 bytes a character at most in UTF-8); session items keep it free, as they keep
// leaseRoom.
const (
	attrTitle = "title"
	titleRoom = len(attrTitle) + 4*domain.MaxSessionTitle
)

// sessionOf reads a session item: its data, and its title.
func sessionOf(it map[string]types.AttributeValue) (*domain.Session, error) {
	var r sessionRecord
	if err := decode(it, &r); err != nil {
		return nil, err
	}
	s := r.session()
	if t, ok := it[attrTitle].(*types.AttributeValueMemberS); ok {
		s.Title = t.Value
	}
	return s, nil
}

// maxLeaseID bounds the lease ids AcquireSession takes (the runtime's are UUIDs).
const maxLeaseID = 64

// leaseRoom is what the lease's UpdateItems add to a session item: lease_id (up to
// maxLeaseID bytes), lease_until (milliseconds: at most 19 digits and a sign, 12 bytes by
// numberSize), and a run's lease_exec (an execution id, up to maxLeaseID bytes; runs.go).
// Session items are stored with that room free, so that taking the lease can never push one
// past DynamoDB's limit; the lease's other writes only remove it (ReleaseSession, Commit).
const leaseRoom = len("lease_id") + maxLeaseID + len("lease_until") + 12 + len(attrLeaseExec) + maxLeaseID

// CreateSession stores a new session.
func (st *Store) CreateSession(ctx context.Context, sess *domain.Session) error {
	it, err := st.sessionItem(sess)
	if err != nil {
		return err
	}
	return translate(st.put(ctx, &dynamodb.PutItemInput{Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}))
}

// GetSession reads a session record (one GetItem), with the execution that runs in it when a
// live lease names one (runs.go).
func (st *Store) GetSession(ctx context.Context, id string) (*domain.Session, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey(sessionPK(id), sessionSK)})
	if err != nil {
		return nil, translate(err)
	}
	if out.Item == nil {
		return nil, domain.ErrNotFound
	}
	s, err := sessionOf(out.Item)
	if err != nil {
		return nil, err
	}
	s.ActiveExecutionID = activeExecution(out.Item, time.Now())
	return s, nil
}

// ListSessions returns up to limit of an owner's sessions, newest first, after skipping
// offset, and whether more follow (Queries on gsi1 that read no further than offset+limit+1
// sessions).
func (st *Store) ListSessions(ctx context.Context, company, owner string, offset, limit int) ([]*domain.Session, bool, error) {
	p := dynamodb.NewQueryPaginator(st.db, &dynamodb.QueryInput{
		TableName:                 aws.String(st.table),
		IndexName:                 aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(ownerSessions(company, owner))},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(int32(min(offset+limit+1, 1000))),
	})
	return pageOf(ctx, p, offset, limit, sessionOf)
}

// RenameSession gives session id the title (or, "", takes its title away) for p, in one
// UpdateItem on the condition that the session exists and is p's, and returns the session as it
// now is, with the execution running in it (as GetSession). A missing session is
// domain.ErrNotFound, another caller's domain.ErrPermission (told apart by the item the failed
// condition returns, with no second read).
func (st *Store) RenameSession(ctx context.Context, p domain.Principal, id, title string) (*domain.Session, error) {
	update := "REMOVE " + attrTitle
	values := map[string]types.AttributeValue{":c": stringAttr(p.Company), ":o": stringAttr(p.Owner)}
	if title != "" {
		if !domain.ValidSessionTitle(title) {
			return nil, fmt.Errorf("rename session %s: invalid title", id)
		}
		update = "SET " + attrTitle + " = :t"
		values[":t"] = stringAttr(title)
	}
	out, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(st.table),
		Key:                                 itemKey(sessionPK(id), sessionSK),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String("attribute_exists(pk) AND company = :c AND #o = :o"),
		ExpressionAttributeNames:            map[string]string{"#o": "owner"},
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if len(ccf.Item) == 0 {
			return nil, domain.ErrNotFound
		}
		return nil, domain.ErrPermission
	}
	if err != nil {
		return nil, translate(err)
	}
	s, err := sessionOf(out.Attributes)
	if err != nil {
		return nil, err
	}
	s.ActiveExecutionID = activeExecution(out.Attributes, time.Now())
	return s, nil
}

// DeleteSession removes the session record first (runtime calls then answer 404), then the rest
// of its partition.
func (st *Store) DeleteSession(ctx context.Context, id string) error {
	_, err := st.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.table), Key: itemKey(sessionPK(id), sessionSK),
		ConditionExpression: aws.String("attribute_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return domain.ErrNotFound
	}
	if err != nil {
		return translate(err)
	}
	items, err := st.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(sessionPK(id))},
		ProjectionExpression:      aws.String("pk, sk"),
	})
	if err != nil {
		return err
	}
	return st.deleteAll(ctx, items)
}

// AcquireSession takes the session's execution lease for p and returns the session with its
// checkpoint in the same request (one UpdateItem). A missing session is domain.ErrNotFound, one
// of another caller domain.ErrPermission, one leased by another execution a KindConflict error.
func (st *Store) AcquireSession(ctx context.Context, p domain.Principal, id, leaseID string, until, now time.Time) (*domain.Session, error) {
	return st.acquire(ctx, p, id, leaseID, "", until, now)
}

// acquire takes the lease (AcquireSession), recording execID as its execution when not empty
// (AcquireRun); a lease without one removes what an earlier holder's run left.
func (st *Store) acquire(ctx context.Context, p domain.Principal, id, leaseID, execID string, until, now time.Time) (*domain.Session, error) {
	if len(leaseID) > maxLeaseID {
		return nil, fmt.Errorf("lease id of %d bytes, more than %d", len(leaseID), maxLeaseID)
	}
	values := map[string]types.AttributeValue{":l": stringAttr(leaseID), ":u": numberAttr(until.UnixMilli()), ":now": numberAttr(now.UnixMilli()),
		":c": stringAttr(p.Company), ":o": stringAttr(p.Owner)}
	update := "SET lease_id = :l, lease_until = :u REMOVE " + attrLeaseExec
	if execID != "" {
		update = "SET lease_id = :l, lease_until = :u, " + attrLeaseExec + " = :x"
		values[":x"] = stringAttr(execID)
	}
	out, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(st.table),
		Key:                                 itemKey(sessionPK(id), sessionSK),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String("attribute_exists(pk) AND company = :c AND #o = :o AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeNames:            map[string]string{"#o": "owner"},
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if len(ccf.Item) == 0 {
			return nil, domain.ErrNotFound
		}
		old, err := sessionOf(ccf.Item)
		if err == nil && !old.CanAccess(p) {
			return nil, domain.ErrPermission
		}
		// Held by this very lease: an earlier attempt of this write applied, but its answer
		// was lost and the SDK tried again (a 500, a reset connection). A lease id is never
		// taken twice, so the session is ours, as that attempt left it.
		if held, ok := ccf.Item["lease_id"].(*types.AttributeValueMemberS); ok && held.Value == leaseID && err == nil {
			return old, nil
		}
		return nil, &domain.Error{Kind: domain.KindConflict, Message: "Another execution is running in this session; retry when it has finished", Err: err}
	}
	if err != nil {
		return nil, translate(err)
	}
	return sessionOf(out.Attributes)
}

// ReleaseSession gives the lease back without other changes (after a failed run).
func (st *Store) ReleaseSession(ctx context.Context, id, leaseID string) error {
	_, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(st.table),
		Key:                       itemKey(sessionPK(id), sessionSK),
		UpdateExpression:          aws.String("REMOVE lease_id, lease_until, " + attrLeaseExec),
		ConditionExpression:       aws.String("lease_id = :l"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":l": stringAttr(leaseID)},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // the lease expired and someone else holds it now; nothing of ours to release
	}
	return translate(err)
}

// History reads a session's messages newest first, a Query page at a time, handing each to take
// until take returns false or the messages run out; it returns the taken messages oldest first.
// A page holds up to 1 MB, so a history that fits in that is one Query.
func (st *Store) History(ctx context.Context, id string, take func(domain.Message) bool) ([]domain.Message, error) {
	p := dynamodb.NewQueryPaginator(st.db, &dynamodb.QueryInput{
		TableName:                 aws.String(st.table),
		KeyConditionExpression:    aws.String("pk = :p AND begins_with(sk, :m)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(sessionPK(id)), ":m": stringAttr(msgPrefix)},
		ScanIndexForward:          aws.Bool(false),
	})
	var msgs []domain.Message
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, translate(err)
		}
		for _, it := range page.Items {
			m, err := decodeMessage(it)
			if err != nil {
				return nil, err
			}
			if !take(m) {
				slices.Reverse(msgs)
				return msgs, nil
			}
			msgs = append(msgs, m)
		}
	}
	slices.Reverse(msgs)
	return msgs, nil
}

// attrContent holds a message's text outside the JSON of its data attribute: DynamoDB counts a
// string attribute by its UTF-8 bytes, while JSON may take up to six bytes for one (a quote, a
// control character), so a message item holds any text the size limits let in.
const attrContent = "content"

// messageItem builds a message's record; its content is an attribute of its own.
func messageItem(sessionID string, m *domain.Message) (map[string]types.AttributeValue, error) {
	body := newMessageRecord(m)
	body.Content = ""
	it, err := rawItem(sessionPK(sessionID), messageSK(m.Seq), body)
	if err != nil {
		return nil, err
	}
	it[attrContent] = stringAttr(m.Content)
	it["visible"] = &types.AttributeValueMemberBOOL{Value: m.Visible} // for the history filter
	it[attrGSI1PK] = stringAttr(messageIndex(m.ID))
	it[attrGSI1SK] = stringAttr(sessionPK(sessionID))
	return it, nil
}

// decodeMessage reads a message record, with its content from the data of records written
// before content had its own attribute.
func decodeMessage(it map[string]types.AttributeValue) (domain.Message, error) {
	var r messageRecord
	if err := decode(it, &r); err != nil {
		return domain.Message{}, err
	}
	m := r.message()
	if c, ok := it[attrContent].(*types.AttributeValueMemberS); ok {
		m.Content = c.Value
	}
	return m, nil
}

// rawItem is item without JSON's HTML escaping, which would store each <, > and & as six bytes.
func rawItem(pk, sk string, v any) (map[string]types.AttributeValue, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %s: %w", pk, err)
	}
	it := itemKey(pk, sk)
	it[attrData] = stringAttr(strings.TrimSuffix(b.String(), "\n"))
	return it, nil
}

// Commit writes a finished execution in one transaction; it fails with a conflict if the lease
// was lost (expired and taken) meanwhile, or the stored execution is no longer c.ExecutionFrom.
func (st *Store) Commit(ctx context.Context, c domain.Commit) error {
	var writes []types.TransactWriteItem
	for i := range c.Messages {
		it, err := messageItem(c.Session.ID, &c.Messages[i])
		if err != nil {
			return err
		}
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(st.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}})
	}
	if c.Execution != nil {
		it, err := executionItem(c.Session.ID, c.Execution)
		if err != nil {
			return err
		}
		put := &types.Put{TableName: aws.String(st.table), Item: it}
		if c.ExecutionFrom != "" {
			// As CancelQueued reads a record from before the status attribute was kept.
			put.ConditionExpression = aws.String("#s = :f OR (attribute_not_exists(#s) AND contains(#d, :fj))")
			put.ExpressionAttributeNames = map[string]string{"#s": attrStatus, "#d": attrData}
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":f": stringAttr(c.ExecutionFrom),
				":fj": stringAttr(`"status":"` + c.ExecutionFrom + `"`)}
		}
		writes = append(writes, types.TransactWriteItem{Put: put})
	}
	sessItem, err := st.sessionItem(c.Session)
	if err != nil {
		return err
	}
	// The session's data is rewritten and its lease removed; its key, owner, index keys and
	// title stay as they are (none of them changes in a run but the title, which a rename may
	// have set meanwhile).
	writes = append(writes, types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(st.table), Key: itemKey(sessionPK(c.Session.ID), sessionSK),
		UpdateExpression:          aws.String("SET #d = :d REMOVE lease_id, lease_until, " + attrLeaseExec),
		ConditionExpression:       aws.String("lease_id = :l"),
		ExpressionAttributeNames:  map[string]string{"#d": attrData},
		ExpressionAttributeValues: map[string]types.AttributeValue{":l": stringAttr(c.LeaseID), ":d": sessItem[attrData]},
	}})
	if err := st.transact(ctx, writes); err != nil {
		return fmt.Errorf("commit execution of session %s: %w", c.Session.ID, translate(err))
	}
	return nil
}

// PutExecution stores an execution record (queued or finished asynchronous runs).
func (st *Store) PutExecution(ctx context.Context, e *domain.Execution) error {
	it, err := executionItem(e.SessionID, e)
	if err != nil {
		return err
	}
	return translate(st.put(ctx, &dynamodb.PutItemInput{Item: it}))
}

// GetExecution reads one execution record.
func (st *Store) GetExecution(ctx context.Context, sessionID, id string) (*domain.Execution, error) {
	var r executionRecord
	if err := st.get(ctx, sessionPK(sessionID), execPrefix+id, &r); err != nil {
		return nil, err
	}
	return r.execution(), nil
}

// executionPage is how many executions one Query reads: a page of events needs few of them,
// and each may be up to 400 KB.
const executionPage = 10

// EachExecution hands a session's executions to each in sort key order, a Query of at most
// executionPage items at a time, until each returns false or they run out: a caller that stops
// early reads no further pages. Execution ids are UUIDv7, so this is the order they were
// created in (executions recorded before that had random ids and come in id order).
func (st *Store) EachExecution(ctx context.Context, sessionID string, each func(*domain.Execution) bool) error {
	p := dynamodb.NewQueryPaginator(st.db, &dynamodb.QueryInput{
		TableName:                 aws.String(st.table),
		KeyConditionExpression:    aws.String("pk = :p AND begins_with(sk, :x)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(sessionPK(sessionID)), ":x": stringAttr(execPrefix)},
		Limit:                     aws.Int32(executionPage),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return translate(err)
		}
		for _, it := range page.Items {
			var r executionRecord
			if err := decode(it, &r); err != nil {
				return err
			}
			if !each(r.execution()) {
				return nil
			}
		}
	}
	return nil
}

// Messages pages through the visible messages of a session, oldest first, skipping offset.
func (st *Store) Messages(ctx context.Context, sessionID string, limit, offset int) ([]domain.Message, bool, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(st.table),
		KeyConditionExpression:    aws.String("pk = :p AND begins_with(sk, :m)"),
		FilterExpression:          aws.String("visible = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(sessionPK(sessionID)), ":m": stringAttr(msgPrefix), ":t": &types.AttributeValueMemberBOOL{Value: true}},
	}
	return pageOf(ctx, dynamodb.NewQueryPaginator(st.db, in), offset, limit, decodeMessage)
}

// FindMessage finds a message by id through gsi1 and returns it with its session id.
func (st *Store) FindMessage(ctx context.Context, id string) (*domain.Message, string, error) {
	items, err := st.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(indexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringAttr(messageIndex(id))},
	})
	if err != nil {
		return nil, "", err
	}
	if len(items) == 0 {
		return nil, "", domain.ErrNotFound
	}
	m, err := decodeMessage(items[0])
	if err != nil {
		return nil, "", err
	}
	sk, _ := items[0][attrGSI1SK].(*types.AttributeValueMemberS)
	sid := ""
	if sk != nil {
		sid = sk.Value[len("SESSION#"):]
	}
	return &m, sid, nil
}

// PutFeedback stores one user's feedback on a message, keeping the first creation time.
func (st *Store) PutFeedback(ctx context.Context, f *domain.Feedback) (*domain.Feedback, error) {
	var old feedbackRecord
	err := st.get(ctx, sessionPK(f.SessionID), feedbackSK(f.MessageID, f.User), &old)
	switch {
	case err == nil:
		f.ID, f.CreatedAt = old.ID, old.CreatedAt
		if f.Rating == nil {
			f.Rating = old.Rating
		}
		if f.Comment == nil {
			f.Comment = old.Comment
		}
	case !errors.Is(err, domain.ErrNotFound):
		return nil, err
	}
	it, err := feedbackItem(f)
	if err != nil {
		return nil, err
	}
	if err := st.put(ctx, &dynamodb.PutItemInput{Item: it}); err != nil {
		return nil, translate(err)
	}
	return f, nil
}

func feedbackItem(f *domain.Feedback) (map[string]types.AttributeValue, error) {
	return item(sessionPK(f.SessionID), feedbackSK(f.MessageID, f.User), newFeedbackRecord(f))
}

func executionItem(sessionID string, e *domain.Execution) (map[string]types.AttributeValue, error) {
	it, err := rawItem(sessionPK(sessionID), execPrefix+e.ID, newExecutionRecord(e))
	if err != nil {
		return nil, err
	}
	// The status also outside the data, for the writes conditional on it (CancelQueued);
	// records from before it was kept lack it.
	it[attrStatus] = stringAttr(e.Status)
	listRun(it, e) // on its owner's traces list, unless SwapExecution lists it for the watchdog
	return it, nil
}
