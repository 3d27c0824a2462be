package workflow

import (
	"embed"
	"io/fs"
)

//go:embed bundled/*.yaml
var bundledFiles embed.FS

// Bundled returns the default workflows shipped in the binary, one *.yaml file each at its root.
func Bundled() fs.FS {
	sub, err := fs.Sub(bundledFiles, "bundled")
	if err != nil {
		panic(err) // unreachable: "bundled" is a valid path embedded at build time
	}
	return sub
}
