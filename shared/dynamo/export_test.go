package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/shared/domain"
)

// The item builders, for the tests that hold stored records to the bytes earlier code wrote
// (records_test.go).

func AgentItem(a *domain.Agent) (map[string]types.AttributeValue, error) {
	return (&Store{}).agentItem(a)
}

func VersionItem(v *domain.AgentVersion) (map[string]types.AttributeValue, error) {
	p, err := (&Store{}).versionPut(v)
	if err != nil {
		return nil, err
	}
	return p.Item, nil
}

func FeedbackItem(f *domain.Feedback) (map[string]types.AttributeValue, error) {
	return feedbackItem(f)
}

func SessionItem(s *domain.Session) (map[string]types.AttributeValue, error) {
	return (&Store{}).sessionItem(s)
}

func MessageItem(sessionID string, m *domain.Message) (map[string]types.AttributeValue, error) {
	return messageItem(sessionID, m)
}

func ExecutionItem(sessionID string, e *domain.Execution) (map[string]types.AttributeValue, error) {
	return executionItem(sessionID, e)
}

func KeyItem(k *domain.APIKey) (map[string]types.AttributeValue, error) {
	return keyItem(k)
}

func FileItem(f *domain.File) (map[string]types.AttributeValue, error) { return fileItem(f) }

func CollectionItem(c *domain.Collection) (map[string]types.AttributeValue, error) {
	return collectionItem(c)
}

func KBItem(kb *domain.KnowledgeBase) (map[string]types.AttributeValue, error) { return kbItem(kb) }

func MCPItem(s *domain.MCPServer) (map[string]types.AttributeValue, error) { return mcpItem(s) }
