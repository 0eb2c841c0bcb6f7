package wire

import "time"

// ClusterView is the nodes serving the repositories of a PostgreSQL
// store, and who holds each repository's lease: GET /v1/cluster.
type ClusterView struct {
	Node       string         `json:"node" doc:"The node that answers."`
	Repository string         `json:"repository"`
	Active     bool           `json:"active" doc:"The answering node holds its repository's lease."`
	Nodes      []ClusterNode  `json:"nodes"`
	Leases     []ClusterLease `json:"leases"`
	Time       time.Time      `json:"time" doc:"The database's clock."`
}

// ClusterNode is one node that heartbeats into the store.
type ClusterNode struct {
	ID         string    `json:"id"`
	Repository string    `json:"repository"`
	URL        string    `json:"url"`
	Version    string    `json:"version,omitempty"`
	Active     bool      `json:"active" doc:"The node holds its repository's lease."`
	Started    time.Time `json:"started_at"`
	Seen       time.Time `json:"seen_at"`
}

// ClusterLease is one repository's lease.
type ClusterLease struct {
	Repository string    `json:"repository"`
	Holder     string    `json:"holder"`
	URL        string    `json:"url"`
	Token      int64     `json:"token" doc:"The fencing token: it grows with each new holder."`
	Valid      bool      `json:"valid"`
	Acquired   time.Time `json:"acquired_at"`
	Renewed    time.Time `json:"renewed_at"`
	Expires    time.Time `json:"expires_at"`
}
