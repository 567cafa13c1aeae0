package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/davspaces/davspaces/internal/clientstub"
	"github.com/davspaces/davspaces/internal/quickack"
)

// runStub is "davload stub -listen 127.0.0.1:PORT": the desktop clients'
// stand-in server (package clientstub), plain HTTP on a loopback address,
// its connections acknowledging every read at once as davspaces' do with
// quick_ack, until interrupted. A sync against it is the client's floor.
func runStub(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("davload stub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on")
	bulk := fs.Bool("bulk", false, "offer Nextcloud's bulk upload (dav.bulkupload), as a davspaces that has it")
	if err := fs.Parse(args); err != nil {
		return flagsStatus(err)
	}
	ctx, stop := untilInterrupted()
	defer stop()
	l, err := listenLoopback(*listen)
	if err == nil {
		err = serveStub(ctx, l, stderr, stubOptions(*bulk)...)
	}
	if err != nil {
		fmt.Fprintln(stderr, "davload stub:", err)
		return 1
	}
	return 0
}

// listenLoopback listens on a loopback address only.
func listenLoopback(listen string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("-listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("-listen %q: only loopback addresses are served", listen)
	}
	return net.Listen("tcp", listen)
}

// serveStub serves the stub on l until ctx ends.
func serveStub(ctx context.Context, l net.Listener, stderr io.Writer, opts ...clientstub.Option) error {
	srv := &http.Server{Handler: clientstub.New(opts...), ReadHeaderTimeout: time.Minute}
	fmt.Fprintf(stderr, "davload stub: listening on http://%s/\n", l.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(quickack.Wrap(l)); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func stubOptions(bulk bool) []clientstub.Option {
	if bulk {
		return []clientstub.Option{clientstub.WithBulkUpload()}
	}
	return nil
}
