package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The `caddy davspaces` command: the administrator's subcommands (backup,
// restore, usage, check, …), each reading the store of a davspaces handler
// from the same configuration `caddy run` reads, without starting the
// server.
//
// Exit codes: 0 done, 1 failed or problems found, 2 usage errors.

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "davspaces",
		Usage: "<command> [--config <path> [--adapter <name>]] [--handler <n|store>]",
		Short: "Administers the stores of the davspaces handlers",
		Long: `
Administers the store of a davspaces handler of the configuration: backs it
up while it serves, restores it, checks it, lists its spaces' usage.

The configuration is read as 'caddy run' reads it (--config, --adapter; by
default the Caddyfile in the current directory). When it has davspaces
handlers on several stores, --handler chooses one: its number in the list
the error gives, or its store key (a bolt store's data directory).`,
		CobraFunc: setUpCommand,
	})
}

// setUpCommand gives `caddy davspaces` its shared flags and subcommands.
func setUpCommand(cmd *cobra.Command) {
	cmd.PersistentFlags().StringP("config", "c", "", "Configuration file (default: ./Caddyfile)")
	cmd.PersistentFlags().StringP("adapter", "a", "", "Name of the config adapter to apply")
	cmd.PersistentFlags().String("handler", "", "The davspaces handler whose store to use, by number or store key, when the configuration has several stores")
	for _, sub := range subcommands {
		cmd.AddCommand(sub())
	}
	// Cobra shows the help of a command without its own run for any
	// argument, and exits 0: a mistyped subcommand must not pass for done.
	cmd.RunE = runCommand(func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return cmd.Help()
	})
}

// subcommands make the subcommands of `caddy davspaces`. Each subcommand's
// file adds its maker in an init function (addSubcommand), so that adding
// a subcommand touches no other file.
var subcommands []func() *cobra.Command

// addSubcommand registers a subcommand of `caddy davspaces`. Call it from
// an init function only, as caddy.RegisterModule.
func addSubcommand(newCommand func() *cobra.Command) {
	subcommands = append(subcommands, newCommand)
}

// commandLineError is an error in the command line or the choice of a
// handler: exit status 2.
type commandLineError struct{ msg string }

func (e *commandLineError) Error() string { return e.msg }

// usageError returns an error in the command line: exit status 2.
func usageError(format string, args ...any) error {
	return &commandLineError{msg: fmt.Sprintf(format, args...)}
}

// errProblems is returned by a subcommand that ran to the end and found
// problems: exit status 1, after its report.
var errProblems = errors.New("problems found")

// runCommand adapts a subcommand to cobra with the exit codes above. Caddy's
// main function only exits with a status other than 1 for the error type
// caddycmd.WrapCommandFuncForCobra makes, hence the wrapping.
func runCommand(run func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		wrapped := caddycmd.WrapCommandFuncForCobra(func(caddycmd.Flags) (int, error) {
			err := run(cmd, args)
			return exitStatus(err), err
		})
		return wrapped(cmd, args)
	}
}

// exitStatus is the exit status of a subcommand that returned err.
func exitStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(*commandLineError)):
		return 2
	default:
		return 1
	}
}

// newSubcommand returns a subcommand running run, with the exit codes
// above also for cobra's own errors in the flags.
func newSubcommand(use, short, long string, run func(cmd *cobra.Command, args []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  strings.TrimSpace(long),
		RunE:  runCommand(run),
	}
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return runCommand(func(*cobra.Command, []string) error { return usageError("%v", err) })(cmd, nil)
	})
	return cmd
}

// exactArgs checks that the command line has n arguments besides flags.
func exactArgs(cmd *cobra.Command, args []string, n int) error {
	if len(args) != n {
		return usageError("%s takes %d argument(s), got %d: %s", cmd.CommandPath(), n, len(args), cmd.UseLine())
	}
	return nil
}

// configuredHandler is the store of one or more davspaces handlers of the
// configuration: its backend, provisioned (its key final), and the
// handlers' settings of the store.
type configuredHandler struct {
	// Handlers are the davspaces handlers on this store, in the order of
	// the configuration; the first one's storage id counts.
	Handlers []*DAVSpaces
	Backend  StoreBackend
	// Config is the whole configuration, as JSON.
	Config []byte
	ctx    caddy.Context
	cancel context.CancelFunc
}

// Key is the store's key: a bolt store's data directory, a PostgreSQL
// store's database and bucket.
func (h *configuredHandler) Key() string { return h.Backend.StoreKey() }

// Close releases the context the backend was provisioned in.
func (h *configuredHandler) Close() { h.cancel() }

// Bolt returns the embedded store backend, or an error saying the command
// only works on one.
func (h *configuredHandler) Bolt(command string) (*BoltStore, error) {
	b, ok := h.Backend.(*BoltStore)
	if !ok {
		return nil, fmt.Errorf("%s works on the embedded (bolt) store only; the store %s is another: see docs/operations.md for its backups", command, h.Key())
	}
	return b, nil
}

// Open opens the store as the server would, with the handlers' personal
// quota and retention, so that its background sweeps keep what the
// configuration keeps. The server must not hold it (the embedded store is
// locked by the process that opened it).
func (h *configuredHandler) Open(ctx context.Context) (Store, error) {
	first := h.Handlers[0]
	storageID := caddy.NewReplacer().ReplaceAll(first.StorageID, "")
	store, err := h.Backend.OpenStore(ctx, storageID, h.ctx.Logger())
	if err != nil {
		return nil, err
	}
	var retention storage.RetentionPolicy
	for _, dav := range h.Handlers {
		mergeRetention(&retention, dav.retentionPolicy())
	}
	store.SetRetention(retention)
	store.SetPersonalQuota(first.PersonalQuotaBytes)
	store.SetMaxNodes(int64(first.MaxNodes))
	return store, nil
}

