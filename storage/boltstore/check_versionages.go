package boltstore

import (
	"bytes"

	"github.com/davspaces/davspaces/storage"
)

// checkVersionAges checks the version age index against the versions:
// every readable version has its entry, with its size, and every entry
// stands for a version there. An eviction reads the index only, so a
// version without its entry would never be evicted, and an entry without
// its version would count room that is not there.
func (c *checkRun) checkVersionAges() error {
	if err := c.scan(bucketVersions, c.versionHasAge, nil); err != nil {
		return err
	}
	return c.scan(bucketVersionAges, c.ageHasVersion, nil)
}

// versionHasAge checks that the version at k has its index entry. A
// version the versions step reports (unreadable, of no file of its
// space) is left to it: its repair drops the version.
func (c *checkRun) versionHasAge(t *txn, k, v []byte) ([]finding, error) {
	sp, rest, ok1 := bytes.Cut(k, []byte{0})
	file, key, ok2 := bytes.Cut(rest, []byte{0})
	if !ok1 || !ok2 {
		return nil, nil // the versions step reports it
	}
	r, err := decodeVersion(string(key), v)
	if err != nil {
		return nil, nil // the versions step reports it
	}
	spaceID, fileID := string(sp), string(file)
	n, ok, err := t.node(fileID)
	if err != nil || !ok || n.IsFolder() || t.homeSpace(n) != spaceID {
		return nil, err
	}
	ageKey, want := versionAgeKey(spaceID, fileID, r.Key, r.Replaced), versionAgeValue(r.File.Size)
	if bytes.Equal(t.versionAges().Get(ageKey), want) {
		return nil, nil
	}
	vk := bytes.Clone(k)
	missing := func(t *txn) bool {
		return t.versions().Get(vk) != nil && !bytes.Equal(t.versionAges().Get(ageKey), want)
	}
	return []finding{problem(storage.ProblemDangling, spaceID, "", "version %s of file %s has no entry in the version age index", r.Key, fileID).
		withRepair(func() (bool, error) {
			return c.update(func(t *txn) (bool, error) {
				if !missing(t) {
					return false, nil
				}
				return true, t.versionAges().Put(ageKey, want)
			})
		})}, nil
}

// ageHasVersion checks that the index entry at k stands for a version
// there, replaced at its time and of its size.
func (c *checkRun) ageHasVersion(t *txn, k, v []byte) ([]finding, error) {
	sp, _, ok := bytes.Cut(k, []byte{0})
	prefix := versionAgePrefix(string(sp))
	spaceID, ageKey := string(sp), bytes.Clone(k)
	stale := func(t *txn) bool {
		v := t.versionAges().Get(ageKey)
		if v == nil || !ok {
			return v != nil
		}
		kept, err := parseVersionAge(prefix, ageKey, v)
		if err != nil {
			return true
		}
		r, err := t.version(spaceID, kept.FileID, kept.VersionKey)
		return err != nil || !r.Replaced.Equal(kept.Since) || r.File.Size != kept.Size
	}
	if !stale(t) {
		return nil, nil
	}
	return []finding{problem(storage.ProblemDangling, spaceID, "", "version age entry %q stands for no version", k).
		withRepair(func() (bool, error) {
			return c.update(func(t *txn) (bool, error) {
				if !stale(t) {
					return false, nil
				}
				return true, t.versionAges().Delete(ageKey)
			})
		})}, nil
}
