package server

import (
	"bytes"
	"errors"
	"image"
	_ "image/gif" // avatar formats
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

const (
	avatarMaxBytes  = 2 << 20
	avatarMaxPixels = 4096
)

// handleMe is GET /api/auth/me.
func (s *Server) handleMe(c *Ctx) error {
	u, mfa, err := s.db.FindUserWithMFA(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	u.CurrentOrgID = c.ID.OrgID
	return c.JSON(200, userOutMFA(u, c.ID.Role, mfa))
}

// handleUpdateMe is PATCH /api/auth/me.
func (s *Server) handleUpdateMe(c *Ctx) error {
	var req UserUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if err := trimNonBlank(req.Name, "name"); err != nil {
		return err
	}
	u, err := s.db.UpdateUser(c.Context(), c.ID.UserID, store.UserPatch{Name: req.Name})
	if err != nil {
		return err
	}
	c.Audit("user.updated", "success", "user", u.ID, nil)
	u.CurrentOrgID = c.ID.OrgID
	return c.JSON(200, s.userOut(c.Context(), u, c.ID.Role))
}

// handleUploadAvatar is POST /api/auth/me/avatar (multipart field "file").
// The bytes must decode as PNG, JPEG or GIF; nothing is written otherwise.
func (s *Server) handleUploadAvatar(c *Ctx) error {
	mr, err := c.R.MultipartReader()
	if err != nil {
		return invalid("Expected multipart/form-data with a file field", "value_error", "body", "file")
	}
	var data []byte
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return mbe
			}
			return invalid("Malformed multipart body", "value_error", "body")
		}
		if part.FormName() != "file" {
			continue
		}
		data, err = io.ReadAll(io.LimitReader(part, avatarMaxBytes+1))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return mbe
			}
			return err
		}
		if len(data) > avatarMaxBytes {
			return &http.MaxBytesError{Limit: avatarMaxBytes}
		}
		break
	}
	if data == nil {
		return invalid("Field required", "missing", "body", "file")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return invalid("File is not a PNG, JPEG or GIF image", "value_error", "body", "file")
	}
	if cfg.Width > avatarMaxPixels || cfg.Height > avatarMaxPixels || cfg.Width == 0 || cfg.Height == 0 {
		return invalid("Image dimensions must be between 1 and 4096 pixels", "value_error", "body", "file")
	}
	name := c.ID.UserID + "-" + auth.RandomToken(6) + "." + format
	path := s.cfg.Path("avatars", name)
	if err := writeFileAtomic(path, data, 0o600); err != nil {
		return err
	}
	old, err := s.db.FindUserByID(c.Context(), c.ID.UserID)
	if err != nil {
		os.Remove(path)
		return err
	}
	u, err := s.db.UpdateUser(c.Context(), c.ID.UserID, store.UserPatch{Avatar: &name})
	if err != nil {
		os.Remove(path)
		return err
	}
	if old.Avatar != "" {
		os.Remove(s.cfg.Path("avatars", filepath.Base(old.Avatar)))
	}
	u.CurrentOrgID = c.ID.OrgID
	return c.JSON(200, s.userOut(c.Context(), u, c.ID.Role))
}

// handleDeleteAvatar is DELETE /api/auth/me/avatar.
func (s *Server) handleDeleteAvatar(c *Ctx) error {
	old, err := s.db.FindUserByID(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	empty := ""
	u, err := s.db.UpdateUser(c.Context(), c.ID.UserID, store.UserPatch{Avatar: &empty})
	if err != nil {
		return err
	}
	if old.Avatar != "" {
		os.Remove(s.cfg.Path("avatars", filepath.Base(old.Avatar)))
	}
	u.CurrentOrgID = c.ID.OrgID
	return c.JSON(200, s.userOut(c.Context(), u, c.ID.Role))
}

// handleGetAvatar is GET /api/users/{user_id}/avatar: the caller's own, or
// that of someone sharing an org with them; anyone else is a 404.
func (s *Server) handleGetAvatar(c *Ctx) error {
	uid, err := c.IDParam("user_id")
	if err != nil {
		return err
	}
	if uid != c.ID.UserID {
		shared, err := s.db.ShareOrg(c.Context(), c.ID.UserID, uid)
		if err != nil {
			return err
		}
		if !shared {
			return store.NotFound("avatar")
		}
	}
	u, err := s.db.FindUserByID(c.Context(), uid)
	if err != nil || u.Avatar == "" {
		return store.NotFound("avatar")
	}
	f, err := os.Open(s.cfg.Path("avatars", filepath.Base(u.Avatar)))
	if err != nil {
		return store.NotFound("avatar")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	ext := strings.TrimPrefix(filepath.Ext(u.Avatar), ".")
	c.W.Header().Set("Content-Type", "image/"+ext)
	c.W.Header().Set("Cache-Control", "private, max-age=86400")
	c.W.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(c.W, c.R, u.Avatar, st.ModTime(), f)
	return nil
}