// openConfiguredStore opens the store of the configuration's davspaces
// handler that the command line names. closeStore closes the store and
// releases what loading the configuration took.
func openConfiguredStore(cmd *cobra.Command) (store Store, backend StoreBackend, closeStore func() error, err error) {
	h, err := loadConfiguredHandler(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	store, err = h.Open(cmd.Context())
	if err != nil {
		h.Close()
		return nil, nil, nil, err
	}
	closeStore = h.closer(store)
	return store, h.Backend, closeStore, nil
}

// closer closes store, then releases what loading the configuration
// took.
func (h *configuredHandler) closer(store Store) func() error {
	return func() error {
		defer h.Close()
		return store.Close()
	}
}

// loadConfiguredHandler loads the configuration the flags name and returns
// the store of the davspaces handler chosen with --handler (by default the
// only store), without opening it.
func loadConfiguredHandler(cmd *cobra.Command) (*configuredHandler, error) {
	flags := cmd.Flags()
	configFile, _ := flags.GetString("config")
	adapter, _ := flags.GetString("adapter")
	choice, _ := flags.GetString("handler")
	config, _, _, err := caddycmd.LoadConfig(configFile, adapter)
	if err != nil {
		return nil, fmt.Errorf("loading the configuration: %w", err)
	}
	if config == nil {
		return nil, usageError("no configuration: give one with --config, or run in the directory of the Caddyfile")
	}
	handlers, err := configuredHandlers(config)
	if err != nil {
		return nil, err
	}
	chosen, err := chooseHandler(handlers, choice)
	for _, h := range handlers {
		if h != chosen {
			h.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	chosen.Config = config
	return chosen, nil
}

// configuredHandlers returns the stores of the davspaces handlers in the
// JSON configuration, each once, in the order of the configuration.
func configuredHandlers(config []byte) ([]*configuredHandler, error) {
	var tree any
	if err := json.Unmarshal(config, &tree); err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	var raws []json.RawMessage
	findHandlers(tree, &raws)
	var out []*configuredHandler
	for _, raw := range raws {
		dav, backend, ctx, cancel, err := loadHandler(raw)
		if err != nil {
			for _, h := range out {
				h.Close()
			}
			return nil, err
		}
		if h := handlerOn(out, backend.StoreKey()); h != nil {
			h.Handlers = append(h.Handlers, dav)
			cancel()
			continue
		}
		out = append(out, &configuredHandler{Handlers: []*DAVSpaces{dav}, Backend: backend, ctx: ctx, cancel: cancel})
	}
	return out, nil
}

func handlerOn(hs []*configuredHandler, key string) *configuredHandler {
	for _, h := range hs {
		if h.Key() == key {
			return h
		}
	}
	return nil
}

// findHandlers collects the davspaces handlers anywhere in a configuration:
// in the routes of the servers, of subroutes and handle blocks at any
// depth, and of error routes.
func findHandlers(v any, found *[]json.RawMessage) {
	switch v := v.(type) {
	case map[string]any:
		if v["handler"] == "davspaces" {
			raw, _ := json.Marshal(v) // it was JSON a moment ago
			*found = append(*found, raw)
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // a stable order of servers
		for _, k := range keys {
			findHandlers(v[k], found)
		}
	case []any:
		for _, e := range v {
			findHandlers(e, found)
		}
	}
}

// loadHandler reads a davspaces handler's JSON and provisions its store
// backend in a context of its own, which cancel releases.
func loadHandler(raw json.RawMessage) (*DAVSpaces, StoreBackend, caddy.Context, context.CancelFunc, error) {
	dav := new(DAVSpaces)
	if err := json.Unmarshal(raw, dav); err != nil {
		return nil, nil, caddy.Context{}, nil, fmt.Errorf("reading a davspaces handler of the configuration: %w", err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	backend, err := dav.loadStoreBackend(ctx)
	if err != nil {
		cancel()
		return nil, nil, caddy.Context{}, nil, err
	}
	return dav, backend, ctx, cancel, nil
}

// chooseHandler picks the store --handler names: its 1-based number or
// its key; the only one when choice is empty.
func chooseHandler(hs []*configuredHandler, choice string) (*configuredHandler, error) {
	if len(hs) == 0 {
		return nil, usageError("the configuration has no davspaces handler")
	}
	if choice == "" {
		if len(hs) == 1 {
			return hs[0], nil
		}
		return nil, usageError("the configuration has davspaces handlers on %d stores; choose one with --handler:\n%s", len(hs), listHandlers(hs))
	}
	if n, err := strconv.Atoi(choice); err == nil && n >= 1 && n <= len(hs) {
		return hs[n-1], nil
	}
	if h := handlerOn(hs, choice); h != nil {
		return h, nil
	}
	return nil, usageError("--handler %q names none of the configuration's davspaces stores:\n%s", choice, listHandlers(hs))
}

// listHandlers lists the stores by number and key, one per line.
func listHandlers(hs []*configuredHandler) string {
	var b strings.Builder
	for i, h := range hs {
		fmt.Fprintf(&b, "  %d: %s\n", i+1, h.Key())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// commandLogger is the logger of a subcommand: Caddy's default one, on
// standard error.
func commandLogger() *zap.Logger { return caddy.Log().Named("davspaces") }
