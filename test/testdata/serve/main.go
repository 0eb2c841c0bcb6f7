// Command serve is a stand-in for `wilco serve`, for the black-box tests
// while cmd/wilco does not build: it takes the same flags and environment
// and calls daemon.Run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"wilco/config"
	"wilco/daemon"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: serve serve [--addr host:port] [--config file] [--dir dir] [--allow-remote]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "", "listen address")
	cfg := fs.String("config", "", "configuration file")
	dir := fs.String("dir", "", "state directory")
	remote := fs.Bool("allow-remote", false, "allow a non-loopback listen address")
	_ = fs.Parse(os.Args[2:])
	path := config.Path(*cfg)
	if *dir == "" {
		*dir = filepath.Join(filepath.Dir(path), daemon.DefaultDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := daemon.Run(ctx, daemon.Options{ConfigPath: path, Addr: *addr, Dir: *dir, AllowRemote: *remote,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
