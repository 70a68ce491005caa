package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// A knowledge base's item grows through UpdateSource, whose result only DynamoDB knows: the
// workers of a run set their datasources at the same time. DynamoDB refuses an item past 400 KB
// with a ValidationException, the code of every malformed request, told apart only by its text;
// so the item keeps an account of its room instead, and UpdateSource's condition reads it:
//
//   - each entry of sources is a list [JSON of the datasource, its weight], the weight
//     (sourceAttr) being no less than the bytes the entry takes in the item;
//   - the room left is room_in − room_out. A full write (kbItem, openRoom) measures the item,
//     counting each entry at its weight, and sets room_in to what is left of 400 KB after
//     roomReserve, room_out to 0;
//   - UpdateSource, in its one UpdateItem, adds the new entry's weight to room_out and the
//     replaced entry's (none for a new file) to room_in, on the condition room_in >= room_out,
//     or that the replaced entry's JSON is no shorter than the new one (a write that cannot
//     grow the item, so that workers still record their outcome in a full item). So only an
//     item with room left grows, by one entry of at most maxSourceBytes (measured before
//     sending), which roomReserve keeps free: the item never passes the limit.
//
// Two counters compared with each other, because a condition cannot add. The account is exact
// to the reserve: a knowledge base within about 4 KB of the limit takes no datasource that
// grows it until a full write, which is measured whole, makes room. A failed condition returns
// the old item (ALL_OLD), which tells the causes apart (roomLost).
const (
	attrRoomIn  = "room_in"
	attrRoomOut = "room_out"

	// maxSourceBytes bounds the weight of one datasource that UpdateSource writes (a
	// datasource is a few hundred bytes; its error is kept short).
	maxSourceBytes = 4096
	// roomReserve is the room a full write keeps free: one datasource, and the growth of the
	// two counters' numbers (up to 12 digits and a sign each).
	roomReserve = maxSourceBytes + 2*9
)

// sourceAttr is the entry of datasource d under file id: [its JSON, its weight], the JSON
// without the file id and without HTML escaping (which would take six bytes of the item for
// each <, > and & of a name or an error). The weight is what the entry takes in the map: 1 byte
// as an element, the key, 3 bytes as a list, 1 byte and the JSON, 1 byte and the weight itself,
// counted at 5 bytes (the size of a number up to 7 digits).
func sourceAttr(id string, d *domain.Datasource) (types.AttributeValue, int, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	r := sourceRecord(*d)
	r.FileID = "" // the entry's key
	if err := enc.Encode(r); err != nil {
		return nil, 0, err
	}
	js := strings.TrimSuffix(b.String(), "\n")
	w := 1 + len(id) + 3 + 1 + len(js) + 1 + 5
	return &types.AttributeValueMemberL{Value: []types.AttributeValue{stringAttr(js), numberAttr(int64(w))}}, w, nil
}

// sourceJSON is the JSON of a stored datasource: the first element of its entry, or the whole
// entry in records written before the room account.
func sourceJSON(v types.AttributeValue) (string, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value, true
	case *types.AttributeValueMemberL:
		if len(v.Value) > 0 {
			if s, ok := v.Value[0].(*types.AttributeValueMemberS); ok {
				return s.Value, true
			}
		}
	}
	return "", false
}

// openRoom opens the room account of a knowledge base's whole item (see above).
func openRoom(it map[string]types.AttributeValue) {
	used := itemSize(it) + len(attrRoomIn) + len(attrRoomOut)
	if m, ok := it[attrSources].(*types.AttributeValueMemberM); ok {
		for id, v := range m.Value {
			if l, ok := v.(*types.AttributeValueMemberL); ok && len(l.Value) == 2 {
				if w, ok := l.Value[1].(*types.AttributeValueMemberN); ok {
					var n int
					if _, err := fmt.Sscan(w.Value, &n); err == nil {
						used += n - (1 + len(id) + attrSize(v))
					}
				}
			}
		}
	}
	it[attrRoomIn] = numberAttr(int64(maxItemBytes - roomReserve - used))
	it[attrRoomOut] = numberAttr(0)
}

