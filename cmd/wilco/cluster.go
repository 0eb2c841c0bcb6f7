package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"wilco/client"
	"wilco/wire"
)

// printCluster is wilco status --cluster: the nodes and the leases.
func (c *cli) printCluster(ctx context.Context, asJSON bool) int {
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	var raw json.RawMessage
	if err := cl.Do(ctx, "GET", "/v1/cluster", nil, nil, &raw); err != nil {
		if ae, ok := err.(*client.APIError); ok && ae.NoRoute() {
			return c.fail(fmt.Errorf("this server keeps its state in SQLite: it is the only node (a postgres:// store makes several)"))
		}
		return c.fail(err)
	}
	if asJSON {
		return c.printJSON(raw)
	}
	var v wire.ClusterView
	if err := json.Unmarshal(raw, &v); err != nil {
		return c.fail(err)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NODE\tREPOSITORY\tURL\tROLE\tVERSION\tSEEN\n")
	for _, n := range v.Nodes {
		role := "standby"
		if n.Active {
			role = "active"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s ago\n", n.ID, n.Repository, n.URL, role, orDash(n.Version), v.Time.Sub(n.Seen).Round(time.Millisecond))
	}
	fmt.Fprintf(tw, "\nREPOSITORY\tHOLDER\tURL\tTOKEN\tEXPIRES\n")
	for _, l := range v.Leases {
		exp := "expired"
		if l.Valid {
			exp = "in " + l.Expires.Sub(v.Time).Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", l.Repository, l.Holder, l.URL, l.Token, exp)
	}
	_ = tw.Flush()
	return exitOK
}
