package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"wilco/client"
	"wilco/config"
	"wilco/daemon"
)

// configPath is the configuration file: the flag, else WILCO_CONFIG, else
// wilco.yaml, relative to the working directory.
func (c *cli) configPath(flagValue string) string {
	p := flagValue
	if p == "" {
		p = c.getenv(config.EnvConfig)
	}
	if p == "" {
		p = config.DefaultFile
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.wd, p)
	}
	return p
}

// stateDir is the state directory: the flag, else .wilco in the
// repository root (the directory wilco runs in, wherever the
// configuration file is).
func stateDir(flagValue, root string) string {
	if flagValue != "" {
		return flagValue
	}
	return filepath.Join(root, daemon.DefaultDir)
}

func cmdServe(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	addr := fs.String("addr", "", "listen on this host:port instead of the configuration's listen")
	cfg := fs.String("config", "", "the configuration file (default $WILCO_CONFIG, else wilco.yaml)")
	dir := fs.String("dir", "", "the state directory (default .wilco in the working directory)")
	remote := fs.Bool("allow-remote", false, "allow a listen address that is not loopback (put TLS in front)")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	path := c.configPath(*cfg)
	err := daemon.Run(ctx, daemon.Options{
		ConfigPath: path, Root: c.wd, Addr: *addr, Dir: stateDir(*dir, c.wd), AllowRemote: *remote,
		Logger: slog.New(slog.NewTextHandler(c.stderr, nil)),
		Started: func(d *daemon.Daemon) {
			fmt.Fprintf(c.stderr, "\nThe page: %s\n  (a one-time login link: it logs one browser in; `wilco web` prints another)\n\n", d.LoginURL)
		},
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return c.fail(err)
	}
	return exitOK
}

// startInProcess starts a server inside this process for `wilco run` when
// none answers, and returns a client of it and the function that stops it.
func (c *cli) startInProcess(ctx context.Context, cfgFlag string) (*client.Client, func(), error) {
	path := c.configPath(cfgFlag)
	d, err := daemon.Start(ctx, daemon.Options{
		ConfigPath: path, Root: c.wd, Dir: stateDir("", c.wd),
		Logger: slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, nil, err
	}
	return client.New(d.URL, d.Token), func() { _ = d.Close() }, nil
}
