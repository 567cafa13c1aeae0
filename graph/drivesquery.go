package graph

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// drivesQuery is what a /me/drives request asks beyond the list: the
// OData $filter and $orderby ownCloud Web sends ("driveType eq project",
// "name asc").
type drivesQuery struct {
	// driveType is the one type wanted; empty means all.
	driveType string
	// less orders the drives; nil keeps the listing's order.
	less func(a, b drive) int
}

// The drive types Web asks for: virtual is the Shares drive, mountpoint
// an item shared with the user.
var driveTypes = []string{
	string(storage.SpacePersonal), string(storage.SpaceProject), "virtual", "mountpoint",
}

// parseDrivesQuery reads $filter and $orderby; anything else in them is
// a 400, as oCIS answers a query it cannot evaluate, rather than a list
// that silently ignores it.
func parseDrivesQuery(v url.Values) (drivesQuery, error) {
	var q drivesQuery
	if f := strings.TrimSpace(v.Get("$filter")); f != "" {
		t, ok := driveTypeFilter(f)
		if !ok {
			return q, invalidRequest("$filter supports only driveType eq " + strings.Join(driveTypes, "|"))
		}
		q.driveType = t
	}
	if o := strings.TrimSpace(v.Get("$orderby")); o != "" {
		less, ok := driveOrder(o)
		if !ok {
			return q, invalidRequest("$orderby supports only name or lastModifiedDateTime, asc or desc")
		}
		q.less = less
	}
	return q, nil
}

// driveTypeFilter reads "driveType eq <type>", the type bare or quoted.
func driveTypeFilter(f string) (string, bool) {
	fields := strings.Fields(f)
	if len(fields) != 3 || fields[0] != "driveType" || !strings.EqualFold(fields[1], "eq") {
		return "", false
	}
	t := strings.Trim(fields[2], "'")
	return t, slices.Contains(driveTypes, t)
}

// driveOrder reads "<property> [asc|desc]".
func driveOrder(o string) (func(a, b drive) int, bool) {
	fields := strings.Fields(o)
	if len(fields) == 0 || len(fields) > 2 {
		return nil, false
	}
	var less func(a, b drive) int
	switch fields[0] {
	case "name":
		less = func(a, b drive) int { return cmp.Compare(a.Name, b.Name) }
	case "lastModifiedDateTime":
		less = func(a, b drive) int { return timeOf(a).Compare(timeOf(b)) }
	default:
		return nil, false
	}
	if len(fields) == 1 || strings.EqualFold(fields[1], "asc") {
		return less, true
	}
	if !strings.EqualFold(fields[1], "desc") {
		return nil, false
	}
	return func(a, b drive) int { return less(b, a) }, true
}

func timeOf(d drive) time.Time {
	if d.LastModifiedDateTime == nil {
		return time.Time{}
	}
	return *d.LastModifiedDateTime
}

// wants says whether a space of type t is asked for.
func (q drivesQuery) wants(t storage.SpaceType) bool {
	return q.driveType == "" || q.driveType == string(t)
}

// sort orders drives as asked; drives that compare equal keep their order.
func (q drivesQuery) sort(drives []drive) {
	if q.less != nil {
		slices.SortStableFunc(drives, q.less)
	}
}