// UpdateSource sets the datasource d.FileID of knowledge base kbID while runID is its run, and
// returns the record as it is after the write: one UpdateItem (SET sources.<file id>, condition
// run_id = :r and room left, ALL_NEW), so workers of one run writing different datasources
// never lose each other's writes. KindConflict if the run was superseded, KindNotFound if the
// knowledge base is gone, KindTooLarge if the datasource is over maxSourceBytes or the item has
// no room left for it (see the room account above and infra/README.md). A record written
// before the room account is rewritten whole once, measured (a PutItem more).
func (st *Store) UpdateSource(ctx context.Context, kbID, runID string, d *domain.Datasource) (*domain.KnowledgeBase, error) {
	if d == nil || d.FileID == "" {
		return nil, errors.New("update datasource: no file id")
	}
	v, w, err := sourceAttr(d.FileID, d)
	js, _ := sourceJSON(v)
	if err != nil {
		return nil, fmt.Errorf("encode datasource %s: %w", d.FileID, err)
	}
	wrap := func(err error) error {
		return fmt.Errorf("update datasource %s of knowledge base %s: %w", d.FileID, kbID, err)
	}
	if w > maxSourceBytes {
		return nil, wrap(errTooLarge("datasource", w, maxSourceBytes))
	}
	key := itemKey(kbPK(kbID), kbSK)
	if err := checkKeys(key); err != nil {
		return nil, wrap(err)
	}
	now := time.Now()
	if d.UpdatedAt != nil {
		now = *d.UpdatedAt
	}
	for attempt := 0; ; attempt++ {
		out, err := st.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:           aws.String(st.table),
			Key:                 key,
			UpdateExpression:    aws.String("SET #s.#f = :d, #u = :now, #out = #out + :w, #in = #in + if_not_exists(#s.#f[1], :zero)"),
			ConditionExpression: aws.String("#r = :r AND (#in >= #out OR size(#s.#f[0]) >= :len)"),
			ExpressionAttributeNames: map[string]string{"#s": attrSources, "#f": d.FileID, "#u": attrUpdatedAt, "#r": attrRunID,
				"#in": attrRoomIn, "#out": attrRoomOut},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":d": v, ":now": stringAttr(sortTime(now)), ":r": stringAttr(runID), ":w": numberAttr(int64(w)), ":zero": numberAttr(0),
				":len": numberAttr(int64(len(js))),
			},
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			return decodeKB(out.Attributes)
		}
		old, err := roomLost(err, kbID, runID)
		if old == nil {
			return nil, wrap(err)
		}
		if attempt == 2 {
			return nil, wrap(translate(err))
		}
		kb, err := st.openAccount(ctx, old, d, now)
		if err == nil {
			return kb, nil
		}
		if domain.KindOf(err) != domain.KindConflict {
			return nil, wrap(err)
		}
		// Another writer changed the record meanwhile (perhaps opening its account): again.
	}
}

// roomLost translates UpdateSource's failed condition by the old item it returned: none is
// KindNotFound, another run KindConflict, an item without room KindTooLarge. A record without
// the room account comes back as old, for openAccount.
func roomLost(err error, kbID, runID string) (old map[string]types.AttributeValue, _ error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, translate(err)
	}
	run, _ := ccf.Item[attrRunID].(*types.AttributeValueMemberS)
	switch {
	case len(ccf.Item) == 0:
		return nil, &domain.Error{Kind: domain.KindNotFound, Message: "Knowledge base " + kbID + " not found", Err: err}
	case run == nil || run.Value != runID:
		return nil, &domain.Error{Kind: domain.KindConflict, Message: "The knowledge base's run was superseded", Err: err}
	case ccf.Item[attrRoomOut] == nil:
		return ccf.Item, err
	}
	return nil, &domain.Error{Kind: domain.KindTooLarge, Message: "The data is too large to store", Err: err}
}

// openAccount writes d into old, a record written before the room account, by rewriting it
// whole with the account open (one PutItem, measured by put), if no one changed it since:
// KindConflict otherwise.
func (st *Store) openAccount(ctx context.Context, old map[string]types.AttributeValue, d *domain.Datasource, now time.Time) (*domain.KnowledgeBase, error) {
	kb, err := decodeKB(old)
	if err != nil {
		return nil, err
	}
	kb.Sources[d.FileID] = d
	kb.UpdatedAt = now
	it, err := kbItem(kb)
	if err != nil {
		return nil, err
	}
	prev, ok := old[attrUpdatedAt].(*types.AttributeValueMemberS)
	if !ok {
		prev = &types.AttributeValueMemberS{}
	}
	err = st.put(ctx, &dynamodb.PutItemInput{
		Item:                      it,
		ConditionExpression:       aws.String("#r = :r AND attribute_not_exists(#out) AND (attribute_not_exists(#u) OR #u = :prev)"),
		ExpressionAttributeNames:  map[string]string{"#r": attrRunID, "#out": attrRoomOut, "#u": attrUpdatedAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": stringAttr(kb.RunID), ":prev": prev},
	})
	if err != nil {
		return nil, translate(err)
	}
	return kb, nil
}
