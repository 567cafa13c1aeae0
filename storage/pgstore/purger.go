package pgstore

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// Some changes leave a purge to be done after them, in parts: an
// eviction (quota pressure) hides the trash items it takes, and a remove
// in a space that keeps no trash hides the tree it destroys, both in the
// change's own short transaction (trash_items.purging); Usage counts no
// hidden item, so the room is the space's at once. Once the change's
// transaction commits, run purges them, a short transaction a part
// (purgeParts), before the change returns: its caller sees them gone, and
// no transaction of it lasts long however large they are. A node that
// stops first leaves them to the sweep (finishPurges).

// purgesAfter are the purges that transactions left to do after they
// commit, by transaction.
type purgesAfter struct {
	mu sync.Mutex
	by map[pgx.Tx][]hiddenItem
}

// hiddenItem is the node of a trash item being purged.
type hiddenItem struct{ spaceID, topID string }

// purgeLater has trash item node topID of the space, marked purging in
// tx, purged in parts once tx commits.
func (s *Store) purgeLater(tx pgx.Tx, spaceID, topID string) {
	s.purges.mu.Lock()
	defer s.purges.mu.Unlock()
	if s.purges.by == nil {
		s.purges.by = map[pgx.Tx][]hiddenItem{}
	}
	s.purges.by[tx] = append(s.purges.by[tx], hiddenItem{spaceID, topID})
}

// takePurges forgets the purges the attempts of one transaction left,
// and returns those of the last attempt when it committed.
func (s *Store) takePurges(attempts []pgx.Tx, committed bool) []hiddenItem {
	s.purges.mu.Lock()
	defer s.purges.mu.Unlock()
	var due []hiddenItem
	for i, tx := range attempts {
		if committed && i == len(attempts)-1 {
			due = s.purges.by[tx]
		}
		delete(s.purges.by, tx)
	}
	return due
}

// settlePurges purges in parts what the attempts of one transaction left
// to do, when the last committed. The change is done whatever happens to
// them: a purge that fails is logged and left to the sweep.
func (s *Store) settlePurges(ctx context.Context, attempts []pgx.Tx, committed bool) {
	ctx = context.WithoutCancel(ctx) // a client gone leaves no half purge
	for _, h := range s.takePurges(attempts, committed) {
		if err := s.purgeParts(ctx, h.spaceID, h.topID, false); err != nil {
			s.log.Warn("purging in parts: the sweep finishes it", zap.String("space", h.spaceID),
				zap.String("node", h.topID), zap.Error(err))
		}
	}
}
