package main

import (
	"context"
	"fmt"
)

// cmdWeb prints a new one-time link that logs a browser in to the page.
func cmdWeb(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the API JSON")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	link, err := cl.NewLoginLink(ctx)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(link)
	}
	fmt.Fprintln(c.stdout, link.URL)
	fmt.Fprintf(c.stderr, "a one-time link: it logs one browser in to the page (unused, it expires at %s)\n", link.ExpiresAt.In(c.loc).Format("2006-01-02 15:04"))
	return exitOK
}
