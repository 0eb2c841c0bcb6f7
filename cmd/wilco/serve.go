package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"time"

	"wilco/client"
	"wilco/config"
	"wilco/daemon"
	"wilco/store/postgres"
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
	st := fs.String("store", "", "the store: a SQLite file, or postgres://… to be one of several nodes (default $WILCO_STORE, else the configuration's store)")
	ttl := fs.Duration("lease-ttl", daemon.DefaultLeaseTTL, "with a PostgreSQL store: how long the repository's lease lasts unrenewed (how soon a standby takes over)")
	advertise := fs.String("advertise", "", "with a PostgreSQL store: the URL clients are sent to while this node is active (default http:// and the listen address)")
	transport := fs.String("transport", "", "nats://… : carry the mailbox agents' messages over NATS JetStream too (default $WILCO_TRANSPORT)")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	if *transport == "" {
		*transport = c.getenv(daemon.EnvTransport)
	}
	if *st == "" {
		*st = c.getenv(daemon.EnvStore)
	}
	path := c.configPath(*cfg)
	err := daemon.Run(ctx, daemon.Options{
		ConfigPath: path, Root: c.wd, Addr: *addr, Dir: stateDir(*dir, c.wd), AllowRemote: *remote,
		Store: *st, LeaseTTL: *ttl, Advertise: *advertise, Transport: *transport, Version: shortVersion(debug.ReadBuildInfo()),
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

// inProcessLeaseWait bounds how long `wilco run` waits for the lease of a
// PostgreSQL store: a free lease is taken at once, and one whose node died
// frees within its TTL.
const inProcessLeaseWait = daemon.DefaultLeaseTTL + 5*time.Second

// startInProcess starts a server inside this process for `wilco run` when
// none answers, and returns a client of it and the function that stops it.
func (c *cli) startInProcess(ctx context.Context, cfgFlag string) (*client.Client, func(), error) {
	path := c.configPath(cfgFlag)
	store := c.getenv(daemon.EnvStore)
	startCtx := ctx
	if postgres.IsURL(store) {
		// One node of several: it serves once it holds the repository's
		// lease. Another node holding it is a server that should have
		// answered; run does not wait for it to die.
		var cancel context.CancelFunc
		startCtx, cancel = context.WithTimeout(ctx, inProcessLeaseWait)
		defer cancel()
	}
	d, err := daemon.Start(startCtx, daemon.Options{
		ConfigPath: path, Root: c.wd, Dir: stateDir("", c.wd),
		Store: store, Transport: c.getenv(daemon.EnvTransport),
		Logger: slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, nil, fmt.Errorf("another wilco node holds the repository's lease in %s: set WILCO_ADDR to one of its nodes "+
				"(wilco status --cluster lists them)", postgres.Redact(store))
		}
		return nil, nil, err
	}
	return client.New(d.URL, d.Token), func() { _ = d.Close() }, nil
}
