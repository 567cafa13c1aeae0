package pgstore

import "errors"

// errTODO answers the methods state_todo.go still stubs; this file goes
// with it.
var errTODO = errors.New("pgstore: not implemented yet")
