package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// variableRE matches a prompt placeholder such as {{ variables.name }}; the spaces inside the
// braces are optional.
var variableRE = regexp.MustCompile(`\{\{\s*variables\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}`)

// Variables returns every variable name the system prompts of g use, sorted and without
// duplicates, so that callers can check the inputs before running anything.
func Variables(g *Graph) []string {
	var names []string
	for _, n := range g.Nodes {
		for _, m := range variableRE.FindAllStringSubmatch(n.SystemPrompt, -1) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// ResolvePrompt replaces the {{ variables.name }} placeholders of prompt with the values of vars:
// strings as they are, any other value (numbers, booleans, objects, null) as JSON. It returns the
// names that vars lacks, sorted and unique; their placeholders stay in the text.
func ResolvePrompt(prompt string, vars map[string]any) (string, []string) {
	if !strings.Contains(prompt, "{{") {
		return prompt, nil // no placeholder, which the expression would have to rule out
	}
	var missing []string
	out := variableRE.ReplaceAllStringFunc(prompt, func(ph string) string {
		name := variableRE.FindStringSubmatch(ph)[1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
			return ph
		}
		return formatValue(v)
	})
	slices.Sort(missing)
	return out, slices.Compact(missing)
}

// formatValue renders a variable's value for a prompt.
func formatValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // prompts are not HTML; keep <, > and & readable
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// resolveSystems resolves every node's system prompt, in g.Order's order, or reports the missing
// variables as an invalid request naming each one as the field "inputs.<name>".
func resolveSystems(g *Graph, vars map[string]any) ([]string, error) {
	out := make([]string, len(g.Order))
	var users map[string][]string // missing variable → nodes that use it
	for i, name := range g.Order {
		n := g.Nodes[name]
		if n == nil {
			continue
		}
		s, missing := ResolvePrompt(n.SystemPrompt, vars)
		out[i] = s
		for _, m := range missing {
			if users == nil {
				users = map[string][]string{}
			}
			users[m] = append(users[m], name)
		}
	}
	if len(users) == 0 {
		return out, nil
	}
	var fields []domain.FieldError
	for _, m := range slices.Sorted(maps.Keys(users)) {
		fields = append(fields, domain.FieldError{
			Field:   "inputs." + m,
			Message: fmt.Sprintf("is required by the prompt of agent %s", quoteAll(users[m])),
		})
	}
	return nil, domain.Invalid(fields)
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
