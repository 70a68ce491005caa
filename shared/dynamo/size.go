package dynamo

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// DynamoDB's limits on one item and on its keys, in bytes (400 KB, 2 KB and 1 KB).
const (
	maxItemBytes         = 400 * 1024
	maxPartitionKeyBytes = 2048
	maxSortKeyBytes      = 1024
)

// errTooLarge is the error of a record past DynamoDB's limits: the client's data is too large
// to store (413), not a fault of the service. The figures go to the log only.
func errTooLarge(what string, size, limit int) error {
	return &domain.Error{Kind: domain.KindTooLarge, Message: "The data is too large to store",
		Err: fmt.Errorf("%s takes %d bytes, over DynamoDB's limit of %d", what, size, limit)}
}

// itemSize is the size DynamoDB counts for an item against its 400 KB limit, by the rules of
// "DynamoDB item sizes and formats" (Amazon DynamoDB Developer Guide, CapacityUnitCalculations):
// the UTF-8 bytes of each attribute name plus the size of its value (attrSize).
func itemSize(it map[string]types.AttributeValue) int {
	n := 0
	for name, v := range it {
		n += len(name) + attrSize(v)
	}
	return n
}

// attrSize is the size of one value by the same rules: a string its UTF-8 bytes, a binary its
// raw bytes, a boolean or null 1 byte, a number 1 byte plus 1 per two significant digits
// (numberSize), a list or map 3 bytes plus, for each element, 1 byte, its name (map keys) and
// its size. The Guide does not cover sets; they count as lists here, which is no less than
// DynamoDB counts.
func attrSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + attrSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + attrSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 3
		for _, e := range v.Value {
			n += 1 + len(e)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 3
		for _, e := range v.Value {
			n += 1 + numberSize(e)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 3
		for _, e := range v.Value {
			n += 1 + len(e)
		}
		return n
	}
	return 0
}

// numberSize is the size of a number: 1 byte plus 1 per two significant digits, rounded up
// (leading and trailing zeros trimmed; sign, point and exponent aside). The Guide calls this
// approximate: DynamoDB stores the digits in pairs aligned on the decimal point, so an even run
// of digits may straddle one pair more ("1.2" is two pairs, "12" one), and a negative number
// takes a closing byte. Both are counted here, so that the estimate is never below DynamoDB's.
func numberSize(s string) int {
	neg := strings.HasPrefix(s, "-")
	mant := strings.TrimLeft(s, "+-")
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	mant = strings.Trim(strings.Replace(mant, ".", "", 1), "0")
	digits := len(mant)
	if digits == 0 {
		return 1 // zero
	}
	n := 2 + digits/2
	if neg {
		n++
	}
	return n
}

// checkItem refuses an item that DynamoDB would refuse for its size: over 400 KB, or a key
// (of the table or of gsi1) over its limit. Every write whose whole item is known goes through
// it before it is sent, so the refusal is a typed KindTooLarge error and DynamoDB never sees
// the item (its own refusal would be a ValidationException, the code of every malformed
// request, which only its text tells apart).
func checkItem(it map[string]types.AttributeValue) error {
	return checkItemRoom(it, 0)
}

// checkItemRoom is checkItem for an item that later updates may grow by up to room bytes: it
// must fit with that room kept free.
func checkItemRoom(it map[string]types.AttributeValue, room int) error {
	if err := checkKeys(it); err != nil {
		return err
	}
	if n := itemSize(it); n > maxItemBytes-room {
		return errTooLarge("item", n, maxItemBytes-room)
	}
	return nil
}

// checkKeys refuses an item or key whose partition or sort key (of the table or of gsi1) is
// over DynamoDB's limit.
func checkKeys(it map[string]types.AttributeValue) error {
	for _, k := range []struct {
		name  string
		limit int
	}{{attrPK, maxPartitionKeyBytes}, {attrSK, maxSortKeyBytes}, {attrGSI1PK, maxPartitionKeyBytes}, {attrGSI1SK, maxSortKeyBytes}} {
		if v, ok := it[k.name]; ok {
			if n := attrSize(v); n > k.limit {
				return errTooLarge("key "+k.name, n, k.limit)
			}
		}
	}
	return nil
}
