//go:build race

package boltstore

const raceEnabled = true
