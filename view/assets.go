package view

import (
	"embed"
	"net/http"
	"path"

	"github.com/gin-gonic/gin"
)

// assets are the view's only static files (a style sheet and the live-update script): every
// page works offline.
//
//go:embed assets/view.css assets/live.js
var assets embed.FS

// serveAsset serves /static/FILE from assets.
func serveAsset(c *gin.Context) {
	name := path.Base(c.Param("file"))
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		c.String(http.StatusNotFound, "no such file\n")
		return
	}
	ct := "text/css; charset=utf-8"
	if path.Ext(name) == ".js" {
		ct = "text/javascript; charset=utf-8"
	}
	c.Data(http.StatusOK, ct, b)
}
