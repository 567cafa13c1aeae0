package ocs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// cloudUser is the data of cloud/user. Clients build their WebDAV URL
// /remote.php/dav/files/<id>/ from id, so it is the user id davhandler
// checks there.
type cloudUser struct {
	ID          string `json:"id" xml:"id"`
	DisplayName string `json:"display-name" xml:"display-name"`
	Email       string `json:"email" xml:"email"`
	// Quota is the personal space's, which Nextcloud's desktop client
	// (src/gui/userinfo.cpp) and Android app (GetUserInfoRemoteOperation)
	// show; absent without a store.
	Quota *userQuota `json:"quota,omitempty" xml:"quota,omitempty"`
}

// userQuota is a quota in Nextcloud's provisioning API shape.
type userQuota struct {
	Free int64 `json:"free" xml:"free"`
	Used int64 `json:"used" xml:"used"`
	// Total is used and free together.
	Total int64 `json:"total" xml:"total"`
	// Relative is the percentage used, with two decimals.
	Relative float64 `json:"relative" xml:"relative"`
	// Quota is the limit, or quotaUnlimited.
	Quota int64 `json:"quota" xml:"quota"`
}

// quotaUnlimited is Nextcloud's quota of a user without a limit
// (SPACE_UNLIMITED in Nextcloud's Android library); free is then unknown.
const quotaUnlimited = -3

// quotaOf describes a space with limit bytes of quota (storage.NoQuota or
// negative for none) and usage u.
func quotaOf(limit int64, u storage.Usage) *userQuota {
	used := u.Used()
	free, limited := u.Free(limit)
	if !limited {
		return &userQuota{Free: quotaUnlimited, Used: used, Total: used, Quota: quotaUnlimited}
	}
	q := &userQuota{Free: free, Used: used, Total: used + free, Quota: limit}
	if q.Total > 0 {
		q.Relative = math.Round(float64(used)/float64(q.Total)*10000) / 100
	}
	return q
}

// serveUser answers cloud/user with the signed-in user.
func (h *Handler) serveUser(w http.ResponseWriter, r *http.Request, v apiVersion, user storage.User) {
	u, err := h.cloudUser(r, user)
	if err != nil {
		h.storeFailure(w, r, v, err)
		return
	}
	writeOK(w, r, v, u)
}

// serveUserByID answers cloud/users/{id}, which Nextcloud's apps ask for
// the signed-in user: that user only. Any other id is "User does not
// exist", whether or not it does, so that the endpoint tells nobody who
// has an account (the sharees search is where people are found, by those
// allowed to).
func (h *Handler) serveUserByID(id string) func(http.ResponseWriter, *http.Request, apiVersion, storage.User) {
	return func(w http.ResponseWriter, r *http.Request, v apiVersion, user storage.User) {
		if id != user.ID {
			writeError(w, r, v, http.StatusNotFound, "User does not exist")
			return
		}
		h.serveUser(w, r, v, user)
	}
}

// cloudUser describes user, with their personal space's quota when there
// is a store.
func (h *Handler) cloudUser(r *http.Request, user storage.User) (cloudUser, error) {
	u := cloudUser{ID: user.ID, DisplayName: user.DisplayName}
	if u.DisplayName == "" {
		u.DisplayName = user.ID
	}
	if h.cfg.Email != nil {
		u.Email = h.cfg.Email(r)
	}
	if h.cfg.Store != nil {
		q, err := h.personalQuota(r.Context(), user)
		if err != nil {
			return cloudUser{}, err
		}
		u.Quota = q
	}
	return u, nil
}

// personalQuota is the quota of user's personal space.
func (h *Handler) personalQuota(ctx context.Context, user storage.User) (*userQuota, error) {
	space, err := h.cfg.Store.PersonalSpace(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("personal space of %s: %w", user.ID, err)
	}
	usage, err := h.cfg.Store.Usage(ctx, space.ID)
	if err != nil {
		return nil, fmt.Errorf("usage of space %s: %w", space.ID, err)
	}
	return quotaOf(space.Quota, usage), nil
}

// storeFailure answers a failure of the store: logged, and a 503 when its
// backends cannot be reached, a 500 otherwise, neither revealing it.
func (h *Handler) storeFailure(w http.ResponseWriter, r *http.Request, v apiVersion, err error) {
	if h.cfg.Logger != nil {
		h.cfg.Logger.Error("ocs request failed", zap.String("path", r.URL.Path), zap.Error(err))
	}
	if errors.Is(err, storage.ErrUnavailable) {
		writeError(w, r, v, http.StatusServiceUnavailable, "The storage is temporarily unavailable, please retry shortly")
		return
	}
	writeError(w, r, v, http.StatusInternalServerError, "Internal error")
}
