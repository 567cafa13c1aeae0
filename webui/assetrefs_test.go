package webui

import (
	"io/fs"
	"path"
	"regexp"
	"slices"
	"testing"
	"testing/fstest"
)

// assetRefs find what an asset names: the shell's and the scripts'
// /webui/ URLs, the modules' static and dynamic imports, the style
// sheet's url()s.
var assetRefs = []*regexp.Regexp{
	regexp.MustCompile(`["'(]` + regexp.QuoteMeta(AssetPrefix) + `([^"'()?#]+)`),
	regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^;]*?\bfrom\s+["']\./([^"']+)["']`),
	regexp.MustCompile(`(?m)^\s*import\s+["']\./([^"']+)["']`),
	regexp.MustCompile(`\bimport\(\s*["']\./([^"']+)["']\s*\)`),
	regexp.MustCompile(`url\(\s*["']?\./([^"')]+)["']?\s*\)`),
}

// referencedAssets are the names each file of files names, by file.
func referencedAssets(files fs.FS) (map[string][]string, error) {
	refs := map[string][]string{}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		for _, re := range assetRefs {
			for _, m := range re.FindAllStringSubmatch(string(body), -1) {
				refs[name] = append(refs[name], path.Clean(m[1]))
			}
		}
		return nil
	})
	return refs, err
}

// assetProblems are the names files' assets give that are no asset, and
// the assets nothing reaches from index.html.
func assetProblems(files fs.FS) ([]string, error) {
	refs, err := referencedAssets(files)
	if err != nil {
		return nil, err
	}
	var problems []string
	reached := map[string]bool{"index.html": true}
	queue := []string{"index.html"}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		for _, name := range refs[from] {
			if _, err := fs.Stat(files, name); err != nil {
				problems = append(problems, from+" names "+name+", which is not an asset")
				continue
			}
			if !reached[name] {
				reached[name] = true
				queue = append(queue, name)
			}
		}
	}
	err = fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !reached[name] {
			problems = append(problems, name+" is reached from no page")
		}
		return err
	})
	return problems, err
}

// TestAssetsAllReferenced keeps the assets whole after a split: every
// asset the shell or a module names exists, and every asset is reached
// from the shell (index.html), so that no file is left dead.
func TestAssetsAllReferenced(t *testing.T) {
	files, err := fs.Sub(embedded, "assets")
	if err != nil {
		t.Fatal(err)
	}
	problems, err := assetProblems(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestAssetProblems pins what assetProblems finds in small trees.
func TestAssetProblems(t *testing.T) {
	shell := `<link rel="icon" href="/webui/icon.svg"><link rel="stylesheet" href="/webui/style.css"><script type="module" src="/webui/app.js"></script>`
	tests := []struct {
		name  string
		files fstest.MapFS
		want  []string
	}{{
		name: "every kind of reference",
		files: fstest.MapFS{
			"index.html": file(shell),
			"icon.svg":   file("<svg/>"),
			"style.css":  file(`.x { background: url("./bg.png") }`),
			"bg.png":     file("png"),
			"app.js":     file("import * as a from \"./a.js\";\nimport {\n  b,\n} from './b.js';\nimport \"./c.js\";\nconst d = () => import(\"./d.js\");\n"),
			"a.js":       file(`export { x } from "./x.js";`),
			"x.js":       file(`export const x = "/webui/logo.svg";`),
			"logo.svg":   file("<svg/>"),
			"b.js":       file("export const b = 1;"),
			"c.js":       file(""),
			"d.js":       file(""),
		},
	}, {
		name: "a dead file",
		files: fstest.MapFS{
			"index.html": file(shell),
			"icon.svg":   file("<svg/>"),
			"style.css":  file(""),
			"app.js":     file(""),
			"folder.js":  file("export class FolderView {}"),
		},
		want: []string{"folder.js is reached from no page"},
	}, {
		name: "an import of a file that is not there",
		files: fstest.MapFS{
			"index.html": file(shell),
			"icon.svg":   file("<svg/>"),
			"style.css":  file(""),
			"app.js":     file(`import { FolderView } from "./folder.js";`),
		},
		want: []string{"app.js names folder.js, which is not an asset"},
	}, {
		name: "a module reached only from a dead one",
		files: fstest.MapFS{
			"index.html": file(shell),
			"icon.svg":   file("<svg/>"),
			"style.css":  file(""),
			"app.js":     file(""),
			"old.js":     file(`import "./older.js";`),
			"older.js":   file(""),
		},
		want: []string{"old.js is reached from no page", "older.js is reached from no page"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := assetProblems(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
}

func file(body string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(body)} }
