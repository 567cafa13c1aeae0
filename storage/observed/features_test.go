package observed_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/observed"
)

// optional are the interfaces callers look for on a store: the parts of
// storage.Backend and those a store may have beyond it.
var optional = map[string]reflect.Type{
	"Walker":            reflect.TypeFor[observed.Walker](),
	"Checker":           reflect.TypeFor[storage.Checker](),
	"OpenUploadCounter": reflect.TypeFor[storage.OpenUploadCounter](),
	"SweepObservable":   reflect.TypeFor[storage.SweepObservable](),
	"ChunkedUploads":    reflect.TypeFor[storage.ChunkedUploads](),
	"UploadSessions":    reflect.TypeFor[storage.UploadSessions](),
	"AppPasswords":      reflect.TypeFor[storage.AppPasswords](),
	"LoginFlows":        reflect.TypeFor[storage.LoginFlows](),
	"AttemptBudgets":    reflect.TypeFor[storage.AttemptBudgets](),
	"PreviewCache":      reflect.TypeFor[storage.PreviewCache](),
	"Directory":         reflect.TypeFor[storage.Directory](),
	"Searcher":          reflect.TypeFor[storage.Searcher](),
	"SpaceLister":       reflect.TypeFor[storage.SpaceLister](),
}

// TestOptionalInterfacesCarriedThrough: a wrapped store offers each
// optional interface exactly when the store does, for the embedded store
// and for stores that have one of them or none; and Health always.
func TestOptionalInterfacesCarriedThrough(t *testing.T) {
	bolt := openBolt(t)
	stores := map[string]storage.Backend{
		"boltstore": bolt,
		"none":      struct{ storage.Backend }{bolt},
		"only Walker": struct {
			storage.Backend
			observed.Walker
		}{bolt, bolt},
		"only Checker": struct {
			storage.Backend
			storage.Checker
		}{bolt, bolt},
		"only OpenUploadCounter": struct {
			storage.Backend
			storage.OpenUploadCounter
		}{bolt, bolt},
		"only SweepObservable": struct {
			storage.Backend
			storage.SweepObservable
		}{bolt, bolt},
	}
	for name, store := range stores {
		wrapped := observed.Wrap(store, observed.Tracing{})
		for iface, typ := range optional {
			bare, got := reflect.TypeOf(store).Implements(typ), reflect.TypeOf(wrapped).Implements(typ)
			if got != bare {
				t.Errorf("%s: the wrapper offers %s: %v, the store: %v", name, iface, got, bare)
			}
		}
		if _, ok := wrapped.(storage.HealthChecker); !ok {
			t.Errorf("%s: the wrapper does not offer Health", name)
		}
	}
}

// recorder is a Hook that keeps what it sees.
type recorder struct {
	begun []observed.Call
	ended []observed.Call
	errs  []error
}

type recorderKey struct{}

func (r *recorder) Begin(ctx context.Context, c observed.Call) context.Context {
	r.begun = append(r.begun, c)
	return context.WithValue(ctx, recorderKey{}, c.Op)
}

func (r *recorder) End(ctx context.Context, c observed.Call, err error) {
	if ctx.Value(recorderKey{}) != c.Op {
		panic("End without Begin's context")
	}
	r.ended = append(r.ended, c)
	r.errs = append(r.errs, err)
}

// TestHooksSeeEveryCall: each hook sees a call begin and end, with its
// operation, space and error, in Begin's context; the first hook begins
// first and ends last; a personal space found is the call's at End.
func TestHooksSeeEveryCall(t *testing.T) {
	var first, second recorder
	var order []string
	b := observed.Wrap(openBolt(t), observed.Hooks{&first, orderHook{&order, "1"}, &second, orderHook{&order, "2"}})
	sp, err := b.PersonalSpace(t.Context(), storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Child(t.Context(), sp.ID, sp.ID, "missing")
	for _, r := range []*recorder{&first, &second} {
		if len(r.ended) != 2 || r.ended[0].Op != observed.OpPersonalSpace || r.ended[1].Op != observed.OpChild {
			t.Fatalf("calls seen: %+v", r.ended)
		}
		if r.begun[0].SpaceID != "" || r.ended[0].SpaceID != sp.ID {
			t.Errorf("PersonalSpace: space %q at Begin, %q at End, want \"\" then %q", r.begun[0].SpaceID, r.ended[0].SpaceID, sp.ID)
		}
		if r.ended[1].SpaceID != sp.ID || r.errs[1] != err || !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Child: space %q, error %v (the call's: %v)", r.ended[1].SpaceID, r.errs[1], err)
		}
		if r.ended[1].Start.IsZero() || r.ended[1].Start.After(time.Now()) {
			t.Errorf("Child: start %v", r.ended[1].Start)
		}
	}
	if want := "begin 1,begin 2,end 2,end 1,begin 1,begin 2,end 2,end 1"; strings.Join(order, ",") != want {
		t.Errorf("order %q, want %q", strings.Join(order, ","), want)
	}
}

// orderHook notes when it begins and ends.
type orderHook struct {
	order *[]string
	name  string
}

func (h orderHook) Begin(ctx context.Context, _ observed.Call) context.Context {
	*h.order = append(*h.order, "begin "+h.name)
	return ctx
}

func (h orderHook) End(context.Context, observed.Call, error) {
	*h.order = append(*h.order, "end "+h.name)
}
