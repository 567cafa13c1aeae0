package pgstore

// Stubs of the Store methods not written yet; each goes when its real
// implementation lands.

import (
	"context"
	"errors"

	"github.com/davspaces/davspaces/storage"
)

var errTODO = errors.New("pgstore: not implemented yet")

func (s *Store) PersonalSpace(ctx context.Context, u storage.User) (storage.Space, error) {
	return storage.Space{}, errTODO
}
func (s *Store) PutSpace(ctx context.Context, sp storage.Space) (storage.Space, error) {
	return storage.Space{}, errTODO
}
func (s *Store) Space(ctx context.Context, id string) (storage.Space, error) {
	return storage.Space{}, errTODO
}
func (s *Store) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	return storage.Node{}, errTODO
}
func (s *Store) Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	return storage.Node{}, errTODO
}
func (s *Store) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	return nil, errTODO
}
func (s *Store) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	return nil, errTODO
}
func (s *Store) Mkdir(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	return storage.Node{}, errTODO
}
func (s *Store) Remove(ctx context.Context, spaceID, nodeID string, c storage.Conditions) error {
	return errTODO
}
func (s *Store) Move(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	return storage.Node{}, false, errTODO
}
func (s *Store) Copy(ctx context.Context, spaceID string, t storage.Transfer) (storage.Node, bool, error) {
	return storage.Node{}, false, errTODO
}
func (s *Store) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	return nil, errTODO
}
func (s *Store) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	return storage.Node{}, nil, errTODO
}
func (s *Store) Props(ctx context.Context, spaceID, nodeID, user string) ([]storage.Property, error) {
	return nil, errTODO
}
func (s *Store) PatchProps(ctx context.Context, spaceID, nodeID string, patches []storage.PropPatch) error {
	return errTODO
}
