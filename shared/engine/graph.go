package engine

import "github.com/agentorch/agentorch/shared/domain"

// The engine runs the domain's typed configuration (domain.ParseConfig makes it once, when an
// agent or session is created, and the sessions feature keeps it for later executes).
type (
	// Graph is a parsed configuration: the nodes to run and the edges between them.
	Graph = domain.AgentConfig
	// Node is one agent of a graph.
	Node = domain.NodeConfig
	// Edge is a directed connection between two nodes.
	Edge = domain.Edge
)
