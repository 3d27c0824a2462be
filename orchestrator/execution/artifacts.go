package execution

import (
	"io/fs"
	"path/filepath"

	"threadflow/db"
)

// maxArtifactsListed bounds the files a listing of a run's artifacts reads.
const maxArtifactsListed = 200

// ArtifactsDir is $ARTIFACTS_DIR of a run: where its nodes keep the files they produce.
func ArtifactsDir(run db.Run) string {
	return filepath.Join(filepath.Dir(run.WorkingPath), "artifacts")
}

// Artifact is one file a run's nodes left in $ARTIFACTS_DIR.
type Artifact struct {
	Name  string // slash-separated, relative to the artifacts directory
	Bytes int64
}

// Artifacts lists the regular files under the run's artifacts directory (symbolic links are left
// out: they may point anywhere), in lexical order, at most maxArtifactsListed of them.
func Artifacts(run db.Run) []Artifact {
	dir := ArtifactsDir(run)
	var out []Artifact
	walkErr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if len(out) >= maxArtifactsListed {
			return filepath.SkipAll
		}
		if err != nil || !d.Type().IsRegular() { // unreadable (or missing): list what can be read
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return nil
		}
		out = append(out, Artifact{Name: filepath.ToSlash(rel), Bytes: info.Size()})
		return nil
	})
	if walkErr != nil { // not expected: WalkDir fails only with what the callback returns
		return nil
	}
	return out
}
