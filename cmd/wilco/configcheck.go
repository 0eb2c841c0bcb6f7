package main

import (
	"context"
	"fmt"

	"wilco/config"
)

// cmdConfig is `wilco config check`: it validates the configuration file
// the server would read, prints each error (file:line: key: what is wrong)
// and exits 1, or prints the warnings on stderr and the effective
// configuration, every default filled in, on stdout.
func cmdConfig(_ context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	cfgFlag := fs.String("config", "", "the configuration file (default $WILCO_CONFIG, else wilco.yaml)")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	if pos[0] != "check" {
		return c.usageError(v, fs, "unknown subcommand %q: config check is the one there is", pos[0])
	}
	path := c.configPath(*cfgFlag)
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintf(c.stderr, "wilco: %s is not valid:\n%v\n", path, err)
		return exitFailure
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(c.stderr, "warning: %s\n", w)
	}
	out, err := cfg.Encode()
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "# %s is valid. The effective configuration, defaults filled in:\n", path)
	_, _ = c.stdout.Write(out)
	return exitOK
}
